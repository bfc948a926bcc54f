/**
 * A `Driver` is the one interpreter of a `Schedule`: feed it an input and the time, it answers the next delay (or
 * that the schedule stopped) and keeps the run's bookkeeping (retries made, time slept, the previous delay).
 * Snapshot it to a plain `RetryState` and restore it from one to carry a run across a restart.
 *
 * `Driver.delays`, `RetryState.next`, `Contention` and every runner make their decisions through a `Driver`,
 * so a decision is made one way everywhere. A driver keeps its working state in place: stepping the common
 * schedules allocates nothing, and JSON is produced only by `snapshot`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const driver = Driver.make(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(2))), { start: 0 })
 * assert.strictEqual(driver.advance('busy', 10), 100) // retry at 110
 * assert.strictEqual(driver.advance('busy', 120), 200)
 * assert.strictEqual(driver.advance('busy', 330), -1) // stopped: two retries made
 * assert.strictEqual(driver.iterNumber, 2)
 *
 * @since 1.0.0
 */
import * as E from 'fp-ts/Either'
import * as O from 'fp-ts/Option'
import type { Cursor, Json, RetryState, Schedule, ScheduleEvent, StepContext, Stepper } from './internal/model'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import * as Random from './Random'
import * as RetryStatus from './RetryStatus'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A run of a schedule in progress.
 *
 * **Details**
 *
 * - `advance(input, now)` asks the schedule about `input` at time `now`: it answers the delay in ms before the
 *   next attempt, or `-1` when the schedule stops (a number rather than an `Option`, so that the hot loop of a
 *   runner allocates nothing). On a retry it counts it, adds the delay to `cumulativeDelay`, and sets
 *   `dueAt = now + delay`. Once stopped, a driver stays stopped (`done`).
 * - `status` is the {@link RetryStatus.RetryStatus} the latest decision of this driver was made with (what hooks
 *   report), `RetryStatus.initial` before its first one, a restored driver included (a `RetryState` keeps the
 *   run's counts, not the status of its last decision); `statusAt(now)` the status at `now`, as the next decision
 *   would see it.
 * - `snapshot()` is the run as a plain {@link RetryState}, due at `dueAt`, with the position of a seeded
 *   `random`; {@link restore} goes on from it. It is meant for a run that will retry: a `RetryState` does not
 *   record that a schedule stopped, so a snapshot taken after `done` restores a driver that steps again.
 * - A driver also serves as the {@link Cursor} its schedule's stepper reads (`input`, `now`, `elapsed`, ...).
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as O from 'fp-ts/Option'
 * import * as assert from 'assert'
 *
 * const driver = Driver.make(Schedule.fromDelays([50, 80]), { start: 1000 })
 * driver.advance(new Error('timeout'), 1010)
 * assert.deepStrictEqual(driver.status, { iterNumber: 0, elapsed: 10, cumulativeDelay: 0, previousDelay: O.none })
 * assert.deepStrictEqual(driver.statusAt(1070), { iterNumber: 1, elapsed: 70, cumulativeDelay: 50, previousDelay: O.some(50) })
 * assert.strictEqual(driver.dueAt, 1060)
 *
 * @category model
 * @since 1.0.0
 */
export interface Driver<In> extends Cursor<In> {
  readonly schedule: Schedule<In>
  /** When the run started: its first attempt, in ms on the run's clock. */
  readonly start: number
  readonly previousDelay: O.Option<number>
  /** When the next attempt is due: the start, until a retry is decided. */
  readonly dueAt: number
  /** Whether the schedule has stopped. */
  readonly done: boolean
  readonly status: RetryStatus.RetryStatus
  readonly statusAt: (now: number) => RetryStatus.RetryStatus
  readonly advance: (input: In, now: number) => number
  readonly snapshot: () => RetryState
}

/**
 * Options of {@link make}: when the run started (default 0) and where its draws come from (default `Random.live`).
 *
 * @example
 * import type { DriverOptions } from 'fp-ts-retry/Driver'
 * import * as Random from 'fp-ts-retry/Random'
 *
 * const options: DriverOptions = { start: Date.now(), random: Random.seeded(7) }
 *
 * @category model
 * @since 1.0.0
 */
export interface DriverOptions {
  readonly start?: number | undefined
  readonly random?: Random.Random | undefined
  /** Told of what the schedule reports while deciding (see `Schedule.ScheduleEvent`). Default: nothing is told. */
  readonly onEvent?: ((event: ScheduleEvent) => void) | undefined
}

/**
 * A stored run that belongs to another schedule: its `description` differs from the schedule given now.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const stored = Driver.make(Schedule.recurs(3)).snapshot()
 * const restored = Driver.restore(Schedule.recurs(4), stored)
 * assert.ok(restored._tag === 'Left' && restored.left instanceof Driver.ScheduleMismatch)
 *
 * @category model
 * @since 0.1.0
 */
export class ScheduleMismatch extends Error {
  /**
   * The tag that tells this error apart in a union of errors.
   *
   * @since 0.1.0
   */
  readonly _tag = 'ScheduleMismatch'
  constructor(
    /** The description of the schedule given now. */
    readonly expected: string,
    /** The description stored with the state. */
    readonly found: string
  ) {
    super(`Driver: the stored run belongs to the schedule ${found}, not to ${expected}`)
    this.name = 'ScheduleMismatch'
  }
}

/**
 * A stored run of the right schedule whose `scheduleState` that schedule never makes (`Schedule.isState` refuses
 * it): a state tampered with, or written by a version of the schedule that kept another state.
 *
 * **Details**
 *
 * Going on from such a state could retry for ever at 0 ms (a `recurs(3)` restored from `"abc"`) or throw deep in
 * a run; `Driver.restore` refuses it instead.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const stored = { ...Driver.make(Schedule.recurs(3)).snapshot(), scheduleState: 'abc' }
 * const restored = Driver.restore(Schedule.recurs(3), stored)
 * assert.ok(restored._tag === 'Left' && restored.left instanceof Driver.InvalidState)
 * assert.strictEqual(restored.left.message, 'Driver: the stored state "abc" is not a state of the schedule recurs(3)')
 *
 * @category model
 * @since 1.0.0
 */
export class InvalidState extends Error {
  /**
   * The tag that tells this error apart in a union of errors.
   *
   * @since 1.0.0
   */
  readonly _tag = 'InvalidState'
  constructor(
    /** The description of the schedule. */
    readonly schedule: string,
    /** The stored state it refused. */
    readonly state: Json
  ) {
    super(`Driver: the stored state ${showValue(state)} is not a state of the schedule ${schedule}`)
    this.name = 'InvalidState'
  }
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** Read once: a load from another module's exports at each step is measurable in a tight loop. */
const MAX_DELAY = validate.MAX_DELAY

const hasState = (random: Random.Random): random is Random.SeededRandom =>
  'getState' in random && typeof random.getState === 'function'

class Run<In> implements Driver<In> {
  input = undefined as In
  now: number
  iterNumber = 0
  cumulativeDelay = 0
  dueAt: number
  done = false
  /** The previous delay, NaN before the first retry: an `Option` is built only when someone asks. */
  private previous = NaN
  /** Whether a decision was made here, and the sums it was made with (its count and time follow from `done`). */
  private decided = false
  private decidedCumulative = 0
  private decidedPrevious = NaN
  private readonly stepper: Stepper<In>
  /**
   * The stepper's `next`, read once: `this.stepper.next` would be read at each step through a property access that
   * sees every stepper class of the process (megamorphic, a lookup each time); a call of a function held here is not.
   */
  private readonly step: Stepper<In>['next']

  constructor(
    readonly schedule: Schedule<In>,
    readonly start: number,
    readonly random: Random.Random,
    state: Schedule<In>['initial'],
    private readonly onEvent: DriverOptions['onEvent']
  ) {
    this.stepper = schedule.stepper(state)
    this.step = this.stepper.next
    this.now = start
    this.dueAt = start
  }

  get elapsed(): number {
    return this.now - this.start
  }

  get previousDelay(): O.Option<number> {
    return Number.isNaN(this.previous) ? O.none : O.some(this.previous)
  }

  get status(): RetryStatus.RetryStatus {
    return this.decided
      ? statusOf(
          this.done ? this.iterNumber : this.iterNumber - 1,
          this.now - this.start,
          this.decidedCumulative,
          this.decidedPrevious
        )
      : RetryStatus.initial
  }

  statusAt(now: number): RetryStatus.RetryStatus {
    return statusOf(this.iterNumber, now - this.start, this.cumulativeDelay, this.previous)
  }

  report(event: ScheduleEvent): void {
    this.onEvent?.(event)
  }

  context(): StepContext<In> {
    return {
      input: this.input,
      status: this.statusAt(this.now),
      now: this.now,
      dueAt: this.dueAt,
      random: this.random
    }
  }

  advance(input: In, now: number): number {
    if (this.done) return -1
    // the hot path's own test of validate.finite's rule (NaN - NaN and Infinity - Infinity are NaN), which the
    // cold path calls for its error
    if (typeof now !== 'number' || now - now !== 0) validate.finite('Driver.advance', 'now', now)
    this.input = input
    this.now = now + 0 // -0 becomes 0
    this.decidedCumulative = this.cumulativeDelay
    this.decidedPrevious = this.previous
    const delay = this.step.call(this.stepper, this)
    if (typeof delay !== 'number' || !(delay <= MAX_DELAY)) badDelay(this.schedule, delay)
    this.decided = true
    if (delay < 0) {
      // -1 is the stepper's stop; any other negative number is a delay gone wrong, not a stop
      if (delay !== -1) badDelay(this.schedule, delay)
      this.done = true
      return -1
    }
    this.iterNumber++
    this.cumulativeDelay += delay
    this.previous = delay + 0 // -0 becomes 0
    this.dueAt = now + delay
    return this.previous
  }

  snapshot(): RetryState {
    return {
      schedule: this.schedule.description,
      scheduleState: this.stepper.state(),
      iterNumber: this.iterNumber,
      cumulativeDelay: this.cumulativeDelay,
      previousDelay: Number.isNaN(this.previous) ? null : this.previous,
      startedAt: this.start,
      dueAt: this.dueAt,
      random: hasState(this.random) ? [...this.random.getState()] : null
    }
  }

  /** Goes on from a stored run's bookkeeping. */
  resume(state: RetryState): this {
    this.iterNumber = validate.count('Driver.restore', 'state.iterNumber', state.iterNumber)
    this.cumulativeDelay = validate.duration('Driver.restore', 'state.cumulativeDelay', state.cumulativeDelay)
    this.previous =
      state.previousDelay === null
        ? NaN
        : validate.duration('Driver.restore', 'state.previousDelay', state.previousDelay)
    this.dueAt = validate.finite('Driver.restore', 'state.dueAt', state.dueAt)
    return this
  }
}

/** Whether `schedule` can go on from `state`: a check that throws (a user's) refuses it. */
const isStateOf = (schedule: Schedule<never>, state: Json): boolean => {
  try {
    return schedule.isState(state) === true
  } catch {
    return false
  }
}

/** Out of `advance`, so that its message does not make `advance` too big to inline into a runner's loop. */
const badDelay = (schedule: Schedule<never>, delay: unknown): never => {
  throw new RangeError(
    `Driver: the schedule ${schedule.description} answered the delay ${showValue(delay)}; ` +
      `a delay must be a finite number of ms in [0, ${validate.MAX_DELAY}]`
  )
}

const statusOf = (
  iterNumber: number,
  elapsed: number,
  cumulativeDelay: number,
  previous: number
): RetryStatus.RetryStatus =>
  iterNumber === 0 && elapsed === 0
    ? RetryStatus.initial
    : {
        iterNumber,
        elapsed,
        cumulativeDelay,
        previousDelay: Number.isNaN(previous) ? O.none : O.some(previous)
      }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Starts a run of `schedule` at `options.start` (default 0), drawing from `options.random` (default `Random.live`).
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const driver = Driver.make(Schedule.recurs(1))
 * assert.strictEqual(driver.advance(undefined, 0), 0)
 * assert.strictEqual(driver.advance(undefined, 0), -1)
 * assert.ok(driver.done)
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = <In>(schedule: Schedule<In>, options: DriverOptions = {}): Driver<In> => {
  validate.stepping('Driver.make', 'schedule', schedule)
  const start = validate.finite('Driver.make', 'options.start', options.start ?? 0)
  return new Run(schedule, start, options.random ?? Random.live, schedule.initial, options.onEvent)
}

/**
 * Goes on with a stored run: the driver `state` was snapshot from, as it was then.
 *
 * **Details**
 *
 * - The state must come from the same schedule (same `description`), else a `Left` of {@link ScheduleMismatch}, and
 *   its `scheduleState` must be one that schedule makes (`schedule.isState`), else a `Left` of {@link InvalidState}:
 *   a tampered state is refused, never a run that retries for ever at 0 ms or throws later.
 * - `onEvent` is told of what the schedule reports, as with {@link make}.
 * - Draws come from `random` when given; else from the stored position of a seeded generator (so a resumed run
 *   draws what an uninterrupted one would); else from `Random.live`.
 * - A stored state with impossible bookkeeping (a negative count, a NaN time) is a `RangeError`: decode stored
 *   data with `RetryState.RetryStateCodec` first.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const schedule = pipe(Schedule.exponential(100), Schedule.fullJitter)
 * const original = Driver.make(schedule, { random: Random.seeded(3) })
 * original.advance('e', 0)
 * const copy = Driver.restore(schedule, original.snapshot())
 * assert.ok(copy._tag === 'Right')
 * // the copy makes the decision the original makes
 * assert.strictEqual(copy.right.advance('e', 500), original.advance('e', 500))
 *
 * @category constructors
 * @since 1.0.0
 */
export const restore = <In>(
  schedule: Schedule<In>,
  state: RetryState,
  random?: Random.Random,
  onEvent?: DriverOptions['onEvent']
): E.Either<ScheduleMismatch | InvalidState, Driver<In>> => {
  validate.implementing('Driver.restore', 'schedule', 'a Schedule', ['stepper', 'isState'], schedule)
  if (state.schedule !== schedule.description) return E.left(new ScheduleMismatch(schedule.description, state.schedule))
  if (!isStateOf(schedule, state.scheduleState))
    return E.left(new InvalidState(schedule.description, state.scheduleState))
  const start = validate.finite('Driver.restore', 'state.startedAt', state.startedAt)
  const draws = random ?? (state.random === null ? Random.live : Random.fromState(state.random))
  return E.right(new Run(schedule, start, draws, state.scheduleState, onEvent).resume(state))
}

// -------------------------------------------------------------------------------------
// a dry run
// -------------------------------------------------------------------------------------

/**
 * Options of {@link delays}.
 *
 * @example
 * import type { DelaysOptions } from 'fp-ts-retry/Driver'
 *
 * const options: DelaysOptions<Error> = { limit: 10, input: new Error('timeout'), attemptDuration: 20 }
 *
 * @category interpreters
 * @since 1.0.0
 */
export interface DelaysOptions<In> {
  /** The most delays to produce, for schedules that never stop. Default 100. */
  readonly limit?: number | undefined
  /** Where jitter draws from. Default: a fresh `Random.seeded(0)`, so the result is the same on every call. */
  readonly random?: Random.Random | undefined
  /** The input every step sees (for `retrying`, the error). Default `undefined`. */
  readonly input?: In | undefined
  /** How long each attempt takes, in ms, for `upTo`-style limits. Default 0. */
  readonly attemptDuration?: number | undefined
}

// Seeded on first use: most schedules draw nothing, and building a generator costs more than stepping them.
class DefaultRandom implements Random.Random {
  private random: Random.Random | undefined = undefined
  next(): number {
    return (this.random ??= Random.seeded(0)).next()
  }
}

/**
 * The delays a schedule would sleep through a run of failures, until it stops or `limit` is reached.
 *
 * **Details**
 *
 * Pure and synchronous (it was `Driver.delays`: interpreting a schedule is this module's job, not the
 * algebra's): time is simulated (starting at 0, advancing by `attemptDuration` per attempt and by each
 * delay), nothing sleeps. The runner makes the same decisions with the same inputs, clock readings and draws.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.upTo(1000))
 * assert.deepStrictEqual(Driver.delays(s), [100, 200, 400])
 * // with 150 ms attempts, the third retry would start at 750 + 400 > 1000 ms: stop
 * assert.deepStrictEqual(Driver.delays(s, { attemptDuration: 150 }), [100, 200])
 *
 * @category interpreters
 * @since 1.0.0
 */
export const delays = <In>(schedule: Schedule<In>, options: DelaysOptions<In> = {}): ReadonlyArray<number> => {
  validate.stepping('Driver.delays', 'schedule', schedule)
  validate.object('Driver.delays', 'options', options)
  const limit = validate.count('Driver.delays', 'limit', validate.orDefault(options.limit, 100))
  const attemptDuration = validate.duration(
    'Driver.delays',
    'attemptDuration',
    validate.orDefault(options.attemptDuration, 0)
  )
  if (options.random !== undefined) validate.services('Driver.delays', 'options', { random: options.random })
  const driver = make(schedule, {
    start: 0,
    random: options.random ?? new DefaultRandom()
  })
  const input = options.input as In
  const out: Array<number> = []
  let now = 0
  while (out.length < limit) {
    now += attemptDuration
    const delay = driver.advance(input, now)
    if (delay < 0) break
    out.push(delay)
    now += delay
  }
  return out
}
