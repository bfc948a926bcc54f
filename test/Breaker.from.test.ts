import * as fc from 'fast-check'
import * as Breaker from '../src/Breaker'
import type * as Event from '../src/Event'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, strictEqual, throwsTypeError } from './util'

/** Enters and reports one outcome at once; answers whether the call was let through. */
const call = (breaker: Breaker.Breaker, ok: boolean): boolean => {
  const permit = breaker.enter() as Breaker.Permit | undefined
  if (permit === undefined) return false
  void (ok ? permit.onSuccess() : permit.onFailure())
  return true
}

const halfOpenAfter = Schedule.constant(1_000)

describe('Breaker options.from', () => {
  it('a closed consecutive breaker keeps its failures in a row, judged by the new threshold', () => {
    const clock = TestClock.make()
    const old = Breaker.consecutive({ threshold: 5, halfOpenAfter, clock })
    for (let i = 0; i < 3; i++) call(old, false)
    const events: Array<Event.Event> = []
    const next = Breaker.consecutive({
      threshold: 4,
      halfOpenAfter,
      clock,
      from: old,
      onEvent: (e) => void events.push(e)
    })
    deepStrictEqual(next.state, { _tag: 'Closed', since: 0 })
    deepStrictEqual(next.metrics, { successes: 0, failures: 3, rejections: 0 })
    call(next, false) // the fourth in a row
    strictEqual(next.state._tag, 'Open')
    deepStrictEqual(
      events.map((e) => e._tag),
      ['BreakerStateChanged']
    )
  })

  it('an open breaker stays open until the same halfOpenAt, and tells nothing', async () => {
    const clock = TestClock.make()
    const old = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(30_000), clock })
    call(old, false)
    await clock.advance(10_000)
    const events: Array<Event.Event> = []
    const next = Breaker.count({
      size: 10,
      failureRate: 0.5,
      halfOpenAfter: Schedule.constant(5_000),
      clock,
      from: old,
      onEvent: (e) => void events.push(e)
    })
    deepStrictEqual(next.state, { _tag: 'Open', since: 0, halfOpenAt: 30_000 })
    strictEqual(call(next, true), false)
    await clock.advance(19_999)
    strictEqual(call(next, true), false)
    await clock.advance(1)
    strictEqual(call(next, false), true) // the probe, which fails: the new halfOpenAfter's first wait
    deepStrictEqual(next.state, { _tag: 'Open', since: 30_000, halfOpenAt: 35_000 })
    deepStrictEqual(next.metrics, { successes: 0, failures: 2, rejections: 2 })
    deepStrictEqual(
      events.map((e) => (e._tag === 'BreakerStateChanged' ? `${e.from}->${e.to}` : e._tag)),
      ['Open->HalfOpen', 'HalfOpen->Open']
    )
  })

  it('an isolated breaker stays isolated', () => {
    const old = Breaker.consecutive({ threshold: 1, halfOpenAfter })
    void old.isolate()
    const next = Breaker.consecutive({ threshold: 1, halfOpenAfter, from: old })
    strictEqual(next.admitsIn(Number.MAX_SAFE_INTEGER), false)
  })

  it('a half-open breaker stays half-open: a probe of its own may go, the one in flight reports to the old one', async () => {
    const clock = TestClock.make()
    const old = Breaker.consecutive({ threshold: 1, halfOpenAfter, clock })
    call(old, false)
    await clock.advance(1_000)
    const probe = old.enter() as Breaker.Permit
    strictEqual(old.state._tag, 'HalfOpen')
    const next = Breaker.consecutive({ threshold: 1, halfOpenAfter, clock, from: old })
    strictEqual(next.state._tag, 'HalfOpen')
    strictEqual(call(next, true), true)
    strictEqual(next.state._tag, 'Closed')
    void probe.onFailure()
    strictEqual(next.state._tag, 'Closed')
  })

  it('a count breaker keeps the last outcomes its new size holds, oldest dropped', () => {
    const old = Breaker.count({ size: 10, failureRate: 1, halfOpenAfter })
    for (const ok of [false, false, true, false]) call(old, ok)
    // [F, S, F] kept: one failure more makes [S, F, F], not all failures; the next [F, F, F]
    const next = Breaker.count({ size: 3, failureRate: 1, halfOpenAfter, from: old })
    call(next, false)
    strictEqual(next.state._tag, 'Closed')
    call(next, false)
    strictEqual(next.state._tag, 'Open')
  })

  it('a sampling breaker keeps the outcomes of its new window, with their times', async () => {
    const clock = TestClock.make()
    const old = Breaker.sampling({ window: 10_000, minThroughput: 3, failureRate: 1, halfOpenAfter, clock })
    call(old, false) // at 0
    await clock.advance(8_000)
    call(old, false) // at 8 s
    await clock.advance(1_000)
    const next = Breaker.sampling({ window: 5_000, minThroughput: 3, failureRate: 1, halfOpenAfter, clock, from: old })
    call(next, false) // at 9 s: the one at 0 is out of the new window, so 2 of the 3 needed
    strictEqual(next.state._tag, 'Closed')
    call(next, false)
    strictEqual(next.state._tag, 'Open')
  })

  it('taking over with the same configuration changes nothing (property)', async () => {
    const kinds = [
      (clock: TestClock.TestClock, from?: Breaker.Breaker) =>
        Breaker.consecutive({ threshold: 3, halfOpenAfter, clock, from }),
      (clock: TestClock.TestClock, from?: Breaker.Breaker) =>
        Breaker.count({ size: 5, minimumCalls: 3, failureRate: 0.6, halfOpenAfter, clock, from }),
      (clock: TestClock.TestClock, from?: Breaker.Breaker) =>
        Breaker.sampling({ window: 2_000, minThroughput: 3, failureRate: 0.6, halfOpenAfter, clock, from })
    ]
    const step = fc.record({ ok: fc.boolean(), wait: fc.constantFrom(0, 100, 700, 1_000) })
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 1, 2),
        fc.array(step, { maxLength: 30 }),
        fc.array(step, { maxLength: 30 }),
        async (kind, before, after) => {
          const make = kinds[kind]
          const [a, b] = [TestClock.make(), TestClock.make()]
          const alone = make(a)
          let replaced = make(b)
          for (const s of before) {
            await Promise.all([a.advance(s.wait), b.advance(s.wait)])
            call(alone, s.ok)
            call(replaced, s.ok)
          }
          replaced = make(b, replaced)
          for (const s of after) {
            await Promise.all([a.advance(s.wait), b.advance(s.wait)])
            strictEqual(call(replaced, s.ok), call(alone, s.ok))
            deepStrictEqual(replaced.state, alone.state)
          }
          deepStrictEqual(replaced.metrics, alone.metrics)
        }
      ),
      { numRuns: 300 }
    )
  })

  it('refuses anything but a breaker of this module', () => {
    const fake = {
      state: { _tag: 'Closed', since: 0 },
      metrics: { successes: 0, failures: 0, rejections: 0 },
      enter: () => undefined,
      admitsIn: () => true,
      isolate: () => undefined,
      reset: () => undefined
    } as Breaker.Breaker
    throwsTypeError(
      () => Breaker.consecutive({ threshold: 1, halfOpenAfter, from: fake }),
      /Breaker.consecutive: from must be a breaker made by this module/
    )
  })
})
