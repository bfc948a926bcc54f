import { getEventListeners } from 'events'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import * as RTE from 'fp-ts/ReaderTaskEither'
import * as TE from 'fp-ts/TaskEither'
import type { BudgetAttempt, RetryBudget } from '../src/Budget'
import * as Clock from '../src/Clock'
import type * as Event from '../src/Event'
import type * as Guard from '../src/Guard'
import * as Random from '../src/Random'
import type * as Retry from '../src/Retry'
import type { AttemptContext, Hooks, RepeatOptions, RetryEnv, StopReason } from '../src/Retry'
import { repeating, retrying, retryingReaderTaskEither, retryingWithContext, retryingWithStatus } from '../src/Retry'
import * as RetryStatus from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import * as ScheduleConfig from '../src/ScheduleConfig'
import * as TestClock from '../src/TestClock'
import {
  exposeGc,
  failing,
  flaky,
  caught,
  deepStrictEqual,
  itThrowsRangeErrors,
  itThrowsTypeErrors,
  notDurations,
  ok,
  rejectsWith,
  rightOf,
  settle,
  strictEqual,
  throwsTypeError,
  trackTimers,
  timersOf,
  type RangeErrorCase
} from './util'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

interface RetryCall<In> {
  readonly input: In
  readonly status: RetryStatus.RetryStatus
  readonly delay: number
}

interface DoneCall {
  readonly result: E.Either<unknown, unknown>
  readonly status: RetryStatus.RetryStatus
  readonly reason: StopReason
}

/** Hooks that record every call. */
const recorder = <In>(): {
  readonly hooks: Required<Pick<Hooks<In>, 'onRetry' | 'onDone'>>
  /** The same, for `repeating`: `onRepeat` records the success value as the input. */
  readonly repeatHooks: Required<Pick<RepeatOptions<In>, 'onRepeat' | 'onDone'>>
  readonly retries: Array<RetryCall<In>>
  readonly dones: Array<DoneCall>
} => {
  const retries: Array<RetryCall<In>> = []
  const dones: Array<DoneCall> = []
  const onDone = ({ result, status, reason }: DoneCall): void => void dones.push({ result, status, reason })
  return {
    hooks: { onRetry: ({ error: input, status, delay }) => retries.push({ input, status, delay }), onDone },
    repeatHooks: { onRepeat: ({ value: input, status, delay }) => retries.push({ input, status, delay }), onDone },
    retries,
    dones
  }
}

const status = (
  iterNumber: number,
  elapsed: number,
  cumulativeDelay: number,
  previousDelay: O.Option<number>
): RetryStatus.RetryStatus => ({
  iterNumber,
  elapsed,
  cumulativeDelay,
  previousDelay
})

afterEach(() => {
  jest.restoreAllMocks()
})

// -------------------------------------------------------------------------------------
// retrying
// -------------------------------------------------------------------------------------

describe('retrying', () => {
  it('should run the first attempt at once, without sleeping', async () => {
    const clock = TestClock.make()
    const { action, calls } = failing()
    const controller = new AbortController()
    const run = pipe(action, retrying(Schedule.constant(1000), { clock, signal: controller.signal }))()
    await settle()
    deepStrictEqual(calls(), 1)
    deepStrictEqual(clock.now(), 0)
    controller.abort()
    deepStrictEqual(await run, E.left('error 1'))
  })

  // The loop is no async function: an action that answers a thenable or a plain value (against its type) still
  // works as an `await` would, with and without the run's state from the start.
  it('should take an action that answers a thenable or a plain value, as await does', async () => {
    for (const onDone of [undefined, () => undefined]) {
      let calls = 0
      const answer = (): E.Either<string, number> => (++calls < 3 ? E.left(`error ${calls}`) : E.right(calls))
      const plain = (() => answer()) as unknown as TE.TaskEither<string, number>
      const thenable = (() => ({
        then: (f: (a: E.Either<string, number>) => void) => f(answer())
      })) as unknown as TE.TaskEither<string, number>
      deepStrictEqual(await retrying(plain, Schedule.recurs(5), { onDone })(), E.right(3))
      calls = 0
      deepStrictEqual(await retrying(thenable, Schedule.recurs(5), { onDone })(), E.right(3))
    }
  })

  it('should stop on Right after one attempt, with no sleep and no onRetry', async () => {
    const clock = TestClock.make()
    const { action, calls } = flaky(0)
    const rec = recorder<string>()
    const run = pipe(action, retrying(Schedule.constant(100), { clock, ...rec.hooks }))()
    await clock.runAll()
    deepStrictEqual(await run, E.right('ok 1'))
    deepStrictEqual(calls(), 1)
    deepStrictEqual(clock.sleeps, [])
    deepStrictEqual(rec.retries, [])
    deepStrictEqual(rec.dones, [{ result: E.right('ok 1'), status: RetryStatus.initial, reason: 'succeeded' }])
  })

  it('should feed the schedule with each error and return the last Left when it stops', async () => {
    const clock = TestClock.make()
    const { action, calls } = failing()
    const inputs: Array<string> = []
    const schedule = Schedule.make(0, (n: number, { input }: Schedule.StepContext<string>) => {
      inputs.push(input)
      return n < 2 ? Schedule.continueAfter(10, n + 1) : Schedule.done
    })
    const run = pipe(action, retrying(schedule, { clock }))()
    await clock.runAll()
    deepStrictEqual(await run, E.left('error 3'))
    deepStrictEqual(calls(), 3)
    deepStrictEqual(inputs, ['error 1', 'error 2', 'error 3'])
    deepStrictEqual(clock.sleeps, [10, 10])
  })

  it('should return the first Right after failures, with the schedule delays slept in between', async () => {
    const clock = TestClock.make()
    const { action, calls } = flaky(2)
    const run = pipe(
      action,
      retrying(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(5))), { clock })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.right('ok 3'))
    deepStrictEqual(calls(), 3)
    deepStrictEqual(clock.sleeps, [100, 200])
  })

  it('should request exactly the sleeps of Driver.delays for the same schedule and seed', async () => {
    const schedules: ReadonlyArray<Schedule.Schedule<unknown>> = [
      pipe(Schedule.exponential(10), Schedule.intersect(Schedule.recurs(5))),
      pipe(
        Schedule.exponential(100),
        Schedule.capped(1000),
        Schedule.fullJitter,
        Schedule.intersect(Schedule.recurs(6))
      ),
      pipe(Schedule.decorrelatedJitter(10, 1000), Schedule.intersect(Schedule.recurs(4))),
      pipe(Schedule.fibonacci(5), Schedule.equalJitter, Schedule.upTo(200)),
      pipe(Schedule.randomBetween(0, 50), Schedule.maxCumulativeDelay(120)),
      pipe(
        Schedule.fromDelays([0, 0, 7]),
        Schedule.andThen(pipe(Schedule.linear(3), Schedule.intersect(Schedule.recurs(3))))
      ),
      pipe(
        Schedule.fromDelays([5, 5]),
        Schedule.union(pipe(Schedule.constant(40), Schedule.intersect(Schedule.recurs(3))))
      )
    ]
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: schedules.length - 1 }), fc.nat(), async (i, seed) => {
        const schedule = schedules[i]
        const expected = Driver.delays(schedule, { random: Random.seeded(seed) })
        const clock = TestClock.make()
        const { action, calls } = failing()
        const rec = recorder<string>()
        const run = pipe(action, retrying(schedule, { clock, random: Random.seeded(seed), ...rec.hooks }))()
        await clock.runAll()
        deepStrictEqual(await run, E.left(`error ${expected.length + 1}`))
        deepStrictEqual(calls(), expected.length + 1)
        deepStrictEqual(
          rec.retries.map((r) => r.delay),
          [...expected]
        )
        deepStrictEqual(
          clock.sleeps,
          expected.filter((d) => d > 0)
        )
      }),
      { numRuns: 60 }
    )
  })

  it('should not send a zero delay to the clock, nor arm a timer for it', async () => {
    const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout')
    const clock = TestClock.make()
    const { action, calls } = failing()
    const run = pipe(action, retrying(Schedule.recurs(3), { clock }))()
    await clock.runAll()
    deepStrictEqual(await run, E.left('error 4'))
    deepStrictEqual(calls(), 4)
    deepStrictEqual(clock.sleeps, [])
    // with the live clock too: zero delays never reach setTimeout
    const live = failing()
    deepStrictEqual(await pipe(live.action, retrying(Schedule.recurs(3)))(), E.left('error 4'))
    deepStrictEqual(live.calls(), 4)
    strictEqual(setTimeoutSpy.mock.calls.length, 0)
  })

  it('recurs(n) should make exactly n + 1 attempts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), async (n) => {
        const clock = TestClock.make()
        const { action, calls } = failing()
        const run = pipe(action, retrying(Schedule.recurs(n), { clock }))()
        await clock.runAll()
        deepStrictEqual(await run, E.left(`error ${n + 1}`))
        deepStrictEqual(calls(), n + 1)
      }),
      { numRuns: 30 }
    )
  })

  it('upTo should be measured on the run clock: status.elapsed is the clock time since the first attempt', async () => {
    const start = 5_000
    const clock = TestClock.make(start)
    const { action, calls } = failing()
    const seen: Array<readonly [number, number]> = []
    const run = pipe(
      action,
      retrying(pipe(Schedule.constant(100), Schedule.upTo(350)), {
        clock,
        onRetry: ({ status }) => seen.push([status.elapsed, clock.now() - start])
      })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.left('error 4'))
    deepStrictEqual(calls(), 4)
    deepStrictEqual(clock.sleeps, [100, 100, 100])
    deepStrictEqual(seen, [
      [0, 0],
      [100, 100],
      [200, 200]
    ])
  })

  it('should support the pattern: start the run, await clock.runAll(), then await the result', async () => {
    const clock = TestClock.make(1_000)
    const { action } = failing()
    const run = pipe(action, retrying(pipe(Schedule.linear(10), Schedule.intersect(Schedule.recurs(4))), { clock }))()
    await clock.runAll()
    deepStrictEqual(await run, E.left('error 5'))
    deepStrictEqual(clock.sleeps, [10, 20, 30, 40])
    deepStrictEqual(clock.now(), 1_000 + 10 + 20 + 30 + 40)
  })

  it('should give each run of the same task its own schedule state', async () => {
    const clock = TestClock.make()
    let calls = 0
    const action: TE.TaskEither<string, number> = () => Promise.resolve(E.left(`error ${++calls}`))
    const task = pipe(action, retrying(Schedule.fromDelays([10, 20]), { clock }))
    const first = task()
    await clock.runAll()
    deepStrictEqual(await first, E.left('error 3'))
    const second = task()
    await clock.runAll()
    deepStrictEqual(await second, E.left('error 6'))
    deepStrictEqual(clock.sleeps, [10, 20, 10, 20])
  })
})

// -------------------------------------------------------------------------------------
// hooks
// -------------------------------------------------------------------------------------

describe('hooks', () => {
  it('onRetry should see (error, status, delay) before each sleep', async () => {
    const clock = TestClock.make()
    const { action } = failing()
    const sleptBefore: Array<number> = []
    const retries: Array<RetryCall<string>> = []
    const run = pipe(
      action,
      retrying(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3))), {
        clock,
        onRetry: ({ error: input, status, delay }: Retry.Retried<string>) => {
          sleptBefore.push(clock.sleeps.length)
          retries.push({ input, status, delay })
        }
      })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.left('error 4'))
    deepStrictEqual(retries, [
      { input: 'error 1', status: status(0, 0, 0, O.none), delay: 100 },
      { input: 'error 2', status: status(1, 100, 100, O.some(100)), delay: 200 },
      { input: 'error 3', status: status(2, 300, 300, O.some(200)), delay: 400 }
    ])
    deepStrictEqual(sleptBefore, [0, 1, 2])
  })

  it("onDone should be called once with the last Left, the final status and 'schedule'", async () => {
    const clock = TestClock.make()
    const { action } = failing()
    const rec = recorder<string>()
    const run = pipe(
      action,
      retrying(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3))), { clock, ...rec.hooks })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.left('error 4'))
    deepStrictEqual(rec.dones, [
      { result: E.left('error 4'), status: status(3, 700, 700, O.some(400)), reason: 'schedule' }
    ])
  })

  it("onDone should be called once with the Right, the status at the end and 'succeeded'", async () => {
    const clock = TestClock.make()
    const { action } = flaky(2)
    const rec = recorder<string>()
    const run = pipe(action, retrying(Schedule.constant(10), { clock, ...rec.hooks }))()
    await clock.runAll()
    deepStrictEqual(await run, E.right('ok 3'))
    deepStrictEqual(rec.dones, [
      { result: E.right('ok 3'), status: status(2, 20, 20, O.some(10)), reason: 'succeeded' }
    ])
  })

  it('onDone status, when the last attempt ends the run, should be read at the end of that attempt', async () => {
    // every attempt takes 5 ms on this clock
    const slowAttempts = (
      failures: number
    ): { readonly clock: Clock.Clock; readonly action: TE.TaskEither<string, string> } => {
      let time = 0
      const { action } = flaky(failures)
      return {
        clock: {
          now: () => time,
          sleep: (ms) => {
            time += ms
            return Promise.resolve()
          }
        },
        action: () => {
          time += 5
          return action()
        }
      }
    }
    const third = slowAttempts(2)
    const rec = recorder<string>()
    deepStrictEqual(
      await pipe(third.action, retrying(Schedule.constant(10), { clock: third.clock, ...rec.hooks }))(),
      E.right('ok 3')
    )
    // the first success, too, reports the time it took
    const first = slowAttempts(0)
    deepStrictEqual(
      await pipe(first.action, retrying(Schedule.constant(10), { clock: first.clock, ...rec.hooks }))(),
      E.right('ok 1')
    )
    deepStrictEqual(
      rec.dones.map((d) => d.status),
      [status(2, 35, 20, O.some(10)), status(0, 5, 0, O.none)]
    )
  })

  it("onDone should be called once with the last Left and 'aborted'", async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const { action } = failing()
    const rec = recorder<string>()
    const run = pipe(action, retrying(Schedule.constant(10), { clock, signal: controller.signal, ...rec.hooks }))()
    await clock.advance(10)
    controller.abort()
    deepStrictEqual(await run, E.left('error 2'))
    deepStrictEqual(rec.dones, [
      { result: E.left('error 2'), status: status(1, 10, 10, O.some(10)), reason: 'aborted' }
    ])
  })

  // The Hooks example logs `status.iterNumber + 1` as the number of attempts: that must hold for every reason.
  it('onDone status.iterNumber should count the retries made, whatever the reason', async () => {
    const attemptsSeen = async (
      failures: number,
      schedule: Schedule.Schedule<unknown>
    ): Promise<readonly [number, number]> => {
      const clock = TestClock.make()
      const { action, calls } = flaky(failures)
      const rec = recorder<string>()
      const run = pipe(action, retrying(schedule, { clock, ...rec.hooks }))()
      await clock.runAll()
      await run
      return [rec.dones[0].status.iterNumber + 1, calls()]
    }
    // 'schedule': 3 attempts
    const [bySchedule, schedule] = await attemptsSeen(Infinity, Schedule.fromDelays([10, 10]))
    deepStrictEqual(bySchedule, schedule)
    // 'succeeded' on the first attempt
    const [byFirst, first] = await attemptsSeen(0, Schedule.constant(10))
    deepStrictEqual(byFirst, first)
    // 'succeeded' on the third attempt
    const [byThird, third] = await attemptsSeen(2, Schedule.constant(10))
    deepStrictEqual(byThird, third)
  })

  it('an onRetry that throws should make the task reject with that error', async () => {
    const clock = TestClock.make()
    const { action, calls } = failing()
    const boom = new Error('onRetry failed')
    const run = pipe(
      action,
      retrying(Schedule.constant(10), {
        clock,
        onRetry: () => {
          throw boom
        }
      })
    )()
    await rejectsWith(run, boom)
    deepStrictEqual(calls(), 1)
    deepStrictEqual(clock.sleeps, [])
  })

  it('an onDone that throws should make the task reject with that error', async () => {
    const clock = TestClock.make()
    const boom = new Error('onDone failed')
    const run = pipe(
      TE.right(1),
      retrying(Schedule.constant(10), {
        clock,
        onDone: () => {
          throw boom
        }
      })
    )()
    await rejectsWith(run, boom)
  })
})

// -------------------------------------------------------------------------------------
// retryingWithStatus
// -------------------------------------------------------------------------------------

describe('retryingWithStatus', () => {
  it('should give the action RetryStatus.initial first, then the status read from the clock at attempt start', async () => {
    // a clock that oversleeps by 7 ms: elapsed must come from the clock, not from the delays
    let time = 1_000
    const clock: Clock.Clock = {
      now: () => time,
      sleep: (ms) => {
        time += ms + 7
        return Promise.resolve()
      }
    }
    const seen: Array<RetryStatus.RetryStatus> = []
    const run = pipe((s: RetryStatus.RetryStatus) => {
      seen.push(s)
      return TE.left(`error ${seen.length}`)
    }, retryingWithStatus(Schedule.fromDelays([100, 200]), { clock }))()
    deepStrictEqual(await run, E.left('error 3'))
    strictEqual(seen[0], RetryStatus.initial)
    deepStrictEqual(seen, [RetryStatus.initial, status(1, 107, 100, O.some(100)), status(2, 314, 300, O.some(200))])
  })

  it('should stop on the first Right', async () => {
    const clock = TestClock.make()
    const run = pipe(
      (s: RetryStatus.RetryStatus) =>
        s.iterNumber < 2 ? TE.left(s.iterNumber) : TE.right(`attempt ${s.iterNumber + 1}`),
      retryingWithStatus(Schedule.constant(50), { clock })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.right('attempt 3'))
    deepStrictEqual(clock.sleeps, [50, 50])
  })
})

// -------------------------------------------------------------------------------------
// retryingReaderTaskEither
// -------------------------------------------------------------------------------------

describe('retryingReaderTaskEither', () => {
  interface Env extends RetryEnv {
    readonly endpoint: string
  }

  it('should take clock and random from the environment and pass the environment to the action', async () => {
    const clock = TestClock.make()
    const env: Env = { clock, random: Random.fixed(0.5), endpoint: 'users' }
    const envs: Array<Env> = []
    let calls = 0
    const fetchUser: RTE.ReaderTaskEither<Env, string, number> = (e) => () => {
      envs.push(e)
      calls++
      return Promise.resolve(E.left(`${e.endpoint} down ${calls}`))
    }
    const schedule = pipe(Schedule.constant(100), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(2)))
    const run = pipe(fetchUser, retryingReaderTaskEither(schedule))(env)()
    await clock.runAll()
    deepStrictEqual(await run, E.left('users down 3'))
    deepStrictEqual(clock.sleeps, [50, 50])
    deepStrictEqual(envs.length, 3)
    envs.forEach((e) => strictEqual(e, env))
  })

  it('should read the environment on each run', async () => {
    const action: RTE.ReaderTaskEither<RetryEnv, string, number> = RTE.left('down')
    const rte = pipe(action, retryingReaderTaskEither(Schedule.fromDelays([10, 20])))
    const a = TestClock.make()
    const b = TestClock.make()
    const runA = rte({ clock: a, random: Random.seeded(1) })()
    const runB = rte({ clock: b, random: Random.seeded(1) })()
    await a.runAll()
    await b.runAll()
    deepStrictEqual(await runA, E.left('down'))
    deepStrictEqual(await runB, E.left('down'))
    deepStrictEqual(a.sleeps, [10, 20])
    deepStrictEqual(b.sleeps, [10, 20])
  })

  it('should take the abort signal from the environment, and the hooks from options', async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const rec = recorder<string>()
    const run = pipe(
      RTE.left<RetryEnv, string, number>('down'),
      retryingReaderTaskEither(Schedule.constant(1_000), rec.hooks)
    )({ clock, random: Random.seeded(1), signal: controller.signal })()
    await settle()
    deepStrictEqual(clock.pending, 1)
    controller.abort()
    deepStrictEqual(await run, E.left('down'))
    deepStrictEqual(clock.now(), 0)
    deepStrictEqual(clock.pending, 0)
    deepStrictEqual(rec.retries.length, 1)
    deepStrictEqual(
      rec.dones.map((d) => d.reason),
      ['aborted']
    )
  })
})

// -------------------------------------------------------------------------------------
// retryingWithContext and attemptTimeout
// -------------------------------------------------------------------------------------

/** An attempt that settles only when its signal aborts, then fails with `aborted <reason>`, noting when. */
const hangsUntilAborted =
  (clock: Clock.Clock, abortedAt: Array<number>) =>
  ({ signal }: AttemptContext): TE.TaskEither<string, never> =>
  () =>
    new Promise((resolve) =>
      signal.addEventListener('abort', () => {
        abortedAt.push(clock.now())
        resolve(E.left(`aborted ${String(signal.reason)}`))
      })
    )

describe('retryingWithContext', () => {
  it('should give each attempt its status, and a signal that never aborts when nothing can abort the run', async () => {
    const clock = TestClock.make()
    const seen: Array<readonly [number, number, boolean]> = []
    const run = pipe(({ status, signal }: AttemptContext) => {
      seen.push([status.iterNumber, status.elapsed, signal.aborted])
      return status.iterNumber < 2 ? TE.left(`error ${status.iterNumber + 1}`) : TE.right('ok')
    }, retryingWithContext(Schedule.fromDelays([10, 20]), { clock }))()
    await clock.runAll()
    deepStrictEqual(await run, E.right('ok'))
    deepStrictEqual(seen, [
      [0, 0, false],
      [1, 10, false],
      [2, 30, false]
    ])
  })

  it("should abort the attempt's signal when the run's signal aborts, and end the run with the attempt's Left", async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const abortedAt: Array<number> = []
    const rec = recorder<string>()
    const run = pipe(
      hangsUntilAborted(clock, abortedAt),
      retryingWithContext(Schedule.constant(10), { clock, signal: controller.signal, ...rec.hooks })
    )()
    await settle()
    controller.abort('shutdown')
    deepStrictEqual(await run, E.left('aborted shutdown'))
    deepStrictEqual(abortedAt, [0])
    deepStrictEqual(
      rec.dones.map((d) => d.reason),
      ['aborted']
    )
    strictEqual(clock.pending, 0)
  })
})

describe('retryingWithContext: the signal of each attempt', () => {
  /** Attempts that each add a listener to their signal and hang until `release` is called. */
  const listening = (): {
    readonly action: (context: AttemptContext) => TE.TaskEither<string, string>
    readonly signals: ReadonlyArray<AbortSignal>
    readonly release: () => void
  } => {
    const signals: Array<AbortSignal> = []
    const releases: Array<() => void> = []
    return {
      action:
        ({ signal }) =>
        () =>
          new Promise((resolve) => {
            signals.push(signal)
            signal.addEventListener('abort', () => resolve(E.left('aborted')))
            releases.push(() => resolve(E.right('ok')))
          }),
      signals,
      release: () => releases.forEach((r) => r())
    }
  }

  // Regression: without a run signal every attempt of the process got one shared signal, and with one every
  // attempt got the run's own: 20 concurrent runs put 20 listeners on one signal (MaxListenersExceededWarning).
  it.each([
    ['no run signal', undefined],
    ['one run signal shared by every run', new AbortController().signal]
  ])(
    'with %s, 20 concurrent runs should hand out 20 signals, and leave no listener on the run signal',
    async (_, signal) => {
      const { action, signals, release } = listening()
      const runs = Array.from({ length: 20 }, () => pipe(action, retryingWithContext(Schedule.recurs(1), { signal }))())
      await settle()
      deepStrictEqual(new Set(signals).size, 20)
      for (const s of signals) deepStrictEqual(getEventListeners(s, 'abort').length, 1)
      if (signal !== undefined) deepStrictEqual(getEventListeners(signal, 'abort').length, 1)
      release()
      deepStrictEqual(
        await Promise.all(runs),
        Array.from({ length: 20 }, () => E.right('ok'))
      )
      if (signal !== undefined) deepStrictEqual(getEventListeners(signal, 'abort').length, 0)
    }
  )

  it.each([
    ['without a timeout', {}],
    ['with a timeout', { attemptTimeout: 1_000, onTimeout: (): string => 'timeout' }]
  ])(
    '%s, should not abort the signal of an attempt once it has settled, so that what it returned can be read',
    async (_, options) => {
      const clock = TestClock.make()
      const { action, signals, release } = listening()
      const run = pipe(action, retryingWithContext(Schedule.recurs(1), { clock, ...options }))()
      await settle()
      release()
      deepStrictEqual(await run, E.right('ok'))
      await clock.runAll()
      deepStrictEqual(
        signals.map((s) => s.aborted),
        [false]
      )
    }
  )
})

describe('attemptTimeout', () => {
  it('should abort an attempt that has not settled in time, on the run clock, and retry it as the failure onTimeout()', async () => {
    const clock = TestClock.make()
    const abortedAt: Array<number> = []
    const rec = recorder<string>()
    let calls = 0
    const run = pipe(
      (context: AttemptContext) => (++calls === 1 ? hangsUntilAborted(clock, abortedAt)(context) : TE.right('ok')),
      retryingWithContext(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(2))), {
        clock,
        attemptTimeout: 1_000,
        onTimeout: () => 'timeout',
        ...rec.hooks
      })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.right('ok'))
    deepStrictEqual(abortedAt, [1_000])
    deepStrictEqual(
      rec.retries.map((r) => [r.input, r.delay]),
      [['timeout', 100]]
    )
    // each attempt's timeout is a sleep on the clock; the second one's was cleared when the attempt succeeded
    deepStrictEqual(timersOf(clock), ['timeout 1000', 'backoff 100', 'timeout 1000'])
    strictEqual(clock.pending, 0)
    strictEqual(clock.now(), 1_100)
  })

  it('should take the timeout from a function of the status', async () => {
    const clock = TestClock.make()
    const abortedAt: Array<number> = []
    const run = pipe(
      hangsUntilAborted(clock, abortedAt),
      retryingWithContext(Schedule.fromDelays([10, 10]), {
        clock,
        attemptTimeout: (status) => 100 * (status.iterNumber + 1),
        onTimeout: () => 'timeout'
      })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.left('timeout'))
    deepStrictEqual(abortedAt, [100, 310, 620])
    deepStrictEqual(timersOf(clock), ['timeout 100', 'backoff 10', 'timeout 200', 'backoff 10', 'timeout 300'])
  })

  it('should be clamped to what is left of an upTo limit, so that a hanging attempt ends the run on time', async () => {
    const clock = TestClock.make()
    const abortedAt: Array<number> = []
    const run = pipe(
      hangsUntilAborted(clock, abortedAt),
      retryingWithContext(pipe(Schedule.constant(100), Schedule.upTo(850)), {
        clock,
        attemptTimeout: 400,
        onTimeout: () => 'timeout'
      })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.left('timeout'))
    // the second attempt starts at 500: 350 ms are left of the 850
    deepStrictEqual(abortedAt, [400, 850])
    deepStrictEqual(timersOf(clock), ['timeout 400', 'backoff 100', 'timeout 350'])
  })

  it('with retrying, should abandon an attempt that cannot be told to stop, and go on', async () => {
    const clock = TestClock.make()
    let calls = 0
    const never: TE.TaskEither<string, string> = () => {
      calls++
      return new Promise(() => undefined)
    }
    const run = pipe(
      never,
      retrying(Schedule.fromDelays([50]), { clock, attemptTimeout: 200, onTimeout: () => 'timeout' })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.left('timeout'))
    strictEqual(calls, 2)
    deepStrictEqual(timersOf(clock), ['timeout 200', 'backoff 50', 'timeout 200'])
  })

  it('should leave no timer behind when the attempt settles first', async () => {
    const clock = TestClock.make()
    const run = pipe(
      (): TE.TaskEither<string, string> => () => clock.sleep(10).then(() => E.right('ok')),
      retryingWithContext(Schedule.recurs(1), { clock, attemptTimeout: 1_000, onTimeout: () => 'timeout' })
    )()
    await clock.runAll()
    deepStrictEqual(await run, E.right('ok'))
    strictEqual(clock.pending, 0)
    strictEqual(clock.now(), 10)
  })

  describe('bad options', () => {
    itThrowsRangeErrors([
      ...notDurations.map(
        ([name, ms]): RangeErrorCase => [
          `attemptTimeout: ${name}`,
          () => retrying(Schedule.recurs(1), { attemptTimeout: ms, onTimeout: () => 'timeout' }),
          /^retrying: options\.attemptTimeout must be a finite number >= 0, received/
        ]
      )
    ])
    itThrowsTypeErrors([
      [
        'attemptTimeout without onTimeout',
        () => retryingWithContext(Schedule.recurs(1), { attemptTimeout: 100 }),
        /^retryingWithContext: options\.onTimeout must be a function, received undefined/
      ]
    ])

    it('a function that answers a timeout that is not a duration should make the run reject with a RangeError naming it', async () => {
      const error = await caught(() =>
        pipe(
          TE.left('down'),
          retrying(Schedule.recurs(1), {
            clock: TestClock.make(),
            attemptTimeout: () => NaN,
            onTimeout: () => 'timeout'
          })
        )()
      )
      ok(error instanceof RangeError, `expected a RangeError, received ${String(error)}`)
      ok(
        /options\.attemptTimeout\(status\) must be a finite number >= 0, received NaN/.test(error.message),
        error.message
      )
    })
  })
})

// -------------------------------------------------------------------------------------
// repeating
// -------------------------------------------------------------------------------------

describe('repeating', () => {
  it('should collect the results while the schedule continues (collect_and_retry)', async () => {
    const clock = TestClock.make()
    const run = repeating(
      pipe(
        Schedule.constant(1),
        Schedule.whileInput((a: number) => a < 2)
      ),
      { clock }
    )({
      initial: 0,
      action: (s: number) => TE.right(s + 1),
      next: (a) => a
    })()
    await clock.runAll()
    deepStrictEqual(await run, E.right([1, 2]))
    deepStrictEqual(clock.sleeps, [1])
  })

  it("should sleep the schedule's delays between runs, and show onRetry the success values", async () => {
    const clock = TestClock.make()
    const rec = recorder<number>()
    const inputs: Array<string> = []
    const run = repeating(Schedule.fromDelays([10, 20, 30]), { clock, ...rec.repeatHooks })({
      initial: 'a',
      action: (s: string) => {
        inputs.push(s)
        return TE.right(s.length)
      },
      next: (n, s) => s + String(n)
    })()
    await clock.runAll()
    deepStrictEqual(await run, E.right([1, 2, 3, 4]))
    deepStrictEqual(inputs, ['a', 'a1', 'a12', 'a123'])
    deepStrictEqual(clock.sleeps, [10, 20, 30])
    deepStrictEqual(
      rec.retries.map((r) => [r.input, r.delay]),
      [
        [1, 10],
        [2, 20],
        [3, 30]
      ]
    )
    deepStrictEqual(
      rec.dones.map((d) => d.reason),
      ['schedule']
    )
  })

  it('should end with the Left of a failing run', async () => {
    const clock = TestClock.make()
    const rec = recorder<number>()
    let runs = 0
    const run = repeating(Schedule.constant(10), { clock, ...rec.repeatHooks })({
      initial: 0,
      action: (s: number) => {
        runs++
        return s === 2 ? TE.left('stop at 2') : TE.right(s + 1)
      },
      next: (a) => a
    })()
    await clock.runAll()
    deepStrictEqual(await run, E.left('stop at 2'))
    deepStrictEqual(runs, 3)
    deepStrictEqual(clock.sleeps, [10, 10])
    deepStrictEqual(rec.dones, [
      { result: E.left('stop at 2'), status: status(2, 20, 20, O.some(10)), reason: 'failed' }
    ])
  })

  it("should end with the Left of a failing first run, and 'failed'", async () => {
    const rec = recorder<number>()
    const run = repeating(Schedule.constant(10), { clock: TestClock.make(), ...rec.repeatHooks })({
      initial: 0,
      action: () => TE.left('down'),
      next: (a: number) => a
    })()
    deepStrictEqual(await run, E.left('down'))
    deepStrictEqual(rec.retries, [])
    deepStrictEqual(rec.dones, [{ result: E.left('down'), status: RetryStatus.initial, reason: 'failed' }])
  })

  it('an abort during a sleep should end with the results collected so far', async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const rec = recorder<number>()
    const run = repeating(Schedule.constant(100), { clock, signal: controller.signal, ...rec.repeatHooks })({
      initial: 0,
      action: (s: number) => TE.right(s + 1),
      next: (a) => a
    })()
    await clock.advance(100)
    controller.abort()
    deepStrictEqual(await run, E.right([1, 2]))
    deepStrictEqual(clock.pending, 0)
    deepStrictEqual(
      rec.dones.map((d) => d.reason),
      ['aborted']
    )
  })

  it('should collect separately on each run of the task', async () => {
    const task = repeating(Schedule.recurs(2))({ initial: 0, action: (s: number) => TE.right(s + 1), next: (a) => a })
    deepStrictEqual(await task(), E.right([1, 2, 3]))
    deepStrictEqual(await task(), E.right([1, 2, 3]))
  })
})

// -------------------------------------------------------------------------------------
// reliability
// -------------------------------------------------------------------------------------

describe('reliability', () => {
  it('should make 1,000,000 zero-delay retries without stack overflow and with bounded heap growth', async () => {
    const gc = exposeGc()
    gc?.()
    const before = process.memoryUsage().heapUsed
    const n = 1_000_000
    const { action, calls } = flaky(n)
    const result = await pipe(action, retrying(Schedule.recurs(n), { clock: TestClock.make() }))()
    deepStrictEqual(result, E.right(`ok ${n + 1}`))
    deepStrictEqual(calls(), n + 1)
    gc?.()
    const growth = process.memoryUsage().heapUsed - before
    const bound = gc ? 8 * 2 ** 20 : 96 * 2 ** 20
    ok(growth < bound, `the heap grew by ${growth} bytes, more than ${bound}`)
  }, 15_000) // well under 2 s on an idle machine; the margin is for a loaded CI runner

  it('an abort during a sleep should end the run at once with the last error', async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const { action, calls } = failing()
    const run = pipe(action, retrying(Schedule.constant(60_000), { clock, signal: controller.signal }))()
    await settle()
    deepStrictEqual(clock.pending, 1)
    controller.abort()
    deepStrictEqual(await run, E.left('error 1'))
    deepStrictEqual(calls(), 1)
    deepStrictEqual(clock.now(), 0)
    deepStrictEqual(clock.pending, 0)
  })

  it('should start no attempt, ask no decision and sleep no more after an abort during an attempt', async () => {
    for (const [schedule, delay] of [
      [Schedule.constant(10), 10],
      [Schedule.forever, 0]
    ] as const) {
      const clock = TestClock.make()
      const controller = new AbortController()
      const rec = recorder<string>()
      let calls = 0
      const action: TE.TaskEither<string, number> = () => {
        if (++calls === 2) controller.abort()
        return Promise.resolve(E.left(`error ${calls}`))
      }
      const run = pipe(action, retrying(schedule, { clock, signal: controller.signal, ...rec.hooks }))()
      await clock.runAll()
      deepStrictEqual(await run, E.left('error 2'))
      deepStrictEqual(calls, 2)
      deepStrictEqual(clock.pending, 0)
      deepStrictEqual(clock.sleeps, delay > 0 ? [delay] : [])
      deepStrictEqual(rec.retries.length, 1)
      deepStrictEqual(rec.dones, [
        { result: E.left('error 2'), status: status(1, delay, delay, O.some(delay)), reason: 'aborted' }
      ])
    }
  })

  it('an abort during the first attempt should end the run with its Left, without a decision', async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const rec = recorder<string>()
    const inputs: Array<string> = []
    const schedule = Schedule.make(null, (_, { input }: Schedule.StepContext<string>) => {
      inputs.push(input)
      return Schedule.continueAfter(10, null)
    })
    const action: TE.TaskEither<string, number> = () => {
      controller.abort()
      return Promise.resolve(E.left('error 1'))
    }
    const run = pipe(action, retrying(schedule, { clock, signal: controller.signal, ...rec.hooks }))()
    deepStrictEqual(await run, E.left('error 1'))
    deepStrictEqual(inputs, [])
    deepStrictEqual(clock.sleeps, [])
    deepStrictEqual(rec.retries, [])
    deepStrictEqual(rec.dones, [{ result: E.left('error 1'), status: RetryStatus.initial, reason: 'aborted' }])
  })

  it('a signal aborted before the start should make the task reject with signal.reason, calling no action', async () => {
    const reason = new Error('cancelled')
    const controller = new AbortController()
    controller.abort(reason)
    let calls = 0
    const action: TE.TaskEither<string, number> = () => {
      calls++
      return Promise.resolve(E.left('error'))
    }
    const clock = TestClock.make()
    await rejectsWith(pipe(action, retrying(Schedule.constant(10), { clock, signal: controller.signal }))(), reason)
    await rejectsWith(
      pipe(() => action, retryingWithStatus(Schedule.constant(10), { clock, signal: controller.signal }))(),
      reason
    )
    await rejectsWith(
      pipe(
        (_: RetryEnv) => action,
        retryingReaderTaskEither(Schedule.constant(10))
      )({ clock, random: Random.seeded(0), signal: controller.signal })(),
      reason
    )
    await rejectsWith(
      repeating(Schedule.constant(10), { clock, signal: controller.signal })({
        initial: 0,
        action: () => action,
        next: (a) => a
      })(),
      reason
    )
    // the default reason, an AbortError, is passed through as is
    const plain = new AbortController()
    plain.abort()
    await rejectsWith(
      pipe(action, retrying(Schedule.constant(10), { clock, signal: plain.signal }))(),
      plain.signal.reason
    )
    deepStrictEqual(calls, 0)
    deepStrictEqual(clock.sleeps, [])
  })

  // No clock reading: the run cannot end on its own within jest's timeout (its sleep lasts 60 s), so ending at all
  // shows that the abort ended the sleep; and the timer must be cleared, not left to fire.
  it('with Clock.live, an abort during a 60 s sleep should end the run and leave no timer behind', async () => {
    const timers = trackTimers()
    const controller = new AbortController()
    const { action, calls } = failing()
    let sleeping: () => void = () => undefined
    const retried = new Promise<void>((resolve) => (sleeping = resolve))
    const run = pipe(
      action,
      retrying(Schedule.constant(60_000), { signal: controller.signal, onRetry: () => sleeping() })
    )()
    await retried
    await settle()
    deepStrictEqual(timers.live(), 1)
    controller.abort()
    deepStrictEqual(await run, E.left('error 1'))
    deepStrictEqual(calls(), 1)
    deepStrictEqual(timers.live(), 0)
  })

  describe('an action that rejects or throws is a defect', () => {
    const boom = new Error('defect')
    const rejecting = (): { readonly action: TE.TaskEither<string, number>; readonly calls: () => number } => {
      let calls = 0
      return {
        action: () => (++calls === 1 ? Promise.resolve(E.left('error')) : Promise.reject(boom)),
        calls: () => calls
      }
    }
    const throwing = (): { readonly action: TE.TaskEither<string, number>; readonly calls: () => number } => {
      let calls = 0
      return {
        action: () => {
          calls++
          throw boom
        },
        calls: () => calls
      }
    }

    it('retrying should not retry a rejection, and should propagate it unchanged with no timer left', async () => {
      const timers = trackTimers()
      // first a Left, a real 5 ms sleep, then a rejection
      const r = rejecting()
      await rejectsWith(pipe(r.action, retrying(Schedule.constant(5)))(), boom)
      deepStrictEqual(r.calls(), 2)
      // a synchronous throw on the first attempt
      const t = throwing()
      await rejectsWith(pipe(t.action, retrying(Schedule.constant(60_000)))(), boom)
      deepStrictEqual(t.calls(), 1)
      // the 5 ms sleep armed a timer (two, when Node fires it early and it is topped up), and none is left
      ok(timers.armed() >= 1, `${timers.armed()} timers armed`)
      deepStrictEqual(timers.live(), 0)
    })

    it('retryingWithStatus should not retry a rejection or a throw', async () => {
      const clock = TestClock.make()
      const r = rejecting()
      const rejected = rejectsWith(pipe(() => r.action, retryingWithStatus(Schedule.constant(5), { clock }))(), boom)
      await clock.runAll()
      await rejected
      deepStrictEqual(clock.sleeps, [5])
      deepStrictEqual(r.calls(), 2)
      let calls = 0
      const thrower = (): TE.TaskEither<string, number> => {
        calls++
        throw boom
      }
      await rejectsWith(pipe(thrower, retryingWithStatus(Schedule.constant(5), { clock }))(), boom)
      deepStrictEqual(calls, 1)
    })

    it('retryingReaderTaskEither should not retry a rejection or a throw, and should reject rather than throw', async () => {
      const clock = TestClock.make()
      const env: RetryEnv = { clock, random: Random.seeded(0) }
      const t = throwing()
      await rejectsWith(pipe((_: RetryEnv) => t.action, retryingReaderTaskEither(Schedule.constant(5)))(env)(), boom)
      deepStrictEqual(t.calls(), 1)
      // the reader itself throws: the task must still return a rejected promise, as a Task never throws
      let reads = 0
      const reader: RTE.ReaderTaskEither<RetryEnv, string, number> = () => {
        reads++
        throw boom
      }
      const task = pipe(reader, retryingReaderTaskEither(Schedule.constant(5)))(env)
      let result: Promise<unknown> = Promise.resolve()
      try {
        result = task()
      } catch (e) {
        ok(false, `the task threw ${String(e)}`)
      }
      await rejectsWith(result, boom)
      deepStrictEqual(reads, 1)
    })

    it('repeating should not repeat after a rejection or a throw', async () => {
      const clock = TestClock.make()
      let runs = 0
      const rejected = rejectsWith(
        repeating(Schedule.constant(5), { clock })({
          initial: 0,
          action: (s: number) => (++runs === 2 ? () => Promise.reject(boom) : TE.right(s + 1)),
          next: (a) => a
        })(),
        boom
      )
      await clock.runAll()
      await rejected
      deepStrictEqual(clock.sleeps, [5])
      deepStrictEqual(runs, 2)
      let calls = 0
      const thrower = (): TE.TaskEither<string, number> => {
        calls++
        throw boom
      }
      await rejectsWith(
        repeating(Schedule.constant(5), { clock })({ initial: 0, action: thrower, next: (a) => a })(),
        boom
      )
      deepStrictEqual(calls, 1)
    })
  })

  it('one schedule value should drive 10,000 concurrent runs independently', async () => {
    const schedule = pipe(
      Schedule.exponential(10),
      Schedule.fullJitter,
      Schedule.minDelay(1),
      Schedule.intersect(Schedule.recurs(5))
    )
    const clock = TestClock.make()
    const n = 10_000
    const delaysOf: Array<Array<number>> = []
    const callsOf: Array<number> = []
    const runs = Array.from({ length: n }, (_, i) => {
      delaysOf.push([])
      callsOf.push(0)
      const action: TE.TaskEither<string, number> = () => {
        const attempt = ++callsOf[i]
        return Promise.resolve(attempt <= i % 5 ? E.left(`run ${i} error ${attempt}`) : E.right(i))
      }
      return pipe(
        action,
        retrying(schedule, { clock, random: Random.seeded(i), onRetry: ({ delay }) => delaysOf[i].push(delay) })
      )()
    })
    await clock.runAll()
    const results = await Promise.all(runs)
    const indices = Array.from({ length: n }, (_, i) => i)
    // compared in one go: ten thousand separate assertions would dominate the run time
    deepStrictEqual(
      results,
      indices.map((i) => E.right(i))
    )
    deepStrictEqual(
      callsOf,
      indices.map((i) => (i % 5) + 1)
    )
    deepStrictEqual(
      delaysOf,
      indices.map((i) => Driver.delays(schedule, { random: Random.seeded(i) }).slice(0, i % 5))
    )
    deepStrictEqual(
      clock.sleeps.length,
      indices.reduce((sum, i) => sum + (i % 5), 0)
    )
    deepStrictEqual(clock.pending, 0)
  }, 15_000)

  it('with forever and an always-failing synchronous action, an abort from a real timer should still stop the run', async () => {
    const controller = new AbortController()
    // A safety valve: if the loop never yielded, the timer could not fire, and neither could the test's own
    // timeout; the action then succeeds after three million calls so that the test fails instead of hanging.
    const { action, calls } = flaky(3_000_000)
    const rec = recorder<string>()
    const timer = setTimeout(() => controller.abort(), 5)
    const result = await pipe(action, retrying(Schedule.forever, { signal: controller.signal, ...rec.hooks }))()
    clearTimeout(timer)
    deepStrictEqual(result, E.left(`error ${calls()}`))
    ok(calls() > 1, `${calls()} calls`)
    deepStrictEqual(
      rec.dones.map((d) => d.reason),
      ['aborted']
    )
  })
})

// -------------------------------------------------------------------------------------
// clock reads
// -------------------------------------------------------------------------------------

describe('clock reads', () => {
  /** A clock on which every read and every attempt moves time by 1 ms, counting its reads. */
  const countingClock = (): {
    readonly clock: Clock.Clock
    readonly reads: () => number
    readonly tick: () => void
  } => {
    let time = 0
    let reads = 0
    return {
      clock: {
        now: () => (reads++, time++),
        sleep: (ms) => {
          time += ms
          return Promise.resolve()
        }
      },
      reads: () => reads,
      tick: () => {
        time++
      }
    }
  }

  it('should not read the clock when nothing looks at the time', async () => {
    const { clock, reads } = countingClock()
    const { action } = flaky(3)
    const schedule = pipe(Schedule.exponential(10), Schedule.capped(15), Schedule.intersect(Schedule.recurs(5)))
    deepStrictEqual(await pipe(action, retrying(schedule, { clock }))(), E.right('ok 4'))
    deepStrictEqual(await pipe(flaky(0).action, retrying(schedule, { clock }))(), E.right('ok 1'))
    deepStrictEqual(reads(), 0)
  })

  it('should read the clock when a schedule, a hook, a budget or the action may look at the time', async () => {
    const schedule = pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(2)))
    const runs: ReadonlyArray<readonly [string, (clock: Clock.Clock) => Promise<unknown>]> = [
      ['upTo', (clock) => pipe(failing().action, retrying(pipe(schedule, Schedule.upTo(1_000)), { clock }))()],
      [
        'fromPolicy',
        (clock) =>
          pipe(
            failing().action,
            retrying(
              Schedule.fromPolicy(() => O.none),
              { clock }
            )
          )()
      ],
      [
        'make',
        (clock) =>
          pipe(
            failing().action,
            retrying(
              Schedule.make(0, () => Schedule.done),
              { clock }
            )
          )()
      ],
      ['onRetry', (clock) => pipe(failing().action, retrying(schedule, { clock, onRetry: () => undefined }))()],
      ['onDone', (clock) => pipe(failing().action, retrying(schedule, { clock, onDone: () => undefined }))()],
      [
        'budget',
        (clock) =>
          pipe(
            failing().action,
            retrying(schedule, { clock, budget: { onSuccess: () => undefined, onFailure: () => true } })
          )()
      ],
      ['retryingWithStatus', (clock) => pipe(() => failing().action, retryingWithStatus(schedule, { clock }))()],
      [
        'env budget',
        (clock) =>
          pipe(
            () => failing().action,
            retryingReaderTaskEither(schedule)
          )({ clock, random: Random.seeded(0), budget: { onSuccess: () => undefined, onFailure: () => true } })()
      ]
    ]
    for (const [name, run] of runs) {
      const { clock, reads } = countingClock()
      await run(clock)
      deepStrictEqual([name, reads() > 0], [name, true])
    }
  })

  it('should give upTo the real elapsed time when attempts take time', async () => {
    // each attempt takes 100 ms: after the third, more than 300 ms have passed and upTo stops (recurs bounds a bug)
    const { clock, tick } = countingClock()
    let calls = 0
    const slow: TE.TaskEither<string, never> = () => {
      calls++
      for (let i = 0; i < 100; i++) tick()
      return TE.left('slow')()
    }
    const schedule = pipe(Schedule.constant(10), Schedule.upTo(300), Schedule.intersect(Schedule.recurs(5)))
    deepStrictEqual(await pipe(slow, retrying(schedule, { clock }))(), E.left('slow'))
    deepStrictEqual(calls, 3)
  })
})

// -------------------------------------------------------------------------------------
// bad input
// -------------------------------------------------------------------------------------

describe('bad input', () => {
  it('a value that is not a Schedule should be a TypeError naming the runner', () => {
    const runners: ReadonlyArray<readonly [string, (schedule: Schedule.Schedule<unknown>) => unknown]> = [
      ['retrying', (schedule) => retrying(schedule)],
      ['retryingWithStatus', (schedule) => retryingWithStatus(schedule)],
      ['retryingWithContext', (schedule) => retryingWithContext(schedule)],
      ['retryingReaderTaskEither', (schedule) => retryingReaderTaskEither(schedule)],
      ['repeating', (schedule) => repeating(schedule)]
    ]
    for (const bad of [null, undefined, 42, {}, { step: 1 }]) {
      for (const [name, runner] of runners) {
        throwsTypeError(
          () => runner(bad as unknown as Schedule.Schedule<unknown>),
          new RegExp(`^${name}: schedule must be a Schedule, received`)
        )
      }
    }
    throwsTypeError(() => retrying(null as unknown as Schedule.Schedule<unknown>), /received null$/)
  })

  it('a clock, random, budget or breaker that is not one should be a TypeError naming it, where it is given', () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      ['clock', { now: () => 0 }, 'a Clock'],
      ['random', { next: 0.5 }, 'a Random'],
      ['budget', { onSuccess: () => undefined }, 'a RetryBudget'],
      ['breaker', { enter: () => undefined }, 'a Breaker']
    ]
    for (const [name, bad, what] of cases) {
      throwsTypeError(
        () => retrying(Schedule.recurs(1), { [name]: bad }),
        new RegExp(`^retrying: options\\.${name} must be ${what}, received`)
      )
      // in an environment, the clock and random are required, and checked when the environment is given
      const env = { clock: Clock.live, random: Random.live, [name]: bad } as unknown as RetryEnv
      throwsTypeError(
        () => retryingReaderTaskEither(Schedule.recurs(1))(RTE.right(1))(env),
        new RegExp(`^retryingReaderTaskEither: env\\.${name} must be ${what}, received`)
      )
    }
    throwsTypeError(
      () => retryingReaderTaskEither(Schedule.recurs(1))(RTE.right(1))({ random: Random.live } as unknown as RetryEnv),
      /^retryingReaderTaskEither: env\.clock must be a Clock, received undefined$/
    )
  })

  describe('hooks that are not functions', () => {
    const notAFunction = 'log' as unknown as () => void
    itThrowsTypeErrors([
      [
        'retrying with onRetry: "log"',
        () => retrying(Schedule.recurs(1), { onRetry: notAFunction }),
        /^retrying: options\.onRetry must be a function, received "log"/
      ],
      [
        'retrying with key: 7',
        () => retrying(Schedule.recurs(1), { key: 7 as unknown as string }),
        /^retrying: options\.key must be a string, received 7$/
      ],
      [
        'retrying with onDone: "log"',
        () => retrying(Schedule.recurs(1), { onDone: notAFunction }),
        /^retrying: options\.onDone must be a function/
      ],
      [
        'retryingWithStatus with onRetry: "log"',
        () => retryingWithStatus(Schedule.recurs(1), { onRetry: notAFunction }),
        /^retryingWithStatus: options\.onRetry/
      ],
      [
        'retryingReaderTaskEither with onDone: "log"',
        () => retryingReaderTaskEither(Schedule.recurs(1), { onDone: notAFunction }),
        /^retryingReaderTaskEither: options\.onDone/
      ],
      [
        'repeating with onRetry: "log"',
        () => repeating(Schedule.recurs(1), { onRepeat: notAFunction }),
        /^repeating: options\.onRepeat/
      ]
    ])
  })

  it.each(notDurations)(
    'a schedule step returning the delay %s should make the run reject with a RangeError naming it',
    async (shown, delay) => {
      const clock = TestClock.make()
      const { action, calls } = failing()
      const bad = Schedule.make(null, () => Schedule.continueAfter(delay, null))
      const error = await caught(() => pipe(action, retrying(bad, { clock }))())
      ok(error instanceof RangeError, `expected a RangeError, received ${String(error)}`)
      ok(error.message.includes(`delay ${shown}`), error.message)
      deepStrictEqual(calls(), 1)
      deepStrictEqual(clock.sleeps, [])
    }
  )
})

// -------------------------------------------------------------------------------------
// regressions
// -------------------------------------------------------------------------------------

describe('regressions', () => {
  it('regression: a tiny positive delay with Clock.live should not spin forever: an abort from a timer settles the run', async () => {
    // Clock.live serves a 1e-5 ms sleep without a timer: without the loop's yields to the event loop, the timer
    // of AbortSignal.timeout could never fire, and this test would hang until jest's timeout.
    const { action, calls } = failing()
    const rec = recorder<string>()
    const result = await pipe(
      action,
      retrying(Schedule.constant(1e-5), { signal: AbortSignal.timeout(50), ...rec.hooks })
    )()
    deepStrictEqual(result, E.left(`error ${calls()}`))
    ok(calls() > 1, `${calls()} calls`)
    deepStrictEqual(
      rec.dones.map((d) => [d.result, d.reason]),
      [[result, 'aborted']]
    )
  })

  it('regression: an action that keeps the CPU busy should still let a timer through within a few hundred attempts', async () => {
    // Each attempt is half a millisecond of synchronous work and settles at once, so no retry goes through a
    // timer. The loop lets the event loop turn once such a streak has run a millisecond (checked every 64
    // retries): the timer fires after the first turn past 5 ms, at attempt 128. Counting retries instead (a turn
    // every 1024) let this run go on for half a second past its abort.
    let calls = 0
    const busy: TE.TaskEither<string, never> = () => {
      calls++
      const until = performance.now() + 0.5
      while (performance.now() < until) {
        // busy
      }
      return Promise.resolve(E.left(`error ${calls}`))
    }
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), 5)
    const result = await pipe(busy, retrying(Schedule.forever, { signal: controller.signal }))()
    clearTimeout(timer)
    deepStrictEqual(result, E.left(`error ${calls}`))
    ok(calls >= 10 && calls <= 256, `${calls} calls`)
  })

  it('regression: a clock whose sleeps settle without a timer should still let a timer through', async () => {
    // Waits of 1 ms or more were taken to have gone through a timer, and reset the count towards a turn of the
    // event loop: with this clock the abort's timer never fired and the run never settled.
    const noTimer: Clock.Clock = { now: () => performance.now(), sleep: () => Promise.resolve() }
    // it gives up after two million attempts (a second or so), so that the starved run ends and fails the test
    let calls = 0
    const action: TE.TaskEither<string, string> = () =>
      Promise.resolve(++calls < 2_000_000 ? E.left(`error ${calls}`) : E.right('the abort never came'))
    const rec = recorder<string>()
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), 5)
    const result = await pipe(
      action,
      retrying(Schedule.constant(5), { clock: noTimer, signal: controller.signal, ...rec.hooks })
    )()
    clearTimeout(timer)
    deepStrictEqual(result, E.left(`error ${calls}`))
    deepStrictEqual(
      rec.dones.map((d) => d.reason),
      ['aborted']
    )
  })

  describe('regression: the runner should read the clock as often for a schedule built from a config as for the same schedule built in code', () => {
    /** A clock that counts its reads; each sleep moves its time. */
    const countingClock = (): { readonly clock: Clock.Clock; readonly reads: () => number } => {
      let time = 0
      let reads = 0
      return {
        clock: {
          now: () => (reads++, time),
          sleep: (ms) => {
            time += ms
            return Promise.resolve()
          }
        },
        reads: () => reads
      }
    }
    const readsOf = async (schedule: Schedule.Schedule<unknown>, options: Hooks<unknown>): Promise<number> => {
      const { clock, reads } = countingClock()
      await pipe(flaky(3).action, retrying(schedule, { clock, ...options }))()
      await pipe(failing().action, retrying(schedule, { clock, ...options }))()
      return reads()
    }
    const hooks: ReadonlyArray<readonly [string, Hooks<unknown>]> = [
      ['no hooks', {}],
      ['onRetry', { onRetry: () => undefined }],
      ['onDone', { onDone: () => undefined }]
    ]

    it('Schedule alone: a schedule whose readsTime is false is run without reading the clock', async () => {
      const byHand = pipe(Schedule.exponential(10), Schedule.capped(40), Schedule.intersect(Schedule.recurs(4)))
      const custom = Schedule.make(0, (n: number) => (n < 4 ? Schedule.continueAfter(10, n + 1) : Schedule.done), {
        readsTime: false
      })
      for (const schedule of [byHand, custom]) {
        strictEqual(schedule.readsTime, false)
        strictEqual(await readsOf(schedule, {}), 0)
      }
      // and a hook reads it the same for both
      strictEqual(
        await readsOf(custom, { onRetry: () => undefined }),
        await readsOf(byHand, { onRetry: () => undefined })
      )
    })

    // The config case: ScheduleConfig.parse returns the schedule the same constructors and combinators build in
    // code, with its own readsTime (it used to be a Schedule.make that always read the time).
    const configs: ReadonlyArray<readonly [unknown, Schedule.Schedule<unknown>]> = [
      [
        { exponential: 10, cap: 40, maxRetries: 4 },
        pipe(Schedule.exponential(10), Schedule.capped(40), Schedule.intersect(Schedule.recurs(4)))
      ],
      [
        { constant: 5, jitter: 'full', maxRetries: 3 },
        pipe(Schedule.constant(5), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(3)))
      ],
      [
        { exponential: 10, maxRetries: 4, maxElapsed: 1000 },
        pipe(Schedule.exponential(10), Schedule.intersect(Schedule.recurs(4)), Schedule.upTo(1000))
      ]
    ]
    it.each(configs)(
      'ScheduleConfig.parse(%j): the same readsTime and the same clock reads as the schedule built in code',
      async (config, byHand) => {
        const fromConfig = rightOf(ScheduleConfig.parse(config))
        strictEqual(fromConfig.description, byHand.description)
        strictEqual(fromConfig.readsTime, byHand.readsTime)
        for (const [name, options] of hooks) {
          deepStrictEqual([name, await readsOf(fromConfig, options)], [name, await readsOf(byHand, options)])
        }
        if (!byHand.readsTime) strictEqual(await readsOf(fromConfig, {}), 0)
      }
    )
  })

  it('regression: onDone should not be called when the action rejects, and the run should reject with its error', async () => {
    const boom = new Error('defect')
    const rec = recorder<string>()
    const clock = TestClock.make()
    // a Left, a retry, then a rejection
    let calls = 0
    const action: TE.TaskEither<string, number> = () =>
      ++calls === 1 ? Promise.resolve(E.left('error 1')) : Promise.reject(boom)
    const rejected = rejectsWith(pipe(action, retrying(Schedule.constant(10), { clock, ...rec.hooks }))(), boom)
    await clock.runAll()
    await rejected
    strictEqual(calls, 2)
    strictEqual(rec.retries.length, 1)
    deepStrictEqual(rec.dones, [])
    // a synchronous throw on the first attempt, with each runner
    const thrower = (): never => {
      throw boom
    }
    await rejectsWith(pipe(thrower, retrying(Schedule.constant(10), { clock, ...rec.hooks }))(), boom)
    await rejectsWith(pipe(thrower, retryingWithStatus(Schedule.constant(10), { clock, ...rec.hooks }))(), boom)
    await rejectsWith(
      pipe(
        (_: RetryEnv) => thrower,
        retryingReaderTaskEither(Schedule.constant(10), rec.hooks)
      )({ clock, random: Random.seeded(0) })(),
      boom
    )
    await rejectsWith(
      repeating(Schedule.constant(10), { clock, ...rec.repeatHooks })({ initial: 0, action: thrower, next: () => 0 })(),
      boom
    )
    deepStrictEqual(rec.dones, [])
  })

  describe('regression: an onRetry that returns a promise', () => {
    it('should be awaited before the sleep, which lasts until driver.dueAt: the next attempt comes exactly the delay after the decision', async () => {
      const clock = TestClock.make(1_000)
      const log: Array<string> = []
      const dueAt: Array<number> = []
      // each attempt takes 5 ms; the hook takes 30 ms (a store being written), before a 100 ms delay
      const action: TE.TaskEither<string, number> = async () => {
        log.push(`attempt at ${clock.now()}`)
        await clock.sleep(5)
        return E.left('down')
      }
      const run = pipe(
        action,
        retrying(Schedule.fromDelays([100]), {
          clock,
          onRetry: async ({ delay, driver }) => {
            log.push(`hook at ${clock.now()}: ${delay} ms`)
            dueAt.push(driver.dueAt)
            await clock.sleep(30)
            log.push(`hook done at ${clock.now()}`)
          }
        })
      )()
      await clock.runAll()
      deepStrictEqual(await run, E.left('down'))
      // decided at 1005: due at 1105, and the sleep after the hook is the 70 ms left
      deepStrictEqual(dueAt, [1_105])
      deepStrictEqual(log, ['attempt at 1000', 'hook at 1005: 100 ms', 'hook done at 1035', 'attempt at 1105'])
      deepStrictEqual(clock.sleeps, [5, 30, 70, 5])
    })

    it('should not be slept after when it took longer than the delay: the next attempt comes at once', async () => {
      const clock = TestClock.make()
      const { action, calls } = failing()
      const run = pipe(action, retrying(Schedule.fromDelays([100]), { clock, onRetry: () => clock.sleep(250) }))()
      await clock.runAll()
      deepStrictEqual(await run, E.left('error 2'))
      strictEqual(calls(), 2)
      deepStrictEqual(clock.sleeps, [250])
    })

    it('that rejects should make the run reject with its error, with no sleep and no further attempt', async () => {
      const clock = TestClock.make()
      const { action, calls } = failing()
      const failure = new Error('store unavailable')
      const run = pipe(action, retrying(Schedule.constant(100), { clock, onRetry: () => Promise.reject(failure) }))()
      const rejected = rejectsWith(run, failure)
      await clock.runAll()
      await rejected
      strictEqual(calls(), 1)
      deepStrictEqual(clock.sleeps, [])
      strictEqual(clock.pending, 0)
    })
  })

  describe('regression: the budget', () => {
    /** Every call a budget receives, and what it answered. */
    type BudgetCall =
      | { readonly on: 'success'; readonly attempt: BudgetAttempt }
      | { readonly on: 'failure'; readonly attempt: BudgetAttempt; readonly allowed: boolean }

    /** A budget that answers `answers` in turn (then true), synchronously or with a promise, recording each call. */
    const scripted = (
      answers: ReadonlyArray<boolean>,
      async: boolean
    ): { readonly budget: RetryBudget; readonly calls: Array<BudgetCall> } => {
      const calls: Array<BudgetCall> = []
      let i = 0
      return {
        budget: {
          onSuccess: (attempt) => {
            calls.push({ on: 'success', attempt })
            return async ? Promise.resolve() : undefined
          },
          onFailure: (attempt) => {
            const allowed = answers[i++] ?? true
            calls.push({ on: 'failure', attempt, allowed })
            return async ? Promise.resolve(allowed) : allowed
          }
        },
        calls
      }
    }

    /** Runs `action` under `schedule` with `budget`; returns what the run decided. */
    const decisions = async (schedule: Schedule.Schedule<unknown>, budget: RetryBudget, failures: number) => {
      const clock = TestClock.make()
      const { action, calls } = flaky(failures)
      const rec = recorder<string>()
      const run = pipe(action, retrying(schedule, { clock, budget, ...rec.hooks }))()
      await clock.runAll()
      return {
        result: await run,
        attempts: calls(),
        delays: rec.retries.map((r) => r.delay),
        reasons: rec.dones.map((d) => d.reason),
        sleeps: [...clock.sleeps]
      }
    }

    const schedule = pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(4)))

    it('answered with promises should make the same decisions as answered synchronously', async () => {
      for (const [answers, failures] of [
        [[], 2],
        [[], Infinity],
        [[true, false], Infinity],
        [[false], Infinity],
        [[true, true, false], 2]
      ] as const) {
        const sync = scripted(answers, false)
        const async = scripted(answers, true)
        deepStrictEqual(
          await decisions(schedule, async.budget, failures),
          await decisions(schedule, sync.budget, failures)
        )
        deepStrictEqual(async.calls, sync.calls)
      }
    })

    it('a pending answer should hold the run: no hook, no sleep, no attempt until it comes', async () => {
      for (const answer of [true, false]) {
        const clock = TestClock.make()
        const { action, calls } = failing()
        const rec = recorder<string>()
        let release: (allowed: boolean) => void = () => undefined
        const budget: RetryBudget = {
          onSuccess: () => undefined,
          onFailure: () => new Promise<boolean>((resolve) => (release = resolve))
        }
        const run = pipe(action, retrying(Schedule.fromDelays([10]), { clock, budget, ...rec.hooks }))()
        await clock.runAll()
        await settle()
        deepStrictEqual([calls(), rec.retries.length, clock.sleeps.length, rec.dones.length], [1, 0, 0, 0])
        release(answer)
        await clock.runAll()
        await settle()
        release(true)
        await clock.runAll()
        // a promise is truthy: had it not been awaited, a refusal would have been taken for a yes
        deepStrictEqual(await run, E.left(answer ? 'error 2' : 'error 1'))
        deepStrictEqual(
          rec.dones.map((d) => d.reason),
          [answer ? 'schedule' : 'budget']
        )
      }
    })

    it('a synchronous answer should be acted on at once, before any promise job the budget queued', async () => {
      for (const async of [false, true]) {
        const log: Array<string> = []
        const budget: RetryBudget = {
          onSuccess: () => undefined,
          onFailure: ({ retries }) => {
            if (retries === 0) void Promise.resolve().then(() => log.push('a job the budget queued'))
            return async ? Promise.resolve(true) : true
          }
        }
        const clock = TestClock.make()
        const run = pipe(
          failing().action,
          retrying(Schedule.fromDelays([10]), { clock, budget, onRetry: () => void log.push('onRetry') })
        )()
        await clock.runAll()
        await run
        // a synchronous answer adds no await between the decision and the hook; a promise is awaited first
        deepStrictEqual(log, async ? ['a job the budget queued', 'onRetry'] : ['onRetry', 'a job the budget queued'])
      }
    })

    it('onFailure should be called for every failed attempt, the last included, and onSuccess for the success', async () => {
      // the schedule stops after 2 retries: three failures, the last not retried; each instant, 10 ms apart
      const stopped = scripted([], false)
      await decisions(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(2))), stopped.budget, Infinity)
      deepStrictEqual(stopped.calls, [
        { on: 'failure', attempt: { latency: 0, now: 0, retries: 0, error: 'error 1', retrying: true }, allowed: true },
        {
          on: 'failure',
          attempt: { latency: 0, now: 10, retries: 1, error: 'error 2', retrying: true },
          allowed: true
        },
        {
          on: 'failure',
          attempt: { latency: 0, now: 20, retries: 2, error: 'error 3', retrying: false },
          allowed: true
        }
      ])
      // success on the third attempt
      const succeeded = scripted([], false)
      await decisions(schedule, succeeded.budget, 2)
      deepStrictEqual(
        succeeded.calls.map((c) => c.on),
        ['failure', 'failure', 'success']
      )
      deepStrictEqual(succeeded.calls[2].attempt, {
        latency: 0,
        now: 20,
        retries: 2,
        error: 'error 2',
        retrying: false
      })
      // refused on the second failure: it was told of both
      const refused = scripted([true, false], false)
      const { attempts } = await decisions(schedule, refused.budget, Infinity)
      strictEqual(attempts, 2)
      strictEqual(refused.calls.length, 2)
    })

    it("a refused retry should end the run with its last error and reason 'budget', with no hook and no sleep", async () => {
      for (const async of [false, true]) {
        const { budget } = scripted([true, false], async)
        deepStrictEqual(await decisions(schedule, budget, Infinity), {
          result: E.left('error 2'),
          attempts: 2,
          delays: [10],
          reasons: ['budget'],
          sleeps: [10]
        })
      }
    })
  })
})

describe('regression: an abort during an attempt', () => {
  it('should still tell the budget of the failure, then end with the reason aborted and no decision', async () => {
    const told: Array<BudgetAttempt> = []
    const budget: RetryBudget = {
      onSuccess: () => undefined,
      onFailure: (attempt) => {
        told.push(attempt)
        return true
      }
    }
    const controller = new AbortController()
    const reasons: Array<StopReason> = []
    const failsThenAborts: TE.TaskEither<string, never> = () => {
      controller.abort()
      return Promise.resolve(E.left('down'))
    }
    const result = await pipe(
      failsThenAborts,
      retrying(Schedule.recurs(3), {
        clock: TestClock.make(),
        signal: controller.signal,
        budget,
        onDone: ({ reason }) => reasons.push(reason)
      })
    )()
    deepStrictEqual(result, E.left('down'))
    deepStrictEqual(reasons, ['aborted'])
    deepStrictEqual(told, [{ latency: 0, now: 0, retries: 0, error: 'down', retrying: false }])
  })
})

describe('onEvent', () => {
  const strip = (events: ReadonlyArray<Event.Event>) => events.map(({ run: _, source: __, ...rest }) => rest)

  it('should be told of a withHint hint that was ignored, at the decision, the delay unchanged', async () => {
    const events: Array<Event.Event> = []
    const hints = [-5, Number.NaN, 250]
    let calls = 0
    const failing: TE.TaskEither<number, never> = () => Promise.resolve(E.left(calls++))
    const policy = pipe(
      Schedule.constant(100),
      Schedule.withHint((i: number) => hints[i], { max: 1_000 }),
      Schedule.intersect(Schedule.recurs(3))
    )
    const { result, clock } = await TestClock.run((clock) =>
      pipe(failing, retrying(policy, { clock, onEvent: (e) => void events.push(e) }))
    )
    deepStrictEqual(result, E.left(3))
    // -5 and NaN are ignored (the backoff's 100 ms), 250 is honoured, the fourth failure has no hint (undefined)
    deepStrictEqual(clock.sleeps, [100, 100, 250])
    deepStrictEqual(strip(events.filter((e) => e._tag === 'HintIgnored')), [
      { _tag: 'HintIgnored', at: 0, attempt: 1, hint: -5 },
      { _tag: 'HintIgnored', at: 100, attempt: 2, hint: 'NaN' }
    ])
  })

  it('should tell every attempt, retry and the stop, in order, on the run’s clock, with one run number', async () => {
    const events: Array<Event.Event> = []
    let calls = 0
    const action: TE.TaskEither<string, number> = () =>
      Promise.resolve(++calls < 3 ? E.left(`down ${calls}`) : E.right(7))
    const { clock } = await TestClock.run((clock) =>
      pipe(
        action,
        retrying(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(5))), {
          clock,
          onEvent: (e) => void events.push(e)
        })
      )
    )
    strictEqual(clock.now(), 300)
    strictEqual(new Set(events.map((e) => e.run)).size, 1)
    ok(events.every((e) => e.source === 'retry'))
    deepStrictEqual(strip(events), [
      { _tag: 'AttemptStarted', at: 0, attempt: 1 },
      { _tag: 'AttemptFailed', at: 0, attempt: 1, latency: 0, error: 'down 1' },
      { _tag: 'RetryScheduled', at: 0, attempt: 1, delay: 100 },
      { _tag: 'AttemptStarted', at: 100, attempt: 2 },
      { _tag: 'AttemptFailed', at: 100, attempt: 2, latency: 0, error: 'down 2' },
      { _tag: 'RetryScheduled', at: 100, attempt: 2, delay: 200 },
      { _tag: 'AttemptStarted', at: 300, attempt: 3 },
      { _tag: 'AttemptSucceeded', at: 300, attempt: 3, latency: 0 },
      { _tag: 'RunStopped', at: 300, attempts: 3, elapsed: 300, reason: 'succeeded' }
    ])
    // plain data: a log line is JSON.stringify
    deepStrictEqual(JSON.parse(JSON.stringify(events[2])), events[2])
  })

  it('should tell a timeout as AttemptTimedOut with its error, and a guard’s refusal before the stop', async () => {
    const events: Array<Event.Event> = []
    const hangs: TE.TaskEither<string, never> = () => new Promise(() => undefined)
    const no: Guard.Guard = { reason: 'budget', readsTime: false, admit: (o) => !o.retrying }
    await TestClock.run((clock) =>
      pipe(
        hangs,
        retrying(Schedule.recurs(3), {
          clock,
          guards: [no],
          attemptTimeout: 50,
          onTimeout: () => 'slow',
          onEvent: (e) => void events.push(e)
        })
      )
    )
    deepStrictEqual(strip(events), [
      { _tag: 'AttemptStarted', at: 0, attempt: 1 },
      { _tag: 'AttemptTimedOut', at: 50, attempt: 1, latency: 50, timeout: 50, error: 'slow' },
      { _tag: 'GuardRefused', at: 50, attempt: 1, reason: 'budget' },
      { _tag: 'RunStopped', at: 50, attempts: 1, elapsed: 50, reason: 'budget' }
    ])
  })

  it('should tell every event of a run given a key with that key, a hint ignored and a guard refusal too', async () => {
    const events: Array<Event.Event> = []
    const no: Guard.Guard = { reason: 'rateLimit', readsTime: false, admit: (o) => !o.retrying || o.retries < 1 }
    const failing: TE.TaskEither<string, never> = () => Promise.resolve(E.left('down'))
    const policy = pipe(
      Schedule.constant(100),
      Schedule.withHint(() => -1, { max: 1_000 })
    )
    await TestClock.run((clock) =>
      pipe(failing, retrying(policy, { clock, guards: [no], key: 'tenant-7', onEvent: (e) => void events.push(e) }))
    )
    const once = retryingReaderTaskEither(Schedule.stop, { key: 'tenant-8', onEvent: (e) => void events.push(e) })
    await once(() => failing)({ clock: TestClock.make(), random: Random.seeded(1) })()
    deepStrictEqual(
      events.map((e) => `${e._tag} ${String(e.key)}`),
      [
        'AttemptStarted tenant-7',
        'AttemptFailed tenant-7',
        'HintIgnored tenant-7',
        'RetryScheduled tenant-7',
        'AttemptStarted tenant-7',
        'AttemptFailed tenant-7',
        'HintIgnored tenant-7',
        'GuardRefused tenant-7',
        'RunStopped tenant-7',
        'AttemptStarted tenant-8',
        'AttemptFailed tenant-8',
        'RunStopped tenant-8'
      ]
    )
  })

  it('should give each run its own number', async () => {
    const runs: Array<number> = []
    const retried = retrying(Schedule.stop, { onEvent: (e) => void runs.push(e.run) })
    await pipe(TE.right(1), retried)()
    await pipe(TE.right(1), retried)()
    strictEqual(new Set(runs).size, 2)
  })

  it('should not be needed by Driver.delays, which drops the events', () => {
    const policy = pipe(
      Schedule.constant(100),
      Schedule.withHint(() => -1, { max: 1_000 })
    )
    deepStrictEqual(Driver.delays(policy, { limit: 2 }), [100, 100])
  })
})

describe('regression: attemptTimeout after a run abort', () => {
  it('should still time out an attempt that cannot see its signal (retrying), and end with reason aborted', async () => {
    const clock = TestClock.make()
    const controller = new AbortController()
    const reasons: Array<StopReason> = []
    const hangs: TE.TaskEither<string, never> = () => new Promise(() => undefined)
    const run = pipe(
      hangs,
      retrying(Schedule.recurs(3), {
        clock,
        signal: controller.signal,
        attemptTimeout: 1_000,
        onTimeout: () => 'timeout',
        onDone: ({ reason }) => reasons.push(reason)
      })
    )()
    await clock.advance(10)
    controller.abort()
    await clock.advance(2_000)
    deepStrictEqual(await run, E.left('timeout'))
    deepStrictEqual(reasons, ['aborted'])
    strictEqual(clock.pending, 0)
  })

  it('onEvent alone should see the time (the clock is read for it)', async () => {
    const at: Array<number> = []
    await TestClock.run((clock) =>
      pipe(
        TE.left('down'),
        retrying(
          pipe(
            Schedule.constant(100),
            Schedule.withHint(() => -1, { max: 1_000 }),
            Schedule.intersect(Schedule.recurs(2))
          ),
          { clock, onEvent: (e) => void (e._tag === 'HintIgnored' && at.push(e.at)) }
        )
      )
    )
    // three decisions: the third, which recurs(2) ends, still asked the hint
    deepStrictEqual(at, [0, 100, 200])
  })
})

describe('regression: an upTo inside andThen or union', () => {
  it('should not clamp the attempts of the phase it does not bound (they got 0 ms timeouts)', async () => {
    const clock = TestClock.make()
    let calls = 0
    // each attempt takes 200 ms of the run's clock, then fails
    const slow: TE.TaskEither<string, never> = () => clock.sleep(200).then(() => E.left(`down ${++calls}`))
    const policy = pipe(
      Schedule.constant(100),
      Schedule.upTo(250),
      Schedule.andThen(pipe(Schedule.constant(1_000), Schedule.intersect(Schedule.recurs(2))))
    )
    const run = pipe(slow, retrying(policy, { clock, attemptTimeout: 500, onTimeout: () => 'timeout' }))()
    await clock.runAll()
    // upTo stops the first phase at once (200 + 100 > 250); the second makes two retries with their full 500 ms:
    // none timed out
    deepStrictEqual(await run, E.left('down 3'))
  })
})
