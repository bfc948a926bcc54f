/**
 * A rate limit shared by a fleet: `RateLimiter.gcra`'s GCRA ({@link gcra}), or a fixed or sliding window
 * ({@link fixedWindow}, {@link slidingWindow}), kept in Redis, so that every process that uses the same key draws
 * on one limit, on the server's time.
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
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import * as RateLimiter from './RateLimiter'
import type { RedisClient } from './RedisBudget'
import { checkClient, checkKey, deadlinedScript } from './internal/redis'
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

/**
 * Options of {@link fixedWindow} and {@link slidingWindow}: the client, the key of the shared limit, the fleet's
 * `limit` tokens in a window of `window` ms (as `RateLimiter.fixedWindow`'s and `RateLimiter.slidingWindow`'s), and
 * `timeout`, `fallback`, `processes` and `onEvent` as {@link GcraOptions}'s.
 *
 * @example
 * import type { WindowOptions } from 'fp-ts-retry/RedisRateLimiter'
 * import type { RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * // 6,000 calls a minute for the whole fleet of 4 processes
 * const optionsFor = (redis: RedisClient): WindowOptions => ({ redis, key: 'rate:search-api', limit: 6_000, window: 60_000, processes: 4 })
 *
 * @category model
 * @since 1.0.0
 */
export interface WindowOptions {
  readonly redis: RedisClient
  readonly key: string
  readonly limit: number
  readonly window: number
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
const GCRA = `
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
 * - A take, reservation or cancel the limiter stopped waiting for never lands later (sent by the client's offline
 *   queue once Redis is back, or read late by a paused server): each carries a deadline on the server's clock,
 *   `timeout` after the call (learnt from the `TIME` every answer carries; read at its earliest, so a call may be
 *   refused up to a round trip early, never late), and the script changes nothing at or past it. So no token is
 *   taken for a call the fallback answered, and a cancel that comes late loses its token, as one that cannot reach
 *   Redis does: given back late, it could be another reservation's (the count that tells a cancel whether its
 *   reservation was the last starts afresh when the key expires or the server restarts empty), and let one call
 *   more through than the limit. The first call costs one round trip more, to learn the server's clock.
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
  const rate = validate.positive(where, 'options.rate', options.rate)
  const per = validate.positive(where, 'options.per', options.per)
  const burst = validate.positiveCount(where, 'options.burst', options.burst)
  return shared(where, options, GCRA, [per, rate, burst], (processes, clock) =>
    RateLimiter.gcra({ rate: rate / processes, per, burst: share(burst, processes), clock })
  )
}

/**
 * `RateLimiter.fixedWindow` in Lua, on one hash: `w` the last window a token went to (its index: the server's
 * time in ms divided by `window`, rounded down), `c` the tokens in it, `n` the changes made. ARGV: the operation,
 * `limit`, `window`, and for a cancel the `w` and `n` of its reservation (both, so that a reservation older than
 * the key never matches). A reserve answers { wait, w, n }, as strings. The key expires when its window ends.
 */
const FIXED_WINDOW = `
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'w', 'c', 'n')
local w = tonumber(state[1]) or -1
local c = tonumber(state[2]) or 0
local n = tonumber(state[3]) or 0
local function save()
  local ends = (w + 1) * window
  if ends <= now then
    redis.call('DEL', KEYS[1])
  else
    redis.call('HSET', KEYS[1], 'w', string.format('%.17g', w), 'c', c, 'n', n)
    redis.call('PEXPIRE', KEYS[1], math.ceil(ends - now))
  end
end
local op = ARGV[1]
if op == 'c' then
  if w == tonumber(ARGV[4]) and n == tonumber(ARGV[5]) then
    c, n = c - 1, n - 1
    if c == 0 then w, c = w - 1, limit end
    save()
  end
  return 1
end
local current = math.floor(now / window)
local into = w
if w < current then into = current elseif c >= limit then into = w + 1 end
if op == 't' and into > current then return 0 end
if into == w then c = c + 1 else c = 1 end
w, n = into, n + 1
save()
if op == 't' then return 1 end
return { string.format('%.17g', math.max(0, w * window - now)), string.format('%.17g', w), tostring(n) }
`

/**
 * `RateLimiter.slidingWindow` in Lua, on one list: the last `limit` tokens, oldest first, each `"<time> <n>"` (its
 * time in ms on the server's clock, and the count of changes it made, which tells a cancel whether its
 * reservation is the last). ARGV: the operation, `limit`, `window`, and for a cancel its reservation's entry and
 * the entry it pushed out (`''`: none). A reserve answers { wait, entry, pushed out }. The key expires when its
 * last token leaves the window.
 */
const SLIDING_WINDOW = `
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local key = KEYS[1]
local function expire()
  local last = redis.call('LINDEX', key, -1)
  if not last then return end
  local ends = tonumber(string.match(last, '^(%S+)')) + window
  if ends <= now then redis.call('DEL', key) else redis.call('PEXPIRE', key, math.ceil(ends - now)) end
end
local last = redis.call('LINDEX', key, -1)
local op = ARGV[1]
if op == 'c' then
  if last == ARGV[4] then
    redis.call('RPOP', key)
    if ARGV[5] ~= '' then redis.call('LPUSH', key, ARGV[5]) end
    expire()
  end
  return 1
end
local size = redis.call('LLEN', key)
local due = now
if size >= limit then
  due = math.max(now, tonumber(string.match(redis.call('LINDEX', key, -limit), '^(%S+)')) + window)
end
if op == 't' and due > now then return 0 end
local n = 1
if last then n = tonumber(string.match(last, ' (%d+)$')) + 1 end
local entry = string.format('%.17g', due) .. ' ' .. n
local out = ''
if size >= limit then out = redis.call('LPOP', key) end
redis.call('RPUSH', key, entry)
expire()
if op == 't' then return 1 end
return { string.format('%.17g', due - now), entry, out }
`

/**
 * A fixed-window limit shared by every process whose limiter has the same `key`: `RateLimiter.fixedWindow` kept
 * in Redis.
 *
 * **Details**
 *
 * - The rules of `RateLimiter.fixedWindow`: at most `limit` tokens in each window of `window` ms, the windows
 *   aligned on the server's clock (multiples of `window` ms since the epoch), so **up to `2 * limit` in `window`
 *   ms across a boundary**. Every process should give the same `limit` and `window` for a key.
 * - One small hash a key (three numbers), which expires when its window ends; one script a call, on the server's
 *   `TIME`, with one key (so it works on a Redis Cluster).
 * - `timeout`, `fallback` (a `RateLimiter.fixedWindow` of this process with a limit of
 *   `max(1, floor(limit / processes))` by default), `processes`, `onEvent` and each call's deadline (a call that
 *   comes late changes nothing) as {@link gcra}'s.
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
 *   const limiter = RedisRateLimiter.fixedWindow({ redis, key: 'rate:search-api', limit: 6_000, window: 60_000, processes: 4 })
 *   return pipe(call, RateLimiter.throttle(limiter))
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const fixedWindow = (options: WindowOptions): RateLimiter.RateLimiter =>
  windowed('RedisRateLimiter.fixedWindow', options, FIXED_WINDOW, RateLimiter.fixedWindow)

/**
 * A sliding-window limit shared by every process whose limiter has the same `key`: `RateLimiter.slidingWindow`
 * kept in Redis.
 *
 * **Details**
 *
 * - The rules of `RateLimiter.slidingWindow`: at most `limit` tokens in any window of `window` ms, exactly, on
 *   the server's clock. Every process should give the same `limit` and `window` for a key.
 * - One list a key, of at most `limit` entries (about 25 bytes each), which expires when its last token leaves
 *   the window; one script a call, on the server's `TIME`, with one key (so it works on a Redis Cluster). A
 *   reservation's `cancel()` sends back the entry it made and the one it pushed out.
 * - `timeout`, `fallback` (a `RateLimiter.slidingWindow` of this process with a limit of
 *   `max(1, floor(limit / processes))` by default), `processes`, `onEvent` and each call's deadline (a call that
 *   comes late changes nothing) as {@link gcra}'s.
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
 * export function guardedForTheFleet(call: TaskEither<Error, string>) {
 *   const redis = new Redis({ host: '127.0.0.1', port: 6379 })
 *   // at most 20 retries in any minute, across the fleet
 *   const retries = RedisRateLimiter.slidingWindow({ redis, key: 'retries:search-api', limit: 20, window: 60_000 })
 *   return RateLimiter.asGuard(retries)
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const slidingWindow = (options: WindowOptions): RateLimiter.RateLimiter =>
  windowed('RedisRateLimiter.slidingWindow', options, SLIDING_WINDOW, RateLimiter.slidingWindow)

// -------------------------------------------------------------------------------------
// internal
// -------------------------------------------------------------------------------------

/** The options every limiter kept in Redis takes, beside its algorithm's. */
type SharedOptions = Pick<GcraOptions, 'redis' | 'key' | 'timeout' | 'fallback' | 'processes' | 'onEvent'>

/**
 * A limiter kept in Redis by `source`, one script on one key (ARGV: the operation, `t` take, `r` reserve or `c`
 * cancel, then `params`; for a cancel, then what its reservation answered after its wait), with every call bounded
 * by `timeout` and answered by the fallback while Redis cannot answer: `local(processes, clock)`, this process's
 * share of the limit, or everything (`'allow'`), or no `take` (`'refuse'`). Every call is a change, run by
 * `deadlinedScript` with `timeout` as its deadline (the script's `now` is the server's time, in ms).
 */
const shared = (
  where: string,
  options: SharedOptions,
  source: string,
  params: ReadonlyArray<number>,
  local: (processes: number, clock: Clock) => RateLimiter.RateLimiter
): RateLimiter.RateLimiter => {
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const processes =
    options.processes === undefined ? 1 : validate.positiveCount(where, 'options.processes', options.processes)
  const { fallback, timeout } = serviceOptions(where, options)
  const clock = LiveClock.live
  const alone = local(processes, clock)
  const service = health('rateLimit', SERVICE, fallback, clock.now, options.onEvent)
  const evaluate = deadlinedScript(where, redis, key, source)
  /** The script's answer, read by `read`; a rejection when Redis fails, answers nonsense or takes over `timeout`. */
  const run = async <A>(read: (answer: unknown) => A, op: string, ...rest: Array<string>): Promise<A> => {
    try {
      const answer = read(await within(clock, timeout, SERVICE, () => evaluate(timeout, op, ...params, ...rest)))
      service.answered()
      return answer
    } catch (e) {
      service.failed(e)
      throw e
    }
  }
  const take = (): Promise<boolean> =>
    run((answer) => Number(answer) === 1, 't').catch(
      () => fallback === 'allow' || (fallback === 'local' && (alone.take() as boolean))
    )
  const reserve = (): Promise<RateLimiter.Reservation> =>
    run(decode, 'r').then(
      ({ wait, token }) => {
        let cancelled = false
        return {
          wait,
          cancel: async () => {
            if (cancelled) return
            cancelled = true
            // A cancel that cannot reach Redis loses its token: never more through than the limit.
            await run(Number, 'c', ...token).catch(() => undefined)
          }
        }
      },
      () => (fallback === 'allow' ? { wait: 0, cancel: () => undefined } : (alone.reserve() as RateLimiter.Reservation))
    )
  return RateLimiter.observed(options.onEvent, clock.now, { take, reserve })
}

/** {@link shared} for a window limiter: `limit` and `window` checked, and `make` as the local share. */
const windowed = (
  where: string,
  options: WindowOptions,
  source: string,
  make: (options: RateLimiter.WindowOptions) => RateLimiter.RateLimiter
): RateLimiter.RateLimiter => {
  validate.object(where, 'options', options)
  const limit = validate.positiveCount(where, 'options.limit', options.limit)
  const window = validate.positive(where, 'options.window', options.window)
  return shared(where, options, source, [limit, window], (processes, clock) =>
    make({ limit: share(limit, processes), window, clock })
  )
}

/** A process's share of `tokens` among `processes`: at least one. */
const share = (tokens: number, processes: number): number => Math.max(1, Math.floor(tokens / processes))

/**
 * Reads a reservation's answer: its wait, then what its cancel sends back (its token); anything else is a
 * `TypeError` (taken as Redis failing).
 */
const decode = (answer: unknown): { readonly wait: number; readonly token: ReadonlyArray<string> } => {
  const [wait, ...token] = Array.isArray(answer) ? answer : []
  if (!(Number(wait) >= 0 && token.length > 0 && token.every((t) => typeof t === 'string' || Number.isInteger(t)))) {
    throw new TypeError(`RedisRateLimiter: the script answered ${JSON.stringify(answer)}`)
  }
  return { wait: Number(wait), token: token.map(String) }
}
