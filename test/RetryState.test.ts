import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import type * as TE from 'fp-ts/TaskEither'
import type { Clock } from '../src/Clock'
import * as Driver from '../src/Driver'
import * as Random from '../src/Random'
import { retrying, retryingWithStatus } from '../src/Retry'
import * as RetryState from '../src/RetryState'
import type { RetryStatus } from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import * as ScheduleConfig from '../src/ScheduleConfig'
import * as TestClock from '../src/TestClock'
import {
  caught,
  deepStrictEqual,
  itThrowsRangeErrors,
  ok,
  rejectsWith,
  rightOf,
  seedArbitrary,
  settle,
  strictEqual,
  type RangeErrorCase
} from './util'
import { type RunContext, planOf, runContextArbitrary, scheduleArbitrary, trace } from './support/schedules'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

/** Through JSON and the codec, as a store would keep it. */
const roundTrip = (state: RetryState.RetryState): RetryState.RetryState => {
  const decoded = RetryState.RetryStateCodec.decode(
    JSON.parse(JSON.stringify(RetryState.RetryStateCodec.encode(state)))
  )
  ok(E.isRight(decoded), `a state did not survive a JSON round trip: ${JSON.stringify(state)}`)
  return decoded.right
}

/** The `Random` a durable caller rebuilds for the next step: the stored position, else a fresh seeded one. */
const randomFor = (state: RetryState.RetryState, seed: number): Random.Random =>
  state.random !== null ? Random.fromState(state.random) : Random.seeded(seed)

interface Stepped {
  readonly delays: ReadonlyArray<number>
  readonly statuses: ReadonlyArray<RetryStatus>
  readonly states: ReadonlyArray<RetryState.RetryState>
  /** Whether the schedule said `Done` (rather than the step limit being reached). */
  readonly done: boolean
}

/**
 * Drives a schedule one step at a time with `RetryState.next`, as a durable worker would: every state goes
 * through JSON before the next step, and the `Random` is rebuilt from it each time. Time is simulated as in
 * `Driver.delays`: each attempt takes `attemptDuration`, the next one starts at `dueAt`.
 */
const stepThrough = <In>(
  schedule: Schedule.Schedule<In>,
  context: { seed: number; input: In; attemptDuration: number },
  limit = 30
): Stepped => {
  const delays: Array<number> = []
  const statuses: Array<RetryStatus> = []
  const states: Array<RetryState.RetryState> = []
  let state = roundTrip(RetryState.start(schedule, 0))
  for (let i = 0; i < limit; i++) {
    const failedAt = state.dueAt + context.attemptDuration
    const step = rightOf(RetryState.next(schedule, state, context.input, failedAt, randomFor(state, context.seed)))
    statuses.push(step.status)
    if (step._tag === 'Done') return { delays, statuses, states, done: true }
    strictEqual(step.state.dueAt, failedAt + step.delay)
    delays.push(step.delay)
    states.push(step.state)
    state = roundTrip(step.state)
  }
  return { delays, statuses, states, done: false }
}

/** An action that always fails (with `"down"`, or `error`), after taking `duration` ms of the clock (if any). */
const failingAfter =
  <E = string>(clock: Clock, duration: number, log?: Array<string>, error: E = 'down' as E) =>
  (status: RetryStatus): TE.TaskEither<E, never> =>
  async () => {
    log?.push(`attempt ${status.iterNumber + 1} at ${clock.now()}`)
    if (duration > 0) await clock.sleep(duration)
    return E.left(error)
  }

/** A jittered schedule whose delays depend on every draw. */
const jittered = pipe(
  Schedule.exponential(100),
  Schedule.capped(2000),
  Schedule.fullJitter,
  Schedule.intersect(Schedule.recurs(8))
)

/** An `onRetry` that stores the run as it is when a retry has been decided: how a run is persisted. */
const saveTo =
  (states: Array<RetryState.RetryState>) =>
  <In>({ driver }: { readonly driver: Driver.Driver<In> }): void =>
    void states.push(driver.snapshot())

/** Runs `schedule` against an always-failing action with a TestClock, recording every persisted state. */
const persistedRun = async <In = unknown>(
  schedule: Schedule.Schedule<In>,
  options: { readonly seed: number; readonly attemptDuration?: number; readonly start?: number; readonly input?: In }
): Promise<{ readonly states: ReadonlyArray<RetryState.RetryState>; readonly sleeps: ReadonlyArray<number> }> => {
  const clock = TestClock.make(options.start ?? 0)
  const states: Array<RetryState.RetryState> = []
  const run = pipe(
    failingAfter(clock, options.attemptDuration ?? 0, undefined, options.input as In),
    retryingWithStatus(schedule, { clock, random: Random.seeded(options.seed), onRetry: saveTo(states) })
  )()
  await clock.runAll()
  await run
  return { states, sleeps: [...clock.sleeps] }
}

const numRuns = 150

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('RetryState', () => {
  describe('start', () => {
    it('should be a run that has not retried, due at once', () => {
      deepStrictEqual(RetryState.start(Schedule.exponential(100), 5000), {
        schedule: 'exponential(100, 2)',
        scheduleState: 100,
        iterNumber: 0,
        cumulativeDelay: 0,
        previousDelay: null,
        startedAt: 5000,
        dueAt: 5000,
        random: null
      })
    })
  })

  describe('RetryStateCodec', () => {
    it('should round-trip, through JSON, every state of real runs of generated schedules', () => {
      fc.assert(
        fc.property(scheduleArbitrary(), runContextArbitrary, (schedule, context) => {
          const { states } = stepThrough(schedule, context)
          for (const state of [RetryState.start(schedule, 0), ...states]) {
            ok(RetryState.RetryStateCodec.is(state))
            const json = JSON.parse(JSON.stringify(RetryState.RetryStateCodec.encode(state))) as unknown
            deepStrictEqual(RetryState.RetryStateCodec.decode(json), E.right(state))
          }
        }),
        { numRuns }
      )
    })

    it('should round-trip the states the runner persists', async () => {
      await fc.assert(
        fc.asyncProperty(scheduleArbitrary({ maxDepth: 2 }), seedArbitrary, async (schedule, seed) => {
          const { states } = await persistedRun(pipe(schedule, Schedule.intersect(Schedule.recurs(10))), {
            seed,
            attemptDuration: 3,
            input: 4
          })
          for (const state of states) deepStrictEqual(roundTrip(state), state)
        }),
        { numRuns: 50 }
      )
    })

    it('decoding garbage should never throw, and fail', () => {
      fc.assert(
        fc.property(
          fc.anything({ withBigInt: true, withNullPrototype: true, withSparseArray: true, withMap: true }),
          (u) => {
            ok(E.isLeft(RetryState.RetryStateCodec.decode(u)))
          }
        ),
        { numRuns: 500 }
      )
      fc.assert(
        fc.property(fc.jsonValue(), (u) => {
          ok(E.isLeft(RetryState.RetryStateCodec.decode(u)))
        }),
        { numRuns: 500 }
      )
    })

    it('a valid state with any one field replaced by garbage should fail to decode, without throwing', () => {
      const valid = stepThrough(jittered, { seed: 3, input: undefined, attemptDuration: 10 }).states[2]
      const fields = Object.keys(valid) as ReadonlyArray<keyof RetryState.RetryState>
      fc.assert(
        fc.property(fc.constantFrom(...fields), fc.anything({ withBigInt: true }), (field, garbage) => {
          const corrupted = { ...valid, [field]: garbage }
          const result = RetryState.RetryStateCodec.decode(corrupted)
          // the only garbage that passes is a value of the field's own type (a JSON value for scheduleState)
          if (E.isRight(result)) ok(RetryState.RetryStateCodec.is(corrupted), JSON.stringify(corrupted))
        }),
        { numRuns: 500 }
      )
    })

    it.each([
      ['a negative iterNumber', { iterNumber: -1 }],
      ['a fractional iterNumber', { iterNumber: 1.5 }],
      ['a negative cumulativeDelay', { cumulativeDelay: -1 }],
      ['an infinite cumulativeDelay', { cumulativeDelay: Infinity }],
      ['a negative previousDelay', { previousDelay: -5 }],
      ['a NaN dueAt', { dueAt: NaN }],
      ['a string startedAt', { startedAt: '2024-01-01' }],
      ['a missing schedule', { schedule: undefined }],
      ['a random state of 3 numbers', { random: [1, 2, 3] }],
      ['an all-zero random state (it would draw 0 forever)', { random: [0, 0, 0, 0] }],
      ['a random state out of 32 bits', { random: [1, 2, 3, 2 ** 31] }],
      ['a fractional random state', { random: [1, 2, 3, 4.5] }],
      ['a scheduleState that is not JSON', { scheduleState: () => 1 }]
    ])('should reject %s', (_, patch) => {
      const valid = stepThrough(jittered, { seed: 3, input: undefined, attemptDuration: 0 }).states[0]
      ok(RetryState.RetryStateCodec.is(valid))
      ok(E.isLeft(RetryState.RetryStateCodec.decode({ ...valid, ...patch })))
    })
  })

  describe('next', () => {
    it('stepping a stored state, JSON round-tripped at every step, should make the delays and decisions of Driver.delays with the same seed', () => {
      fc.assert(
        fc.property(scheduleArbitrary(), runContextArbitrary, (schedule, context: RunContext) => {
          const stepped = stepThrough(schedule, context)
          const expected = Driver.delays(schedule, {
            random: Random.seeded(context.seed),
            input: context.input,
            attemptDuration: context.attemptDuration,
            limit: 30
          })
          deepStrictEqual(stepped.delays, expected)
          // Done exactly where the uninterrupted run stops
          strictEqual(stepped.done, expected.length < 30)
          // and each decision was made with the status of the uninterrupted run
          deepStrictEqual(
            stepped.statuses,
            trace(schedule, planOf(context))
              .map((s) => s.context.status)
              .slice(0, stepped.statuses.length)
          )
        }),
        { numRuns }
      )
    })

    it('should store the state the runner persists, step for step, for the same seed and attempt times', async () => {
      await fc.assert(
        fc.asyncProperty(
          scheduleArbitrary({ maxDepth: 2 }),
          seedArbitrary,
          fc.constantFrom(0, 5, 20),
          fc.integer({ min: 0, max: 10 }),
          async (s, seed, attemptDuration, input) => {
            const schedule = pipe(s, Schedule.intersect(Schedule.recurs(12)))
            const { states } = await persistedRun(schedule, { seed, attemptDuration, input })
            deepStrictEqual(stepThrough(schedule, { seed, input, attemptDuration }).states, states)
          }
        ),
        { numRuns: 50 }
      )
    })

    it('should answer Done with the status of the last decision when the schedule stops', () => {
      const schedule = Schedule.fromDelays([100])
      const first = rightOf(RetryState.next(schedule, RetryState.start(schedule, 0), 'e', 10, Random.live))
      ok(first._tag === 'Scheduled')
      deepStrictEqual(first.state.dueAt, 110)
      const second = RetryState.next(schedule, first.state, 'e', 130, Random.live)
      deepStrictEqual(
        second,
        E.right<Driver.ScheduleMismatch, RetryState.Step>({
          _tag: 'Done',
          status: { iterNumber: 1, elapsed: 130, cumulativeDelay: 100, previousDelay: O.some(100) }
        })
      )
    })

    it('should not change the state it is given', () => {
      const state = RetryState.start(jittered, 0)
      const copy = JSON.parse(JSON.stringify(state)) as RetryState.RetryState
      RetryState.next(jittered, state, undefined, 10, Random.seeded(1))
      deepStrictEqual(state, copy)
    })

    it('regression (issue 18, defect 8): should answer an InvalidState for a scheduleState the codec passes but the schedule never makes', () => {
      const schedule = Schedule.recurs(3)
      for (const bad of [{}, 'abc', -1e9]) {
        const stored = rightOf(
          RetryState.RetryStateCodec.decode({ ...RetryState.start(schedule, 0), scheduleState: bad })
        )
        const result = RetryState.next(schedule, stored, 'e', 10, Random.live)
        ok(E.isLeft(result) && result.left instanceof Driver.InvalidState)
      }
    })
  })

  describe('times that are not finite numbers', () => {
    itThrowsRangeErrors(
      [NaN, Infinity, -Infinity].flatMap(
        (time): ReadonlyArray<RangeErrorCase> => [
          [
            `start(schedule, ${time})`,
            () => RetryState.start(Schedule.stop, time),
            new RegExp(`^RetryState\\.start: startedAt must be a finite number, received ${time}$`)
          ],
          [
            `next(schedule, state, input, ${time}, random)`,
            () => RetryState.next(Schedule.stop, RetryState.start(Schedule.stop, 0), undefined, time, Random.live),
            new RegExp(`^RetryState\\.next: now must be a finite number, received ${time}$`)
          ]
        ]
      )
    )
  })

  describe('Driver.ScheduleMismatch', () => {
    const parse = (config: unknown): Schedule.Schedule<unknown> => rightOf(ScheduleConfig.parse(config))
    const before = parse({ exponential: '100ms', maxRetries: 5 })
    const after = parse({ exponential: '100ms', maxRetries: 6 }) // the config changed while the run was stored
    const stored = (): RetryState.RetryState => {
      const step = rightOf(RetryState.next(before, RetryState.start(before, 0), 'e', 0, Random.seeded(1)))
      ok(step._tag === 'Scheduled', 'expected a retry')
      return roundTrip(step.state)
    }

    const isMismatch = (e: unknown): void => {
      ok(e instanceof Driver.ScheduleMismatch, `expected a ScheduleMismatch, received ${String(e)}`)
      ok(e instanceof Error)
      strictEqual(e._tag, 'ScheduleMismatch')
      strictEqual(e.name, 'ScheduleMismatch')
      strictEqual(e.expected, after.description)
      strictEqual(e.found, before.description)
      ok(before.description !== after.description)
      strictEqual(
        e.message,
        `Driver: the stored run belongs to the schedule ${before.description}, not to ${after.description}`
      )
    }

    it('Driver.restore should accept the same schedule rebuilt from the same config, and refuse a changed one', () => {
      const state = stored()
      deepStrictEqual(rightOf(Driver.restore(parse({ maxRetries: 5, exponential: 100 }), state)).snapshot(), state)
      const restored = Driver.restore(after, state)
      ok(E.isLeft(restored))
      isMismatch(restored.left)
    })

    it('next should refuse a changed schedule without stepping it', () => {
      const result = RetryState.next(after, stored(), 'e', 200, Random.seeded(1))
      ok(E.isLeft(result))
      isMismatch(result.left)
    })

    it('the runner should reject a resume with a changed schedule, making no attempt and no sleep', async () => {
      let calls = 0
      const clock = TestClock.make()
      const action: TE.TaskEither<string, string> = async () => {
        calls++
        return E.left('e')
      }
      isMismatch(await caught(() => pipe(action, retrying(after, { clock, resume: stored() }))()))
      deepStrictEqual(calls, 0)
      deepStrictEqual(clock.sleeps, [])
    })

    it('should tell apart hand-built schedules that differ only in a parameter', () => {
      const state = RetryState.start(Schedule.exponential(100), 0)
      ok(E.isRight(Driver.restore(Schedule.exponential(100), state)))
      ok(E.isLeft(Driver.restore(Schedule.exponential(100, 3), state)))
      ok(E.isLeft(Driver.restore(pipe(Schedule.exponential(100), Schedule.capped(1000)), state)))
    })
  })

  describe('the runner: an onRetry that saves driver.snapshot()', () => {
    it('should be awaited before each sleep, and the sleep should end when the stored state says the attempt is due', async () => {
      const clock = TestClock.make()
      const log: Array<string> = []
      const logged: Clock = {
        now: clock.now,
        sleep: (ms, signal) => {
          log.push(`sleep ${ms} at ${clock.now()}`)
          return clock.sleep(ms, signal)
        }
      }
      // a store that takes 50 ms (of the test clock) to write
      const save = async (state: RetryState.RetryState): Promise<void> => {
        log.push(`save due ${state.dueAt} at ${clock.now()}`)
        await clock.sleep(50)
        log.push(`saved at ${clock.now()}`)
      }
      const run = pipe(
        failingAfter(clock, 0, log),
        retryingWithStatus(Schedule.fromDelays([100, 200]), {
          clock: logged,
          onRetry: ({ driver }) => save(driver.snapshot())
        })
      )()
      await settle()
      // the first attempt failed; the store is writing; the run has not gone to sleep
      deepStrictEqual(log, ['attempt 1 at 0', 'save due 100 at 0'])
      deepStrictEqual(clock.sleeps, [50])
      await clock.runAll()
      deepStrictEqual(await run, E.left('down'))
      deepStrictEqual(log, [
        'attempt 1 at 0',
        'save due 100 at 0',
        'saved at 50',
        // the stored state says the attempt is due at 100: the 50 ms the store took are not slept again
        'sleep 50 at 50',
        'attempt 2 at 100',
        'save due 300 at 100',
        'saved at 150',
        'sleep 150 at 150',
        'attempt 3 at 300'
      ])
      deepStrictEqual(clock.sleeps, [50, 50, 50, 150])
    })

    it('should not retry until a save that never settles does, then retry at once if overdue', async () => {
      const clock = TestClock.make()
      let release: () => void = () => undefined
      const saved: Array<RetryState.RetryState> = []
      const log: Array<string> = []
      const run = pipe(
        failingAfter(clock, 0, log),
        retryingWithStatus(Schedule.fromDelays([100]), {
          clock,
          onRetry: ({ driver }) =>
            new Promise<void>((resolve) => {
              saved.push(driver.snapshot())
              release = resolve
            })
        })
      )()
      await clock.runAll()
      await clock.advance(10_000)
      deepStrictEqual(saved.length, 1)
      deepStrictEqual(log, ['attempt 1 at 0'])
      deepStrictEqual(clock.sleeps, [])
      release()
      await clock.runAll()
      // due at 100, now 10 000: no sleep left
      deepStrictEqual(clock.sleeps, [])
      deepStrictEqual(log, ['attempt 1 at 0', 'attempt 2 at 10000'])
      deepStrictEqual(await run, E.left('down'))
    })

    it('should save states whose dueAt = now + delay, with the count, the sums and the seeded position', async () => {
      const clock = TestClock.make(1000)
      const states: Array<RetryState.RetryState> = []
      const delays: Array<number> = []
      const run = pipe(
        failingAfter(clock, 30),
        retryingWithStatus(jittered, {
          clock,
          random: Random.seeded(9),
          onRetry: ({ delay, driver }) => {
            delays.push(delay)
            states.push(driver.snapshot())
          }
        })
      )()
      await clock.runAll()
      await run
      deepStrictEqual(delays, Driver.delays(jittered, { random: Random.seeded(9) }))
      let failedAt = 1000 + 30
      let cumulative = 0
      states.forEach((state, i) => {
        cumulative += delays[i]
        deepStrictEqual(state.dueAt, failedAt + delays[i])
        deepStrictEqual(state.iterNumber, i + 1)
        deepStrictEqual(state.startedAt, 1000)
        deepStrictEqual(state.previousDelay, delays[i])
        ok(
          Math.abs(state.cumulativeDelay - cumulative) < 1e-9,
          `cumulativeDelay ${state.cumulativeDelay}, expected ${cumulative}`
        )
        deepStrictEqual(state.schedule, jittered.description)
        // the position of the seeded generator after this decision: the next draw is the next decision's
        const replay = Random.seeded(9)
        for (let k = 0; k <= i; k++) replay.next()
        deepStrictEqual(state.random, replay.getState())
        failedAt = state.dueAt + 30
      })
      deepStrictEqual(states.length, 8)
    })

    it('a save that rejects should make the run reject with its error, before any sleep', async () => {
      const clock = TestClock.make()
      const failure = new Error('disk full')
      const run = pipe(
        failingAfter(clock, 0),
        retryingWithStatus(Schedule.constant(100), { clock, onRetry: () => Promise.reject(failure) })
      )()
      await rejectsWith(run, failure)
      deepStrictEqual(clock.sleeps, [])
    })
  })

  describe('the runner: resume', () => {
    it('should wait until dueAt: the first sleep is the remaining wait, then the schedule goes on', async () => {
      const schedule = Schedule.fromDelays([100, 200, 400])
      const { states, sleeps } = await persistedRun(schedule, { seed: 1 })
      deepStrictEqual(sleeps, [100, 200, 400])
      const stored = roundTrip(states[1]) // after attempt 2 failed: attempt 3 due at 300
      deepStrictEqual(stored.dueAt, 300)
      // a new process starts at t = 250: 50 ms to go
      const clock = TestClock.make(250)
      const log: Array<string> = []
      const run = pipe(failingAfter(clock, 0, log), retryingWithStatus(schedule, { clock, resume: stored }))()
      await clock.runAll()
      deepStrictEqual(await run, E.left('down'))
      deepStrictEqual(clock.sleeps, [50, 400])
      deepStrictEqual(log, ['attempt 3 at 300', 'attempt 4 at 700'])
    })

    it('should make the attempt at once when dueAt has passed', async () => {
      const schedule = Schedule.fromDelays([100, 200])
      const { states } = await persistedRun(schedule, { seed: 1 })
      const clock = TestClock.make(5000)
      const log: Array<string> = []
      const run = pipe(failingAfter(clock, 0, log), retryingWithStatus(schedule, { clock, resume: states[0] }))()
      await clock.runAll()
      await run
      deepStrictEqual(clock.sleeps, [200])
      deepStrictEqual(log, ['attempt 2 at 5000', 'attempt 3 at 5200'])
    })

    it('should restore the seeded Random from the stored state: the remaining delays are those of the uninterrupted run', async () => {
      await fc.assert(
        fc.asyncProperty(seedArbitrary, fc.integer({ min: 0, max: 7 }), async (seed, k) => {
          const uninterrupted = await persistedRun(jittered, { seed })
          const stored = roundTrip(uninterrupted.states[k])
          const clock = TestClock.make(stored.dueAt)
          const run = pipe(failingAfter(clock, 0), retryingWithStatus(jittered, { clock, resume: stored }))()
          await clock.runAll()
          await run
          deepStrictEqual(clock.sleeps, uninterrupted.sleeps.slice(k + 1))
        }),
        { numRuns: 50 }
      )
    })

    it('should use the random option when one is given, instead of the stored position', async () => {
      const uninterrupted = await persistedRun(jittered, { seed: 5 })
      const clock = TestClock.make(uninterrupted.states[2].dueAt)
      const run = pipe(
        failingAfter(clock, 0),
        retryingWithStatus(jittered, { clock, resume: uninterrupted.states[2], random: Random.fixed(0) })
      )()
      await clock.runAll()
      await run
      // full jitter drawing 0 makes every remaining delay 0, which skips the clock; the stored position would not
      deepStrictEqual(clock.sleeps, [])
      ok(uninterrupted.sleeps.slice(3).every((d) => d > 0))
    })

    it('should continue the count: iterNumber, cumulativeDelay and elapsed from the original startedAt', async () => {
      const schedule = Schedule.fromDelays([100, 200, 400])
      const { states } = await persistedRun(schedule, { seed: 1, start: 10_000 })
      const stored = roundTrip(states[1]) // attempt 3 due at 10_300
      // the process was down: it comes back at 20_000
      const clock = TestClock.make(20_000)
      const seen: Array<RetryStatus> = []
      const retries: Array<RetryStatus> = []
      const done: Array<RetryStatus> = []
      const run = pipe(
        (status: RetryStatus) => {
          seen.push(status)
          return failingAfter(clock, 0)(status)
        },
        retryingWithStatus(schedule, {
          clock,
          resume: stored,
          onRetry: ({ status }) => retries.push(status),
          onDone: ({ status }) => done.push(status)
        })
      )()
      await clock.runAll()
      await run
      deepStrictEqual(seen, [
        { iterNumber: 2, elapsed: 10_000, cumulativeDelay: 300, previousDelay: O.some(200) },
        { iterNumber: 3, elapsed: 10_400, cumulativeDelay: 700, previousDelay: O.some(400) }
      ])
      deepStrictEqual(retries, [{ iterNumber: 2, elapsed: 10_000, cumulativeDelay: 300, previousDelay: O.some(200) }])
      deepStrictEqual(done, [{ iterNumber: 3, elapsed: 10_400, cumulativeDelay: 700, previousDelay: O.some(400) }])
    })

    it('upTo should count the time the process was down', async () => {
      const schedule = pipe(Schedule.constant(100), Schedule.upTo(1000))
      const uninterrupted = await persistedRun(schedule, { seed: 1 })
      deepStrictEqual(uninterrupted.sleeps, [100, 100, 100, 100, 100, 100, 100, 100, 100, 100])
      const stored = roundTrip(uninterrupted.states[1]) // attempt 3 due at 200
      // back at 800: attempt 3 at 800, then retries at 900 and 1000 fit in the second, 1100 does not
      const clock = TestClock.make(800)
      const run = pipe(failingAfter(clock, 0), retryingWithStatus(schedule, { clock, resume: stored }))()
      await clock.runAll()
      await run
      deepStrictEqual(clock.sleeps, [100, 100])
      deepStrictEqual(clock.now(), 1000)
    })

    it('should end with the Right of the resumed attempt, with onDone seeing the continued count', async () => {
      const schedule = Schedule.fromDelays([100, 200, 400])
      const { states } = await persistedRun(schedule, { seed: 1 })
      const clock = TestClock.make(0)
      const done: Array<readonly [number, string]> = []
      const run = pipe(
        (status: RetryStatus): TE.TaskEither<string, number> =>
          () =>
            Promise.resolve(E.right(status.iterNumber + 1)),
        retryingWithStatus(schedule, {
          clock,
          resume: states[1],
          onDone: ({ status, reason }) => done.push([status.iterNumber, reason])
        })
      )()
      await clock.runAll()
      deepStrictEqual(await run, E.right(3))
      deepStrictEqual(done, [[2, 'succeeded']])
    })

    it('resumed and saving, should save the same states as the uninterrupted run', async () => {
      const uninterrupted = await persistedRun(jittered, { seed: 77, attemptDuration: 10 })
      const k = 3
      const stored = roundTrip(uninterrupted.states[k])
      const clock = TestClock.make(stored.dueAt)
      const states: Array<RetryState.RetryState> = []
      const run = pipe(
        failingAfter(clock, 10),
        retryingWithStatus(jittered, { clock, resume: stored, onRetry: saveTo(states) })
      )()
      await clock.runAll()
      await run
      deepStrictEqual(states, uninterrupted.states.slice(k + 1))
    })

    it('an abort during the wait should make the task reject with the signal reason, making no attempt', async () => {
      const schedule = Schedule.fromDelays([100, 200])
      const { states } = await persistedRun(schedule, { seed: 1 })
      const clock = TestClock.make(0)
      const controller = new AbortController()
      let calls = 0
      const action: TE.TaskEither<string, string> = async () => {
        calls++
        return E.left('e')
      }
      const run = pipe(action, retrying(schedule, { clock, resume: states[0], signal: controller.signal }))()
      await settle()
      deepStrictEqual(clock.sleeps, [100])
      const reason = new Error('shutting down')
      controller.abort(reason)
      await rejectsWith(run, reason)
      deepStrictEqual(calls, 0)
    })
  })
})
