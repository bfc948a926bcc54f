/**
 * A circuit breaker's state and count shared by a fleet through Redis: every process whose breaker names the same
 * key counts, opens, probes and closes as one.
 *
 * `store` is a `Breaker.Store` kept in one Redis hash: each transition is one atomic Lua script on the server's
 * time (`TIME`), so the fleet's clocks need not agree; the outcomes of the closed period are counted in Redis, so
 * the fleet opens when its policy says so of the calls of all its processes (4 processes with `threshold: 10`
 * open after 10 failures in a row in all, not up to 40); probe permits are counted in Redis, so a half-open
 * circuit gets as many probes as `halfOpenProbes` allows in the whole fleet, and a permit whose process died is
 * given up after `probeLease`. Give it to any breaker (`Breaker.consecutive`, `sampling`, `count`) as `store`.
 *
 * This module loads no Redis client: it takes one you made (an ioredis `Redis` or `Cluster`).
 *
 * @since 1.0.0
 */
import type { Store, StoredState, StoreAnswer, Transition, Window } from './Breaker'
import { checkClient, checkKey, deadlinedScript } from './internal/redis'
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
 * @since 1.0.0
 */
export interface StoreOptions {
  readonly redis: RedisClient
  readonly key: string
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * `Breaker.memoryStore`'s state machine and count in Lua, on one hash: `t` the state (C, O, H), `v` its version, `h`
 * when a probe may go (ms on the server's clock, -1 never), `s` the probes' successes, `n` the permits issued, and one
 * field `p:<permit>` per probe in flight, holding when its lease runs out. While closed, the outcomes counted: `w`
 * the window (`c:0:0` consecutive, `n:<size>:0` count, `s:<duration>:<buckets>` sampling), `f` the failures
 * (consecutive: in a row), `c`, `r` and `i` the calls, the ring of the last ones ('1' a failure) and its next slot
 * (count), and one field `b:<bucket>` per bucket, `outcomes:failures` (sampling). ARGV[1] is the operation: `g`
 * read, `o` open (version, wait), `e` enter (probes, lease), `d` probed (version, permit, ok, probes, wait), `i`
 * isolate, `r` reset, `u` outcome (version, ok, kind, size or duration, buckets). Answers { state, version,
 * halfOpenIn (-1 never), probes in flight, successes, permit, outcomes, failures }. Run with a deadline
 * (`deadlinedScript`): a change its breaker stopped waiting for changes nothing.
 */
const SCRIPT = `
-- the store's times are whole ms of the server's clock
local now = math.floor(now)
local key = KEYS[1]
local st = { t = 'C', v = 0, h = -1, s = 0, n = 0, w = '', f = 0, c = 0, i = 0 }
local permits = {}
local count = 0
local buckets = {}
local fields = redis.call('HGETALL', key)
for i = 1, #fields, 2 do
  local f, value = fields[i], fields[i + 1]
  local prefix = string.sub(f, 1, 2)
  if prefix == 'p:' then
    if tonumber(value) > now then
      permits[string.sub(f, 3)] = true
      count = count + 1
    else
      redis.call('HDEL', key, f)
    end
  elseif prefix == 'b:' then
    buckets[f] = value
  elseif f == 't' or f == 'w' or f == 'r' then
    st[f] = value
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
  permits, count, buckets, st.w, st.f, st.c, st.i, st.r = {}, 0, {}, '', 0, 0, 0, nil
end
local function window()
  local kind, size, n = string.match(st.w, '^(%a):([^:]+):([^:]+)$')
  return kind, tonumber(size), tonumber(n)
end
local function bucket(duration, n)
  return string.format('b:%d', math.floor(now / (duration / n)))
end
local function tally()
  local kind, duration, n = window()
  if kind == 'n' then return st.c, st.f end
  if kind ~= 's' then return st.f, st.f end
  local gone = math.floor(now / (duration / n)) - n
  local outcomes, failures = 0, 0
  for f, value in pairs(buckets) do
    if tonumber(string.sub(f, 3)) <= gone then
      redis.call('HDEL', key, f)
    else
      local o, x = string.match(value, '^(%d+):(%d+)$')
      outcomes, failures = outcomes + tonumber(o), failures + tonumber(x)
    end
  end
  return outcomes, failures
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
  -- isolated already: nothing changes, not even the version (as memoryStore)
  if st.t ~= 'O' or st.h >= 0 then become('O', -1) end
elseif op == 'r' then
  become('C', -1)
elseif op == 'u' and st.t == 'C' and st.v == tonumber(ARGV[2]) then
  local w = ARGV[4] .. ':' .. ARGV[5] .. ':' .. ARGV[6]
  if st.w ~= w then
    -- another window than the one counted so far: its count starts afresh
    for f in pairs(buckets) do redis.call('HDEL', key, f) end
    buckets, st.w, st.f, st.c, st.i, st.r = {}, w, 0, 0, 0, nil
    redis.call('HSET', key, 'w', w, 'f', 0, 'c', 0, 'i', 0)
  end
  local failed = 1
  if ARGV[3] == '1' then failed = 0 end
  local kind, size, n = window()
  if kind == 'c' then
    st.f = (st.f + 1) * failed
    redis.call('HSET', key, 'f', st.f)
  elseif kind == 'n' then
    local ring = st.r or string.rep('0', size)
    if st.c == size then st.f = st.f - tonumber(string.sub(ring, st.i + 1, st.i + 1)) else st.c = st.c + 1 end
    ring = string.sub(ring, 1, st.i) .. failed .. string.sub(ring, st.i + 2)
    st.f, st.i = st.f + failed, (st.i + 1) % size
    redis.call('HSET', key, 'r', ring, 'i', st.i, 'c', st.c, 'f', st.f)
  else
    local f = bucket(size, n)
    local o, x = 0, 0
    if buckets[f] then o, x = string.match(buckets[f], '^(%d+):(%d+)$') end
    buckets[f] = (tonumber(o) + 1) .. ':' .. (tonumber(x) + failed)
    redis.call('HSET', key, f, buckets[f])
  end
end
local halfOpenIn = -1
if st.t == 'O' and st.h >= 0 then halfOpenIn = math.max(0, st.h - now) end
local outcomes, failures = 0, 0
if st.t == 'C' then outcomes, failures = tally() end
return { st.t, st.v, halfOpenIn, count, st.s, permit, outcomes, failures }
`

const TAGS = { C: 'Closed', O: 'Open', H: 'HalfOpen' } as const

/** Reads the script's answer; anything else is a `TypeError` (the breaker takes it as the store failing). */
const decode = (answer: unknown): StoreAnswer => {
  if (!Array.isArray(answer) || answer.length !== 8 || !(answer[0] in TAGS)) {
    throw new TypeError(`RedisBreaker: the script answered ${JSON.stringify(answer)}`)
  }
  const [t, version, halfOpenIn, probes, successes, permit, outcomes, failures] = answer as [
    keyof typeof TAGS,
    number,
    number,
    number,
    number,
    string,
    number,
    number
  ]
  const tag = TAGS[t]
  const state: StoredState =
    tag === 'Closed'
      ? { _tag: tag, version, tally: { outcomes, failures } }
      : tag === 'Open'
      ? { _tag: tag, version, halfOpenIn: halfOpenIn < 0 ? null : halfOpenIn }
      : { _tag: tag, version, probes, successes }
  return permit === '' ? { state } : { state, permit }
}

/** A wait as the script reads it: -1 for never. */
const wait = (ms: number | null): number => (ms === null ? -1 : Math.round(ms))

/** A window as the script reads it: its kind, and its size (count) or duration and buckets (sampling). */
const windowArgs = (w: Window): [string, number, number] =>
  w._tag === 'consecutive' ? ['c', 0, 0] : w._tag === 'count' ? ['n', w.size, 0] : ['s', w.duration, w.buckets]

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
    case 'outcome':
      return ['u', t.version, t.ok ? 1 : 0, ...windowArgs(t.window)]
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
 *   `ServiceUnavailable`; the fleet's state wins again once Redis answers (`ServiceRecovered`). A change the
 *   breaker stopped waiting for is refused if it reaches Redis later (sent late by the client's offline queue, or
 *   read late by a paused server): each carries a deadline on the server's clock (learnt from the `TIME` every
 *   answer carries; read at its earliest, so a change may be refused up to a round trip early, never late), which
 *   the script checks. So a process's opening on its own count during an outage never opens the fleet afterwards.
 * - Round trips, one per store call (`Breaker.Store` has the table): while closed, an `enter` when the breaker's
 *   copy is older than `staleness` (none while it is fresh, or open before its wait is over), and the outcome: a
 *   failure one (one more if it opens the circuit), a success one, except none under `consecutive` while no failure
 *   is counted and under `count` while the window is full and holds no failure. Every answer refreshes the copy.
 *   Half-open, a probe costs its `enter` and its outcome. `admitsIn` one, when stale. One more, asking the
 *   server's time, before a store's first change.
 * - Sampling windows are counted in buckets of the server's time (`buckets`, default 10, see `Breaker.Window`).
 * - The hash at `key` has no expiry and holds a few fields: with `count`, a ring of `size` bytes; with `sampling`,
 *   one field per bucket. Every process should give the same policy and `halfOpenProbes`: an outcome counted
 *   under another window starts the count afresh. A Redis without persistence forgets it on a restart: the fleet
 *   starts closed again.
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
 * @since 1.0.0
 */
export const store = (options: StoreOptions): Store => {
  const where = 'RedisBreaker.store'
  validate.object(where, 'options', options)
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const run = deadlinedScript(where, redis, key, SCRIPT)
  return {
    read: async () => decode(await run(undefined, 'g')).state,
    apply: async (transition, timeout) => decode(await run(timeout, ...argsOf(transition)))
  }
}
