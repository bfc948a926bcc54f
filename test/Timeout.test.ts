import { getEventListeners } from 'events'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as TE from 'fp-ts/TaskEither'
import type { Event } from '../src/Event'
import * as TestClock from '../src/TestClock'
import * as Timeout from '../src/Timeout'
import type { Signalled } from '../src/Timeout'
import {
  caught,
  deepStrictEqual,
  notDurations,
  ok,
  settle,
  strictEqual,
  throwsRangeError,
  throwsTypeError
} from './util'

/** An action that answers `value` once `ms` of `clock` have passed, ignoring any signal. */
const after =
  <A>(clock: TestClock.TestClock, ms: number, value: A): TaskEither<string, A> =>
  () =>
    clock.sleep(ms).then(() => E.right(value))

/** An action that settles only when its signal aborts, recording the reason and the time. */
const untilAborted =
  (clock: TestClock.TestClock, seen: Array<{ reason: unknown; at: number }>) =>
  ({ signal }: Signalled): TaskEither<string, never> =>
  () =>
    new Promise((resolve) =>
      signal.addEventListener('abort', () => {
        seen.push({ reason: signal.reason, at: clock.now() })
        resolve(E.left('aborted'))
      })
    )

const never: TaskEither<string, never> = () => new Promise(() => undefined)

describe('Timeout', () => {
  describe('timeout', () => {
    it('should answer the action when it settles first, and clear its timer', async () => {
      const clock = TestClock.make()
      const call = pipe(
        after(clock, 300, 'ok'),
        Timeout.timeout(500, () => 'timeout', { clock })
      )()
      await clock.advance(300)
      deepStrictEqual(await call, E.right('ok'))
      strictEqual(clock.pending, 0)
      strictEqual(clock.now(), 300)
    })

    it('should never fire early: Left(onTimeout(ms)) at exactly ms', async () => {
      const clock = TestClock.make()
      let settled = false
      const call = pipe(
        never,
        Timeout.timeout(1_000, (ms) => `after ${ms}`, { clock })
      )().then((r) => {
        settled = true
        return r
      })
      await clock.advance(999)
      strictEqual(settled, false)
      await clock.advance(1)
      deepStrictEqual(await call, E.left('after 1000'))
      deepStrictEqual(clock.sleepsOf('timeout'), [1_000])
    })

    it('should ignore what an abandoned action answers or throws later', async () => {
      const clock = TestClock.make()
      let reject: (e: unknown) => void = () => undefined
      const late: TaskEither<string, string> = () => new Promise((_, r) => (reject = r))
      const unhandled: Array<unknown> = []
      const onUnhandled = (e: unknown): void => void unhandled.push(e)
      process.on('unhandledRejection', onUnhandled)
      try {
        const call = pipe(
          late,
          Timeout.timeout(10, () => 'timeout', { clock })
        )()
        await clock.runAll()
        deepStrictEqual(await call, E.left('timeout'))
        reject(new Error('too late'))
        await settle()
        deepStrictEqual(unhandled, [])
      } finally {
        process.off('unhandledRejection', onUnhandled)
      }
    })

    it('should reject when the action rejects before the timeout', async () => {
      const clock = TestClock.make()
      const boom = new Error('boom')
      const call = pipe(
        (() => Promise.reject(boom)) as TaskEither<string, string>,
        Timeout.timeout(10, () => 'timeout', { clock })
      )
      strictEqual(await caught(call), boom)
      strictEqual(clock.pending, 0)
    })

    it('should time out at once with ms 0 unless the action has settled', async () => {
      const clock = TestClock.make()
      deepStrictEqual(
        await pipe(
          never,
          Timeout.timeout(0, () => 'timeout', { clock })
        )(),
        E.left('timeout')
      )
    })

    it('timeout(0) let an action that settles a microtask later win: it should time out every action not settled when it returns', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.boolean(), async (ticks, signalled) => {
          const clock = TestClock.make()
          const events: Array<Event> = []
          const options = { clock, onEvent: (e: Event) => void events.push(e) }
          // settles `ticks` microtasks after it returns: no time on any clock
          const soon = (): Promise<E.Either<string, string>> => {
            let p: Promise<unknown> = Promise.resolve()
            for (let i = 1; i < ticks; i++) p = p.then(() => undefined)
            return p.then(() => E.right('soon'))
          }
          const signals: Array<AbortSignal> = []
          const call = signalled
            ? pipe(
                ({ signal }: Signalled): TaskEither<string, string> =>
                  () => (signals.push(signal), soon()),
                Timeout.timeoutSignalled(0, (ms) => `timed out after ${ms}`, options)
              )()
            : pipe(
                soon,
                Timeout.timeout(0, (ms) => `timed out after ${ms}`, options)
              )
          deepStrictEqual(await call(), E.left('timed out after 0'))
          deepStrictEqual(events, [{ _tag: 'TimedOut', source: 'timeout', run: 0, at: 0, timeout: 0 }])
          deepStrictEqual(clock.timers, []) // no time given: no sleep asked for
          // the action's signal is told, with the TimeoutError
          for (const signal of signals)
            ok(signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError')
          strictEqual(signals.length, signalled ? 1 : 0)
        }),
        { numRuns: 60 }
      )
    })

    it('timeout(0) should answer an action whose promise has settled when it returns, and reject with its rejection', async () => {
      const clock = TestClock.make()
      const within = Timeout.timeout(0, () => 'timeout', { clock })
      deepStrictEqual(await pipe(TE.right('now'), within)(), E.right('now'))
      deepStrictEqual(await pipe(TE.left('503'), within)(), E.left('503'))
      const returned: TaskEither<string, string> = async () => E.right('async, no await')
      deepStrictEqual(await pipe(returned, within)(), E.right('async, no await'))
      const boom = new Error('boom')
      strictEqual(await caught(pipe((() => Promise.reject(boom)) as TaskEither<string, string>, within)), boom)
      const awaits: TaskEither<string, string> = async () => {
        await undefined
        return E.right('one await')
      }
      deepStrictEqual(await pipe(awaits, within)(), E.left('timeout'))
      deepStrictEqual(clock.timers, [])
    })

    it.each(notDurations)('should refuse ms %s with a RangeError naming it', (_, ms) => {
      throwsRangeError(() => Timeout.timeout(ms, () => 'timeout'), /Timeout\.timeout: ms must be a finite number >= 0/)
      throwsRangeError(() => Timeout.timeoutSignalled(ms, () => 'timeout'), /Timeout\.timeoutSignalled: ms/)
    })

    it('should refuse an onTimeout, options or clock of the wrong type with a TypeError', () => {
      throwsTypeError(() => Timeout.timeout(1, 'timeout' as never), /onTimeout must be a function/)
      throwsTypeError(() => Timeout.timeout(1, () => 'x', null as never), /options must be an object/)
      throwsTypeError(() => Timeout.timeout(1, () => 'x', { clock: {} as never }), /options\.clock must be a Clock/)
      throwsTypeError(
        () => Timeout.timeout(1, () => 'x', { onEvent: 'log' as never }),
        /options\.onEvent must be a function/
      )
    })

    it('should tell TimedOut through onEvent when it gives up on an action, and nothing when the action wins', async () => {
      const clock = TestClock.make()
      const events: Array<Event> = []
      const within = Timeout.timeout(500, () => 'timeout', { clock, onEvent: (e) => void events.push(e) })
      const won = pipe(after(clock, 300, 'ok'), within)()
      await clock.runAll()
      deepStrictEqual(await won, E.right('ok'))
      deepStrictEqual(events, [])
      const lost = pipe(never, within)()
      await clock.runAll()
      deepStrictEqual(await lost, E.left('timeout'))
      deepStrictEqual(events, [{ _tag: 'TimedOut', source: 'timeout', run: 0, at: 800, timeout: 500 }])
    })
  })

  describe('timeoutSignalled', () => {
    it('should abort the action at the timeout with a TimeoutError DOMException', async () => {
      const clock = TestClock.make()
      const seen: Array<{ reason: unknown; at: number }> = []
      const call = pipe(
        untilAborted(clock, seen),
        Timeout.timeoutSignalled(1_000, () => 'timeout', { clock })
      )()()
      await clock.runAll()
      deepStrictEqual(await call, E.left('timeout'))
      strictEqual(seen.length, 1)
      strictEqual(seen[0].at, 1_000)
      ok(seen[0].reason instanceof DOMException && seen[0].reason.name === 'TimeoutError')
    })

    it("should abort the action with the caller's reason when the caller's signal aborts, and answer what it answers", async () => {
      const clock = TestClock.make()
      const seen: Array<{ reason: unknown; at: number }> = []
      const controller = new AbortController()
      const call = pipe(
        untilAborted(clock, seen),
        Timeout.timeoutSignalled(1_000, () => 'timeout', { clock })
      )({ signal: controller.signal })()
      await clock.advance(200)
      controller.abort('shutdown')
      deepStrictEqual(await call, E.left('aborted'))
      deepStrictEqual(seen, [{ reason: 'shutdown', at: 200 }])
      strictEqual(clock.pending, 0)
    })

    it("should still time out an action that ignores the caller's abort", async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const call = pipe(
        (_: Signalled) => never,
        Timeout.timeoutSignalled(1_000, () => 'timeout', { clock })
      )({ signal: controller.signal })()
      await clock.advance(100)
      controller.abort()
      await clock.runAll()
      deepStrictEqual(await call, E.left('timeout'))
      strictEqual(clock.now(), 1_000)
    })

    it("should give the action an aborted signal when the caller's has aborted already", async () => {
      const clock = TestClock.make()
      const seen: Array<boolean> = []
      const action =
        ({ signal }: Signalled): TaskEither<string, string> =>
        () => (seen.push(signal.aborted), Promise.resolve(E.right('ran')))
      deepStrictEqual(
        await pipe(
          action,
          Timeout.timeoutSignalled(10, () => 'timeout', { clock })
        )({ signal: AbortSignal.abort() })(),
        E.right('ran')
      )
      deepStrictEqual(seen, [true])
    })

    it("should leave no listener on the caller's signal, however many calls share it", async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const guarded = pipe(
        ({ signal }: Signalled): TaskEither<string, number> =>
          () =>
            clock.sleep(10, signal).then(() => E.right(1)),
        Timeout.timeoutSignalled(1_000, () => 'timeout', { clock })
      )
      const calls = Array.from({ length: 50 }, () => guarded({ signal: controller.signal })())
      ok(getEventListeners(controller.signal, 'abort').length <= 1)
      await clock.runAll()
      deepStrictEqual(
        await Promise.all(calls),
        calls.map(() => E.right(1))
      )
      strictEqual(getEventListeners(controller.signal, 'abort').length, 0)
      strictEqual(clock.pending, 0)
    })

    it('should refuse a signal that is not an AbortSignal with a TypeError', () => {
      const guarded = pipe(
        (_: Signalled) => never,
        Timeout.timeoutSignalled(1, () => 'timeout')
      )
      throwsTypeError(() => guarded({ signal: {} } as never), /signal must be an AbortSignal/)
    })

    it('should tell TimedOut through onEvent at the timeout, not when the caller aborts', async () => {
      const clock = TestClock.make()
      const events: Array<Event> = []
      const seen: Array<{ reason: unknown; at: number }> = []
      const guarded = pipe(
        untilAborted(clock, seen),
        Timeout.timeoutSignalled(100, () => 'timeout', { clock, onEvent: (e) => void events.push(e) })
      )
      const controller = new AbortController()
      const aborted = guarded({ signal: controller.signal })()
      controller.abort('caller')
      deepStrictEqual(await aborted, E.left('aborted'))
      const timedOut = guarded()()
      await clock.runAll()
      deepStrictEqual(await timedOut, E.left('timeout'))
      deepStrictEqual(events, [{ _tag: 'TimedOut', source: 'timeout', run: 0, at: 100, timeout: 100 }])
    })
  })
})
