/**
 * Policies per key: one breaker per host, one rate limiter per tenant, one bulkhead or budget per user, made on
 * first use and kept in a bounded registry, so that one open host does not open another and one tenant does not
 * spend another's rate.
 *
 * {@link make} takes the function that makes a key's policy, `maxKeys` (the least recently used key goes first when
 * a new one would pass it) and, optionally, `idleAfter`: a policy unused for that long on the clock is dropped at
 * the next `get`. No timer is set: the check is lazy, so a `TestClock` drives it.
 *
 * @example
 * import * as Keyed from 'fp-ts-retry/Keyed'
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const breakers = Keyed.make({
 *   make: (_host: string) => Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(10_000) }),
 *   maxKeys: 1_000
 * })
 * const permit = breakers.get('a.example.com').enter() as Breaker.Permit
 * permit.onFailure() // a.example.com opens
 * assert.strictEqual(breakers.get('a.example.com').state._tag, 'Open')
 * assert.strictEqual(breakers.get('b.example.com').state._tag, 'Closed')
 *
 * @since 1.0.0
 */
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import { withKey } from './internal/observe'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A registry of policies by key, made by {@link make}.
 *
 * **Details**
 *
 * - `get(key)` answers the key's policy, made by `options.make(key)` on first use, and the same object at every
 *   later call until the key is evicted, deleted or dropped as idle; then the next `get` makes a new one. A `make`
 *   that throws leaves the registry as it was, and the error reaches the caller of `get`.
 * - Each `get` makes its key the most recently used. Before it answers, it drops every policy unused for
 *   `idleAfter` ms (when given); when a new key would bring the size above `maxKeys`, the least recently used
 *   key goes first.
 * - `size` is the number of policies kept (never above `maxKeys`); `keys()` lists their keys, least recently used
 *   first, and `entries()` the keys with their policies, in the same order; none of them drops idle policies (only
 *   `get` reads the clock), makes one or changes the order of use, so a gauge can read the live policies at each
 *   collection (`OpenTelemetry.observer`'s `breakers` and `budgets`). `delete(key)` forgets the key's policy and
 *   answers whether there was one.
 * - An evicted policy is only forgotten: a call still holding it goes on with it (a breaker or limiter needs no
 *   closing).
 *
 * @example
 * import * as Keyed from 'fp-ts-retry/Keyed'
 * import * as assert from 'assert'
 *
 * const counters: Keyed.Keyed<{ n: number }> = Keyed.make({ make: () => ({ n: 0 }), maxKeys: 2 })
 * counters.get('a').n++
 * counters.get('b')
 * counters.get('a') // now the most recently used
 * counters.get('c') // evicts 'b'
 * assert.deepStrictEqual(counters.keys(), ['a', 'c'])
 * assert.deepStrictEqual(counters.entries(), [['a', { n: 1 }], ['c', { n: 0 }]])
 * assert.strictEqual(counters.get('a').n, 1)
 * assert.strictEqual(counters.delete('a'), true)
 * assert.strictEqual(counters.size, 1)
 *
 * @category model
 * @since 1.0.0
 */
export interface Keyed<P> {
  readonly get: (key: string) => P
  readonly size: number
  readonly keys: () => ReadonlyArray<string>
  readonly entries: () => ReadonlyArray<readonly [key: string, policy: P]>
  readonly delete: (key: string) => boolean
}

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `make(key, onEvent)`: makes the policy of a key on its first use (a function). `onEvent` is the key's
 *   observer: give it to the policy as its own `onEvent`, and every event the policy tells (a breaker's change of
 *   state, a limiter's wait, a bulkhead's refusal, a shared store's outage) reaches `options.onEvent` with its
 *   `key`. It is `undefined` when `options.onEvent` is not given, so that an unobserved policy tells nothing.
 * - `maxKeys`: the policies kept at most (a whole number >= 1); the least recently used goes first.
 * - `idleAfter` (optional, ms, finite and > 0): a policy unused for at least this long on `clock` is dropped at the
 *   next `get`. Without it, only `maxKeys` bounds the registry.
 * - `clock` (default `Clock.live`): read by `get` only when `idleAfter` is given.
 * - `onEvent` (optional): told the events of every key's policy, each with its `key` (see `make`). An error it
 *   throws is reported as a process warning, under the library's one rule (see the `Event` module).
 *
 * @example
 * import type { KeyedOptions } from 'fp-ts-retry/Keyed'
 * import type { RateLimiter } from 'fp-ts-retry/RateLimiter'
 * import * as RL from 'fp-ts-retry/RateLimiter'
 *
 * const told: Array<string> = []
 * const options: KeyedOptions<RateLimiter> = {
 *   make: (_tenant, onEvent) => RL.gcra({ rate: 10, per: 1_000, burst: 10, onEvent }),
 *   maxKeys: 10_000,
 *   idleAfter: 60_000,
 *   onEvent: (event) => void told.push(`${event.key} ${event._tag}`) // e.g. 'tenant-7 RateLimitRefused'
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface KeyedOptions<P> {
  readonly make: (key: string, onEvent: Observer | undefined) => P
  readonly maxKeys: number
  readonly idleAfter?: number | undefined
  readonly clock?: Clock | undefined
  readonly onEvent?: Observer | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** A kept policy and when it was last used (on the clock; 0 when no `idleAfter` is given). */
interface Entry<P> {
  readonly policy: P
  usedAt: number
}

/**
 * A registry of policies by key: at most `maxKeys` of them, least recently used evicted first, and those unused for
 * `idleAfter` ms dropped at the next `get` (see {@link Keyed}).
 *
 * **Details**
 *
 * - Every option is checked here: a `TypeError` for an `options` that is not an object, a `make` that is not a
 *   function or a `clock` that is not a `Clock`; a `RangeError` for a `maxKeys` that is not a whole number >= 1 or an
 *   `idleAfter` that is not a finite number > 0. `get` throws a `TypeError` for a key that is not a string.
 * - A `get` costs O(1), plus O(1) per idle policy it drops: the registry is a `Map` in order of use, so the
 *   least recently used is its first entry.
 *
 * @example
 * import * as Keyed from 'fp-ts-retry/Keyed'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const policies = Keyed.make({ make: (key: string) => ({ key }), maxKeys: 100, idleAfter: 60_000, clock })
 *   const first = policies.get('tenant-1')
 *   policies.get('tenant-2')
 *   await clock.advance(30_000)
 *   assert.strictEqual(policies.get('tenant-1'), first) // used again: kept for another minute
 *   await clock.advance(30_000)
 *   policies.get('tenant-1') // tenant-2 is idle for 60 s: dropped
 *   assert.deepStrictEqual(policies.keys(), ['tenant-1'])
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = <P>(options: KeyedOptions<P>): Keyed<P> => {
  const where = 'Keyed.make'
  validate.object(where, 'options', options)
  const makePolicy = validate.callable(where, 'options.make', options.make)
  const maxKeys = validate.positiveCount(where, 'options.maxKeys', options.maxKeys)
  const idleAfter =
    options.idleAfter === undefined ? undefined : validate.positive(where, 'options.idleAfter', options.idleAfter)
  validate.services(where, 'options', { clock: options.clock })
  const onEvent =
    options.onEvent === undefined ? undefined : validate.callable(where, 'options.onEvent', options.onEvent)
  const clock = options.clock ?? LiveClock.live
  // in order of use: the least recently used first (a Map iterates in order of insertion)
  const entries = new Map<string, Entry<P>>()

  const dropIdle = (now: number, idle: number): void => {
    // the entries are in order of use, so the idle ones are a prefix
    for (const [key, entry] of entries) {
      if (now - entry.usedAt < idle) return
      entries.delete(key)
    }
  }

  return {
    get: (key) => {
      validate.string(where, 'get: key', key)
      const now = idleAfter === undefined ? 0 : clock.now()
      if (idleAfter !== undefined) dropIdle(now, idleAfter)
      const found = entries.get(key)
      if (found !== undefined) {
        entries.delete(key)
        found.usedAt = now
        entries.set(key, found)
        return found.policy
      }
      const policy = makePolicy(key, onEvent === undefined ? undefined : withKey(key, onEvent))
      // `make` may have used the registry itself: evict only what is still above the bound
      entries.delete(key)
      while (entries.size >= maxKeys) {
        const oldest = entries.keys().next()
        if (oldest.done === true) break
        entries.delete(oldest.value)
      }
      entries.set(key, { policy, usedAt: now })
      return policy
    },
    get size() {
      return entries.size
    },
    keys: () => [...entries.keys()],
    entries: () => Array.from(entries, ([key, { policy }]) => [key, policy] as const),
    delete: (key) => entries.delete(key)
  }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/** The characters a policy key keeps as they are in {@link redisKey}: RFC 3986's unreserved ones. */
const KEPT = /^[A-Za-z0-9._~-]$/

/**
 * The Redis key of one policy key's shared state: `prefix`, then the policy key escaped, so that two policy keys
 * never share a Redis key, and a policy key never chooses its Redis Cluster slot. Give it to the Redis form of a
 * keyed policy: `make: (host) => Breaker.consecutive({ ..., store: RedisBreaker.store({ redis, key:
 * Keyed.redisKey('breaker:', host) }) })`.
 *
 * **Details**
 *
 * - The policy key keeps its letters, digits and `.`, `_`, `~`, `-` (RFC 3986's unreserved characters: a host
 *   name reads as it is); every other UTF-16 code unit is written `%XX` (two hex digits, below 0x100) or `%uXXXX`.
 *   The escape is one to one: two different policy keys never make the same Redis key, a lone surrogate too.
 * - Hence the escaped key holds no `:`, `{` or `}`: end `prefix` with `:` and no registry's key reaches into
 *   another's (`'breaker:'` and `'breaker:eu:'` never meet), and a `{...}` in a policy key is no Redis Cluster hash
 *   tag. On a Cluster the policy keys spread over the slots, which is what independent policies want (each script
 *   of the Redis modules touches one key). A hash tag in `prefix` (`'{fp}:breaker:'`) puts them all in one slot.
 * - `prefix` must be a non-empty string and `key` a string: a `TypeError` otherwise.
 *
 * @example
 * import * as Keyed from 'fp-ts-retry/Keyed'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(Keyed.redisKey('breaker:', 'api.example.com'), 'breaker:api.example.com')
 * assert.strictEqual(Keyed.redisKey('breaker:', 'api.example.com:8443'), 'breaker:api.example.com%3A8443')
 * assert.strictEqual(Keyed.redisKey('rate:', '{tenant} 7'), 'rate:%7Btenant%7D%207')
 * assert.strictEqual(Keyed.redisKey('rate:', 'café'), 'rate:caf%E9')
 * assert.notStrictEqual(Keyed.redisKey('rate:', 'a:b'), Keyed.redisKey('rate:a:', 'b'))
 *
 * @category utils
 * @since 1.0.0
 */
export const redisKey = (prefix: string, key: string): string => {
  const where = 'Keyed.redisKey'
  if (validate.string(where, 'prefix', prefix) === '')
    throw new TypeError(`${where}: prefix must be a non-empty string, received ""`)
  validate.string(where, 'key', key)
  let escaped = ''
  for (let i = 0; i < key.length; i++) {
    const c = key[i]
    const code = key.charCodeAt(i)
    escaped += KEPT.test(c)
      ? c
      : code < 0x100
      ? `%${code.toString(16).toUpperCase().padStart(2, '0')}`
      : `%u${code.toString(16).toUpperCase().padStart(4, '0')}`
  }
  return prefix + escaped
}
