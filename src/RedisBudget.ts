/**
 * A retry budget shared by a fleet: gRPC's token bucket (gRFC A6) kept in Redis, so that every process that uses
 * the same key draws on one bucket.
 *
 * It is `Budget.retryThrottle` with the count on a server: the same rules, the same thousandths of a token, and
 * each failure's token taken and its retry decided in one atomic script, so that no interleaving of processes
 * over- or under-spends. It answers with promises; the runner and the durable workers await them.
 *
 * This module loads neither bullmq nor ioredis: it takes a client you made.
 *
 * @since 1.0.0
 */
import * as Budget from './Budget'
import type { BudgetAttempt, RetryBudget } from './Budget'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import { checkClient, checkKey, deadlinedScript } from './internal/redis'
import { health, serviceOptions, within } from './internal/service'
import * as validate from './internal/validate'
import type * as model from './internal/model'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the budget needs of a Redis client: ioredis's `evalsha` and `eval` (an ioredis `Redis` or `Cluster` is
 * one).
 *
 * @example
 * import type { RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * // an adapter for another client: node-redis v4
 * const adapt = (client: { evalSha: Function; eval: Function }): RedisClient => ({
 *   evalsha: (sha, numKeys, ...args) => client.evalSha(sha, { keys: args.slice(0, numKeys).map(String), arguments: args.slice(numKeys).map(String) }),
 *   eval: (script, numKeys, ...args) => client.eval(script, { keys: args.slice(0, numKeys).map(String), arguments: args.slice(numKeys).map(String) })
 * })
 *
 * @category model
 * @since 1.0.0
 */
export type RedisClient = model.RedisClient

/**
 * What a budget does while Redis cannot answer within `timeout`: go on with a token bucket of this process
 * (`'local'`), allow every retry (`'allow'`), or refuse every retry (`'refuse'`).
 *
 * @example
 * import type { Fallback } from 'fp-ts-retry/RedisBudget'
 *
 * const fallback: Fallback = 'local'
 *
 * @category model
 * @since 1.0.0
 */
export type Fallback = 'local' | 'allow' | 'refuse'

/**
 * Options of {@link retryThrottle}: the client, the key of the shared bucket, and gRPC's `retryThrottling` numbers;
 * how long a Redis call may take (`timeout`, ms, default 100), what to do when it takes longer or fails
 * (`fallback`, default `'local'`), and an observer told when Redis is unavailable and when it answers again.
 *
 * @example
 * import type { RetryThrottleOptions, RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * const optionsFor = (redis: RedisClient): RetryThrottleOptions => ({ redis, key: 'retry-budget:payments-api', maxTokens: 10, tokenRatio: 0.1 })
 *
 * @category model
 * @since 1.0.0
 */
export interface RetryThrottleOptions {
  readonly redis: RedisClient
  readonly key: string
  readonly maxTokens: number
  readonly tokenRatio: number
  readonly timeout?: number | undefined
  readonly fallback?: Fallback | undefined
  readonly onEvent?: Observer | undefined
}

/**
 * A {@link RetryBudget} kept in Redis, that can also read its count.
 *
 * @example
 * import type { RedisRetryThrottle } from 'fp-ts-retry/RedisBudget'
 *
 * const report = async (bucket: RedisRetryThrottle) => `tokens left: ${await bucket.tokens()}`
 *
 * @category model
 * @since 1.0.0
 */
export interface RedisRetryThrottle extends RetryBudget {
  readonly onSuccess: (attempt: BudgetAttempt) => Promise<void>
  readonly onFailure: (attempt: BudgetAttempt) => Promise<boolean>
  /** Whether a retry (or a hedge) would be allowed now, recording nothing. */
  readonly allows: (now: number) => Promise<boolean>
  /** The tokens left, in `[0, maxTokens]` (a missing key is a full bucket); rejects when Redis does not answer. */
  readonly tokens: () => Promise<number>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The bucket, in thousandths of a token (a missing key is a full bucket). ARGV: the operation (`f` a failure,
 * `s` a success, `r` a read of the count, `a` whether a retry would be allowed), the maximum and the ratio, in
 * thousandths. A failure answers 1 when a retry may follow. gRPC's `RetryThrottler` (grpc-java) does the same
 * arithmetic in one compare-and-set. Run by `deadlinedScript`: a failure or a success with a deadline.
 */
const SCRIPT = `
local max = tonumber(ARGV[2])
local tokens = tonumber(redis.call('GET', KEYS[1]) or max)
if tokens > max then tokens = max end
if ARGV[1] == 'r' then return tokens end
if ARGV[1] == 'a' then
  if tokens * 2 > max then return 1 else return 0 end
end
if ARGV[1] == 'f' then
  tokens = tokens - 1000
  if tokens < 0 then tokens = 0 end
  redis.call('SET', KEYS[1], tokens)
  if tokens * 2 > max then return 1 else return 0 end
end
tokens = tokens + tonumber(ARGV[3])
if tokens > max then tokens = max end
redis.call('SET', KEYS[1], tokens)
return 1
`

/** One thousandth of a token: gRPC's unit, so that `tokenRatio` additions never drift. */
const MILLI = 1000

/** The service named in the budget's `ServiceUnavailable` and `ServiceRecovered` events. */
const SERVICE = 'retry budget'

/**
 * gRPC's retry throttling (gRFC A6) shared by every process whose budget has the same `key`: a token bucket in
 * Redis.
 *
 * **Details**
 *
 * - The rules of `Budget.retryThrottle`: the bucket starts full at `maxTokens` (a missing key is full); each failed
 *   attempt takes 1 token (not below 0), each success gives back `tokenRatio` (not above `maxTokens`); a retry is
 *   allowed only while `tokens > maxTokens / 2`. In an outage a fresh bucket allows `ceil(maxTokens / 2) - 1`
 *   retries in all, across the fleet.
 * - Counts in thousandths of a token, as gRPC does: both numbers must be `>= 0.001` (rounded to 3 decimals).
 * - Each answer is one `EVALSHA` of one script (an `EVAL` the first time a server has not seen it): the failure's
 *   token is taken and its retry decided in one atomic step, as gRPC's own implementation does, so concurrent
 *   runs in any number of processes make exactly the retries the bucket allows.
 * - The key holds a plain integer (thousandths of a token), with no expiry; every process should use the same
 *   `maxTokens` and `tokenRatio` for a key. A bucket larger than a new `maxTokens` is cut down to it.
 * - `allows(now)` answers whether a retry would be allowed, recording nothing (what `hedging` asks before a hedge
 *   that no failure prompted); `tokens()` reads the count.
 * - Every Redis call is bounded by `timeout` (default 100 ms), whatever client is passed (ioredis by default
 *   queues commands while disconnected and waits for a reconnection: a run would freeze with it). A call that
 *   fails or does not answer in time never rejects: the budget answers by its `fallback` and tells
 *   `ServiceUnavailable` (`source: 'budget'`, `service: 'retry budget'`) through `onEvent`, then `ServiceRecovered`
 *   once Redis answers again. `'local'` (the default) is a `Budget.retryThrottle` of the same numbers in this process,
 *   told of every outcome all along, so it holds what this process saw lately; `'allow'` allows every retry
 *   (the schedule alone decides); `'refuse'` refuses every retry. `onSuccess` never rejects: a success stays a
 *   success. Only `tokens()`, which no run awaits, rejects.
 * - A spend or a refund the budget stopped waiting for never lands later (sent by the client's offline queue once
 *   Redis is back, or read late by a paused server): each carries a deadline on the server's clock, `timeout` after
 *   the call (learnt from the `TIME` every answer carries; read at its earliest, so a change may be refused up to a
 *   round trip early, never late), and the script changes nothing at or past it. So the fleet's bucket holds only
 *   what was answered from it. The first change costs one round trip more, to learn the server's clock; reads
 *   (`allows`, `tokens`) carry no deadline.
 * - Bad options are a `TypeError` or `RangeError` naming them.
 *
 * @example
 * import * as RedisBudget from 'fp-ts-retry/RedisBudget'
 * import { retrying } from 'fp-ts-retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import Redis from 'ioredis'
 *
 * // needs a Redis server: defined, not called here
 * export async function callWithFleetBudget(call: TaskEither<Error, string>) {
 *   const redis = new Redis({ host: '127.0.0.1', port: 6379 })
 *   const budget = RedisBudget.retryThrottle({ redis, key: 'retry-budget:payments-api', maxTokens: 10, tokenRatio: 0.1 })
 *   return pipe(call, retrying(Schedule.exponential(100), { budget }))()
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const retryThrottle = (options: RetryThrottleOptions): RedisRetryThrottle => {
  const where = 'RedisBudget.retryThrottle'
  validate.object(where, 'options', options)
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const max = validate.thousandths(where, 'options.maxTokens', options.maxTokens)
  const ratio = validate.thousandths(where, 'options.tokenRatio', options.tokenRatio)
  const { fallback, timeout } = serviceOptions(where, options)
  const clock = LiveClock.live
  const local = Budget.retryThrottle({ maxTokens: max / MILLI, tokenRatio: ratio / MILLI })
  const service = health('budget', SERVICE, fallback, clock.now, options.onEvent)
  const evaluate = deadlinedScript(where, redis, key, SCRIPT)
  /** A change (a failure's token, a success's refund) lands only while its caller waits; a read at any time. */
  const run = (operation: 'f' | 's' | 'r' | 'a'): Promise<number> => {
    const deadline = operation === 'f' || operation === 's' ? timeout : undefined
    return Promise.resolve(within(clock, timeout, SERVICE, () => evaluate(deadline, operation, max, ratio))).then(
      Number
    )
  }
  /** The shared answer, or the fallback's when Redis fails or takes longer than `timeout`. */
  const ask = async (operation: 'f' | 'a', otherwise: () => boolean): Promise<boolean> => {
    try {
      const answer = (await run(operation)) === 1
      service.answered()
      return answer
    } catch (e) {
      service.failed(e)
      return fallback === 'local' ? otherwise() : fallback === 'allow'
    }
  }

  return {
    onFailure: (attempt) => {
      const locally = local.onFailure(attempt)
      return ask('f', () => locally)
    },
    onSuccess: async (attempt) => {
      local.onSuccess(attempt)
      try {
        await run('s')
        service.answered()
      } catch (e) {
        service.failed(e)
      }
    },
    allows: (now) => ask('a', () => local.allows?.(now) ?? true),
    tokens: async () => (await run('r')) / MILLI
  }
}
