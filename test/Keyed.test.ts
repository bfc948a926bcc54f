import * as fc from 'fast-check'
import * as Breaker from '../src/Breaker'
import * as Bulkhead from '../src/Bulkhead'
import type { Event } from '../src/Event'
import * as Keyed from '../src/Keyed'
import * as RateLimiter from '../src/RateLimiter'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, exposeGc, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

/** A fresh object per make, to tell policies apart by identity. */
const objects = (): Keyed.Keyed<{ readonly key: string }> & { readonly made: Array<string> } => {
  const made: Array<string> = []
  const keyed = Keyed.make({ make: (key: string) => (made.push(key), { key }), maxKeys: 3 })
  return Object.assign(keyed, { made })
}

describe('Keyed', () => {
  describe('make', () => {
    it("should make a key's policy on first use and answer the same object after", () => {
      const keyed = objects()
      const a = keyed.get('a')
      strictEqual(keyed.get('a'), a)
      deepStrictEqual(keyed.made, ['a'])
      strictEqual(keyed.size, 1)
    })

    it('should keep at most maxKeys policies among 10,000 keys', () => {
      const keyed = Keyed.make({ make: (key: string) => ({ key }), maxKeys: 100 })
      for (let i = 0; i < 10_000; i++) {
        keyed.get(`key-${i}`)
        ok(keyed.size <= 100, `size ${keyed.size} after ${i + 1} keys`)
      }
      strictEqual(keyed.size, 100)
      deepStrictEqual(keyed.keys()[0], 'key-9900')
      deepStrictEqual(keyed.keys()[99], 'key-9999')
    })

    it('should keep 10,000 keys of breakers within the bound in memory: the evicted ones are collected', async () => {
      const gc = exposeGc()
      const made: Array<WeakRef<Breaker.Breaker>> = []
      const breakers = Keyed.make({
        make: () => {
          const breaker = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000) })
          made.push(new WeakRef(breaker))
          return breaker
        },
        maxKeys: 100
      })
      for (let i = 0; i < 10_000; i++) (breakers.get(`host-${i}.example.com`).enter() as Breaker.Permit).onFailure()
      strictEqual(breakers.size, 100)
      strictEqual(made.length, 10_000)
      if (gc === undefined) return // the engine allows no collection by hand: the bound by count above holds
      // a WeakRef's target is kept until the job that made it ends
      await new Promise((resolve) => setImmediate(resolve))
      gc()
      const alive = made.filter((ref) => ref.deref() !== undefined).length
      ok(alive <= 100, `${alive} breakers of 10,000 alive, with 100 kept`)
      strictEqual(breakers.get('host-9999.example.com').state._tag, 'Open') // the kept ones are still there
    })

    it("should give make each key's observer: every event of the key's policy reaches onEvent with its key", async () => {
      const clock = TestClock.make()
      const events: Array<Event> = []
      const onEvent = (event: Event): void => void events.push(event)
      const breakers = Keyed.make({
        make: (_host, onEvent) =>
          Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000), clock, onEvent }),
        maxKeys: 10,
        onEvent
      })
      const limiters = Keyed.make({
        make: (_tenant, onEvent) => RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock, onEvent }),
        maxKeys: 10,
        onEvent
      })
      const bulkheads = Keyed.make({
        make: (_user, onEvent) => Bulkhead.make({ maxConcurrent: 1, maxQueue: 0, clock, onEvent }),
        maxKeys: 10,
        onEvent
      })
      ;(breakers.get('a.example.com').enter() as Breaker.Permit).onFailure()
      limiters.get('t1').take()
      limiters.get('t1').take()
      bulkheads.get('u1').enter()
      bulkheads.get('u1').enter()
      bulkheads.get('u2').enter()
      deepStrictEqual(
        events.map((e) => `${e._tag} ${String(e.key)}`),
        ['BreakerStateChanged a.example.com', 'RateLimitRefused t1', 'BulkheadRefused u1']
      )
      deepStrictEqual(events[0], {
        _tag: 'BreakerStateChanged',
        source: 'breaker',
        run: 0,
        at: 0,
        from: 'Closed',
        to: 'Open',
        since: 0,
        halfOpenAt: 1_000,
        origin: 'local',
        key: 'a.example.com'
      })
    })

    it('should give make no observer without onEvent, and report an onEvent that throws as a warning', () => {
      const given: Array<unknown> = []
      Keyed.make({ make: (_key, onEvent) => given.push(onEvent), maxKeys: 1 }).get('a')
      deepStrictEqual(given, [undefined])
      const warnings: Array<string> = []
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation((w) => void warnings.push(String(w)))
      try {
        const breakers = Keyed.make({
          make: (_host, onEvent) => Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1), onEvent }),
          maxKeys: 1,
          onEvent: () => {
            throw new Error('observer down')
          }
        })
        ;(breakers.get('a').enter() as Breaker.Permit).onFailure()
        strictEqual(breakers.get('a').state._tag, 'Open')
        deepStrictEqual(warnings, ['fp-ts-retry: an observer threw, and was ignored: observer down'])
      } finally {
        warn.mockRestore()
      }
    })

    it('should evict the least recently used first', () => {
      const keyed = objects()
      const a = keyed.get('a')
      keyed.get('b')
      keyed.get('c')
      strictEqual(keyed.get('a'), a) // b is now the least recently used
      deepStrictEqual(keyed.keys(), ['b', 'c', 'a'])
      keyed.get('d')
      deepStrictEqual(keyed.keys(), ['c', 'a', 'd'])
      keyed.get('b') // made again
      deepStrictEqual(keyed.keys(), ['a', 'd', 'b'])
      deepStrictEqual(keyed.made, ['a', 'b', 'c', 'd', 'b'])
    })

    it('should list its entries in order of use, without making, touching or dropping one', async () => {
      const clock = TestClock.make()
      const made: Array<string> = []
      const keyed = Keyed.make({
        make: (key: string) => (made.push(key), { key }),
        maxKeys: 3,
        idleAfter: 1_000,
        clock
      })
      const a = keyed.get('a')
      const b = keyed.get('b')
      await clock.advance(1_000)
      deepStrictEqual(keyed.entries(), [
        ['a', a],
        ['b', b]
      ])
      strictEqual(keyed.entries()[0][1], a) // the policy itself
      // entries() left the order and the idle ones as they were: get drops both
      keyed.get('c')
      deepStrictEqual(
        keyed.entries().map(([key]) => key),
        ['c']
      )
      deepStrictEqual(made, ['a', 'b', 'c'])
    })

    it('should forget a deleted key and make it again on its next get', () => {
      const keyed = objects()
      const a = keyed.get('a')
      strictEqual(keyed.delete('a'), true)
      strictEqual(keyed.delete('a'), false)
      strictEqual(keyed.size, 0)
      ok(keyed.get('a') !== a)
    })

    it('should leave the registry as it was when make throws', () => {
      const keyed = Keyed.make<string>({
        make: (key) => {
          if (key === 'bad') throw new Error('boom')
          return key
        },
        maxKeys: 1
      })
      keyed.get('good')
      expect(() => keyed.get('bad')).toThrow('boom')
      deepStrictEqual(keyed.keys(), ['good'])
    })

    it('should drop a policy unused for idleAfter ms at the next get, on a TestClock', async () => {
      const clock = TestClock.make()
      const keyed = Keyed.make({ make: (key: string) => ({ key }), maxKeys: 10, idleAfter: 1_000, clock })
      const a = keyed.get('a')
      keyed.get('b')
      await clock.advance(600)
      strictEqual(keyed.get('a'), a) // used at 600
      await clock.advance(399)
      keyed.get('c')
      deepStrictEqual(keyed.keys(), ['b', 'a', 'c']) // b is 999 ms idle: kept
      await clock.advance(1)
      strictEqual(keyed.size, 3) // lazily: nothing is dropped without a get
      keyed.get('c')
      deepStrictEqual(keyed.keys(), ['a', 'c']) // b idle for 1,000 ms: dropped
      await clock.advance(1_000)
      ok(keyed.get('a') !== a) // a idle too: dropped, then made again
      deepStrictEqual(keyed.keys(), ['a'])
      deepStrictEqual(clock.timers.length, 0)
    })

    it("should keep one key's open breaker from opening another key's", () => {
      const clock = TestClock.make()
      const breakers = Keyed.make({
        make: () => Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.constant(10_000), clock }),
        maxKeys: 10
      })
      for (let i = 0; i < 2; i++) (breakers.get('a.example.com').enter() as Breaker.Permit).onFailure()
      strictEqual(breakers.get('a.example.com').state._tag, 'Open')
      strictEqual(breakers.get('a.example.com').enter(), undefined)
      strictEqual(breakers.get('b.example.com').state._tag, 'Closed')
      ok(breakers.get('b.example.com').enter() !== undefined)
    })

    it("should keep one tenant's spent rate from spending another's", () => {
      const clock = TestClock.make()
      const limiters = Keyed.make({
        make: () => RateLimiter.gcra({ rate: 1, per: 1_000, burst: 2, clock }),
        maxKeys: 10
      })
      deepStrictEqual(
        [limiters.get('t1').take(), limiters.get('t1').take(), limiters.get('t1').take()],
        [true, true, false]
      )
      deepStrictEqual([limiters.get('t2').take(), limiters.get('t2').take()], [true, true])
    })

    it('should refuse bad options, naming the value', () => {
      const make = (key: string): string => key
      throwsTypeError(
        () => Keyed.make(null as unknown as Keyed.KeyedOptions<string>),
        /^Keyed\.make: options must be an object, received null$/
      )
      throwsTypeError(
        () => Keyed.make({ make: 1 as unknown as () => string, maxKeys: 1 }),
        /^Keyed\.make: options\.make must be a function, received 1$/
      )
      for (const maxKeys of [0, -1, 1.5, NaN, Infinity, '3' as unknown as number])
        throwsRangeError(
          () => Keyed.make({ make, maxKeys }),
          /^Keyed\.make: options\.maxKeys must be a whole number >= 1, received /
        )
      for (const idleAfter of [0, -1, NaN, Infinity, null as unknown as number])
        throwsRangeError(
          () => Keyed.make({ make, maxKeys: 1, idleAfter }),
          /^Keyed\.make: options\.idleAfter must be a finite number > 0, received /
        )
      throwsTypeError(
        () => Keyed.make({ make, maxKeys: 1, clock: {} as unknown as TestClock.TestClock }),
        /^Keyed\.make: options\.clock must be a Clock, received /
      )
      throwsTypeError(
        () => Keyed.make({ make, maxKeys: 1, onEvent: 'log' as unknown as () => void }),
        /^Keyed\.make: options\.onEvent must be a function, received "log"$/
      )
      throwsTypeError(
        () => Keyed.make({ make, maxKeys: 1 }).get(1 as unknown as string),
        /^Keyed\.make: get: key must be a string, received 1$/
      )
    })

    it('should hold size <= maxKeys and answer the same policy for a key until it is evicted (property)', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 8 }),
          fc.array(
            fc.oneof(
              fc.record({ get: fc.integer({ min: 0, max: 12 }) }),
              fc.record({ del: fc.integer({ min: 0, max: 12 }) })
            ),
            {
              maxLength: 200
            }
          ),
          (maxKeys, ops) => {
            const keyed = Keyed.make({ make: (key: string) => ({ key }), maxKeys })
            const seen = new Map<string, { key: string }>()
            for (const op of ops) {
              if ('del' in op) {
                const key = String(op.del)
                strictEqual(keyed.delete(key), seen.delete(key))
              } else {
                const key = String(op.get)
                const policy = keyed.get(key)
                const before = seen.get(key)
                if (before !== undefined) strictEqual(policy, before) // not evicted since: the same object
                seen.set(key, policy)
                // a reference LRU: the least recently used key is the first to go
                if (before === undefined && seen.size > maxKeys) seen.delete(seen.keys().next().value as string)
                else if (before !== undefined) {
                  seen.delete(key)
                  seen.set(key, policy)
                }
              }
              deepStrictEqual(keyed.keys(), [...seen.keys()])
              ok(keyed.size <= maxKeys)
              strictEqual(keyed.size, seen.size)
            }
          }
        )
      )
    })
  })

  describe('redisKey', () => {
    it('should keep a host name as it is and escape every other character', () => {
      strictEqual(Keyed.redisKey('breaker:', 'api.example.com'), 'breaker:api.example.com')
      strictEqual(Keyed.redisKey('breaker:', 'A-z_0.9~'), 'breaker:A-z_0.9~')
      strictEqual(Keyed.redisKey('breaker:', '[::1]:8080'), 'breaker:%5B%3A%3A1%5D%3A8080')
      strictEqual(Keyed.redisKey('rate:', '{t}%'), 'rate:%7Bt%7D%25')
      strictEqual(Keyed.redisKey('rate:', 'é€😀'), 'rate:%E9%u20AC%uD83D%uDE00')
      strictEqual(Keyed.redisKey('rate:', ''), 'rate:')
    })

    it('should make distinct Redis keys of distinct policy keys, with no separator and no hash tag of theirs (property)', () => {
      const anyString = fc.string({
        unit: fc.oneof(
          fc.constantFrom(':', '{', '}', '%', 'u', 'a', '.'),
          fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
        )
      })
      fc.assert(
        fc.property(anyString, anyString, (a, b) => {
          const [ka, kb] = [Keyed.redisKey('p:', a), Keyed.redisKey('p:', b)]
          strictEqual(ka === kb, a === b)
          ok(!/[:{}]/.test(ka.slice(2)), ka)
          ok(/^[A-Za-z0-9._~%-]*$/.test(ka.slice(2)), ka)
        }),
        { numRuns: 2_000 }
      )
    })

    it('should refuse an empty prefix, and a prefix or key that is no string, naming it', () => {
      throwsTypeError(
        () => Keyed.redisKey('', 'a'),
        /^Keyed\.redisKey: prefix must be a non-empty string, received ""$/
      )
      throwsTypeError(
        () => Keyed.redisKey(1 as unknown as string, 'a'),
        /^Keyed\.redisKey: prefix must be a string, received 1$/
      )
      throwsTypeError(
        () => Keyed.redisKey('p:', null as unknown as string),
        /^Keyed\.redisKey: key must be a string, received null$/
      )
    })
  })
})
