/**
 * One Lua script run on a Redis client: `EVALSHA`, and `EVAL` once when the server has forgotten the script
 * (`NOSCRIPT`: a restart, a `SCRIPT FLUSH`); and a script whose changes carry a deadline on the server's clock.
 * Shared by every module that keeps state in Redis.
 *
 * @internal
 */
import { createHash } from 'crypto'
import type { RedisClient } from './model'
import { showValue } from './show'
import { now } from './sleepers'

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

/** A function that runs `source` on `redis` with the given arguments, the first `keys` of them keys (default one). */
export const script = (
  redis: RedisClient,
  source: string,
  keys = 1
): ((key: string, ...args: Array<string | number>) => Promise<unknown>) => {
  const sha = createHash('sha1').update(source).digest('hex')
  return async (key, ...args) => {
    try {
      return await redis.evalsha(sha, keys, key, ...args)
    } catch (e) {
      if (!(e instanceof Error && e.message.startsWith('NOSCRIPT'))) throw e
      return await redis.eval(source, keys, key, ...args)
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

/** What a call that reached Redis at or past its deadline (or could not be sent before it) rejects with. */
export class LateCall extends Error {
  constructor(readonly where: string, readonly ms: number) {
    super(`${where}: a call reached Redis after the ${ms} ms its caller waits: refused, nothing changed`)
    this.name = 'LateCall'
  }
}

/**
 * Wraps a script's body: it runs only before the deadline in ARGV[1] (ms on the server's clock; -1 none), sees the
 * server's time as `now` (ms, with its fraction) and its own arguments as `ARGV` (the deadline taken off), and its
 * answer comes back as { now, answer }; at or past the deadline it changes nothing and answers { now }. Every
 * answer carries the time, which is how a {@link ServerClock} learns it: one `TIME` more a call, no round trip.
 */
const withDeadline = (body: string): string => `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local deadline = tonumber(ARGV[1])
if deadline >= 0 and now >= deadline then return { now } end
local ARGV = { unpack(ARGV, 2) }
return { now, (function()
${body}
end)() }
`

/**
 * The script `body` (see {@link withDeadline}) on `redis` and `key`, run by `(timeout, ...args)`: with a `timeout`
 * (how long its caller waits for the answer), a change that never lands late, and rejects with {@link LateCall}
 * when it would; without, a call that may run whenever it reaches the server (a read).
 *
 * The deadline is `timeout` after the call, on the server's clock as this process knows it from the script's
 * earlier answers (see {@link ServerClock}): a call its caller stopped waiting for, queued in the client while
 * Redis was down or in the socket of a paused server, then changes nothing when it runs. Until an answer has been
 * learnt from, a change first asks the server's time (the script with a deadline already past, which changes
 * nothing; concurrent calls share one), and is not sent at all if that answer came after its caller stopped
 * waiting. A script's answer that is not of the wrapper's shape is a `TypeError` naming `where`.
 */
export const deadlinedScript = (
  where: string,
  redis: RedisClient,
  key: string,
  body: string
): ((timeout: number | undefined, ...args: Array<string | number>) => Promise<unknown>) => {
  const run = script(redis, withDeadline(body))
  const server = serverClock()
  /** Runs the script with `deadline`, and learns the server's time from its answer: [now] if late, else [now, answer]. */
  const send = async (deadline: number, args: ReadonlyArray<string | number>): Promise<ReadonlyArray<unknown>> => {
    const sent = now()
    const answer = await run(key, deadline, ...args)
    if (!Array.isArray(answer) || typeof answer[0] !== 'number') {
      throw new TypeError(`${where}: the script answered ${JSON.stringify(answer)}`)
    }
    server.learn(sent, now(), answer[0])
    return answer
  }
  let asking: Promise<unknown> | undefined
  /** Asks the server's time: deadline 0 has always passed. */
  const ask = (): Promise<unknown> => (asking ??= send(0, []).finally(() => (asking = undefined)))
  return async (timeout, ...args) => {
    if (timeout === undefined) return (await send(-1, args))[1]
    const at = now()
    if (server.deadline(at, timeout) === undefined) await ask()
    const deadline = server.deadline(at, timeout)
    if (deadline === undefined || now() - at >= timeout) throw new LateCall(where, timeout)
    const answer = await send(deadline, args)
    if (answer.length < 2) throw new LateCall(where, timeout)
    return answer[1]
  }
}
