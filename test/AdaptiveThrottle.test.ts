import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as AdaptiveThrottle from '../src/AdaptiveThrottle'
import type { Event } from '../src/Event'
import * as Keyed from '../src/Keyed'
import * as Random from '../src/Random'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

/** A request at `at` ms on the clock, accepted by the backend or not. */
interface Call {
  readonly at: number
  readonly accepted: boolean
}

/** The reference: the counts of `calls` in the window at `now`, each counted while its bucket is in the window. */
const model = (calls: ReadonlyArray<Call>, now: number, window: number, buckets: number) => {
  const width = window / buckets
  const live = calls.filter(({ at }) => Math.floor(at / width) > Math.floor(now / width) - buckets)
  return { requests: live.length, accepts: live.filter((c) => c.accepted).length }
}

/** A throttle that never drops (a draw of 0.999... is below no probability but 1), to count freely. */
const counting = (options: AdaptiveThrottle.AdaptiveThrottleOptions) =>
  AdaptiveThrottle.make({ random: Random.fixed(1 - 2 ** -53), ...options })

describe('AdaptiveThrottle', () => {
  describe('make', () => {
    it('should give the drop probability of the formula for any requests and accepts in the window', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ dt: fc.nat(400), accepted: fc.boolean() }), { maxLength: 60 }),
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: 2_000 }),
          fc.double({ min: 1, max: 5, noNaN: true }),
          fc.nat(3_000),
          async (steps, buckets, window, k, after) => {
            const clock = TestClock.make()
            const throttle = counting({ k, window, buckets, clock })
            const calls: Array<Call> = []
            for (const { dt, accepted } of steps) {
              await clock.advance(dt)
              throttle.request()
              if (accepted) throttle.accept()
              calls.push({ at: clock.now(), accepted })
              const { requests, accepts } = model(calls, clock.now(), window, buckets)
              deepStrictEqual([throttle.requests, throttle.accepts], [requests, accepts])
              strictEqual(throttle.dropProbability(), Math.max(0, (requests - k * accepts) / (requests + 1)))
            }
            // and the counts leave the window as time passes
            await clock.advance(after)
            const { requests, accepts } = model(calls, clock.now(), window, buckets)
            deepStrictEqual([throttle.requests, throttle.accepts], [requests, accepts])
            strictEqual(throttle.dropProbability(), Math.max(0, (requests - k * accepts) / (requests + 1)))
            await clock.advance(window)
            deepStrictEqual([throttle.requests, throttle.accepts, throttle.dropProbability()], [0, 0, 0])
          }
        ),
        { numRuns: 200 }
      )
    })

    it('should draw each request against the probability of the counts before it', () => {
      fc.assert(
        fc.property(
          fc.array(fc.boolean(), { maxLength: 40 }),
          fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          (accepted, u) => {
            const throttle = AdaptiveThrottle.make({ clock: TestClock.make(), random: Random.fixed(u) })
            for (const a of accepted) {
              const p = throttle.dropProbability()
              const answer = throttle.request()
              deepStrictEqual(answer, u < p ? { _tag: 'Throttled', probability: p } : undefined)
              if (a && answer === undefined) throttle.accept()
            }
          }
        )
      )
    })

    it('should drop at the probability it states, over many calls, and settle where the SRE book says', async () => {
      // A request a ms for 20 s, to a backend that accepts at most one every 4 ms of what reaches it: once settled,
      // the client sends about k = 2 times what the backend accepts, and drops the rest.
      const clock = TestClock.make()
      const throttle = AdaptiveThrottle.make({ window: 1_000, buckets: 10, clock, random: Random.seeded(34) })
      let expected = 0
      let dropped = 0
      let lastAccept = -Infinity
      const n = 20_000
      let [sent, accepted] = [0, 0] // in the second half, once settled
      for (let i = 0; i < n; i++) {
        await clock.advance(1)
        expected += throttle.dropProbability()
        if (throttle.request() !== undefined) {
          dropped++
          continue
        }
        if (i >= n / 2) sent++
        if (clock.now() - lastAccept >= 4) {
          lastAccept = clock.now()
          throttle.accept()
          if (i >= n / 2) accepted++
        }
      }
      // the drops are a sum of independent draws, each a Bernoulli of its stated probability: their variance is at
      // most n / 4, so 5 standard deviations are at most 5 * sqrt(n) / 2 (about 354 here)
      ok(Math.abs(dropped - expected) < (5 * Math.sqrt(n)) / 2, `dropped ${dropped}, expected ${expected}`)
      ok(Math.abs(sent / accepted - 2) < 0.1, `sent ${sent} for ${accepted} accepted`)
    })

    it('should drop nothing while the backend accepts every request', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(30_000), { maxLength: 100 }), async (dts) => {
          const clock = TestClock.make()
          const events: Array<Event> = []
          // a draw of 0 drops at any probability above 0
          const throttle = AdaptiveThrottle.make({
            clock,
            random: Random.fixed(0),
            onEvent: (e) => void events.push(e)
          })
          for (const dt of dts) {
            await clock.advance(dt)
            strictEqual(throttle.request(), undefined)
            throttle.accept()
          }
          deepStrictEqual(events, [])
        })
      )
    })

    it('should drop nothing while the requests stay within k times the accepts', () => {
      fc.assert(
        fc.property(
          fc.array(fc.boolean(), { maxLength: 100 }),
          fc.double({ min: 1, max: 4, noNaN: true }),
          (refusals, k) => {
            const throttle = AdaptiveThrottle.make({ k, clock: TestClock.make(), random: Random.fixed(0) })
            for (const refuse of refusals) {
              strictEqual(throttle.request(), undefined)
              // the backend refuses only while the requests stay within k * accepts
              if (!(refuse && throttle.requests <= k * throttle.accepts)) throttle.accept()
            }
          }
        )
      )
    })

    it('should tell each drop as a LoadShed', () => {
      const clock = TestClock.make(5)
      const events: Array<Event> = []
      const throttle = AdaptiveThrottle.make({
        k: 1.5,
        clock,
        random: Random.fixed(0.2),
        onEvent: (e) => void events.push(e)
      })
      throttle.request()
      throttle.accept()
      throttle.request() // p = 0
      throttle.request() // p = (2 - 1.5) / 3: 0.2 goes
      deepStrictEqual(events, [])
      deepStrictEqual(throttle.request(), { _tag: 'Throttled', probability: (3 - 1.5) / 4 })
      deepStrictEqual(events, [
        {
          _tag: 'LoadShed',
          source: 'throttle',
          run: 0,
          at: 5,
          cause: 'throttled',
          priority: 'normal',
          inFlight: 3,
          limit: 1.5
        }
      ])
    })

    it('should refuse bad options with a typed error naming the value', () => {
      throwsRangeError(
        () => AdaptiveThrottle.make({ k: 0.5 }),
        /AdaptiveThrottle.make: options.k must be a finite number >= 1, received 0.5/
      )
      throwsRangeError(
        () => AdaptiveThrottle.make({ k: Infinity }),
        /options.k must be a finite number >= 1, received Infinity/
      )
      throwsRangeError(() => AdaptiveThrottle.make({ k: NaN }), /options.k must be a finite number >= 1, received NaN/)
      throwsRangeError(
        () => AdaptiveThrottle.make({ window: Infinity }),
        /options.window must be a finite number > 0, received Infinity/
      )
      throwsRangeError(
        () => AdaptiveThrottle.make({ window: 0 }),
        /options.window must be a finite number > 0, received 0/
      )
      throwsRangeError(
        () => AdaptiveThrottle.make({ buckets: 2.5 }),
        /options.buckets must be a whole number in \[1, 1000\], received 2.5/
      )
      throwsRangeError(
        () => AdaptiveThrottle.make({ buckets: 0 }),
        /options.buckets must be a whole number in \[1, 1000\], received 0/
      )
      throwsRangeError(
        () => AdaptiveThrottle.make({ buckets: 1_001 }),
        /options.buckets must be a whole number in \[1, 1000\], received 1001/
      )
      throwsTypeError(() => AdaptiveThrottle.make({ clock: {} as never }), /options.clock must be a Clock/)
      throwsTypeError(() => AdaptiveThrottle.make({ random: {} as never }), /options.random must be a Random/)
      throwsTypeError(
        () => AdaptiveThrottle.make({ from: {} as never }),
        /from must be a throttle made by AdaptiveThrottle.make/
      )
      throwsRangeError(() => AdaptiveThrottle.make().dropProbability(NaN), /now must be a finite number, received NaN/)
      const bad = AdaptiveThrottle.make({ random: { next: () => 1 } })
      throwsRangeError(() => bad.request(), /AdaptiveThrottle.make: random.next\(\) returned 1/)
    })

    it('should keep the counts of the throttle it replaces (from)', async () => {
      const clock = TestClock.make()
      const old = counting({ window: 1_000, buckets: 4, clock })
      old.request() // at 0
      await clock.advance(600)
      old.request() // at 600
      old.accept()
      const same = counting({ k: 3, window: 1_000, buckets: 4, clock, from: old })
      deepStrictEqual([same.requests, same.accepts], [2, 1])
      strictEqual(same.dropProbability(), 0) // 2 - 3 * 1 < 0
      await clock.advance(400) // the bucket of 0 leaves, as it would have left the old one
      deepStrictEqual([same.requests, same.accepts], [1, 1])
      // a shorter window keeps what is in it: the old bucket [500, 750) lands in the new [500, 600), still in the window
      const shorter = counting({ window: 600, buckets: 6, clock, from: same })
      deepStrictEqual([shorter.requests, shorter.accepts], [1, 1])
      const tooShort = counting({ window: 100, buckets: 1, clock, from: same })
      deepStrictEqual([tooShort.requests, tooShort.accepts], [0, 0])
      // the old one goes on alone
      old.request()
      deepStrictEqual([same.requests, old.requests], [1, 2])
    })
  })

  describe('per key (Keyed)', () => {
    it('should keep one throttle per key, each with its own counts, its drops told with the key', () => {
      const events: Array<Event> = []
      const clock = TestClock.make()
      const throttles = Keyed.make({
        make: (_host: string, onEvent) => AdaptiveThrottle.make({ clock, random: Random.fixed(0), onEvent }),
        maxKeys: 2,
        onEvent: (e) => void events.push(e)
      })
      throttles.get('a.example').request() // refused: p = 1/2 for a.example
      strictEqual(throttles.get('b.example').request(), undefined)
      ok(throttles.get('a.example').request() !== undefined)
      deepStrictEqual(
        events.map((e) => [e._tag, e.key]),
        [['LoadShed', 'a.example']]
      )
      throttles.get('c.example') // b.example is evicted: memory stays at maxKeys throttles of `buckets` buckets
      deepStrictEqual(throttles.keys(), ['a.example', 'c.example'])
    })
  })

  describe('protect', () => {
    it('should count a request per call, an accept unless the backend refused it for overload', async () => {
      const clock = TestClock.make()
      const throttle = counting({ clock })
      const call = (left: unknown) =>
        pipe(
          TE.left(left),
          AdaptiveThrottle.protect(throttle, () => 'shed')
        )()
      await call({ status: 503 })
      await call({ status: 429 })
      await call({ name: 'ThrottlingException' })
      deepStrictEqual([throttle.requests, throttle.accepts], [3, 0])
      await call({ status: 500 })
      await call(new Error('bad request'))
      await pipe(
        TE.right(1),
        AdaptiveThrottle.protect(throttle, () => 'shed')
      )()
      deepStrictEqual([throttle.requests, throttle.accepts], [6, 3])
      await pipe(
        TE.left('timeout'),
        AdaptiveThrottle.protect(throttle, () => 'shed', { rejected: () => true })
      )()
      deepStrictEqual([throttle.requests, throttle.accepts], [7, 3])
    })

    it('should drop a call without running it', async () => {
      const throttle = AdaptiveThrottle.make({ clock: TestClock.make(), random: Random.fixed(0) })
      throttle.request() // refused: p = 1 / 2 now
      let ran = 0
      const action: TE.TaskEither<never, number> = () => Promise.resolve(E.right(++ran))
      deepStrictEqual(
        await pipe(
          action,
          AdaptiveThrottle.protect(throttle, (t) => t)
        )(),
        E.left({ _tag: 'Throttled' as const, probability: 0.5 })
      )
      strictEqual(ran, 0)
      strictEqual(throttle.requests, 2)
    })

    it('should count a defect as a request not accepted, and let it through', async () => {
      const throttle = counting({ clock: TestClock.make() })
      const boom: TE.TaskEither<never, number> = () => Promise.reject(new Error('boom'))
      await expect(
        pipe(
          boom,
          AdaptiveThrottle.protect(throttle, () => 'shed')
        )()
      ).rejects.toThrow('boom')
      deepStrictEqual([throttle.requests, throttle.accepts], [1, 0])
    })

    it('should check its arguments', () => {
      const throttle = AdaptiveThrottle.make()
      throwsTypeError(() => AdaptiveThrottle.protect({} as never, () => 'x'), /throttle must be an AdaptiveThrottle/)
      throwsTypeError(() => AdaptiveThrottle.protect(throttle, 'x' as never), /onShed must be a function/)
      throwsTypeError(
        () => AdaptiveThrottle.protect(throttle, () => 'x', { rejected: 1 as never }),
        /options.rejected must be a function/
      )
    })
  })

  describe('asGuard', () => {
    it("should drop a retry with the throttle's probability, and end the run with reason 'shed'", async () => {
      const clock = TestClock.make()
      const throttle = AdaptiveThrottle.make({ clock, random: Random.fixed(0.6) })
      const reasons: Array<StopReason> = []
      const run = pipe(
        TE.left({ status: 503 }),
        AdaptiveThrottle.protect(throttle, (t) => t),
        retrying(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(10))), {
          clock,
          guards: [AdaptiveThrottle.asGuard(throttle)],
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )()
      await clock.runAll()
      // requests 1, 2: p = 1/2, 2/3 at the guard (0.6 goes at 1/2, not at 2/3); protect drew at 0 and 1/2
      deepStrictEqual(await run, E.left({ status: 503 }))
      deepStrictEqual(clock.sleeps, [10])
      deepStrictEqual(reasons, ['shed'])
      strictEqual(throttle.requests, 2) // the guard counts nothing
    })

    it("should end a run whose schedule stops on the throttle's drop with reason 'shed'", async () => {
      const clock = TestClock.make()
      const throttle = AdaptiveThrottle.make({ clock, random: Random.fixed(0) })
      throttle.request() // p = 1/2
      const reasons: Array<StopReason> = []
      await pipe(
        TE.left({ status: 503 }),
        AdaptiveThrottle.protect(throttle, (t) => t),
        retrying(Schedule.recurs(0), {
          clock,
          guards: [AdaptiveThrottle.asGuard(throttle)],
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )()
      deepStrictEqual(reasons, ['shed'])
    })

    it('should let first attempts through, and draw for a hedge', () => {
      const throttle = AdaptiveThrottle.make({ clock: TestClock.make(), random: Random.fixed(0) })
      const guard = AdaptiveThrottle.asGuard(throttle)
      const outcome = { ok: false, error: 'x', latency: 0, now: 0, retries: 0, delay: 10 }
      strictEqual(guard.admit({ ...outcome, retrying: true }), true) // p = 0
      strictEqual(guard.allows?.(0), true)
      throttle.request()
      strictEqual(guard.admit({ ...outcome, retrying: false }), true)
      strictEqual(guard.admit({ ...outcome, retrying: true }), false)
      strictEqual(guard.allows?.(0), false)
      strictEqual(guard.reason, 'shed')
      throwsTypeError(() => AdaptiveThrottle.asGuard({} as never), /throttle must be an AdaptiveThrottle/)
    })
  })

  describe('isOverload', () => {
    it('should tell a 429, a 503 and a throttling error from other failures', () => {
      deepStrictEqual(
        [{ status: 429 }, { statusCode: 503 }, { $metadata: { httpStatusCode: 503 } }, { code: 'SlowDown' }].map(
          AdaptiveThrottle.isOverload
        ),
        [true, true, true, true]
      )
      deepStrictEqual([{ status: 500 }, { status: 400 }, null, 'busy', 503].map(AdaptiveThrottle.isOverload), [
        false,
        false,
        false,
        false,
        false
      ])
    })
  })
})
