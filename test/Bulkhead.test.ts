import { getEventListeners } from 'events'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as Bulkhead from '../src/Bulkhead'
import type { Event } from '../src/Event'
import * as Random from '../src/Random'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import type { Signalled } from '../src/Timeout'
import { caught, deepStrictEqual, ok, settle, strictEqual, throwsRangeError, throwsTypeError } from './util'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

/** Actions that each wait for the test to finish them, in any order; records the order they started in. */
const deferred = () => {
  const started: Array<string> = []
  const finishers = new Map<string, () => void>()
  const action =
    (name: string): TaskEither<string, string> =>
    () =>
      new Promise((resolve) => {
        started.push(name)
        finishers.set(name, () => resolve(E.right(name)))
      })
  const finish = async (name: string): Promise<void> => {
    const f = finishers.get(name)
    ok(f !== undefined, `${name} has not started`)
    f()
    await settle()
  }
  return { started, action, finish }
}

const FULL = 'full'
const aborted = (reason: unknown): string => `aborted: ${String(reason)}`

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('Bulkhead', () => {
  describe('make', () => {
    it('should start empty, with its bounds readable', () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 3, maxQueue: 7 })
      deepStrictEqual([bulkhead.maxConcurrent, bulkhead.maxQueue, bulkhead.inFlight, bulkhead.queued], [3, 7, 0, 0])
    })

    it('inFlight and queued (and the bounds) should be read-only at run time: a write throws in strict mode, is ignored otherwise', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1 })
      const hold = bulkhead.enter() as Bulkhead.Release
      const waiting = bulkhead.enter()
      const counts = () => [bulkhead.inFlight, bulkhead.queued, bulkhead.maxConcurrent, bulkhead.maxQueue]
      const writable = bulkhead as { -readonly [K in keyof Bulkhead.Bulkhead]: Bulkhead.Bulkhead[K] }
      for (const field of ['inFlight', 'queued', 'maxConcurrent', 'maxQueue'] as const) {
        // a test module is strict code: the write throws
        throwsTypeError(() => void (writable[field] = 0), new RegExp(field))
        // sloppy code (a Function body is): the write is ignored
        new Function('bulkhead', `bulkhead.${field} = 0`)(bulkhead)
      }
      deepStrictEqual(counts(), [1, 1, 1, 1])
      strictEqual(bulkhead.enter(), undefined) // still full
      hold()
      ok(typeof (await waiting) === 'function')
      deepStrictEqual(counts(), [1, 0, 1, 1])
    })

    it.each([
      ['maxConcurrent', { maxConcurrent: 0, maxQueue: 0 }],
      ['maxConcurrent', { maxConcurrent: 1.5, maxQueue: 0 }],
      ['maxConcurrent', { maxConcurrent: NaN, maxQueue: 0 }],
      ['maxConcurrent', { maxConcurrent: Infinity, maxQueue: 0 }],
      ['maxQueue', { maxConcurrent: 1, maxQueue: -1 }],
      ['maxQueue', { maxConcurrent: 1, maxQueue: 0.5 }],
      ['maxQueue', { maxConcurrent: 1, maxQueue: '3' as never }]
    ])('should refuse a bad %s with a RangeError naming it', (name, options) => {
      throwsRangeError(() => Bulkhead.make(options), new RegExp(`Bulkhead\\.make: ${name} must be a whole number`))
    })

    it('should refuse options, callbacks and bulkheads of the wrong type with a TypeError', () => {
      throwsTypeError(() => Bulkhead.make(null as never), /options must be an object/)
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      throwsTypeError(
        () => Bulkhead.protect(bulkhead, 'full' as never),
        /^Bulkhead\.protect: onRejected must be a function/
      )
      throwsTypeError(
        () => Bulkhead.protect({} as never, () => FULL),
        /^Bulkhead\.protect: bulkhead must be a Bulkhead/
      )
      throwsTypeError(
        () => Bulkhead.protectSignalled(bulkhead, () => FULL, null as never),
        /^Bulkhead\.protectSignalled: onAborted must be a function/
      )
      throwsTypeError(() => Bulkhead.asGuard(bulkhead, { refused: 1 as never }), /options\.refused must be a function/)
      const call = pipe(
        (_: Signalled) => () => Promise.resolve(E.right(1)),
        Bulkhead.protectSignalled(bulkhead, () => FULL, aborted)
      )
      throwsTypeError(() => call({ signal: {} } as never), /signal must be an AbortSignal/)
      throwsTypeError(
        () => Bulkhead.make({ maxConcurrent: 1, maxQueue: 0, onEvent: 'log' as never }),
        /options\.onEvent must be a function/
      )
      throwsTypeError(
        () => Bulkhead.make({ maxConcurrent: 1, maxQueue: 0, clock: {} as never }),
        /options\.clock must be a Clock/
      )
    })

    it('should tell a call queued, one refused and a queued one aborted through onEvent, with the counts after', async () => {
      const clock = TestClock.make(1_000)
      const events: Array<Event> = []
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1, clock, onEvent: (e) => void events.push(e) })
      const hold = bulkhead.enter() as Bulkhead.Release // a free slot: nothing told
      const controller = new AbortController()
      const waiting = bulkhead.enter(controller.signal)
      await clock.advance(5)
      strictEqual(bulkhead.enter(), undefined)
      await clock.advance(5)
      controller.abort('gave up')
      strictEqual(await waiting, undefined)
      const already = new AbortController()
      already.abort()
      strictEqual(await bulkhead.enter(already.signal), undefined) // never waited: told nothing
      hold()
      const at = { source: 'bulkhead', run: 0 } as const
      deepStrictEqual(events, [
        { _tag: 'BulkheadQueued', ...at, at: 1_000, inFlight: 1, queued: 1 },
        { _tag: 'BulkheadRefused', ...at, at: 1_005, inFlight: 1, queued: 1 },
        { _tag: 'BulkheadAborted', ...at, at: 1_010, inFlight: 1, queued: 0 }
      ])
    })

    // Regression: an onEvent that threw made enter() throw (a call queued or refused became a defect), and one that
    // threw as a queued call's signal aborted was thrown from the abort listener, an uncaught exception.
    it('an onEvent that throws should be a process warning, the call queued, refused or leaving the queue all the same', async () => {
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
      try {
        const told: Array<string> = []
        const bulkhead = Bulkhead.make({
          maxConcurrent: 1,
          maxQueue: 2,
          onEvent: (e) => {
            told.push(e._tag)
            throw new Error(`observer down at ${e._tag}`)
          }
        })
        const { action, finish } = deferred()
        const call = (name: string) =>
          pipe(
            (_: Signalled) => action(name),
            Bulkhead.protectSignalled(bulkhead, () => FULL, aborted)
          )
        const running = call('a')()()
        const controller = new AbortController()
        const leaving = call('b')({ signal: controller.signal })() // queued
        const waiting = call('c')()() // queued
        deepStrictEqual(await call('d')()(), E.left(FULL)) // refused
        deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [1, 2])
        controller.abort('gave up') // the listener does not throw
        deepStrictEqual(await leaving, E.left('aborted: gave up'))
        strictEqual(bulkhead.queued, 1)
        await finish('a')
        await finish('c')
        deepStrictEqual(await Promise.all([running, waiting]), [E.right('a'), E.right('c')])
        deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [0, 0])
        deepStrictEqual(told, ['BulkheadQueued', 'BulkheadQueued', 'BulkheadRefused', 'BulkheadAborted'])
        deepStrictEqual(
          [...warn.mock.calls].map(([message, options]) => [message, (options as { type: string }).type]),
          told.map((tag) => [
            `fp-ts-retry: an observer threw, and was ignored: observer down at ${tag}`,
            'ObserverWarning'
          ])
        )
      } finally {
        warn.mockRestore()
      }
    })
  })

  describe('protect', () => {
    it('should run at most maxConcurrent calls at once, and the waiting ones in the order they came', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 2, maxQueue: 3 })
      const { started, action, finish } = deferred()
      const calls = ['a', 'b', 'c', 'd', 'e'].map((name) =>
        pipe(
          action(name),
          Bulkhead.protect(bulkhead, () => FULL)
        )()
      )
      await settle()
      deepStrictEqual(started, ['a', 'b'])
      deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [2, 3])
      await finish('b')
      deepStrictEqual(started, ['a', 'b', 'c'])
      await finish('a')
      await finish('c')
      deepStrictEqual(started, ['a', 'b', 'c', 'd', 'e'])
      await finish('d')
      await finish('e')
      deepStrictEqual(await Promise.all(calls), ['a', 'b', 'c', 'd', 'e'].map(E.right))
      deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [0, 0])
    })

    it('should refuse a call at once when every slot is taken and the queue is full', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1 })
      const { action, finish } = deferred()
      const guarded = (name: string) =>
        pipe(
          action(name),
          Bulkhead.protect(bulkhead, (rejected) => rejected)
        )()
      const running = [guarded('a'), guarded('b')]
      deepStrictEqual(await guarded('c'), E.left({ _tag: 'BulkheadRejected', maxConcurrent: 1, maxQueue: 1 } as const))
      await settle()
      await finish('a')
      await finish('b')
      deepStrictEqual(await Promise.all(running), [E.right('a'), E.right('b')])
    })

    it('should give the slot back when the action rejects', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      const boom = new Error('boom')
      strictEqual(
        await caught(
          pipe(
            (() => Promise.reject(boom)) as TaskEither<string, string>,
            Bulkhead.protect(bulkhead, () => FULL)
          )
        ),
        boom
      )
      strictEqual(bulkhead.inFlight, 0)
    })
  })

  describe('protectSignalled', () => {
    // cockatiel#112: an aborted call stayed in the queue, and the calls behind it waited for it
    it('should let a waiter whose signal aborts leave at once, and never block those behind it (cockatiel#112)', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 3 })
      const { started, action, finish } = deferred()
      const call = pipe(
        (_: Signalled) => action('x'),
        Bulkhead.protectSignalled(bulkhead, () => FULL, aborted)
      )
      const named = (name: string) =>
        pipe(
          (_: Signalled) => action(name),
          Bulkhead.protectSignalled(bulkhead, () => FULL, aborted)
        )
      const running = named('a')()()
      const controller = new AbortController()
      const first = call({ signal: controller.signal })()
      const behind = named('b')()()
      await settle()
      strictEqual(bulkhead.queued, 2)
      controller.abort('cancelled')
      deepStrictEqual(await first, E.left('aborted: cancelled'))
      strictEqual(bulkhead.queued, 1)
      strictEqual(getEventListeners(controller.signal, 'abort').length, 0)
      await finish('a')
      deepStrictEqual(started, ['a', 'b']) // b went next: the aborted call took no slot
      await finish('b')
      deepStrictEqual(await Promise.all([running, behind]), [E.right('a'), E.right('b')])
      deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [0, 0])
    })

    it('should not run nor take a slot for a call whose signal has aborted already', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      let ran = false
      const call = pipe(
        (_: Signalled) => () => ((ran = true), Promise.resolve(E.right(1))),
        Bulkhead.protectSignalled(bulkhead, () => FULL, aborted)
      )
      deepStrictEqual(await call({ signal: AbortSignal.abort('gone') })(), E.left('aborted: gone'))
      deepStrictEqual([ran, bulkhead.inFlight], [false, 0])
    })

    it("should pass the caller's signal to the action, or one that never aborts", async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      const seen: Array<AbortSignal> = []
      const call = pipe(
        ({ signal }: Signalled) =>
          () => (seen.push(signal), Promise.resolve(E.right(1))),
        Bulkhead.protectSignalled(bulkhead, () => FULL, aborted)
      )
      const controller = new AbortController()
      await call({ signal: controller.signal })()
      await call()()
      strictEqual(seen[0], controller.signal)
      strictEqual(seen[1].aborted, false)
    })

    it('should never exceed maxConcurrent in flight nor strand a waiter, under 10,000 calls with random aborts', async () => {
      const random = Random.seeded(20)
      const draw = (n: number): number => Math.floor(random.next() * n)
      // Discrete steps: what waits for step s is woken when the test reaches it, then the promise jobs run.
      const due: Array<Array<() => void>> = []
      let step = 0
      const at = (s: number, f: () => void): void => void (due[s] ??= []).push(f)
      const maxConcurrent = 16
      const bulkhead = Bulkhead.make({ maxConcurrent, maxQueue: 4_000 })
      let running = 0
      let most = 0
      const call = pipe(
        (_: Signalled): TaskEither<string, string> =>
          async () => {
            most = Math.max(most, ++running)
            await new Promise<void>((resolve) => at(step + 1 + draw(3), resolve))
            running--
            return E.right('ok')
          },
        Bulkhead.protectSignalled(
          bulkhead,
          () => FULL,
          () => 'aborted'
        )
      )
      let settled = 0
      const calls: Array<Promise<E.Either<string, string>>> = []
      for (let i = 0; i < 10_000; i++) {
        // about a third of the calls abort, at some step from now to 300 steps on
        const controller = random.next() < 1 / 3 ? new AbortController() : undefined
        if (controller !== undefined) at(draw(300), () => controller.abort())
        calls.push(call({ signal: controller?.signal })().finally(() => settled++))
      }
      for (; settled < calls.length || step < due.length; step++) {
        for (const f of due[step] ?? []) f()
        await settle()
        ok(step < 10_000, 'calls are stranded')
      }
      const results = await Promise.all(calls)
      const count = (tag: string) => results.filter((r) => (r._tag === 'Right' ? r.right : r.left) === tag).length
      ok(
        count('aborted') > 0 && count(FULL) > 0 && count('ok') > 0,
        JSON.stringify([count('ok'), count('aborted'), count(FULL)])
      )
      strictEqual(count('ok') + count('aborted') + count(FULL), 10_000)
      strictEqual(most, maxConcurrent)
      deepStrictEqual([bulkhead.inFlight, bulkhead.queued, running], [0, 0, 0])
    })
  })

  describe('asGuard', () => {
    const run = (bulkhead: Bulkhead.Bulkhead, schedule: Schedule.Schedule<unknown>, clock: TestClock.TestClock) => {
      const reasons: Array<StopReason> = []
      const task = pipe(
        (() => Promise.resolve(E.right('ok'))) as TaskEither<never, string>,
        Bulkhead.protect(bulkhead, (rejected) => rejected),
        retrying(schedule, {
          clock,
          guards: [Bulkhead.asGuard(bulkhead)],
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )
      return { task, reasons }
    }

    it("should end a run at once, reason 'bulkhead', when the bulkhead is full at a retry", async () => {
      const clock = TestClock.make()
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      const hold = bulkhead.enter() as Bulkhead.Release
      const { task, reasons } = run(
        bulkhead,
        pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3))),
        clock
      )
      const result = task()
      await clock.runAll()
      ok(Bulkhead.isRejected(E.isLeft(await result) ? ((await result) as E.Left<unknown>).left : undefined))
      deepStrictEqual(clock.sleeps, [])
      deepStrictEqual(reasons, ['bulkhead'])
      hold()
    })

    it('should admit a retry while the queue has room, and refuse one while the bulkhead is full', async () => {
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1 })
      const hold = bulkhead.enter() as Bulkhead.Release
      const guard = Bulkhead.asGuard(bulkhead)
      const failure = { ok: false, error: 'x', latency: 0, now: 0, retries: 0, retrying: true, delay: 10 }
      strictEqual(guard.admit(failure), true) // the queue has room
      strictEqual(guard.allows?.(0), true)
      const waiting = bulkhead.enter()
      strictEqual(guard.admit(failure), false)
      strictEqual(guard.allows?.(0), false)
      strictEqual(guard.admit({ ...failure, retrying: false, delay: -1 }), true)
      hold()
      ;((await waiting) as Bulkhead.Release)()
      strictEqual(guard.admit(failure), true)
    })

    it("should name 'bulkhead' when the schedule stops on the bulkhead's own refusal", async () => {
      const clock = TestClock.make()
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      const hold = bulkhead.enter() as Bulkhead.Release
      const { task, reasons } = run(bulkhead, Schedule.recurs(0), clock)
      await task()
      deepStrictEqual(reasons, ['bulkhead'])
      const mine = Bulkhead.asGuard(bulkhead, { refused: (e) => e === 'mine' })
      deepStrictEqual([mine.refused?.('mine'), mine.refused?.({ _tag: 'BulkheadRejected' })], [true, false])
      hold()
    })
  })
})
