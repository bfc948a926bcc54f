/**
 * One Lua script run on a Redis client: `EVALSHA`, and `EVAL` once when the server has forgotten the script
 * (`NOSCRIPT`: a restart, a `SCRIPT FLUSH`). Shared by every module that keeps state in Redis.
 *
 * @internal
 */
import { createHash } from 'crypto'
import type { RedisClient } from './model'
import { showValue } from './show'

/** Throws a `TypeError` naming `where` unless `redis` has `evalsha` and `eval` (an ioredis client does). */
export const checkClient = (where: string, redis: unknown): RedisClient => {
  const r = redis as Record<string, unknown> | null
  if (r === null || typeof r !== 'object' || typeof r.evalsha !== 'function' || typeof r.eval !== 'function') {
    throw new TypeError(
      `${where}: options.redis must be a Redis client with evalsha and eval (ioredis), received ${showValue(redis)}`
    )
  }
  return redis as RedisClient
}

/** Throws a `TypeError` naming `where` unless `key` is a non-empty string. */
export const checkKey = (where: string, key: unknown): string => {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`${where}: options.key must be a non-empty string, received ${showValue(key)}`)
  }
  return key
}

/** A function that runs `source` on `redis` with one key and the given arguments. */
export const script = (
  redis: RedisClient,
  source: string
): ((key: string, ...args: Array<string | number>) => Promise<unknown>) => {
  const sha = createHash('sha1').update(source).digest('hex')
  return async (key, ...args) => {
    try {
      return await redis.evalsha(sha, 1, key, ...args)
    } catch (e) {
      if (!(e instanceof Error && e.message.startsWith('NOSCRIPT'))) throw e
      return await redis.eval(source, 1, key, ...args)
    }
  }
}

/**
 * What this process knows of a Redis server's clock (epoch ms, its `TIME`) from the replies that carry it, so that a
 * call can carry a deadline the server checks on its own clock: a call its caller stopped waiting for (queued in the
 * client while Redis was down, or in the socket of a paused server) is then refused when it runs late, instead of
 * changing shared state nobody awaits any longer.
 *
 * Each reply bounds the offset from this process's monotonic clock: the server read its time between the call's
 * sending and its answer. The bounds of every reply are intersected (a reply that waited in a busy event loop
 * loosens nothing), and one that contradicts them (a clock stepped) starts afresh. A deadline is read at the lower
 * bound: refused early by at most the fastest round trip seen, never late.
 */
export interface ServerClock {
  /** Learns from a reply: the call was sent at `sent` and answered at `answered` (local), the server read `server`. */
  readonly learn: (sent: number, answered: number, server: number) => void
  /** The server's time `ms` after `at` (local), at the latest; `undefined` until a reply has been learnt from. */
  readonly deadline: (at: number, ms: number) => number | undefined
}

export const serverClock = (): ServerClock => {
  // the server's clock minus this process's lies in [low, high]
  let low = -Infinity
  let high = Infinity
  return {
    learn: (sent, answered, server) => {
      // TIME in whole ms: the server's time was in [server, server + 1)
      const [from, to] = [server - answered, server + 1 - sent]
      if (from > high || to < low) [low, high] = [from, to]
      else [low, high] = [Math.max(low, from), Math.min(high, to)]
    },
    deadline: (at, ms) => (low === -Infinity ? undefined : Math.floor(at + ms + low))
  }
}
