/**
 * A schedule config in words, for `check`: "exponential from 100 ms (×2), at most 2 s, full jitter; at most 5
 * retries". It reads the config's JSON as the codec writes it (durations in ms), key by key in the order the
 * schedule applies them, so that every key of the grammar has its phrase.
 */
import type { ScheduleConfigJson } from 'fp-ts-retry/ScheduleConfig'
import { duration } from './format'

type Json = { readonly [key: string]: unknown }

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

const ms = (value: unknown): string => duration(value as number)

const codes = (value: unknown): string =>
  (value as ReadonlyArray<string | number>).map((c) => JSON.stringify(c)).join(', ')

const list = (value: unknown, joiner: string): string =>
  (value as ReadonlyArray<Json>).map((c) => `(${inWords(c)})`).join(joiner)

/** The constructor's phrase: the delays before the modifiers. */
const constructorOf = (c: Json): string => {
  if ('exponential' in c) {
    const factor = (c.factor as number | undefined) ?? 2
    return `exponential from ${ms(c.exponential)} (×${factor})`
  }
  if ('constant' in c) return `${ms(c.constant)} each time`
  if ('linear' in c) return `linear: ${ms(c.linear)}, then ${ms(2 * (c.linear as number))}, ...`
  if ('fibonacci' in c) return `fibonacci from ${ms(c.fibonacci)}`
  if ('truncatedBinaryExponential' in c) {
    const doublings = c.maxDoublings as number
    return `doubling ${plural(doublings, 'time')} up to ${ms(c.truncatedBinaryExponential)}, then staying there`
  }
  if ('decorrelatedJitter' in c) return `decorrelated jitter from ${ms(c.decorrelatedJitter)}, at most ${ms(c.cap)}`
  if ('decorrelatedJitterV2' in c) {
    return `decorrelated jitter (Polly's V2), a median first delay of ${ms(c.decorrelatedJitterV2)}, at most ${ms(
      c.cap
    )}`
  }
  if ('randomBetween' in c) {
    const [min, max] = c.randomBetween as readonly [number, number]
    return `a random delay from ${ms(min)} to ${ms(max)}`
  }
  if ('delays' in c) {
    const delays = c.delays as ReadonlyArray<number>
    return delays.length === 0 ? 'no retry (no delays listed)' : `the delays ${delays.map(ms).join(', ')}, then stop`
  }
  if ('recurs' in c) return `${plural(c.recurs as number, 'retry', 'retries')} at once`
  if ('forever' in c) return 'retry at once, for ever'
  if ('stop' in c) return 'no retry'
  if ('intersect' in c) return `while all go on, the longest delay of ${list(c.intersect, ' and ')}`
  if ('union' in c) return `while any goes on, the shortest delay of ${list(c.union, ' and ')}`
  if ('andThen' in c) return `${list(c.andThen, ', then ')}`
  // the codec knows no other constructor: a new one must be given its words here
  throw new TypeError(`no words for the schedule config ${JSON.stringify(c)}`)
}

/** The modifiers, in the order the codec applies them to the constructor's delays. */
const modifiersOf = (c: Json): ReadonlyArray<string> => {
  const out: Array<string> = []
  if ('cap' in c && !('decorrelatedJitter' in c) && !('decorrelatedJitterV2' in c)) out.push(`at most ${ms(c.cap)}`)
  if (c.jitter === 'full') out.push('full jitter (each delay drawn from 0 to itself)')
  if (c.jitter === 'equal') out.push('equal jitter (each delay drawn from half of itself to itself)')
  if ('minDelay' in c) out.push(`at least ${ms(c.minDelay)}`)
  return out
}

const limitsOf = (c: Json): ReadonlyArray<string> => {
  const out: Array<string> = []
  if ('maxRetries' in c) out.push(`at most ${plural(c.maxRetries as number, 'retry', 'retries')}`)
  if ('maxCumulativeDelay' in c) out.push(`at most ${ms(c.maxCumulativeDelay)} of waiting in all`)
  if ('maxElapsed' in c) out.push(`no retry after ${ms(c.maxElapsed)} from the first attempt`)
  if ('retryOn' in c) out.push(`only errors with code ${codes(c.retryOn)}`)
  if ('neverRetryOn' in c) out.push(`never errors with code ${codes(c.neverRetryOn)}`)
  return out
}

/** The config in words: its delays, then what bounds them, then what stops the retries. */
export const inWords = (config: ScheduleConfigJson | Json): string => {
  const c = config as Json
  const delays = [constructorOf(c), ...modifiersOf(c)].join(', ')
  const limits = limitsOf(c)
  return limits.length === 0 ? delays : `${delays}; ${limits.join('; ')}`
}
