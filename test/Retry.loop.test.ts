/**
 * The runner's loop as a state machine (`Going`), the live clocks' `Sleepers` waking a run directly, and
 * `internal/abort`'s waiter objects: what the async loop did, kept. The tests under "regressions" failed on the first
 * version of the change (found by a review); the others pin behaviour that test/Retry.test.ts did not cover.
 */
import { EventEmitter, getEventListeners } from 'events'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as Clock from '../src/Clock'
import type { StopReason } from '../src/Retry'
import { repeating, retrying, retryingWithContext, retryingWithStatus } from '../src/Retry'
import type { RetryState } from '../src/RetryState'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { failing, flaky, deepStrictEqual, ok, rejectsWith, settle, strictEqual, trackTimers } from './util'

afterEach(() => {
  jest.restoreAllMocks()
})

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

/** Keeps the CPU busy for `ms`: the timers that come due meanwhile fire in one turn of the event loop. */
const busyFor = (ms: number): void => {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // busy
  }
}

/** `onRetry` that says when the run has decided its first retry (it sleeps right after, in the same job). */
const firstRetry = (): { readonly onRetry: () => void; readonly decided: Promise<void> } => {
  let resolve: () => void = () => undefined
  const decided = new Promise<void>((r) => (resolve = r))
  return { onRetry: () => resolve(), decided }
}

/** `promise`, or a rejection once `ms` of real time have passed (a run that should have ended by then). */
const within = <A>(ms: number, promise: Promise<A>): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/**
 * An abort controller as the `node-abort-controller` polyfill makes it (a dependency of BullMQ, used where there is
 * no global AbortController): its signal keeps its listeners in an EventEmitter, which takes functions only. The
 * runners accept it (`validate.services` asks for addEventListener and removeEventListener), and the async loop,
 * which registered a function, ran with it.
 */
class EmitterSignal {
  aborted = false
  reason: unknown = undefined
  private readonly emitter = new EventEmitter()
  addEventListener(name: string, handler: () => void): void {
    this.emitter.on(name, handler)
  }
  removeEventListener(name: string, handler: () => void): void {
    this.emitter.removeListener(name, handler)
  }
  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    this.emitter.emit('abort', { type: 'abort', target: this })
  }
  get asSignal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}

// -------------------------------------------------------------------------------------
// regressions
// -------------------------------------------------------------------------------------

describe('regressions', () => {
  describe('a signal whose addEventListener takes functions only (node-abort-controller)', () => {
    it('retrying on Clock.live: an abort during a sleep should end the run with its last error', async () => {
      const signal = new EmitterSignal()
      const { action, calls } = failing()
      const { onRetry, decided } = firstRetry()
      const run = pipe(action, retrying(Schedule.constant(60_000), { signal: signal.asSignal, onRetry }))()
      await decided
      signal.abort(new Error('shutting down'))
      deepStrictEqual(await within(1_000, run), E.left('error 1'))
      deepStrictEqual(calls(), 1)
    })

    it('retrying on a TestClock: an abort during a sleep should end the run with its last error', async () => {
      const signal = new EmitterSignal()
      const clock = TestClock.make()
      const { action, calls } = failing()
      const run = pipe(action, retrying(Schedule.constant(60_000), { clock, signal: signal.asSignal }))()
      await settle()
      signal.abort(new Error('shutting down'))
      deepStrictEqual(await within(1_000, run), E.left('error 1'))
      deepStrictEqual(calls(), 1)
    })

    it("retryingWithContext: the attempt's own signal should abort with it", async () => {
      const signal = new EmitterSignal()
      const run = pipe(
        ({ signal: own }: { readonly signal: AbortSignal }): TE.TaskEither<string, number> =>
          () =>
            new Promise((resolve) => own.addEventListener('abort', () => resolve(E.left('aborted')))),
        retryingWithContext(Schedule.recurs(1), { clock: TestClock.make(), signal: signal.asSignal })
      )()
      await settle()
      signal.abort(new Error('shutting down'))
      deepStrictEqual(await within(1_000, run), E.left('aborted'))
    })
  })

  // The action's answer goes through Promise.resolve since 4521603 ("as an await would take it"); the hooks' and
  // the clock's answers are still called `.then` on as they are. The async loop awaited them.
  describe('answers taken as an await would take them', () => {
    it('an onRetry that answers a thenable (not a Promise) should be waited for, then the delay slept', async () => {
      const clock = TestClock.make()
      const { action, calls } = flaky(1)
      const hooked: Array<number> = []
      const run = pipe(
        action,
        retrying(Schedule.constant(10), {
          clock,
          // a minimal Promises/A+ thenable: its `then` answers nothing
          onRetry: ({ delay }) =>
            ({ then: (resolve: () => void) => void (hooked.push(delay), resolve()) } as unknown as Promise<void>)
        })
      )()
      await clock.runAll()
      deepStrictEqual(await run, E.right('ok 2'))
      deepStrictEqual(hooked, [10])
      deepStrictEqual(calls(), 2)
      deepStrictEqual(clock.sleeps, [10])
    })

    it('a clock whose sleep answers a plain value should still run (the async loop awaited it)', async () => {
      let time = 0
      const slept: Array<number> = []
      const clock = {
        now: () => time,
        sleep: (ms: number) => {
          slept.push(ms)
          time += ms
          return undefined as unknown as Promise<void>
        }
      }
      const { action, calls } = flaky(2)
      deepStrictEqual(await pipe(action, retrying(Schedule.constant(10), { clock }))(), E.right('ok 3'))
      deepStrictEqual(calls(), 3)
      deepStrictEqual(slept, [10, 10])
    })
  })

  // A live sleep that began first and is due first is woken first, but its continuation is a promise job, while
  // the run the same timer turn wakes next starts its attempt synchronously, inside the timer's callback: the
  // deadline's abort comes after an attempt that should never have started.
  it('Clock.live: a deadline due before a backoff, both due in one timer turn, should abort the run before its next attempt', async () => {
    const controller = new AbortController()
    const deadline = Clock.live.sleep(20).then(() => controller.abort())
    const { action, calls } = failing()
    const reasons: Array<StopReason> = []
    const { onRetry, decided } = firstRetry()
    const run = pipe(
      action,
      retrying(Schedule.constant(20), {
        signal: controller.signal,
        onRetry,
        onDone: ({ reason }) => void reasons.push(reason)
      })
    )()
    await decided
    // the run sleeps, due a little after the deadline: both are due when the timer's callback runs
    busyFor(60)
    await deadline
    deepStrictEqual(await run, E.left('error 1'))
    deepStrictEqual(calls(), 1)
    deepStrictEqual(reasons, ['aborted'])
  })

  // Clock.live is a plain (unfrozen) object; the async loop called `clock.sleep(ms, signal, 'backoff')` on it, so a
  // spy or a wrapper put on it saw every backoff. The runner now sleeps on the queue it found for the object.
  it('a spy on Clock.live.sleep should see the backoffs of a run on Clock.live', async () => {
    const spy = jest.spyOn(Clock.live, 'sleep')
    const { action } = flaky(1)
    deepStrictEqual(await pipe(action, retrying(Schedule.constant(5)))(), E.right('ok 2'))
    // (jest's mock arrays come from another realm: copied before the comparison)
    deepStrictEqual(
      Array.from(spy.mock.calls, (call) => Array.from(call)),
      [[5, undefined, 'backoff']]
    )
  })
})

// -------------------------------------------------------------------------------------
// coverage: behaviour kept
// -------------------------------------------------------------------------------------

describe('coverage', () => {
  it('resume on Clock.live: an abort during the wait should reject with signal.reason, with no attempt, timer or listener left', async () => {
    const schedule = Schedule.constant(60_000)
    // a run stored at its first retry, due a minute from now on the live clock's time
    const states: Array<RetryState> = []
    const recorded = pipe(
      failing().action,
      retrying(schedule, {
        clock: TestClock.make(Clock.live.now()),
        onRetry: ({ driver }) => states.push(driver.snapshot())
      })
    )()
    void recorded
    await settle()
    strictEqual(states.length, 1)
    const timers = trackTimers()
    const controller = new AbortController()
    const { action, calls } = failing()
    const run = pipe(action, retrying(schedule, { resume: states[0], signal: controller.signal }))()
    await settle()
    deepStrictEqual(timers.live(), 1)
    deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
    const reason = new Error('shutting down')
    controller.abort(reason)
    await rejectsWith(run, reason)
    deepStrictEqual(calls(), 0)
    deepStrictEqual(timers.live(), 0)
    deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
  })

  it('Clock.live: runs sharing one signal, the first of them done by its timer, should all end on one abort, leaving no listener', async () => {
    const timers = trackTimers()
    const controller = new AbortController()
    const { signal } = controller
    // the first to sleep (the entry's first waiter) wakes on its timer and succeeds
    const quick = pipe(flaky(1).action, retrying(Schedule.constant(5), { signal }))()
    const slow = [failing(), failing()].map(({ action }) =>
      pipe(action, retrying(Schedule.constant(60_000), { signal }))()
    )
    deepStrictEqual(await quick, E.right('ok 2'))
    deepStrictEqual(getEventListeners(signal, 'abort').length, 1)
    // one more comes while the first waiter's place is empty and others wait
    const late = failing()
    const { onRetry, decided } = firstRetry()
    const lateRun = pipe(late.action, retrying(Schedule.constant(60_000), { signal, onRetry }))()
    await decided
    deepStrictEqual(getEventListeners(signal, 'abort').length, 1)
    controller.abort()
    deepStrictEqual(await Promise.all([...slow, lateRun]), [E.left('error 1'), E.left('error 1'), E.left('error 1')])
    deepStrictEqual(late.calls(), 1)
    deepStrictEqual(getEventListeners(signal, 'abort').length, 0)
    deepStrictEqual(timers.live(), 0)
  })

  it("Clock.make({ unref: true }): a run's backoff should not keep the process alive; Clock.live's should", async () => {
    const realSetTimeout = globalThis.setTimeout
    const armed: Array<{ readonly hasRef: () => boolean }> = []
    jest.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
      const timer = realSetTimeout(f, ms)
      armed.push(timer)
      return timer
    }) as typeof setTimeout)
    const refOfBackoff = async (clock: Clock.Clock): Promise<boolean> => {
      armed.length = 0
      const controller = new AbortController()
      const { onRetry, decided } = firstRetry()
      const run = pipe(
        failing().action,
        retrying(Schedule.constant(60_000), { clock, signal: controller.signal, onRetry })
      )()
      await decided
      const refs = armed.map((t) => t.hasRef())
      controller.abort()
      deepStrictEqual(await run, E.left('error 1'))
      deepStrictEqual(refs.length, 1)
      return refs[0]
    }
    deepStrictEqual(await refOfBackoff(Clock.make({ unref: true })), false)
    deepStrictEqual(await refOfBackoff(Clock.live), true)
  })

  describe('a custom clock that fails should make the run reject with its error, with no attempt after it', () => {
    const boom = new Error('clock failed')

    it('now() throwing at the decision', async () => {
      let reads = 0
      const clock: Clock.Clock = {
        now: () => {
          if (++reads > 1) throw boom
          return 0
        },
        sleep: () => Promise.resolve()
      }
      const { action, calls } = failing()
      await rejectsWith(pipe(action, retrying(Schedule.constant(10), { clock, onDone: () => undefined }))(), boom)
      deepStrictEqual(calls(), 1)
    })

    it('sleep() throwing', async () => {
      const clock: Clock.Clock = {
        now: () => 0,
        sleep: () => {
          throw boom
        }
      }
      const { action, calls } = failing()
      await rejectsWith(pipe(action, retrying(Schedule.constant(10), { clock }))(), boom)
      deepStrictEqual(calls(), 1)
    })

    it('sleep() rejecting', async () => {
      const clock: Clock.Clock = { now: () => 0, sleep: () => Promise.reject(boom) }
      const { action, calls } = failing()
      await rejectsWith(pipe(action, retrying(Schedule.constant(10), { clock }))(), boom)
      deepStrictEqual(calls(), 1)
    })

    it('now() throwing when a resumed run starts', async () => {
      const schedule = Schedule.constant(10)
      const states: Array<RetryState> = []
      const recorded = pipe(
        failing().action,
        retrying(schedule, { clock: TestClock.make(), onRetry: ({ driver }) => states.push(driver.snapshot()) })
      )()
      void recorded
      await settle()
      const clock: Clock.Clock = {
        now: () => {
          throw boom
        },
        sleep: () => Promise.resolve()
      }
      const { action, calls } = failing()
      await rejectsWith(pipe(() => action, retryingWithStatus(schedule, { clock, resume: states[0] }))(), boom)
      deepStrictEqual(calls(), 0)
    })
  })

  it('Clock.live: an action that throws when its timer wakes it should not stop another run woken in the same turn', async () => {
    const boom = new Error('defect')
    let aCalls = 0
    const a = pipe((): Promise<E.Either<string, string>> => {
      if (++aCalls === 2) throw boom
      return Promise.resolve(E.left('a'))
    }, retrying(Schedule.constant(10)))()
    const b = flaky(1)
    const bRun = pipe(b.action, retrying(Schedule.constant(10)))()
    await settle()
    // both due when the timer's callback runs: a first, then b
    busyFor(30)
    await rejectsWith(a, boom)
    deepStrictEqual(await bRun, E.right('ok 2'))
  })

  it('Clock.live: an onDone that throws when an abort ends a sleep should reject the run, not throw from abort()', async () => {
    const timers = trackTimers()
    const boom = new Error('onDone failed')
    const controller = new AbortController()
    const { onRetry, decided } = firstRetry()
    const run = pipe(
      failing().action,
      retrying(Schedule.constant(60_000), {
        signal: controller.signal,
        onRetry,
        onDone: () => {
          throw boom
        }
      })
    )()
    await decided
    let thrown: unknown = undefined
    try {
      controller.abort()
    } catch (e) {
      thrown = e
    }
    strictEqual(thrown, undefined)
    await rejectsWith(run, boom)
    deepStrictEqual(timers.live(), 0)
  })

  it('repeating on Clock.live: an abort during a sleep should end with the results so far, leaving no timer', async () => {
    const timers = trackTimers()
    const controller = new AbortController()
    let runs = 0
    let sleeping: () => void = () => undefined
    const slept = new Promise<void>((resolve) => (sleeping = resolve))
    const run = repeating(Schedule.constant(60_000), { signal: controller.signal, onRepeat: () => sleeping() })({
      initial: 0,
      action: (s: number) => (runs++, TE.right(s + 1)),
      next: (a) => a
    })()
    await slept
    controller.abort()
    deepStrictEqual(await run, E.right([1]))
    deepStrictEqual(runs, 1)
    deepStrictEqual(timers.live(), 0)
    ok(getEventListeners(controller.signal, 'abort').length === 0, 'a listener was left on the signal')
  })
})
