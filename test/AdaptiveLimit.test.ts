import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as AdaptiveLimit from '../src/AdaptiveLimit'
import type { Event, LimitChanged, LoadShed } from '../src/Event'
import * as Fallback from '../src/Fallback'
import * as Keyed from '../src/Keyed'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import type { Signalled } from '../src/Timeout'
import { deepStrictEqual, ok, settle, strictEqual, throwsRangeError, throwsTypeError } from './util'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

type Permit = AdaptiveLimit.Permit

const aimd = AdaptiveLimit.aimd({ backoffRatio: 0.5 })

/** A limit on a TestClock whose windows close at every sample (duration 1 ms, one sample). */
const quick = (options: Partial<AdaptiveLimit.AdaptiveLimitOptions> = {}) => {
  const clock = TestClock.make()
  const events: Array<Event> = []
  const limit = AdaptiveLimit.make({
    algorithm: aimd,
    min: 1,
    max: 10,
    initial: 2,
    window: { duration: 1, minSamples: 1 },
    clock,
    onEvent: (event) => void events.push(event),
    ...options
  })
  return { clock, limit, events }
}

const permit = (entered: Permit | undefined | Promise<Permit | undefined>): Permit => {
  ok(entered !== undefined && !(entered instanceof Promise), 'expected a permit at once')
  return entered
}

const shedOf = (events: ReadonlyArray<Event>): ReadonlyArray<string> =>
  events.filter((e): e is LoadShed => e._tag === 'LoadShed').map((e) => `${e.cause} ${e.priority}`)

/** The state after each window of `windows`, from `state`. */
const run = (
  algorithm: AdaptiveLimit.Algorithm,
  bounds: { readonly min: number; readonly max: number },
  state: AdaptiveLimit.LimitState,
  windows: ReadonlyArray<(limit: number) => AdaptiveLimit.Window>
): Array<AdaptiveLimit.LimitState> => {
  const states: Array<AdaptiveLimit.LimitState> = []
  for (const window of windows) {
    state = AdaptiveLimit.step(algorithm, bounds, state, window(Math.floor(state.estimate)))
    states.push(state)
  }
  return states
}

/** A window that kept the limit in use, at `latency`. */
const busy =
  (latency: number) =>
  (limit: number): AdaptiveLimit.Window => ({ samples: 10, dropped: 0, latency, maxInFlight: limit })

const repeat = <A>(n: number, a: A): Array<A> => Array.from({ length: n }, () => a)

const algorithmArbitrary: fc.Arbitrary<AdaptiveLimit.Algorithm> = fc.oneof(
  fc
    .record({
      backoffRatio: fc.double({ min: 0.5, max: 0.99, noNaN: true }),
      increase: fc.integer({ min: 1, max: 5 }),
      latencyThreshold: fc.option(fc.double({ min: 1, max: 1000, noNaN: true }), { nil: undefined })
    })
    .map(AdaptiveLimit.aimd),
  fc
    .record({
      tolerance: fc.double({ min: 1, max: 4, noNaN: true }),
      smoothing: fc.double({ min: 0.01, max: 1, noNaN: true }),
      longWindow: fc.integer({ min: 1, max: 1000 }),
      queueSize: fc.oneof(fc.constant<'sqrt'>('sqrt'), fc.double({ min: 0, max: 50, noNaN: true }))
    })
    .map(AdaptiveLimit.gradient)
)

const boundsArbitrary = fc
  .tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 200 }), fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([min, span, at]) => ({ min, max: min + span, initial: min + Math.floor(span * at) }))

const windowArbitrary: fc.Arbitrary<AdaptiveLimit.Window> = fc
  .record({
    samples: fc.integer({ min: 1, max: 100 }),
    drops: fc.double({ min: 0, max: 1, noNaN: true }),
    latency: fc.oneof(fc.double({ min: 0, max: 1e5, noNaN: true }), fc.constant(0)),
    maxInFlight: fc.integer({ min: 0, max: 500 })
  })
  .map(({ samples, drops, latency, maxInFlight }) => {
    const dropped = Math.floor(samples * drops)
    return { samples, dropped, latency: dropped === samples ? Number.NaN : latency, maxInFlight }
  })

// -------------------------------------------------------------------------------------
// the algorithms
// -------------------------------------------------------------------------------------

describe('AdaptiveLimit', () => {
  describe('step', () => {
    it('should keep the limit within [min, max] under any sequence of windows, for both algorithms', () => {
      fc.assert(
        fc.property(algorithmArbitrary, boundsArbitrary, fc.array(windowArbitrary, { maxLength: 200 }), (a, b, ws) => {
          let state: AdaptiveLimit.LimitState = { estimate: b.initial, noLoadLatency: Number.NaN }
          for (const w of ws) {
            state = AdaptiveLimit.step(a, b, state, w)
            const limit = Math.floor(state.estimate)
            ok(limit >= b.min && limit <= b.max, `limit ${limit} out of [${b.min}, ${b.max}]`)
            ok(Number.isNaN(state.noLoadLatency) || state.noLoadLatency >= 0, `noLoadLatency ${state.noLoadLatency}`)
          }
        })
      )
    })

    it('should refuse a latency that is negative or not finite', () => {
      const state = { estimate: 5, noLoadLatency: 1 }
      for (const latency of [-1, Infinity, -Infinity])
        throwsRangeError(
          () => AdaptiveLimit.step(aimd, { min: 1, max: 10 }, state, { samples: 1, dropped: 0, latency, maxInFlight: 5 }),
          new RegExp(`window.latency must be a finite number >= 0.*received ${String(latency)}`)
        )
    })

    // The bound stated in aimd's docs: the limit falls at the first slow window, by backoffRatio each window.
    it('AIMD: should fall at the first window after a latency step up, halve within ⌈log 0.5 / log backoffRatio⌉ windows, and recover within (before - after) / increase windows', () => {
      fc.assert(
        fc.property(
          fc.double({ min: 0.5, max: 0.95, noNaN: true }),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 2, max: 500 }),
          fc.double({ min: 1, max: 100, noNaN: true }),
          fc.double({ min: 1.5, max: 20, noNaN: true }),
          (backoffRatio, increase, before, latency, factor) => {
            const algorithm = AdaptiveLimit.aimd({ backoffRatio, increase, latencyThreshold: latency * 1.2 })
            const bounds = { min: 1, max: 1000 }
            const start = { estimate: before, noLoadLatency: latency }
            const halving = Math.ceil(Math.log(0.5) / Math.log(backoffRatio))
            const up = run(algorithm, bounds, start, repeat(halving, busy(latency * factor)))
            ok(up[0].estimate < before, 'fell at the first window')
            ok(up[halving - 1].estimate <= Math.max(1, before / 2), `halved within ${halving} windows`)
            const after = up[halving - 1].estimate
            const windows = Math.ceil((before - after) / increase)
            const down = run(algorithm, bounds, up[halving - 1], repeat(windows, busy(latency)))
            ok(down[windows - 1].estimate >= before, `recovered within ${windows} windows`)
          }
        )
      )
    })

    // The bound stated in gradient's docs, with its defaults.
    it('gradient: should fall at the first window after a latency step up by 2 * tolerance or more, halve within 10 windows from 64 or more, and recover within (√before - √after) / 0.095 + 1 windows', () => {
      const algorithm = AdaptiveLimit.gradient()
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 16 }),
          fc.integer({ min: 64, max: 1000 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.integer({ min: 1, max: 5 }),
          fc.double({ min: 1, max: 100, noNaN: true }),
          fc.double({ min: 2 * algorithm.tolerance, max: 20, noNaN: true }),
          (min, max, at, warm, latency, factor) => {
            const bounds = { min, max }
            const initial = 64 + Math.floor((max - 64) * at)
            const warmed = run(algorithm, bounds, { estimate: initial, noLoadLatency: Number.NaN }, repeat(warm, busy(latency)))
            const before = warmed[warm - 1]
            const up = run(algorithm, bounds, before, repeat(10, busy(latency * factor)))
            ok(up[0].estimate < before.estimate, 'fell at the first window')
            const halved = Math.floor(up[9].estimate)
            ok(halved <= Math.max(min, Math.floor(before.estimate) / 2), `${Math.floor(before.estimate)} → ${halved} in 10 windows`)
            const windows = Math.ceil((Math.sqrt(before.estimate) - Math.sqrt(up[9].estimate)) / 0.095) + 1
            const down = run(algorithm, bounds, up[9], repeat(windows, busy(latency)))
            ok(Math.floor(down[windows - 1].estimate) >= Math.floor(before.estimate), `recovered within ${windows} windows`)
          }
        )
      )
    })

    it('gradient: should not raise a limit the window did not use, and take a drop as the floor of the gradient', () => {
      const algorithm = AdaptiveLimit.gradient({ queueSize: 0, smoothing: 1 })
      const bounds = { min: 1, max: 100 }
      const state = { estimate: 40, noLoadLatency: 10 }
      strictEqual(AdaptiveLimit.step(algorithm, bounds, state, { samples: 5, dropped: 0, latency: 100, maxInFlight: 19 }).estimate, 40)
      strictEqual(AdaptiveLimit.step(algorithm, bounds, state, { samples: 5, dropped: 1, latency: 10, maxInFlight: 19 }).estimate, 20)
      strictEqual(AdaptiveLimit.step(algorithm, bounds, state, { samples: 5, dropped: 0, latency: 0, maxInFlight: 40 }).estimate, 40)
    })
  })

  // -------------------------------------------------------------------------------------
  // bad input
  // -------------------------------------------------------------------------------------

  describe('bad input', () => {
    const base = { algorithm: aimd, min: 1, max: 10, initial: 5 }

    it('should refuse bounds out of order, naming the three', () => {
      throwsRangeError(() => AdaptiveLimit.make({ ...base, min: 10, max: 5, initial: 7 }), /min <= initial <= max is required, received min 10, initial 7, max 5/)
      throwsRangeError(() => AdaptiveLimit.make({ ...base, initial: 11 }), /received min 1, initial 11, max 10/)
      throwsRangeError(() => AdaptiveLimit.make({ ...base, min: 0 }), /min must be a whole number >= 1, received 0/)
      throwsRangeError(() => AdaptiveLimit.make({ ...base, max: 2.5 }), /max must be a whole number >= 1, received 2.5/)
    })

    it('should refuse a window that is not finite or not positive', () => {
      for (const duration of [0, -1, Infinity, Number.NaN])
        throwsRangeError(
          () => AdaptiveLimit.make({ ...base, window: { duration, minSamples: 1 } }),
          new RegExp(`window.duration must be a finite number > 0, received ${String(duration)}`)
        )
      throwsRangeError(() => AdaptiveLimit.make({ ...base, window: { duration: 10, minSamples: 0 } }), /window.minSamples/)
      throwsRangeError(() => AdaptiveLimit.make({ ...base, queueTimeout: Infinity }), /queueTimeout must be a finite number > 0/)
      throwsRangeError(() => AdaptiveLimit.make({ ...base, maxQueue: -1 }), /maxQueue must be a whole number >= 0/)
    })

    it('should refuse bad algorithms and priorities', () => {
      throwsRangeError(() => AdaptiveLimit.aimd({ backoffRatio: 0.4 }), /backoffRatio must be a number in \[0.5, 1\), received 0.4/)
      throwsRangeError(() => AdaptiveLimit.aimd({ backoffRatio: 0.9, latencyThreshold: Number.NaN }), /latencyThreshold/)
      throwsRangeError(() => AdaptiveLimit.gradient({ tolerance: 0.5 }), /tolerance must be a finite number >= 1/)
      throwsRangeError(() => AdaptiveLimit.gradient({ smoothing: 0 }), /smoothing must be a number in \(0, 1\]/)
      throwsRangeError(() => AdaptiveLimit.gradient({ queueSize: -1 }), /queueSize/)
      throwsTypeError(() => AdaptiveLimit.make({ ...base, algorithm: { _tag: 'Vegas' } as never }), /options.algorithm must be/)
      throwsTypeError(() => AdaptiveLimit.make({ ...base, priorities: [] }), /priorities must be a non-empty array/)
      throwsRangeError(() => AdaptiveLimit.make({ ...base, priorities: ['a', 'a'] }), /"a" is twice/)
      throwsTypeError(() => AdaptiveLimit.make({ ...base, from: {} as never }), /from must be a limit made by AdaptiveLimit.make/)
    })

    it('should refuse an undeclared priority, naming it', () => {
      const limit = AdaptiveLimit.make({ ...base, priorities: ['critical', 'normal'] })
      throwsRangeError(() => limit.enter({ priority: 'urgent' }), /priority must be one of "critical", "normal", received "urgent"/)
      throwsRangeError(() => AdaptiveLimit.protect(limit, () => 'shed', { priority: 'urgent' }), /"urgent"/)
    })

    it('should refuse a latency the clock makes negative, and give the place back all the same', async () => {
      let now = 100
      const clock = { now: () => now, sleep: TestClock.make().sleep }
      const limit = AdaptiveLimit.make({ ...base, initial: 1, maxQueue: 1, clock })
      const first = permit(limit.enter())
      const waiting = limit.enter()
      now = 50
      throwsRangeError(() => first.success(), /a latency must be a finite number >= 0, received -50/)
      ok((await waiting) !== undefined, 'the waiter got the place')
    })
  })

  // -------------------------------------------------------------------------------------
  // the limit at work
  // -------------------------------------------------------------------------------------

  describe('make', () => {
    it('should tell LimitChanged when the limit moves, and only then', async () => {
      const { clock, limit, events } = quick({ initial: 4, max: 4 })
      const permits = [1, 2, 3, 4].map(() => permit(limit.enter()))
      await clock.advance(1)
      permits[0].success() // at max: the window asks for more, the limit stays
      await clock.advance(1)
      permits[1].dropped()
      deepStrictEqual(
        events.filter((e): e is LimitChanged => e._tag === 'LimitChanged').map((e) => [e.from, e.to, e.inFlight]),
        [[4, 2, 2]]
      )
      strictEqual(limit.limit, 2)
      permits[2].ignore()
      permits[3].ignore()
    })

    it('should close a window only once it is long enough and holds enough samples', async () => {
      const { clock, limit } = quick({ initial: 4, window: { duration: 100, minSamples: 2 } })
      const permits = [1, 2, 3].map(() => permit(limit.enter()))
      permits[0].dropped()
      await clock.advance(100)
      strictEqual(limit.limit, 4) // one sample
      permits[1].dropped()
      strictEqual(limit.limit, 2)
      permits[2].ignore() // not a sample
    })

    it('should measure the latency from enter to the end on its clock', async () => {
      const { clock, limit } = quick({ algorithm: AdaptiveLimit.gradient(), initial: 1 })
      const p = permit(limit.enter())
      await clock.advance(40)
      p.success()
      strictEqual(limit.noLoadLatency, 40)
    })

    it('should never let more than the limit in, and shed only when the limit and the queue are reached', async () => {
      // the paths the runs took, so that the property is known to reach the queue and the shedding
      const seen = { shed: 0, queued: 0, moved: 0 }
      await fc.assert(
        fc.asyncProperty(
          algorithmArbitrary,
          fc.integer({ min: 0, max: 3 }),
          fc.array(
            // more entries than ends: the calls pile up to the limit and the queue, so that every run of 150
            // reaches the shedding (with even weights some ran none: a random walk that seldom filled the queue)
            fc.oneof(
              { weight: 2, arbitrary: fc.record({ op: fc.constant<'enter'>('enter'), priority: fc.integer({ min: 0, max: 2 }) }) },
              { weight: 1, arbitrary: fc.record({ op: fc.constant<'end'>('end'), how: fc.constantFrom('success', 'dropped', 'ignore' as const), which: fc.nat() }) },
              { weight: 1, arbitrary: fc.record({ op: fc.constant<'advance'>('advance'), ms: fc.integer({ min: 1, max: 50 }) }) }
            ),
            { maxLength: 60 }
          ),
          async (algorithm, maxQueue, ops) => {
            const clock = TestClock.make()
            const priorities = ['critical', 'normal', 'sheddable']
            const limit = AdaptiveLimit.make({
              algorithm,
              min: 1,
              max: 6,
              initial: 3,
              window: { duration: 5, minSamples: 1 },
              maxQueue,
              queueTimeout: 30,
              priorities,
              clock
            })
            const held: Array<Permit> = []
            const take = (p: Permit): void => void held.push(p)
            for (const o of ops) {
              // in flight grows only below the limit: a call in flight when the limit fell is not taken back
              const before = limit.inFlight
              if (o.op === 'enter') {
                const [inFlight, queued, cap] = [limit.inFlight, limit.queued, limit.limit]
                const entered = limit.enter({ priority: priorities[o.priority] })
                if (entered === undefined) {
                  seen.shed++
                  ok(inFlight >= cap && queued === maxQueue, `shed with ${inFlight}/${cap} and ${queued} queued`)
                } else if (entered instanceof Promise) {
                  seen.queued++
                  void entered.then((p) => p !== undefined && take(p))
                } else take(entered)
              } else if (o.op === 'end') {
                if (held.length === 0) continue
                const [p] = held.splice(o.which % held.length, 1)
                p[o.how]()
              } else await clock.advance(o.ms)
              if (limit.limit !== 3) seen.moved++
              await Promise.resolve()
              await Promise.resolve()
              ok(limit.inFlight <= Math.max(limit.limit, before), `${before} → ${limit.inFlight} in flight, limit ${limit.limit}`)
              ok(limit.limit >= 1 && limit.limit <= 6, `limit ${limit.limit}`)
              ok(limit.queued <= maxQueue, `${limit.queued} queued`)
            }
            for (const p of held.splice(0)) p.ignore()
            await clock.runAll()
          }
        ),
        { numRuns: 150 }
      )
      ok(seen.shed > 0 && seen.queued > 0 && seen.moved > 0, JSON.stringify(seen))
    })
  })

  describe('queue and priorities', () => {
    const priorities = ['critical', 'normal', 'sheddable']

    it('should serve the highest priority first, oldest first within one', async () => {
      const { limit } = quick({ initial: 1, maxQueue: 4, priorities })
      const hold = permit(limit.enter())
      const order: Array<string> = []
      const wait = (name: string, priority: string) =>
        (limit.enter({ priority }) as Promise<Permit | undefined>).then((p) => {
          order.push(name)
          p?.ignore()
        })
      const all = [wait('s1', 'sheddable'), wait('n1', 'normal'), wait('c1', 'critical'), wait('n2', 'normal')]
      hold.ignore()
      await Promise.all(all)
      deepStrictEqual(order, ['c1', 'n1', 'n2', 's1'])
    })

    it('should shed critical calls last: a higher priority displaces the youngest of the lowest, and is shed itself only by a full queue of its own or higher', async () => {
      const { limit, events } = quick({ initial: 1, maxQueue: 2, priorities })
      const hold = permit(limit.enter())
      const s1 = limit.enter({ priority: 'sheddable' })
      const s2 = limit.enter({ priority: 'sheddable' })
      const c1 = limit.enter({ priority: 'critical' }) // displaces s2
      strictEqual(await s2, undefined)
      const n1 = limit.enter({ priority: 'normal' }) // displaces s1
      strictEqual(await s1, undefined)
      strictEqual(limit.enter({ priority: 'sheddable' }), undefined) // nothing lower to displace
      const c2 = limit.enter({ priority: 'critical' }) // displaces n1
      strictEqual(await n1, undefined)
      strictEqual(limit.enter({ priority: 'critical' }), undefined) // a queue full of critical calls
      deepStrictEqual(shedOf(events), ['displaced sheddable', 'displaced sheddable', 'full sheddable', 'displaced normal', 'full critical'])
      hold.ignore()
      ;(await c1)?.ignore()
      ;(await c2)?.ignore()
      strictEqual(limit.inFlight, 0)
    })

    it('should shed a waiter past its deadline', async () => {
      const { clock, limit, events } = quick({ initial: 1, maxQueue: 1, queueTimeout: 100 })
      const hold = permit(limit.enter())
      const waiting = limit.enter()
      await clock.advance(99)
      strictEqual(limit.queued, 1)
      await clock.advance(1)
      strictEqual(await waiting, undefined)
      deepStrictEqual([limit.queued, shedOf(events)], [0, ['deadline normal']])
      hold.ignore()
      strictEqual(limit.inFlight, 0)
    })

    it('should not shed a waiter served before its deadline, nor one whose signal aborted', async () => {
      const { clock, limit, events } = quick({ initial: 1, maxQueue: 2, queueTimeout: 100 })
      const hold = permit(limit.enter())
      const controller = new AbortController()
      const aborted = limit.enter({ signal: controller.signal })
      const served = limit.enter()
      controller.abort()
      strictEqual(await aborted, undefined)
      strictEqual(limit.queued, 1)
      hold.success()
      const p = await served
      ok(p !== undefined)
      await clock.advance(200)
      deepStrictEqual(shedOf(events), [])
      p.ignore()
    })

    it('should give a place freed by a higher limit to the waiters at once', async () => {
      const { clock, limit } = quick({ initial: 2, maxQueue: 2, algorithm: AdaptiveLimit.aimd({ backoffRatio: 0.5, increase: 2 }) })
      const a = permit(limit.enter())
      const b = permit(limit.enter())
      const w1 = limit.enter()
      const w2 = limit.enter()
      await clock.advance(1)
      a.success() // the window used the limit: 2 → 4, and both waiters enter
      const [p1, p2] = await Promise.all([w1, w2])
      deepStrictEqual([limit.limit, limit.inFlight, limit.queued], [4, 3, 0])
      ;[b, p1, p2].forEach((p) => p?.ignore())
    })
  })

  // -------------------------------------------------------------------------------------
  // combinators and the guard
  // -------------------------------------------------------------------------------------

  describe('protect', () => {
    it('should end the permit by the result: a success is a sample, a chosen failure a drop, another ignored', async () => {
      const { clock, limit } = quick({ initial: 8, max: 8 })
      const call = <E>(action: TE.TaskEither<E, string>) =>
        pipe(action, AdaptiveLimit.protect(limit, (shed) => shed, { dropped: (e) => e === 'timeout' }))()
      await clock.advance(1)
      deepStrictEqual(await call(TE.left('not found')), E.left('not found'))
      strictEqual(limit.limit, 8) // ignored: no window closed
      deepStrictEqual(await call(TE.left('timeout')), E.left('timeout'))
      strictEqual(limit.limit, 4)
      await clock.advance(1)
      deepStrictEqual(await call(TE.right('ok')), E.right('ok'))
      strictEqual(limit.limit, 4) // a window that did not use half the limit does not raise it
      const rejecting = pipe(() => Promise.reject(new Error('boom')), AdaptiveLimit.protect(limit, () => 'shed'))
      await expect(rejecting()).rejects.toThrow('boom')
      strictEqual(limit.inFlight, 0)
    })

    it('should answer onShed with the cause, the priority and the limit', async () => {
      const { limit } = quick({ initial: 1, priorities: ['critical', 'normal'] })
      const hold = permit(limit.enter())
      const call = pipe(TE.right('ok'), AdaptiveLimit.protect(limit, (shed) => shed, { priority: 'critical' }))
      deepStrictEqual(await call(), E.left({ _tag: 'Shed', cause: 'full', priority: 'critical', limit: 1 } as const))
      hold.ignore()
    })

    it('protectSignalled: should leave the queue when the signal aborts, and refuse an aborted signal at once', async () => {
      const { limit } = quick({ initial: 1, maxQueue: 1 })
      const hold = permit(limit.enter())
      const call = pipe(
        (_: Signalled) => TE.right('ok'),
        AdaptiveLimit.protectSignalled(limit, () => 'shed', (reason) => `aborted: ${String(reason)}`)
      )
      const controller = new AbortController()
      const waiting = call({ signal: controller.signal })()
      strictEqual(limit.queued, 1)
      controller.abort('bye')
      deepStrictEqual(await waiting, E.left('aborted: bye'))
      deepStrictEqual(await call({ signal: controller.signal })(), E.left('aborted: bye'))
      deepStrictEqual([limit.inFlight, limit.queued], [1, 0])
      hold.ignore()
    })
  })

  describe('asGuard', () => {
    it("should stop a run with reason 'shed', which onDone and Fallback.stoppedBy('shed') see", async () => {
      const clock = TestClock.make()
      const limit = AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 10, initial: 1, clock })
      const hold = permit(limit.enter())
      const reasons: Array<StopReason> = []
      const attempt = pipe(TE.right<never, string>('fresh'), AdaptiveLimit.protect(limit, (shed) => shed))
      const schedule = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3)))
      const call = pipe(
        Fallback.telling((tell) =>
          pipe(
            attempt,
            retrying(schedule, tell({ clock, guards: [AdaptiveLimit.asGuard(limit)], onDone: ({ reason }) => void reasons.push(reason) }))
          )
        ),
        Fallback.fallback(Fallback.stoppedBy('shed'), () => TE.right('cached'))
      )
      const result = call()
      await clock.runAll()
      deepStrictEqual(await result, E.right('cached'))
      deepStrictEqual([reasons, clock.sleeps], [['shed'], []])
      hold.ignore()
    })

    it('should admit a retry while there is room', () => {
      const limit = AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 10, initial: 1, maxQueue: 1 })
      const guard = AdaptiveLimit.asGuard(limit)
      const outcome = { ok: false, error: 'x', latency: 0, now: 0, retries: 0, retrying: true, delay: 10 }
      strictEqual(guard.admit(outcome), true)
      const hold = permit(limit.enter())
      strictEqual(guard.admit(outcome), true) // the queue has room
      const waiting = limit.enter()
      strictEqual(guard.admit(outcome), false)
      strictEqual(guard.refused?.({ _tag: 'Shed', cause: 'full', priority: 'normal', limit: 1 }), true)
      hold.ignore()
      void waiting
    })
  })

  // -------------------------------------------------------------------------------------
  // reload and keys
  // -------------------------------------------------------------------------------------

  describe('from', () => {
    it('should keep the learned limit and the calls in flight, and take the waiters', async () => {
      const { clock, limit: old } = quick({ initial: 8, max: 8, maxQueue: 2 })
      const held = [1, 2, 3, 4, 5, 6, 7, 8].map(() => permit(old.enter()))
      const waiting = old.enter()
      await clock.advance(1)
      held[0].dropped() // 8 → 4, 7 in flight
      strictEqual(old.limit, 4)
      const next = AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 20, initial: 10, maxQueue: 5, window: { duration: 1, minSamples: 1 }, clock, from: old })
      deepStrictEqual([next.limit, next.inFlight, next.queued], [4, 7, 1])
      deepStrictEqual([old.limit, old.inFlight], [4, 7]) // the old one is read through the new one
      for (const p of held.slice(1, 5)) p.ignore() // 3 in flight: below 4, the waiter enters here
      ok((await waiting) !== undefined)
      deepStrictEqual([next.inFlight, next.queued], [4, 0])
    })

    it('should take waiters and protected calls of a priority it does not declare at its lowest', async () => {
      const { limit: old } = quick({ initial: 1, maxQueue: 2, priorities: ['critical', 'normal'] })
      const call = pipe(TE.right('ok'), AdaptiveLimit.protect(old, (shed) => shed, { priority: 'critical' }))
      const hold = permit(old.enter())
      const waiting = old.enter({ priority: 'critical' })
      const next = AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 10, initial: 1, maxQueue: 1, priorities: ['high', 'low'], from: old })
      deepStrictEqual([next.queued, old.priorities], [1, ['high', 'low']])
      deepStrictEqual(await call(), E.left({ _tag: 'Shed', cause: 'full', priority: 'critical', limit: 1 } as const)) // at low, nobody to displace
      const high = next.enter({ priority: 'high' }) // displaces the old critical waiter, now low
      strictEqual(await waiting, undefined)
      hold.ignore()
      ;(await high)?.ignore()
      strictEqual(next.inFlight, 0)
    })

    it('should change nothing when never used', () => {
      const { limit: old } = quick({ initial: 3 })
      const hold = permit(old.enter())
      AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 10, initial: 9, from: old })
      deepStrictEqual([old.limit, old.inFlight], [3, 1])
      hold.ignore()
      strictEqual(old.inFlight, 0)
    })

    it('should clamp the learned limit into the new bounds, and tell it', () => {
      const { limit: old } = quick({ initial: 9 })
      const events: Array<Event> = []
      const next = AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 5, initial: 5, from: old, onEvent: (e) => void events.push(e) })
      strictEqual(next.limit, 5)
      deepStrictEqual(events.map((e) => e._tag), ['LimitChanged'])
    })
  })

  describe('Keyed', () => {
    it('should keep one limit per key, bounded, each telling its events with its key', async () => {
      const clock = TestClock.make()
      const events: Array<Event> = []
      const limits = Keyed.make({
        make: (_host: string, onEvent) =>
          AdaptiveLimit.make({ algorithm: aimd, min: 1, max: 10, initial: 1, window: { duration: 1, minSamples: 1 }, clock, onEvent }),
        maxKeys: 2,
        onEvent: (event) => void events.push(event)
      })
      const a = permit(limits.get('a').enter())
      strictEqual(limits.get('a').enter(), undefined)
      ok(limits.get('b').enter() !== undefined, 'b has its own limit')
      limits.get('c')
      deepStrictEqual(limits.keys(), ['b', 'c'])
      a.ignore()
      deepStrictEqual(events.map((e) => [e._tag, e.key]), [['LoadShed', 'a']])
      await settle()
    })
  })
})
