import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as Budget from '../src/Budget'
import type * as Event from '../src/Event'
import type { RetryBudget } from '../src/Budget'
import { hedging, type Attempt, type HedgingOptions, type Summary } from '../src/Hedging'
import * as Http from '../src/Http'
import * as Random from '../src/Random'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import * as TestClock from '../src/TestClock'
import { startServer } from './support/http'
import { waitFor } from './support/wait'
import { deepStrictEqual, strictEqual, throwsRangeError, throwsTypeError } from './util'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

type Outcome = 'ok' | 'fail' | 'fatal'

/** `n` hedges after `ms` each: `n + 1` attempts. */
const every = (ms: number, n: number): Schedule.Schedule<unknown> =>
  pipe(Schedule.constant(ms), Schedule.intersect(Schedule.recurs(n)))

interface Scripted {
  readonly attempt: Attempt<string, string>
  /** The indexes whose signal was aborted, in the order of the aborts. */
  readonly aborted: Array<number>
  readonly started: Array<number>
}

/** Attempt `i` takes `latencies[i]` ms on the clock, then answers `outcomes[i]` (an abort cuts it short). */
const scripted = (
  clock: TestClock.TestClock,
  latencies: ReadonlyArray<number>,
  outcomes: ReadonlyArray<Outcome>
): Scripted => {
  const aborted: Array<number> = []
  const started: Array<number> = []
  const attempt: Attempt<string, string> =
    ({ signal, index }) =>
    async () => {
      started.push(index)
      signal.addEventListener('abort', () => aborted.push(index))
      await clock.sleep(latencies[index], signal)
      if (signal.aborted) return E.left(`aborted ${index}`)
      const outcome = outcomes[index]
      return outcome === 'ok' ? E.right(`ok ${index}`) : E.left(`${outcome} ${index}`)
    }
  return { attempt, aborted, started }
}

/** What most tests compare of a {@link Summary}: the launches, the winner, the reason. */
type Launches = Pick<Summary, 'launches' | 'winner' | 'reason'>
const launchesOf = ({ launches, winner, reason }: Summary): Launches => ({ launches, winner, reason })

interface Ran<E> {
  readonly result: E.Either<E, string>
  readonly summary: Launches
}

/** Runs a hedged call on `clock` to its end; returns its result and summary. */
const run = async <E>(
  clock: TestClock.TestClock,
  call: (options: { readonly onDone: (s: Summary) => void }) => TaskEither<E, string>
): Promise<Ran<E>> => {
  const summaries: Array<Summary> = []
  const pending = call({ onDone: (s) => void summaries.push(s) })()
  await clock.runAll()
  const result = await pending
  strictEqual(summaries.length, 1)
  // the summary is the runners' record too: the call's result, the status of its last decision
  deepStrictEqual(summaries[0].result, result as Summary['result'])
  strictEqual(summaries[0].status.iterNumber, summaries[0].launches.length - 1)
  return { result, summary: launchesOf(summaries[0]) }
}

const isFatal = (e: string): boolean => e.startsWith('fatal')

// -------------------------------------------------------------------------------------
// reference model
// -------------------------------------------------------------------------------------

interface Expected {
  readonly launches: ReadonlyArray<number>
  readonly winner: number | undefined
  readonly reason: 'succeeded' | 'failed' | 'schedule'
  readonly lefts: ReadonlyArray<string>
  readonly aborted: ReadonlyArray<number>
}

/**
 * The hedging of the docs as a discrete-event simulation: launch 0 at 0; after launch k the next is due
 * `delays[k]` later (none when the schedule has stopped); a due launch at the limit is dropped; a non-fatal
 * failure launches the next at once if a launch is left. `undefined` when two events fall at the same time (the
 * order would then be the clock's, not the model's).
 */
const simulate = (
  delays: ReadonlyArray<number>,
  latencies: ReadonlyArray<number>,
  outcomes: ReadonlyArray<Outcome>,
  maxConcurrent: number
): Expected | undefined => {
  const launches: Array<number> = []
  const done = new Map<number, number>()
  const lefts: Array<string> = []
  let timer: number | undefined
  let scheduleDone = false
  const launch = (now: number): void => {
    const k = launches.length
    launches.push(now)
    done.set(k, now + latencies[k])
    if (k < delays.length) timer = now + delays[k]
    else {
      scheduleDone = true
      timer = undefined
    }
  }
  launch(0)
  for (;;) {
    const times = [...done.values(), ...(timer === undefined ? [] : [timer])]
    if (new Set(times).size !== times.length) return undefined
    const [index, at] = [...done.entries()].reduce((a, b) => (b[1] < a[1] ? b : a), [-1, Infinity])
    if (timer !== undefined && timer < at) {
      const now = timer
      timer = undefined
      if (done.size < maxConcurrent) launch(now)
      continue
    }
    done.delete(index)
    const outcome = outcomes[index]
    const aborted = [...done.keys()]
    if (outcome === 'ok') return { launches, winner: index, reason: 'succeeded', lefts, aborted }
    lefts.push(`${outcome} ${index}`)
    if (outcome === 'fatal') return { launches, winner: undefined, reason: 'failed', lefts, aborted }
    if (!scheduleDone && done.size < maxConcurrent) launch(at)
    else if (done.size === 0) return { launches, winner: undefined, reason: 'schedule', lefts, aborted: [] }
  }
}

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('Hedging', () => {
  describe('hedging', () => {
    it('should launch at the schedule’s delays while none has answered, the first success winning and the others aborted', async () => {
      const clock = TestClock.make()
      const s = scripted(clock, [1_000, 1_000, 150, 1_000], ['ok', 'ok', 'ok', 'ok'])
      const { result, summary } = await run(clock, (o) => pipe(s.attempt, hedging(every(100, 3), { clock, ...o })))
      deepStrictEqual(result, E.right('ok 2'))
      deepStrictEqual(summary, { launches: [0, 100, 200, 300], winner: 2, reason: 'succeeded' })
      deepStrictEqual(s.aborted, [0, 1, 3])
      strictEqual(clock.now(), 350) // returned at once: the losers are not awaited
    })

    it('should launch as Driver.delays previews, jitter included, and the same on every run', () => {
      const policy = pipe(Schedule.exponential(10), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(4)))
      const launchesOf = async (seed: number): Promise<ReadonlyArray<number>> => {
        const clock = TestClock.make()
        const s = scripted(clock, [10_000, 10_000, 10_000, 10_000, 10_000], ['fail', 'fail', 'fail', 'fail', 'ok'])
        const { summary } = await run(clock, (o) =>
          pipe(s.attempt, hedging(policy, { clock, random: Random.seeded(seed), ...o }))
        )
        return summary.launches
      }
      return fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 0xffffffff }), async (seed) => {
          const gaps = Driver.delays(policy, { random: Random.seeded(seed) })
          const expected = gaps.reduce<Array<number>>((times, gap) => [...times, times[times.length - 1] + gap], [0])
          const launches = await launchesOf(seed)
          deepStrictEqual(launches, expected)
          deepStrictEqual(await launchesOf(seed), launches)
        }),
        { numRuns: 30 }
      )
    })

    it('gRFC A6: should launch the next at once when an attempt fails, the delays going on from there', async () => {
      const clock = TestClock.make()
      const s = scripted(clock, [30, 500, 500, 20], ['fail', 'ok', 'ok', 'ok'])
      const { result, summary } = await run(clock, (o) => pipe(s.attempt, hedging(every(100, 3), { clock, ...o })))
      // 0 fails at 30: 1 at once; 2 is due 100 later, at 130; 3 at 230, done at 250
      deepStrictEqual(summary, { launches: [0, 30, 130, 230], winner: 3, reason: 'succeeded' })
      deepStrictEqual(result, E.right('ok 3'))
    })

    it('gRFC A6: should stop at a fatal failure, abort the others and return it', async () => {
      const clock = TestClock.make()
      const s = scripted(clock, [1_000, 50, 1_000], ['ok', 'fatal', 'ok'])
      const { result, summary } = await run(clock, (o) =>
        pipe(s.attempt, hedging(every(100, 5), { clock, isFatal, ...o }))
      )
      deepStrictEqual(result, E.left('fatal 1'))
      deepStrictEqual(summary, { launches: [0, 100], winner: undefined, reason: 'failed' })
      deepStrictEqual(s.aborted, [0])
      strictEqual(clock.pending, 0) // no timer left behind
    })

    it('should keep at most maxConcurrent in flight, a failure freeing a slot for the next at once', async () => {
      const clock = TestClock.make()
      const s = scripted(clock, [500, 300, 1_000, 40], ['fail', 'fail', 'fail', 'ok'])
      const { result, summary } = await run(clock, (o) =>
        pipe(s.attempt, hedging(every(10, 3), { clock, maxConcurrent: 2, ...o }))
      )
      // 0 and 1 by 10; 2 (due at 20) waits for a slot: 1 fails at 310; 0 fails at 500: 3 launched, done at 540
      deepStrictEqual(summary, { launches: [0, 10, 310, 500], winner: 3, reason: 'succeeded' })
      deepStrictEqual(result, E.right('ok 3'))
    })

    it('should return the last Left when every attempt fails, or all of them with errors: all', async () => {
      const latencies = [300, 50, 120]
      const outcomes: ReadonlyArray<Outcome> = ['fail', 'fail', 'fail']
      const clock = TestClock.make()
      const last = await run(clock, (o) =>
        pipe(scripted(clock, latencies, outcomes).attempt, hedging(every(100, 2), { clock, ...o }))
      )
      // 1 fails at 150 and 2 is launched then, failing at 270; 0 at 300
      deepStrictEqual(last, {
        result: E.left('fail 0'),
        summary: { launches: [0, 100, 150], winner: undefined, reason: 'schedule' }
      })
      const clock2 = TestClock.make()
      const all = await run(clock2, (o) =>
        pipe(
          scripted(clock2, latencies, outcomes).attempt,
          hedging(every(100, 2), { clock: clock2, errors: 'all', ...o })
        )
      )
      deepStrictEqual(all.result, E.left(['fail 1', 'fail 2', 'fail 0']))
    })

    it('should hand every result it does not return to release: the Lefts before a win, a late success', async () => {
      const clock = TestClock.make()
      const released: Array<E.Either<string, string>> = []
      const s = scripted(clock, [50, 200, 50], ['fail', 'ok', 'ok'])
      const attempt: Attempt<string, string> = ({ signal, index }) =>
        // attempt 1 ignores its signal: its success arrives after the call has ended
        index === 1 ? () => clock.sleep(200).then(() => E.right('ok 1')) : s.attempt({ signal, index })
      const { result } = await run(clock, (o) =>
        pipe(
          attempt,
          hedging(every(100, 2), { clock, release: (r: E.Either<string, string>) => void released.push(r), ...o })
        )
      )
      deepStrictEqual(result, E.right('ok 2'))
      deepStrictEqual(released, [E.left('fail 0'), E.right('ok 1')])
    })

    it('should ignore a release that throws or rejects', async () => {
      const clock = TestClock.make()
      const s = scripted(clock, [10, 20], ['fail', 'ok'])
      const { result } = await run(clock, (o) =>
        pipe(
          s.attempt,
          hedging(every(100, 1), {
            clock,
            release: (r) => {
              if (r._tag === 'Left') throw new Error('cannot release')
            },
            ...o
          })
        )
      )
      deepStrictEqual(result, E.right('ok 1'))
    })

    it('should stop launching and abort every attempt when the caller’s signal aborts, returning the last Left', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const s = scripted(clock, [1_000, 1_000, 1_000], ['ok', 'ok', 'ok'])
      const summaries: Array<Summary> = []
      const pending = pipe(
        s.attempt,
        hedging(every(100, 2), { clock, signal: controller.signal, onDone: (x) => void summaries.push(x) })
      )()
      await clock.advance(150)
      controller.abort(new Error('shutting down'))
      await clock.runAll()
      deepStrictEqual(await pending, E.left('aborted 1'))
      deepStrictEqual(summaries.map(launchesOf), [{ launches: [0, 100], winner: undefined, reason: 'aborted' }])
      deepStrictEqual(s.aborted, [0, 1])
      strictEqual(clock.now(), 150)
    })

    it('should reject with the reason of a signal aborted before the start, launching nothing', async () => {
      const controller = new AbortController()
      const reason = new Error('gone')
      controller.abort(reason)
      const clock = TestClock.make()
      const s = scripted(clock, [10], ['ok'])
      await expect(pipe(s.attempt, hedging(every(10, 1), { clock, signal: controller.signal }))()).rejects.toBe(reason)
      deepStrictEqual(s.started, [])
    })

    it('should reject with an attempt’s defect, aborting the others, and ignore a loser’s rejection after the end', async () => {
      const clock = TestClock.make()
      const boom = new Error('boom')
      const aborted: Array<number> = []
      const defective: Attempt<string, string> =
        ({ signal, index }) =>
        async () => {
          signal.addEventListener('abort', () => aborted.push(index))
          await clock.sleep(index === 0 ? 1_000 : 50, signal)
          if (index === 1) throw boom
          return E.right('ok')
        }
      const rejection = pipe(defective, hedging(every(100, 3), { clock }))().then(
        () => undefined,
        (e: unknown) => e
      )
      await clock.runAll()
      strictEqual(await rejection, boom)
      deepStrictEqual(aborted, [0])

      const clock2 = TestClock.make()
      const lateDefect: Attempt<string, string> =
        ({ index }) =>
        async () => {
          await clock2.sleep(index === 0 ? 1_000 : 50)
          if (index === 0) throw boom
          return E.right(`ok ${index}`)
        }
      const won = pipe(lateDefect, hedging(every(100, 1), { clock: clock2 }))()
      await clock2.runAll()
      deepStrictEqual(await won, E.right('ok 1'))
    })

    it('should reject with the error of an action that throws instead of returning a task', async () => {
      const boom = new Error('boom')
      const throwing: Attempt<string, string> = () => {
        throw boom
      }
      const controller = new AbortController()
      await expect(
        pipe(throwing, hedging(every(10, 1), { clock: TestClock.make(), signal: controller.signal }))()
      ).rejects.toBe(boom)
    })

    describe('budget (gRFC A6 throttling)', () => {
      it('should count non-fatal failures and the success, not fatal failures nor aborted attempts', async () => {
        const clock = TestClock.make()
        const told: Array<string> = []
        const budget: RetryBudget = {
          onSuccess: ({ latency, now, retries }) => void told.push(`success ${latency} at ${now} (${retries})`),
          onFailure: ({ latency, now, retries, retrying }) => (
            told.push(`failure ${latency} at ${now} (${retries}, ${retrying})`), true
          )
        }
        const s = scripted(clock, [30, 1_000, 80], ['fail', 'ok', 'ok'])
        await run(clock, (o) => pipe(s.attempt, hedging(every(100, 2), { clock, budget, ...o })))
        // the winner is the third attempt, but only one hedge was prompted (and paid) by a failure: its timer sent the other
        deepStrictEqual(told, ['failure 30 at 30 (0, true)', 'success 80 at 210 (1)'])

        const clock2 = TestClock.make()
        told.length = 0
        const s2 = scripted(clock2, [30, 10], ['fail', 'fatal'])
        await run(clock2, (o) => pipe(s2.attempt, hedging(every(100, 2), { clock: clock2, budget, isFatal, ...o })))
        deepStrictEqual(told, ['failure 30 at 30 (0, true)']) // the fatal failure is not counted
      })

      // Regression: a hedge its timer sent was charged nothing, yet its success was refunded as a paid retry's.
      it('should give a retry quota back only what its retries took', async () => {
        const quota = Budget.retryQuota({ tokens: 100 })
        const failure = { latency: 0, now: 0, retries: 0, error: 'x', retrying: true }
        for (let i = 0; i < 10; i++) quota.onFailure(failure) // 50 left
        const clock = TestClock.make()
        const s = scripted(clock, [1_000, 5], ['ok', 'ok'])
        const { summary } = await run(clock, (o) =>
          pipe(s.attempt, hedging(every(10, 1), { clock, budget: quota, ...o }))
        )
        deepStrictEqual(summary, { launches: [0, 10], winner: 1, reason: 'succeeded' })
        strictEqual(quota.tokens, 51) // noRetryIncrement: no retry was paid
      })

      it('should always send the first attempt, and a hedge only while the token bucket is above half', async () => {
        const bucket = Budget.retryThrottle({ maxTokens: 4, tokenRatio: 1 })
        const failure = { latency: 0, now: 0, retries: 0, error: 'x', retrying: false }
        bucket.onFailure(failure) // 3 tokens
        bucket.onFailure(failure) // 2: at half, throttled
        const clock = TestClock.make()
        const s = scripted(clock, [500, 10], ['ok', 'ok'])
        const { result, summary } = await run(clock, (o) =>
          pipe(s.attempt, hedging(every(100, 3), { clock, budget: bucket, ...o }))
        )
        deepStrictEqual(summary, { launches: [0], winner: 0, reason: 'succeeded' })
        deepStrictEqual(result, E.right('ok 0'))
        strictEqual(bucket.tokens, 3) // the success gave one back: hedges may go again
        const clock2 = TestClock.make()
        const s2 = scripted(clock2, [500, 10], ['ok', 'ok'])
        const again = await run(clock2, (o) =>
          pipe(s2.attempt, hedging(every(100, 3), { clock: clock2, budget: bucket, ...o }))
        )
        deepStrictEqual(again.summary, { launches: [0, 100], winner: 1, reason: 'succeeded' })
      })

      it('should stop launching when the budget refuses the hedge a failure prompts, ending with reason budget', async () => {
        const clock = TestClock.make()
        const bucket = Budget.retryThrottle({ maxTokens: 3, tokenRatio: 0.1 })
        const s = scripted(clock, [20, 30, 1_000], ['fail', 'fail', 'ok'])
        const { result, summary } = await run(clock, (o) =>
          pipe(s.attempt, hedging(every(100, 5), { clock, budget: bucket, ...o }))
        )
        // 3 -> 2 tokens at 20 (2 > 1.5: the next goes at once), 2 -> 1 at 50: refused
        deepStrictEqual(summary, { launches: [0, 20], winner: undefined, reason: 'budget' })
        deepStrictEqual(result, E.left('fail 1'))
      })

      it('should await a budget that answers with promises', async () => {
        const clock = TestClock.make()
        const budget: RetryBudget = {
          onSuccess: () => Promise.resolve(),
          onFailure: () => Promise.resolve(true),
          allows: () => Promise.resolve(false)
        }
        const s = scripted(clock, [20, 500, 30], ['fail', 'ok', 'ok'])
        const { summary } = await run(clock, (o) => pipe(s.attempt, hedging(every(100, 2), { clock, budget, ...o })))
        // the failure's hedge is allowed (onFailure), the timer's is not (allows): 2 never goes
        deepStrictEqual(summary, { launches: [0, 20], winner: 1, reason: 'succeeded' })
      })

      it('should tell its events: launches, attempts, the winner, the losers aborted and the stop', async () => {
        const clock = TestClock.make()
        const events: Array<string> = []
        const s = scripted(clock, [30, 10, 500], ['fail', 'ok', 'ok'])
        const onEvent = (e: Event.Event) =>
          void events.push(
            `${e.at} ${e._tag}${'index' in e ? ` ${e.index}` : ''}${'attempt' in e ? ` #${e.attempt}` : ''}${
              'reason' in e ? ` ${e.reason}` : ''
            }`
          )
        await run(clock, (o) => pipe(s.attempt, hedging(every(20, 2), { clock, onEvent, ...o })))
        deepStrictEqual(events, [
          '0 HedgeLaunched 0',
          '0 AttemptStarted #1',
          '20 HedgeLaunched 1',
          '20 AttemptStarted #2',
          '30 AttemptFailed #1',
          '30 HedgeLaunched 2',
          '30 AttemptStarted #3',
          '30 AttemptSucceeded #2',
          '30 HedgeWon 1',
          '30 HedgeAborted 2',
          '30 RunStopped succeeded'
        ])
      })

      it('should launch no hedge while a guard answers a failure by promise (issue 18, defect 9)', async () => {
        const launchesWith = async (answer: (clock: TestClock.TestClock) => boolean | Promise<boolean>) => {
          const clock = TestClock.make()
          const budget: RetryBudget = { onSuccess: () => undefined, onFailure: () => answer(clock) }
          const s = scripted(clock, [8, 1_000, 1_000, 1_000], ['fail', 'fail', 'fail', 'fail'])
          const { summary } = await run(clock, (o) => pipe(s.attempt, hedging(every(10, 3), { clock, budget, ...o })))
          return summary.launches
        }
        deepStrictEqual(await launchesWith(() => true), [0, 8, 18, 28])
        // the same budget answering 5 ms later: the failure's hedge waits for it, and the timer's does not jump in
        deepStrictEqual(await launchesWith((clock) => clock.sleep(5).then(() => true)), [0, 13, 23, 33])
      })

      it('should tell its own guards, in order after the budget, and stop with the reason of the one that refused', async () => {
        const clock = TestClock.make()
        const told: Array<boolean> = []
        const closed = {
          reason: 'breaker' as const,
          readsTime: false,
          admit: (o: { retrying: boolean }) => (told.push(o.retrying), false)
        }
        const s = scripted(clock, [8, 1_000], ['fail', 'fail'])
        const { summary } = await run(clock, (o) =>
          pipe(s.attempt, hedging(every(10, 3), { clock, guards: [closed], ...o }))
        )
        deepStrictEqual(summary, { launches: [0], winner: undefined, reason: 'breaker' })
        deepStrictEqual(told, [true])
      })
    })

    describe('bad input', () => {
      it('should refuse a maxConcurrent or an errors out of range, naming the argument and the value', () => {
        for (const maxConcurrent of [0, -1, 1.5, NaN, null]) {
          throwsRangeError(
            () => hedging(every(1, 1), { maxConcurrent: maxConcurrent as number }),
            new RegExp(
              `^hedging: options\\.maxConcurrent must be a whole number >= 1, received ${String(maxConcurrent)}$`
            )
          )
        }
        throwsRangeError(
          () => hedging(every(1, 1), { errors: null as unknown as 'all' }),
          /^hedging: options\.errors must be 'last' or 'all', received null$/
        )
        const errors = 'first' as unknown as 'all'
        throwsRangeError(
          () => hedging(every(1, 1), { errors }),
          /^hedging: options\.errors must be 'last' or 'all', received "first"$/
        )
      })

      it('should refuse a schedule, a hook or an action that is not one', () => {
        throwsTypeError(
          () => hedging(100 as unknown as Schedule.Schedule<unknown>),
          /^hedging: schedule must be a Schedule, received 100$/
        )
        const options = { isFatal: true } as unknown as HedgingOptions<string, string>
        throwsTypeError(() => hedging(every(1, 1), options), /^hedging: options\.isFatal must be a function/)
        throwsTypeError(
          () => hedging(every(1, 1))(null as unknown as Attempt<string, string>),
          /^hedging: action must be a function/
        )
      })
    })

    describe('properties', () => {
      const outcomeArbitrary = fc.constantFrom<Outcome>('ok', 'fail', 'fail', 'fatal')

      it('should launch, win, fail and abort exactly as the reference model, on every run', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 6 }).chain((hedges) =>
              fc.record({
                delays: fc.array(fc.integer({ min: 1, max: 300 }), { minLength: hedges, maxLength: hedges }),
                latencies: fc.array(fc.integer({ min: 1, max: 1_000 }), {
                  minLength: hedges + 1,
                  maxLength: hedges + 1
                }),
                outcomes: fc.array(outcomeArbitrary, { minLength: hedges + 1, maxLength: hedges + 1 }),
                maxConcurrent: fc.integer({ min: 1, max: 8 })
              })
            ),
            async ({ delays, latencies, outcomes, maxConcurrent }) => {
              const expected = simulate(delays, latencies, outcomes, maxConcurrent)
              fc.pre(expected !== undefined)
              if (expected === undefined) return
              const clock = TestClock.make()
              const s = scripted(clock, latencies, outcomes)
              const { result, summary } = await run(clock, (o) =>
                pipe(s.attempt, hedging(Schedule.fromDelays(delays), { clock, isFatal, maxConcurrent, ...o }))
              )
              deepStrictEqual(summary, {
                launches: expected.launches,
                winner: expected.winner,
                reason: expected.reason
              })
              deepStrictEqual(
                result,
                expected.winner === undefined
                  ? E.left(expected.lefts[expected.lefts.length - 1])
                  : E.right(`ok ${expected.winner}`)
              )
              deepStrictEqual([...s.aborted].sort(), [...expected.aborted].sort())
            }
          ),
          { numRuns: 300 }
        )
      })
    })
  })

  describe('Http.hedgingFetch', () => {
    it('should refuse a request that is not idempotent before any I/O, and accept one with an Idempotency-Key', async () => {
      const server = await startServer((_, res) => res.end('done'))
      try {
        const post = Http.hedgingFetch(every(1_000, 1))
        const refused = await post(`${server.url}/orders`, { method: 'POST', body: '{}' })()
        strictEqual(refused._tag === 'Left' && refused.left._tag, 'InvalidRequestError')
        strictEqual(
          refused._tag === 'Left' &&
            refused.left._tag === 'InvalidRequestError' &&
            /not idempotent/.test(refused.left.message),
          true
        )
        strictEqual(server.received.length, 0)
        const keyed = await post(`${server.url}/orders`, {
          method: 'POST',
          body: '{}',
          headers: { 'Idempotency-Key': 'k1' }
        })()
        strictEqual(keyed._tag === 'Right' && (await keyed.right.text()), 'done')
        const stream = new ReadableStream({ start: (c) => c.close() })
        const streamed = await Http.hedgingFetch(every(1_000, 1), { idempotent: true })(`${server.url}/`, {
          method: 'PUT',
          body: stream,
          duplex: 'half'
        } as RequestInit)()
        strictEqual(streamed._tag === 'Left' && streamed.left._tag, 'InvalidRequestError')
        strictEqual(server.received.length, 1)
      } finally {
        await server.close()
      }
    })

    it('should send a hedge when the first request is slow, return the fast answer and abort the slow request', async () => {
      const clock = TestClock.make()
      const server = await startServer((_, res, n) => {
        if (n === 2) res.end('fast') // the first is left hanging
      })
      try {
        const summaries: Array<Summary> = []
        const get = Http.hedgingFetch(every(100, 2), { clock, onDone: (s) => void summaries.push(s) })
        const pending = get(`${server.url}/item`)()
        await waitFor(() => server.received.length === 1)
        await clock.advance(100)
        const result = await pending
        strictEqual(result._tag === 'Right' && (await result.right.text()), 'fast')
        deepStrictEqual(summaries.map(launchesOf), [{ launches: [0, 100], winner: 1, reason: 'succeeded' }])
        await waitFor(() => server.abortedResponses() === 1) // the loser's connection was torn down
        strictEqual(clock.pending, 0)
      } finally {
        await server.close()
      }
    })

    it('should release the body of a 503 it does not return, and return a 404 at once as fatal', async () => {
      const clock = TestClock.make()
      const server = await startServer((req, res, n) => {
        res.statusCode = n === 1 ? 503 : req.url === '/missing' ? 404 : 200
        res.end(n === 1 ? 'busy' : 'body')
      })
      try {
        const seen: Array<Http.HttpError> = []
        const get = Http.hedgingFetch(every(10_000, 2), { clock, isFatal: (e) => (seen.push(e), !Http.isTransient(e)) })
        const result = await get(`${server.url}/item`)() // 503, then at once the hedge: 200
        strictEqual(result._tag === 'Right' && (await result.right.text()), 'body')
        strictEqual(seen.length, 1)
        strictEqual(seen[0]._tag === 'StatusError' && seen[0].response.bodyUsed, true)
        const missing = await get(`${server.url}/missing`)()
        strictEqual(missing._tag === 'Left' && missing.left._tag === 'StatusError' && missing.left.status, 404)
        strictEqual(server.received.length, 3)
      } finally {
        await server.close()
      }
    })

    it('should give each attempt its own signal, linked to the caller’s: aborting the call returns an AbortError', async () => {
      const clock = TestClock.make()
      const server = await startServer(() => undefined) // never answers
      try {
        const controller = new AbortController()
        const pending = Http.hedgingFetch(every(100, 1), { clock })(`${server.url}/`, { signal: controller.signal })()
        await waitFor(() => server.received.length === 1)
        await clock.advance(100)
        await waitFor(() => server.received.length === 2)
        controller.abort(new Error('bye'))
        const result = await pending
        strictEqual(result._tag === 'Left' && result.left._tag, 'AbortError')
        await waitFor(() => server.abortedResponses() === 2)
      } finally {
        await server.close()
      }
    })

    it('should name itself in the errors of bad options', () => {
      throwsRangeError(
        () => Http.hedgingFetch(every(1, 1), { maxConcurrent: 0 }),
        /^Http\.hedgingFetch: options\.maxConcurrent must be/
      )
      throwsRangeError(
        () => Http.hedgingFetch(every(1, 1), { attemptTimeout: -1 }),
        /^Http\.hedgingFetch: options\.attemptTimeout/
      )
    })
  })
})
