/**
 * A rate limit shared by a fleet: `RateLimiter.gcra`'s GCRA kept in Redis, so that every process that uses
 * the same key draws on one bucket, on the server's time.
 *
 * It implements the `RateLimiter.RateLimiter` interface, answering by promise: use it with `RateLimiter.throttle`
 * and `RateLimiter.throttleSignalled` (a call waits for its turn on the run's clock, abortably) or as a guard of
 * the runners (`RateLimiter.asGuard`). While Redis cannot answer, it goes on by a documented local rule and says
 * so.
 *
 * This module loads no Redis client: it takes one you made (an ioredis `Redis` or `Cluster`).
 *
 * @since 1.0.0
 */
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import * as RateLimiter from './RateLimiter'
import type { RedisClient } from './RedisBudget'
import { checkClient, checkKey, script } from './internal/redis'
import { health, serviceOptions, within } from './internal/service'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a limiter does while Redis cannot answer within `timeout`: go on with a token bucket of this process at the
 * fleet's rate divided by `processes` (`'local'`), let every call through at once (`'allow'`), or refuse every
 * `take` (`'refuse'`; a reservation, which cannot be refused, waits its turn on the local bucket).
 *
 * @example
 * import type { Fallback } from 'fp-ts-retry/RedisRateLimiter'
 *
 * const fallback: Fallback = 'local'
 *
 * @category model
 * @since 1.0.0
 */
export type Fallback = 'local' | 'allow' | 'refuse'

/**
 * Options of {@link gcra}: the client, the key of the shared bucket, the fleet's `rate` tokens every `per`
 * ms and its `burst` (as `RateLimiter.gcra`'s); how long a Redis call may take (`timeout`, ms, default
 * 100), what to do when it takes longer or fails (`fallback`, default `'local'`), how many processes share the
 * limit (`processes`, default 1: the local bucket's share), and an observer.
 *
 * @example
 * import type { GcraOptions } from 'fp-ts-retry/RedisRateLimiter'
 * import type { RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * // 100 calls a second for the whole fleet of 4 processes, 10 at once
 * const optionsFor = (redis: RedisClient): GcraOptions => ({ redis, key: 'rate:payments-api', rate: 100, per: 1_000, burst: 10, processes: 4 })
 *
 * @category model
 * @since 1.0.0
 */
export interface GcraOptions {
  readonly redis: RedisClient
  readonly key: string
  readonly rate: number
  readonly per: number
  readonly burst: number
  readonly timeout?: number | undefined
  readonly fallback?: Fallback | undefined
  readonly processes?: number | undefined
  readonly onEvent?: Observer | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * `RateLimiter.gcra`'s GCRA in Lua, on one hash: `t` the theoretical arrival time of the next token (ms on
 * the server's clock) and `n` the changes made, which tells a cancel whether its reservation was the last one.
 * ARGV: the operation (`t` take, `r` reserve, `c` cancel), `per`, `rate`, `burst`, and for a cancel the `n` of
 * its reservation. A take answers 1 or 0; a reserve { wait (ms, as a string: a Lua number would be truncated),
 * n }. The key expires once the bucket is full again, when it is the same as no key.
 */
const SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local interval = tonumber(ARGV[2]) / tonumber(ARGV[3])
local tolerance = interval * tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'n')
local tat = tonumber(state[1]) or 0
local n = tonumber(state[2]) or 0
local function save()
  if tat <= now then
    redis.call('DEL', KEYS[1])
  else
    redis.call('HSET', KEYS[1], 't', string.format('%.17g', tat), 'n', n)
    redis.call('PEXPIRE', KEYS[1], math.ceil(tat - now))
  end
end
local op = ARGV[1]
if op == 'c' then
  if n == tonumber(ARGV[5]) then
    tat, n = tat - interval, n - 1
    save()
  end
  return 1
end
local next = math.max(tat, now) + interval
local due = next - tolerance
if op == 't' and due > now then return 0 end
tat, n = next, n + 1
save()
if op == 't' then return 1 end
local wait = 0
if due > now then wait = due - now end
return { string.format('%.17g', wait), n }
`

/** The service named in the limiter's `ServiceUnavailable` and `ServiceRecovered` events. */
const SERVICE = 'rate limiter'

/**
 * A rate limit shared by every process whose limiter has the same `key`: `RateLimiter.gcra` kept in Redis.
 *
 * **Details**
 *
 * - The rules of `RateLimiter.gcra` (the GCRA): `burst` tokens, one more every `per / rate` ms; `take()`
 *   takes a token if one is there and no reservation waits for it; `reserve()` reserves the next one in turn, and
 *   its `cancel()` gives it back only if nothing was taken or reserved after it. Every process should give the
 *   same `rate`, `per` and `burst` for a key.
 * - Each answer is one `EVALSHA` of one script (an `EVAL` the first time a server has not seen it): atomic, on the
 *   server's `TIME`, so the processes' clocks need not agree. The key is a small hash that expires once the bucket
 *   is full again.
 * - Every Redis call is bounded by `timeout` (default 100 ms), whatever client is passed. A call that fails or
 *   does not answer in time never rejects: the limiter answers by its `fallback` and tells `ServiceUnavailable`
 *   (`source: 'rateLimit'`, `service: 'rate limiter'`) through `onEvent`, then `ServiceRecovered` once Redis
 *   answers again. `'local'` (the default) is a `RateLimiter.gcra` in this process at `rate / processes`,
 *   with a burst of `max(1, floor(burst / processes))`, full when the outage starts: with `processes` the number
 *   of processes sharing the key, the fleet keeps about its rate (with the default of 1, each process may go at
 *   the fleet's whole rate). `'allow'` lets every call through at once; `'refuse'` refuses every `take` (a guard's
 *   retries end with reason `'rateLimit'`), and paces reservations on the local bucket, since a throttled call
 *   cannot be refused. A reservation's `cancel()` goes where its reservation was made, and never rejects.
 * - `onEvent` is told `RateLimitWaited` and `RateLimitRefused` as `RateLimiter.gcra` tells them, whichever
 *   answered.
 * - Bad options are a `TypeError` or `RangeError` naming them.
 *
 * @example
 * import * as RedisRateLimiter from 'fp-ts-retry/RedisRateLimiter'
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import Redis from 'ioredis'
 *
 * // needs a Redis server: defined, not called here
 * export function throttledForTheFleet(call: TaskEither<Error, string>) {
 *   const redis = new Redis({ host: '127.0.0.1', port: 6379 })
 *   const limiter = RedisRateLimiter.gcra({ redis, key: 'rate:payments-api', rate: 100, per: 1_000, burst: 10, processes: 4 })
 *   return pipe(call, RateLimiter.throttle(limiter))
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const gcra = (options: GcraOptions): RateLimiter.RateLimiter => {
  const where = 'RedisRateLimiter.gcra'
  validate.object(where, 'options', options)
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const positive = (name: string, value: number): number => validate.positive(where, `options.${name}`, value)
  const whole = (name: string, value: number): number => validate.positiveCount(where, `options.${name}`, value)
  const rate = positive('rate', options.rate)
  const per = positive('per', options.per)
  const burst = whole('burst', options.burst)
  const processes = options.processes === undefined ? 1 : whole('processes', options.processes)
  const { fallback, timeout } = serviceOptions(where, options)
  const clock = LiveClock.live
  const local = RateLimiter.gcra({
    rate: rate / processes,
    per,
    burst: Math.max(1, Math.floor(burst / processes)),
    clock
  })
  const service = health('rateLimit', SERVICE, fallback, clock.now, options.onEvent)
  const evaluate = script(redis, SCRIPT)
  /** The script's answer, read by `read`; a rejection when Redis fails, answers nonsense or takes over `timeout`. */
  const run = async <A>(read: (answer: unknown) => A, op: string, ...rest: Array<number>): Promise<A> => {
    try {
      const answer = read(await within(clock, timeout, SERVICE, () => evaluate(key, op, per, rate, burst, ...rest)))
      service.answered()
      return answer
    } catch (e) {
      service.failed(e)
      throw e
    }
  }
  const take = (): Promise<boolean> =>
    run((answer) => Number(answer) === 1, 't').catch(
      () => fallback === 'allow' || (fallback === 'local' && (local.take() as boolean))
    )
  const reserve = (): Promise<RateLimiter.Reservation> =>
    run(decode, 'r').then(
      ([wait, n]) => {
        let cancelled = false
        return {
          wait,
          cancel: async () => {
            if (cancelled) return
            cancelled = true
            // A cancel that cannot reach Redis loses its token: never more through than the limit.
            await run(Number, 'c', n).catch(() => undefined)
          }
        }
      },
      () => (fallback === 'allow' ? { wait: 0, cancel: () => undefined } : (local.reserve() as RateLimiter.Reservation))
    )
  return RateLimiter.observed(options.onEvent, clock.now, { take, reserve })
}

// -------------------------------------------------------------------------------------
// internal
// -------------------------------------------------------------------------------------

/** Reads a reservation's answer; anything else is a `TypeError` (taken as Redis failing). */
const decode = (answer: unknown): readonly [number, number] => {
  const [wait, n] = Array.isArray(answer) ? answer.map(Number) : []
  if (!(wait >= 0 && Number.isInteger(n))) {
    throw new TypeError(`RedisRateLimiter: the script answered ${JSON.stringify(answer)}`)
  }
  return [wait, n]
}
