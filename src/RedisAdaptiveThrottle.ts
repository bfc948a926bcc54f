/**
 * A client-side adaptive throttle shared by a fleet: `AdaptiveThrottle`'s counts kept in Redis, so that every process
 * whose throttle has the same key draws against one drop probability, the fleet's, on the server's time.
 *
 * It implements the `AdaptiveThrottle.AdaptiveThrottle` interface, answering `request` and `accept` by promise: use
 * it with `AdaptiveThrottle.protect` and `AdaptiveThrottle.asGuard`. While Redis cannot answer, it goes on with a
 * throttle of this process and says so.
 *
 * This module loads no Redis client: it takes one you made (an ioredis `Redis` or `Cluster`).
 *
 * @since 1.0.0
 */
import * as AdaptiveThrottle from './AdaptiveThrottle'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import { checkClient, checkKey, deadlinedScript } from './internal/redis'
import { health, serviceOptions, within } from './internal/service'
import * as validate from './internal/validate'
import type { Random } from './Random'
import * as LiveRandom from './Random'
import type { RedisClient } from './RedisBudget'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the throttle does while Redis cannot answer within `timeout`: decide on this process's own counts
 * (`'local'`), drop nothing (`'allow'`), or drop every request (`'refuse'`).
 *
 * @example
 * import type { Fallback } from 'fp-ts-retry/RedisAdaptiveThrottle'
 *
 * const fallback: Fallback = 'local'
 *
 * @category model
 * @since 1.0.0
 */
export type Fallback = 'local' | 'allow' | 'refuse'

/**
 * Options of {@link make}: the client and the key of the shared counts; `k`, `window` and `buckets` as
 * `AdaptiveThrottle.make`'s (every process should give the same for a key); the `random` the drops are drawn from
 * (default `Random.live`); how long a Redis call may take (`timeout`, ms, default 100), what to do when it takes
 * longer or fails (`fallback`, default `'local'`), and an observer.
 *
 * @example
 * import type { RedisAdaptiveThrottleOptions } from 'fp-ts-retry/RedisAdaptiveThrottle'
 * import type { RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * const optionsFor = (redis: RedisClient): RedisAdaptiveThrottleOptions => ({ redis, key: 'throttle:payments-api' })
 *
 * @category model
 * @since 1.0.0
 */
export interface RedisAdaptiveThrottleOptions {
  readonly redis: RedisClient
  readonly key: string
  readonly k?: number | undefined
  readonly window?: number | undefined
  readonly buckets?: number | undefined
  readonly random?: Random | undefined
  readonly timeout?: number | undefined
  readonly fallback?: Fallback | undefined
  readonly onEvent?: Observer | undefined
}

/**
 * A throttle shared through Redis: an `AdaptiveThrottle.AdaptiveThrottle` whose `requests` and `accepts` are the
 * fleet's as Redis last answered them, and `refresh()`, which reads them now (counting nothing).
 *
 * **Details**
 *
 * - `requests`, `accepts` and `dropProbability()` are those of the last answer (a `request`'s, an `accept`'s or a
 *   `refresh`'s); while Redis does not answer, those of the local throttle the fallback decides with. The argument
 *   of `dropProbability` is read by the local throttle only.
 * - `refresh()` never rejects: when Redis cannot answer, the counts stay as they were and the outage is told.
 *
 * @example
 * import type { RedisAdaptiveThrottle } from 'fp-ts-retry/RedisAdaptiveThrottle'
 *
 * // the fleet's drop probability, read now
 * export const fleetDrop = async (throttle: RedisAdaptiveThrottle): Promise<number> => {
 *   await throttle.refresh()
 *   return throttle.dropProbability()
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface RedisAdaptiveThrottle extends AdaptiveThrottle.AdaptiveThrottle {
  readonly request: () => Promise<AdaptiveThrottle.Throttled | undefined>
  readonly accept: () => Promise<void>
  readonly refresh: () => Promise<void>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * `AdaptiveThrottle.make`'s window in Lua, on one hash: a field `r:<i>` and `a:<i>` for the requests and accepts of
 * bucket `i` (the server's time in ms divided by the bucket's width, rounded down). ARGV: the operation (`r` a
 * request, `a` an accept, `g` a read), the width, the buckets. It removes the buckets that have left the window,
 * counts, and answers the counts in the window after the operation, { requests, accepts }. The key expires when its
 * newest bucket leaves the window, when it is the same as no key.
 */
const WINDOW = `
local width = tonumber(ARGV[2])
local buckets = tonumber(ARGV[3])
local current = math.floor(now / width)
local oldest = current - buckets
local key = KEYS[1]
local fields = redis.call('HGETALL', key)
local requests, accepts = 0, 0
local stale = {}
for i = 1, #fields, 2 do
  local kind, index = string.match(fields[i], '^(%a):(-?%d+)$')
  if index == nil or tonumber(index) <= oldest then
    stale[#stale + 1] = fields[i]
  elseif kind == 'r' then
    requests = requests + tonumber(fields[i + 1])
  else
    accepts = accepts + tonumber(fields[i + 1])
  end
end
if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
local op = ARGV[1]
if op ~= 'g' then
  redis.call('HINCRBY', key, op .. ':' .. string.format('%.0f', current), 1)
  redis.call('PEXPIRE', key, math.max(1, math.ceil((current + buckets) * width - now)))
  if op == 'r' then requests = requests + 1 else accepts = accepts + 1 end
end
return { requests, accepts }
`

/** The service named in the throttle's `ServiceUnavailable` and `ServiceRecovered` events. */
const SERVICE = 'adaptive throttle'

/**
 * A client-side adaptive throttle shared by every process whose throttle has the same `key`: `AdaptiveThrottle.make`
 * with its counts kept in Redis.
 *
 * **Details**
 *
 * - The rules of `AdaptiveThrottle.make`: a request is dropped with probability `max(0, (requests - k * accepts) /
 *   (requests + 1))`, drawn from this process's `random`, with `requests` and `accepts` the fleet's, in a window of
 *   `window` ms in `buckets` buckets aligned on the server's clock. A dropped request counts as a request.
 * - Each `request`, `accept` and `refresh` is one `EVALSHA` of one script on one key (so it works on a Redis
 *   Cluster), on the server's `TIME`: it drops the buckets that left the window, counts, and answers the fleet's
 *   counts, from which this process draws. The key is a hash of at most `2 * buckets` small fields, which expires
 *   when its newest bucket leaves the window.
 * - Every Redis call is bounded by `timeout` (default 100 ms). A request or an accept carries a deadline on the
 *   server's clock (as every change of the Redis modules does): one that its caller stopped waiting for never
 *   counts late. A call that fails or does not answer in time never rejects: the throttle answers by its `fallback`
 *   and tells `ServiceUnavailable` (`source: 'throttle'`, `service: 'adaptive throttle'`) through `onEvent`, then
 *   `ServiceRecovered` once Redis answers again.
 * - `'local'` (the default) decides on a throttle of this process (`AdaptiveThrottle.make`, the same `k`, `window`
 *   and `buckets`, on the live clock), which counts every request and accept of this process all along, Redis or
 *   not: when Redis goes, the drop probability is this process's share of the fleet's (the same ratio of accepts to
 *   requests, when the fleet's calls meet the same backend), not a fresh start that lets an overload through.
 *   `'allow'` drops nothing; `'refuse'` drops every request.
 * - `onEvent` is told `LoadShed` for each drop the counts decide, as `AdaptiveThrottle.make` tells it, with the
 *   fleet's counts (the local throttle's while it decides).
 * - Bad options are a `TypeError` or `RangeError` naming them (`k`, `window`, `buckets` as `AdaptiveThrottle.make`'s).
 *
 * @example
 * import * as RedisAdaptiveThrottle from 'fp-ts-retry/RedisAdaptiveThrottle'
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import Redis from 'ioredis'
 *
 * // needs a Redis server: defined, not called here
 * export function throttledForTheFleet(call: TaskEither<Error, string>) {
 *   const redis = new Redis({ host: '127.0.0.1', port: 6379 })
 *   const throttle = RedisAdaptiveThrottle.make({ redis, key: 'throttle:payments-api' })
 *   return pipe(call, AdaptiveThrottle.protect(throttle, () => new Error('dropped by the client-side throttle')))
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: RedisAdaptiveThrottleOptions): RedisAdaptiveThrottle => {
  const where = 'RedisAdaptiveThrottle.make'
  validate.object(where, 'options', options)
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const { k, window, buckets } = AdaptiveThrottle.checkWindow(where, options)
  validate.services(where, 'options', { random: options.random })
  const { fallback, timeout } = serviceOptions(where, options)
  const random = options.random ?? LiveRandom.live
  const { onEvent } = options
  const clock = LiveClock.live
  const local = AdaptiveThrottle.make({ k, window, buckets, clock, random, onEvent })
  const shed = AdaptiveThrottle.shedder(where, k, random, onEvent)
  const service = health('throttle', SERVICE, fallback, clock.now, onEvent)
  const evaluate = deadlinedScript(where, redis, key, WINDOW)
  const params = [window / buckets, buckets]
  // the fleet's counts, as last answered
  let requests = 0
  let accepts = 0

  /** The fleet's counts after `op`, or `undefined` when Redis failed, answered nonsense or took over `timeout`. */
  const run = async (op: 'r' | 'a' | 'g'): Promise<readonly [number, number] | undefined> => {
    try {
      const answer = await within(clock, timeout, SERVICE, () =>
        evaluate(op === 'g' ? undefined : timeout, op, ...params)
      )
      const [r, a] = Array.isArray(answer) ? answer : []
      if (!(validate.isCount(r) && validate.isCount(a))) {
        throw new TypeError(`${where}: the script answered ${JSON.stringify(answer)}`)
      }
      service.answered()
      ;[requests, accepts] = [r, a]
      return [r, a]
    } catch (e) {
      service.failed(e)
      return undefined
    }
  }
  const fleet = (): boolean => service.available()

  return {
    k,
    get requests() {
      return fleet() ? requests : local.requests
    },
    get accepts() {
      return fleet() ? accepts : local.accepts
    },
    dropProbability: (now) =>
      fleet() ? AdaptiveThrottle.probability(k, requests, accepts) : local.dropProbability(now),
    request: async () => {
      const counts = await run('r')
      if (counts === undefined) {
        if (fallback === 'local') return local.request()
        AdaptiveThrottle.count(local, 1, 0)
        return fallback === 'allow' ? undefined : { _tag: 'Throttled', probability: 1 }
      }
      AdaptiveThrottle.count(local, 1, 0)
      // drawn against the counts before this request
      return shed(clock.now(), counts[0] - 1, counts[1])
    },
    accept: async () => {
      local.accept()
      await run('a')
    },
    admits: () =>
      fleet()
        ? shed(clock.now(), requests, accepts) === undefined
        : fallback === 'local'
        ? local.admits()
        : fallback === 'allow',
    refresh: async () => void (await run('g'))
  }
}
