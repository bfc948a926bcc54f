/**
 * A circuit breaker's state shared by a fleet through Redis: every process whose breaker names the same key opens,
 * probes and closes as one.
 *
 * `store` is a `Breaker.Store` kept in one Redis hash: each transition is one atomic Lua script on the server's
 * time (`TIME`), so the fleet's clocks need not agree; probe permits are counted in Redis, so a half-open circuit
 * gets as many probes as `halfOpenProbes` allows in the whole fleet, and a permit whose process died is given up
 * after `probeLease`. Give it to any breaker (`Breaker.consecutive`, `sampling`, `count`) as `store`.
 *
 * This module loads no Redis client: it takes one you made (an ioredis `Redis` or `Cluster`).
 *
 * @since 0.2.0
 */
import type { Store, StoredState, StoreAnswer, Transition } from './Breaker'
import { checkClient, checkKey, script } from './internal/redis'
import * as validate from './internal/validate'
import type { RedisClient } from './RedisBudget'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Options of {@link store}: the client (`evalsha` and `eval`, as ioredis has) and the key of the shared breaker.
 *
 * @example
 * import type { StoreOptions } from 'fp-ts-retry/RedisBreaker'
 * import type { RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * const optionsFor = (redis: RedisClient): StoreOptions => ({ redis, key: 'breaker:payments-api' })
 *
 * @category model
 * @since 0.2.0
 */
export interface StoreOptions {
  readonly redis: RedisClient
  readonly key: string
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * `Breaker.memoryStore`'s state machine in Lua, on one hash: `t` the state (C, O, H), `v` its version, `h` when a
 * probe may go (ms on the server's clock, -1 never), `s` the probes' successes, `n` the permits issued, and one
 * field `p:<permit>` per probe in flight, holding when its lease runs out. ARGV[1] is the operation: `g` read,
 * `o` open (version, wait), `e` enter (probes, lease), `d` probed (version, permit, ok, probes, wait), `i`
 * isolate, `r` reset. Answers { state, version, halfOpenIn (-1 never), probes in flight, successes, permit }.
 */
const SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local key = KEYS[1]
local st = { t = 'C', v = 0, h = -1, s = 0, n = 0 }
local permits = {}
local count = 0
local fields = redis.call('HGETALL', key)
for i = 1, #fields, 2 do
  local f, value = fields[i], fields[i + 1]
  if string.sub(f, 1, 2) == 'p:' then
    if tonumber(value) > now then
      permits[string.sub(f, 3)] = true
      count = count + 1
    else
      redis.call('HDEL', key, f)
    end
  elseif f == 't' then
    st.t = value
  else
    st[f] = tonumber(value)
  end
end
local function become(tag, wait)
  local at = -1
  if tonumber(wait) >= 0 then at = now + tonumber(wait) end
  redis.call('DEL', key)
  st.t, st.v, st.h, st.s = tag, st.v + 1, at, 0
  redis.call('HSET', key, 't', tag, 'v', st.v, 'h', at, 's', 0, 'n', st.n)
  permits, count = {}, 0
end
local op = ARGV[1]
local permit = ''
if op == 'o' then
  if st.v == tonumber(ARGV[2]) and st.t ~= 'O' then become('O', ARGV[3]) end
elseif op == 'e' then
  if st.t == 'O' and st.h >= 0 and now >= st.h then become('H', -1) end
  if st.t == 'H' and count + st.s < tonumber(ARGV[2]) then
    st.n = st.n + 1
    permit = tostring(st.n)
    redis.call('HSET', key, 'n', st.n, 'p:' .. permit, now + tonumber(ARGV[3]))
    count = count + 1
  end
elseif op == 'd' then
  if st.t == 'H' and st.v == tonumber(ARGV[2]) and permits[ARGV[3]] then
    redis.call('HDEL', key, 'p:' .. ARGV[3])
    count = count - 1
    if ARGV[4] == '0' then
      become('O', ARGV[6])
    else
      st.s = st.s + 1
      if st.s >= tonumber(ARGV[5]) then become('C', -1) else redis.call('HSET', key, 's', st.s) end
    end
  end
elseif op == 'i' then
  become('O', -1)
elseif op == 'r' then
  become('C', -1)
end
local halfOpenIn = -1
if st.t == 'O' and st.h >= 0 then halfOpenIn = math.max(0, st.h - now) end
return { st.t, st.v, halfOpenIn, count, st.s, permit }
`

const TAGS = { C: 'Closed', O: 'Open', H: 'HalfOpen' } as const

/** Reads the script's answer; anything else is a `TypeError` (the breaker takes it as the store failing). */
const decode = (answer: unknown): StoreAnswer => {
  if (!Array.isArray(answer) || answer.length !== 6 || !(answer[0] in TAGS)) {
    throw new TypeError(`RedisBreaker: the script answered ${JSON.stringify(answer)}`)
  }
  const [t, version, halfOpenIn, probes, successes, permit] = answer as [
    keyof typeof TAGS,
    number,
    number,
    number,
    number,
    string
  ]
  const tag = TAGS[t]
  const state: StoredState =
    tag === 'Closed'
      ? { _tag: tag, version }
      : tag === 'Open'
      ? { _tag: tag, version, halfOpenIn: halfOpenIn < 0 ? null : halfOpenIn }
      : { _tag: tag, version, probes, successes }
  return permit === '' ? { state } : { state, permit }
}

/** A wait as the script reads it: -1 for never. */
const wait = (ms: number | null): number => (ms === null ? -1 : Math.round(ms))

const argsOf = (t: Transition): Array<string | number> => {
  switch (t._tag) {
    case 'open':
      return ['o', t.version, wait(t.wait)]
    case 'enter':
      return ['e', t.probes, Math.round(t.lease)]
    case 'probed':
      return ['d', t.version, t.permit, t.ok ? 1 : 0, t.probes, wait(t.wait)]
    case 'isolate':
      return ['i']
    case 'reset':
      return ['r']
  }
}

/**
 * A `Breaker.Store` in Redis, shared by every process that names the same `key`: give it to a breaker as its
 * `store`.
 *
 * **Details**
 *
 * - The state machine of `Breaker.memoryStore`, one `EVALSHA` per store call (an `EVAL` the first time a server
 *   has not seen the script); each transition atomic, on the server's clock.
 * - The breaker bounds every call: `storeTimeout` (default 100 ms), whatever the client does with its own
 *   retries and offline queue. A call that fails or times out leaves each process on its local state, told as
 *   `ServiceUnavailable`; the fleet's state wins again once Redis answers (`ServiceRecovered`).
 * - Round trips: a call costs one (`enter`) while the breaker's copy is older than `staleness`, none while it is
 *   fresh and the circuit closed, or open before its wait is over; a probe's outcome one more; a failure that
 *   opens the circuit one more. `admitsIn` one, when stale.
 * - The hash at `key` has no expiry and holds a few fields; every process should give the same `halfOpenProbes`.
 *   A Redis without persistence forgets it on a restart: the fleet starts closed again.
 * - A bad client or key is a `TypeError` naming it.
 *
 * @example
 * import * as RedisBreaker from 'fp-ts-retry/RedisBreaker'
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import Redis from 'ioredis'
 *
 * // needs a Redis server: defined, not called here
 * export function fleetBreaker() {
 *   const redis = new Redis({ host: '127.0.0.1', port: 6379 })
 *   const store = RedisBreaker.store({ redis, key: 'breaker:payments-api' })
 *   const breaker = Breaker.consecutive({ threshold: 5, halfOpenAfter: Schedule.exponential(1_000), halfOpenProbes: 2, store, staleness: 50 })
 *   return { breaker, isolateFleet: () => breaker.isolate(), resetFleet: () => breaker.reset() }
 * }
 *
 * @category constructors
 * @since 0.2.0
 */
export const store = (options: StoreOptions): Store => {
  const where = 'RedisBreaker.store'
  validate.object(where, 'options', options)
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const run = script(redis, SCRIPT)
  return {
    read: async () => decode(await run(key, 'g')).state,
    apply: async (transition) => decode(await run(key, ...argsOf(transition)))
  }
}
