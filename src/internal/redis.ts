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
