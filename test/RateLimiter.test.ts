import { getEventListeners } from 'events'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Event } from '../src/Event'
import * as RateLimiter from '../src/RateLimiter'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import type { Signalled } from '../src/Timeout'
import {
  callArbitrary,
  fixedWindowModel,
  inOrder,
  mostInAny,
  mostInAWindow,
  simulate,
  slidingWindowModel
} from './support/limiters'
import { deepStrictEqual, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

/** An action that records the time it started on `clock`. */
const recorder = (clock: TestClock.TestClock) => {
  const started: Array<number> = []
  const action: TaskEither<never, number> = () => {
    started.push(clock.now())
    return Promise.resolve(E.right(started.length))
  }
  return { started, action }
}

const reserve = (limiter: RateLimiter.RateLimiter): RateLimiter.Reservation =>
  limiter.reserve() as RateLimiter.Reservation

/** The answers of `n` takes in a row. */
const takes = (limiter: RateLimiter.RateLimiter, n: number): Array<boolean | Promise<boolean>> =>
  Array.from({ length: n }, () => limiter.take())

describe('RateLimiter', () => {
  describe('gcra', () => {
    it('should let a burst through, then one token every per / rate ms', async () => {
      const clock = TestClock.make(1_700_000_000_000)
      const limiter = RateLimiter.gcra({ rate: 3, per: 300, burst: 3, clock })
      deepStrictEqual([limiter.take(), limiter.take(), limiter.take(), limiter.take()], [true, true, true, false])
      await clock.advance(99)
      strictEqual(limiter.take(), false) // never early
      await clock.advance(1)
      deepStrictEqual([limiter.take(), limiter.take()], [true, false])
      await clock.advance(1_000) // refills to the burst, no further
      deepStrictEqual([limiter.take(), limiter.take(), limiter.take(), limiter.take()], [true, true, true, false])
    })

    it('should answer reservations in turn, with exact waits, and never let take overtake one', () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 1, clock })
      deepStrictEqual(
        [0, 1, 2].map(() => reserve(limiter).wait),
        [0, 100, 200]
      )
      strictEqual(limiter.take(), false)
    })

    it('should answer fractional waits as they are, not rounded', () => {
      const limiter = RateLimiter.gcra({ rate: 3, per: 1_000, burst: 1, clock: TestClock.make() })
      deepStrictEqual(
        [0, 1, 2, 3].map(() => reserve(limiter).wait),
        [0, 1_000 / 3, 2_000 / 3, 1_000]
      )
    })

    it('should give a cancelled token back only when nothing was reserved after it', () => {
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 1, clock: TestClock.make() })
      reserve(limiter)
      const a = reserve(limiter)
      const b = reserve(limiter)
      a.cancel() // b was reserved after it: lost, b keeps its turn
      strictEqual(reserve(limiter).wait, 300)
      const c = reserve(limiter)
      c.cancel()
      c.cancel()
      strictEqual(reserve(limiter).wait, 400)
      strictEqual(b.wait, 200)
    })

    it.each([
      ['rate', { rate: 0, per: 1, burst: 1 }],
      ['rate', { rate: NaN, per: 1, burst: 1 }],
      ['rate', { rate: Infinity, per: 1, burst: 1 }],
      ['per', { rate: 1, per: -5, burst: 1 }],
      ['per', { rate: 1, per: 0, burst: 1 }]
    ])('should refuse a bad %s with a RangeError naming it', (name, options) => {
      throwsRangeError(() => RateLimiter.gcra(options), new RegExp(`gcra: ${name} must be a finite number > 0`))
    })

    it.each([0, 1.5, NaN, -1])('should refuse burst %s with a RangeError naming it', (burst) => {
      throwsRangeError(() => RateLimiter.gcra({ rate: 1, per: 1, burst }), /gcra: burst must be a whole number >= 1/)
    })

    it('should refuse options, clocks, limiters and callbacks of the wrong type with a TypeError', () => {
      throwsTypeError(() => RateLimiter.gcra(null as never), /options must be an object/)
      throwsTypeError(
        () => RateLimiter.gcra({ rate: 1, per: 1, burst: 1, clock: {} as never }),
        /options\.clock must be a Clock/
      )
      throwsTypeError(() => RateLimiter.asGuard({ take: () => true } as never), /limiter must be a RateLimiter/)
      const limiter = RateLimiter.gcra({ rate: 1, per: 1, burst: 1 })
      throwsTypeError(() => RateLimiter.throttle(limiter, null as never), /options must be an object/)
      throwsTypeError(() => RateLimiter.throttleSignalled(limiter, 'x' as never), /onAborted must be a function/)
      const call = pipe(
        (_: Signalled) => () => Promise.resolve(E.right(1)),
        RateLimiter.throttleSignalled(limiter, () => 'aborted')
      )
      throwsTypeError(() => call({ signal: {} } as never), /signal must be an AbortSignal/)
      throwsTypeError(
        () => RateLimiter.gcra({ rate: 1, per: 1, burst: 1, onEvent: 'log' as never }),
        /options\.onEvent must be a function/
      )
    })

    it('should tell each wait and each refusal through onEvent, and nothing for a token there at once', async () => {
      const clock = TestClock.make(500)
      const events: Array<Event> = []
      const limiter = RateLimiter.gcra({
        rate: 1,
        per: 100,
        burst: 1,
        clock,
        onEvent: (e) => void events.push(e)
      })
      const calls = [0, 1, 2].map(() => pipe(recorder(clock).action, RateLimiter.throttle(limiter, { clock }))())
      strictEqual(limiter.take(), false)
      await clock.runAll()
      await Promise.all(calls)
      const at = { source: 'rateLimit', run: 0, at: 500 } as const
      deepStrictEqual(events, [
        { _tag: 'RateLimitWaited', ...at, wait: 100 },
        { _tag: 'RateLimitWaited', ...at, wait: 200 },
        { _tag: 'RateLimitRefused', ...at }
      ])
    })

    it('should never grant more than burst + rate * window / per in any window, over any calls', () => {
      type Op =
        | { readonly _tag: 'take'; readonly dt: number }
        | { readonly _tag: 'reserve'; readonly dt: number; readonly cancelAt: number | undefined }
      const op: fc.Arbitrary<Op> = fc.oneof(
        fc.record({ _tag: fc.constant('take' as const), dt: fc.nat(300) }),
        fc.record({
          _tag: fc.constant('reserve' as const),
          dt: fc.nat(300),
          cancelAt: fc.option(fc.nat(1_000), { nil: undefined })
        })
      )
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 500 }),
          fc.integer({ min: 1, max: 5 }),
          fc.array(op, { maxLength: 60 }),
          (rate, per, burst, ops) => {
            let now = 0
            const clock = { now: () => now, sleep: () => Promise.resolve() }
            const limiter = RateLimiter.gcra({ rate, per, burst, clock })
            const granted: Array<number> = []
            // reservations to cancel later, each at a time before it is due (a waiter that gives up)
            const pending: Array<{ readonly at: number; readonly cancel: () => void; readonly index: number }> = []
            for (const o of ops) {
              now += o.dt
              for (const p of pending.filter((p) => p.at <= now)) {
                p.cancel()
                granted[p.index] = NaN
              }
              pending.splice(0, pending.length, ...pending.filter((p) => p.at > now))
              if (o._tag === 'take') {
                if (limiter.take() === true) granted.push(now)
              } else {
                const r = reserve(limiter)
                const due = now + r.wait
                if (o.cancelAt !== undefined && o.cancelAt < r.wait) {
                  pending.push({ at: now + o.cancelAt, cancel: r.cancel, index: granted.length })
                }
                granted.push(due)
              }
            }
            const times = granted.filter((t) => !Number.isNaN(t)).sort((a, b) => a - b)
            for (let i = 0; i < times.length; i++) {
              for (let j = i; j < times.length; j++) {
                const window = times[j] - times[i]
                // a fractional wait is a float: allow its rounding, 1e-9 of a token
                ok(j - i + 1 <= burst + (rate * window) / per + 1e-9, `${j - i + 1} tokens in ${window} ms`)
              }
            }
          }
        ),
        { seed: 20, numRuns: 300 }
      )
    })
  })

  describe.each([
    ['fixedWindow', RateLimiter.fixedWindow, fixedWindowModel],
    ['slidingWindow', RateLimiter.slidingWindow, slidingWindowModel]
  ] as const)('%s', (name, make, model) => {
    it('should answer as its reference model, for any takes, reservations, cancels and advances', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 500 }),
          fc.array(callArbitrary(300), { maxLength: 60, size: 'medium' }),
          async (limit, window, calls) => {
            const clock = TestClock.make()
            const limiter = make({ limit, window, clock })
            const granted = await simulate(
              limiter,
              async (ms) => (await clock.advance(ms), clock.now()),
              model,
              limit,
              window,
              calls,
              (actual, expected, what) => deepStrictEqual({ what, answer: actual }, { what, answer: expected })
            )
            ok(inOrder(granted), `granted out of order: ${granted.join(', ')}`)
            if (name === 'fixedWindow') {
              ok(mostInAWindow(granted, window) <= limit, `more than ${limit} in a window: ${granted.join(', ')}`)
              ok(mostInAny(granted, window) <= 2 * limit, `more than 2 x ${limit} in ${window} ms`)
            } else ok(mostInAny(granted, window) <= limit, `more than ${limit} in ${window} ms: ${granted.join(', ')}`)
          }
        ),
        { seed: 27, numRuns: 400 }
      )
    })

    it('should answer waits that are never negative, NaN or infinite, and never let a take overtake a reservation', () => {
      const clock = TestClock.make(1_700_000_000_123)
      const limiter = make({ limit: 2, window: 1_000 / 3, clock })
      const waits = Array.from({ length: 7 }, () => reserve(limiter).wait)
      ok(
        waits.every((w) => Number.isFinite(w) && w >= 0),
        `waits ${waits.join(', ')}`
      )
      ok(
        waits.every((w, i) => i === 0 || w >= waits[i - 1]),
        `waits ${waits.join(', ')}`
      )
      strictEqual(limiter.take(), false)
    })

    it.each([
      ['limit', { limit: 0, window: 1 }, /limit must be a whole number >= 1, received 0/],
      ['limit', { limit: 1.5, window: 1 }, /limit must be a whole number >= 1, received 1.5/],
      ['window', { limit: 1, window: 0 }, /window must be a finite number > 0, received 0/],
      ['window', { limit: 1, window: NaN }, /window must be a finite number > 0, received NaN/],
      ['window', { limit: 1, window: Infinity }, /window must be a finite number > 0, received Infinity/]
    ])('should refuse a bad %s with a RangeError naming it', (_, options, message) => {
      throwsRangeError(() => make(options), new RegExp(`RateLimiter\\.${name}: ${message.source}`))
    })

    it('should refuse options, clocks and callbacks of the wrong type with a TypeError naming them', () => {
      throwsTypeError(() => make(null as never), new RegExp(`${name}: options must be an object`))
      throwsTypeError(() => make({ limit: 1, window: 1, clock: {} as never }), /options\.clock must be a Clock/)
      throwsTypeError(
        () => make({ limit: 1, window: 1, onEvent: 'log' as never }),
        /options\.onEvent must be a function/
      )
    })

    it('should tell each wait and each refusal through onEvent, and serve throttle, throttleSignalled and asGuard', async () => {
      const clock = TestClock.make()
      const events: Array<Event> = []
      const limiter = make({ limit: 1, window: 100, clock, onEvent: (e) => void events.push(e) })
      const { started, action } = recorder(clock)
      const calls = [0, 1, 2].map(() => pipe(action, RateLimiter.throttle(limiter, { clock }))())
      strictEqual(limiter.take(), false)
      await clock.runAll()
      await Promise.all(calls)
      deepStrictEqual(started, [0, 100, 200])
      const at = { source: 'rateLimit', run: 0, at: 0 } as const
      deepStrictEqual(events, [
        { _tag: 'RateLimitWaited', ...at, wait: 100 },
        { _tag: 'RateLimitWaited', ...at, wait: 200 },
        { _tag: 'RateLimitRefused', ...at }
      ])

      const call = pipe(
        (_: Signalled) => action,
        RateLimiter.throttleSignalled(limiter, () => 'aborted', { clock })
      )
      const controller = new AbortController()
      const waiting = call({ signal: controller.signal })() // due at 300
      await clock.advance(50)
      controller.abort()
      deepStrictEqual(await waiting, E.left('aborted'))
      const next = call()()
      await clock.runAll()
      await next
      deepStrictEqual(started, [0, 100, 200, 300]) // the aborted one's token was given back

      const reasons: Array<StopReason> = []
      const run = pipe(
        (() => Promise.resolve(E.left('503'))) as TaskEither<string, never>,
        retrying(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(5))), {
          clock,
          guards: [RateLimiter.asGuard(make({ limit: 2, window: 1_000, clock }))],
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )()
      await clock.runAll()
      await run
      deepStrictEqual([clock.sleeps.slice(-2), reasons], [[10, 10], ['rateLimit' as StopReason]])
    })
  })

  describe('fixedWindow and slidingWindow across a boundary', () => {
    it('should let the fixed window grant 2 x limit, however close together, and the sliding one limit', async () => {
      const clock = TestClock.make()
      const fixed = RateLimiter.fixedWindow({ limit: 3, window: 1_000, clock })
      const sliding = RateLimiter.slidingWindow({ limit: 3, window: 1_000, clock })
      const three = [true, true, true, false]
      await clock.advance(999)
      deepStrictEqual([takes(fixed, 4), takes(sliding, 4)], [three, three])
      await clock.advance(1) // a new fixed window: 6 in 1 ms; the sliding window still holds the 3 of 999
      deepStrictEqual([takes(fixed, 4), takes(sliding, 1)], [three, [false]])
      await clock.advance(998)
      deepStrictEqual([fixed.take(), sliding.take()], [false, false]) // never early
      await clock.advance(1) // the 3 of 999 have left the sliding window
      deepStrictEqual(takes(sliding, 4), three)
      await clock.advance(1) // the third fixed window
      deepStrictEqual(takes(fixed, 4), three)
    })
  })

  describe('fixedWindow', () => {
    it('should reserve in the current window while it has room, then at the start of the next with room', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.fixedWindow({ limit: 2, window: 1_000, clock })
      await clock.advance(250)
      deepStrictEqual(
        [1, 2, 3, 4, 5].map(() => reserve(limiter).wait),
        [0, 0, 750, 750, 1_750]
      )
      await clock.advance(750)
      strictEqual(limiter.take(), false) // the window of 1000 is reserved in full
    })

    it('should give a cancelled token back only when nothing was taken or reserved after it, then the one before', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.fixedWindow({ limit: 1, window: 100, clock })
      reserve(limiter)
      const a = reserve(limiter) // 100
      const b = reserve(limiter) // 200
      a.cancel() // b after it: lost
      const c = reserve(limiter) // 300
      c.cancel()
      c.cancel()
      b.cancel() // the last again: given back
      strictEqual(reserve(limiter).wait, 200)
    })
  })

  describe('slidingWindow', () => {
    it('should answer from the last limit tokens after many calls', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.slidingWindow({ limit: 2, window: 10, clock })
      for (let i = 0; i < 10_000; i++) {
        limiter.take()
        await clock.advance(3)
      }
      // at 30000: the last two went at 29988 and 29991; each reservation is due when the second last leaves
      deepStrictEqual(
        [1, 2, 3, 4].map(() => reserve(limiter).wait),
        [0, 1, 10, 11]
      )
    })

    it('should give a cancelled token back with the time it pushed out, only when it was the last change', () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.slidingWindow({ limit: 2, window: 100, clock })
      deepStrictEqual(
        [1, 2, 3, 4].map(() => reserve(limiter).wait),
        [0, 0, 100, 100]
      )
      const a = reserve(limiter) // 200
      const b = reserve(limiter) // 200
      a.cancel() // b after it: lost
      b.cancel() // given back
      strictEqual(reserve(limiter).wait, 200) // b's place: a's token is lost, still in the log at 200
      strictEqual(reserve(limiter).wait, 300)
    })
  })

  describe('throttle', () => {
    it('should start the calls in order, each when its token is due, exactly', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 2, clock })
      const { started, action } = recorder(clock)
      const calls = Array.from({ length: 5 }, () => pipe(action, RateLimiter.throttle(limiter, { clock }))())
      await clock.runAll()
      deepStrictEqual(await Promise.all(calls), [1, 2, 3, 4, 5].map(E.right))
      deepStrictEqual(started, [0, 0, 100, 200, 300])
      deepStrictEqual(clock.sleepsOf('throttle'), [100, 200, 300])
    })

    it('should not start a call before its token is due', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock })
      const { started, action } = recorder(clock)
      const calls = [0, 1].map(() => pipe(action, RateLimiter.throttle(limiter, { clock }))())
      await clock.advance(999)
      deepStrictEqual(started, [0])
      await clock.advance(1)
      await Promise.all(calls)
      deepStrictEqual(started, [0, 1_000])
    })
  })

  describe('throttleSignalled', () => {
    it('should let an aborted waiter leave at once, the calls behind it keeping their turns', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 1, clock })
      const { started, action } = recorder(clock)
      const call = pipe(
        (_: Signalled) => action,
        RateLimiter.throttleSignalled(limiter, (reason) => `aborted: ${String(reason)}`, { clock })
      )
      const controller = new AbortController()
      const first = call()()
      const waiting = call({ signal: controller.signal })() // due at 100
      const behind = call()() // due at 200
      await clock.advance(50)
      controller.abort('gave up')
      deepStrictEqual(await waiting, E.left('aborted: gave up'))
      strictEqual(clock.now(), 50)
      strictEqual(getEventListeners(controller.signal, 'abort').length, 0)
      await clock.runAll()
      deepStrictEqual(await Promise.all([first, behind]), [E.right(1), E.right(2)])
      deepStrictEqual(started, [0, 200])
    })

    it('should give back the token of the last waiter when it aborts', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 1, clock })
      const call = pipe(
        (_: Signalled) => () => Promise.resolve(E.right(clock.now())),
        RateLimiter.throttleSignalled(limiter, () => 'aborted', { clock })
      )
      await call()()
      const controller = new AbortController()
      const waiting = call({ signal: controller.signal })()
      await clock.advance(10)
      controller.abort()
      deepStrictEqual(await waiting, E.left('aborted'))
      const next = call()()
      await clock.runAll()
      deepStrictEqual(await next, E.right(100)) // the token due at 100 was given back
    })

    it('should neither reserve nor run for a signal that has aborted already', async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 1, clock })
      const { started, action } = recorder(clock)
      const call = pipe(
        (_: Signalled) => action,
        RateLimiter.throttleSignalled(limiter, () => 'aborted', { clock })
      )
      deepStrictEqual(await call({ signal: AbortSignal.abort() })(), E.left('aborted'))
      deepStrictEqual(started, [])
      strictEqual(limiter.take(), true)
    })
  })

  describe('asGuard', () => {
    it("should take a token for each retry and end the run, reason 'rateLimit', at the first it cannot have", async () => {
      const clock = TestClock.make()
      const limiter = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 2, clock })
      const reasons: Array<StopReason> = []
      let attempts = 0
      const run = pipe(
        (() => (attempts++, Promise.resolve(E.left('503')))) as TaskEither<string, never>,
        retrying(pipe(Schedule.constant(400), Schedule.intersect(Schedule.recurs(10))), {
          clock,
          guards: [RateLimiter.asGuard(limiter)],
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )()
      await clock.runAll()
      deepStrictEqual(await run, E.left('503'))
      // 2 tokens at 0; at 800 the third retry finds 0.8 of a token; at 1000 there is one again, too late
      deepStrictEqual(clock.sleeps, [400, 400])
      strictEqual(attempts, 3)
      deepStrictEqual(reasons, ['rateLimit'])
    })

    it('should not charge first attempts, and charge hedges through allows', () => {
      const limiter = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock: TestClock.make() })
      const guard = RateLimiter.asGuard(limiter)
      const outcome = { ok: false, error: 'x', latency: 0, now: 0, retries: 0, retrying: false, delay: -1 }
      strictEqual(guard.admit(outcome), true)
      strictEqual(guard.allows?.(0), true)
      strictEqual(guard.allows?.(0), false)
      strictEqual(guard.admit({ ...outcome, retrying: true, delay: 10 }), false)
    })

    it('should await a limiter that answers by promise', async () => {
      const answers = [true, false]
      const limiter: RateLimiter.RateLimiter = {
        take: () => Promise.resolve(answers.shift() ?? false),
        reserve: () => Promise.resolve({ wait: 0, cancel: () => undefined })
      }
      const clock = TestClock.make()
      const reasons: Array<StopReason> = []
      const run = pipe(
        (() => Promise.resolve(E.left('503'))) as TaskEither<string, never>,
        RateLimiter.throttle(limiter, { clock }),
        retrying(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(5))), {
          clock,
          guards: [RateLimiter.asGuard(limiter)],
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )()
      await clock.runAll()
      await run
      deepStrictEqual(clock.sleeps, [10])
      deepStrictEqual(reasons, ['rateLimit'])
    })

    it('should tell the refusal of a limiter that answers by promise, once it has answered', async () => {
      const events: Array<Event> = []
      const limiter = RateLimiter.observed(
        (e) => void events.push(e),
        () => 7,
        {
          take: () => Promise.resolve(false),
          reserve: () => Promise.resolve({ wait: 30, cancel: () => undefined })
        }
      )
      strictEqual(await limiter.take(), false)
      strictEqual((await limiter.reserve()).wait, 30)
      deepStrictEqual(
        events.map((e) => [e._tag, e.at]),
        [
          ['RateLimitRefused', 7],
          ['RateLimitWaited', 7]
        ]
      )
    })
  })
})
