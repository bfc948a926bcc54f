/**
 * A `Schedule` is an immutable value that decides, after each failure, whether to retry and how long to wait.
 *
 * Build one from a constructor (`exponential`, `constant`, `decorrelatedJitter`, ...), refine it with
 * data-last combinators in a `pipe` (`capped`, `fullJitter`, `upTo`, ...), combine schedules with `intersect`,
 * `union` and `andThen`, and hand it to `retrying`. `delays` shows what a schedule would do, without running
 * anything.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const policy = pipe(
 *   Schedule.exponential(100), // 100, 200, 400, ...
 *   Schedule.capped(1000), //     ... never more than 1 s
 *   Schedule.intersect(Schedule.recurs(5)) // 5 retries, 6 attempts
 * )
 * assert.deepStrictEqual(Driver.delays(policy), [100, 200, 400, 800, 1000])
 *
 * @since 0.1.0
 */
import type { Monoid } from 'fp-ts/Monoid'
import type { Option } from 'fp-ts/Option'
import type { Predicate } from 'fp-ts/Predicate'
import * as aws from './internal/aws'
import type * as model from './internal/model'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { RetryStatus } from './RetryStatus'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Plain JSON data: what a schedule's state is made of, so that an in-flight retry can be stored and resumed.
 *
 * @example
 * import type { Json } from 'fp-ts-retry/Schedule'
 *
 * const state: Json = [0, { previous: 57.5 }]
 *
 * @category model
 * @since 0.1.0
 */
export type Json = model.Json

/**
 * A schedule's answer: retry after `delay` ms and continue from `state`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.continueAfter(100, 1), { _tag: 'Continue', delay: 100, state: 1 })
 *
 * @category model
 * @since 0.1.0
 */
export type Continue<S = Json> = model.Continue<S>

/**
 * A schedule's answer: stop retrying.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.done, { _tag: 'Done' })
 *
 * @category model
 * @since 0.1.0
 */
export type Done = model.Done

/**
 * What a schedule's step answers: `Continue` (retry after a delay, with a next state) or `Done`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const d: Schedule.Decision = Schedule.done
 * assert.strictEqual(d._tag, 'Done')
 *
 * @category model
 * @since 0.1.0
 */
export type Decision<S = Json> = model.Decision<S>

/**
 * What a step sees when it decides: the input (for `retrying`, the error just seen), the run's status, the
 * current time in ms, when the attempt that just failed was due (`dueAt`: the run's start for the first attempt,
 * then the time the previous decision set), and the run's source of random draws.
 *
 * **Details**
 *
 * One record rather than positional arguments, so that a step reads `context.input` and a field added later
 * breaks nobody. `now - dueAt` is how long the failed attempt ran (its wait included, if it started late).
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // retries while the error says it is transient, waiting 10 ms per retry made so far
 * const s = Schedule.make(
 *   null,
 *   (state, context: Schedule.StepContext<{ transient: boolean }>) =>
 *     context.input.transient ? Schedule.continueAfter(10 * (context.status.iterNumber + 1), state) : Schedule.done,
 *   { description: 'transientLinear', readsTime: false }
 * )
 * assert.deepStrictEqual(Driver.delays(s, { input: { transient: true }, limit: 3 }), [10, 20, 30])
 *
 * @category model
 * @since 1.0.0
 */
export type StepContext<In> = model.StepContext<In>

/**
 * A time limit a schedule holds, as data: `Elapsed` for {@link upTo}, `CumulativeDelay` for
 * {@link maxCumulativeDelay}, `Unknown` for a step that reads the time or the status and may stop on it
 * ({@link make} with `readsTime`, {@link fromPolicy}).
 *
 * **Details**
 *
 * Combinators that would let a limit be overslept (such as `Http.retryAfter`) read `Schedule.timeLimits`
 * instead of guessing from the description.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.upTo(5_000), Schedule.intersect(Schedule.recurs(5)))
 * assert.deepStrictEqual(s.timeLimits, [{ _tag: 'Elapsed', ms: 5_000 }])
 *
 * @category model
 * @since 1.0.0
 */
export type TimeLimit = model.TimeLimit

/**
 * Something a schedule tells its interpreter while deciding, without changing the decision: a hint of
 * {@link withHint} that was not a usable delay (negative, NaN, infinite or not a number) and was ignored
 * (`HintIgnored`), or one that set the delay (`HintUsed`, the delay it asked for, after the clamp).
 *
 * **Details**
 *
 * A schedule stays pure: it hands the event to its `Cursor`'s `report`, and the interpreter decides what to do
 * with it. The runners tell a run's observer (`onEvent`): an ignored hint as a `HintIgnored` event, a used one as
 * the `hint` of the `RetryScheduled` it set; `Driver.delays` drops them.
 *
 * @example
 * import type { ScheduleEvent } from 'fp-ts-retry/Schedule'
 *
 * const event: ScheduleEvent = { _tag: 'HintIgnored', hint: -5 }
 *
 * @category model
 * @since 1.0.0
 */
export type ScheduleEvent = model.ScheduleEvent

/**
 * What a {@link Stepper} reads at each step: the {@link Driver.Driver} running it exposes these fields in place,
 * so that stepping a schedule allocates nothing.
 *
 * **Details**
 *
 * `context()` builds the {@link StepContext} record for steps written with {@link make}; `report` tells the
 * interpreter of a {@link ScheduleEvent}.
 *
 * @example
 * import type { Cursor } from 'fp-ts-retry/Schedule'
 *
 * const readsInput = <In>(cursor: Cursor<In>): In => cursor.input
 *
 * @category model
 * @since 1.0.0
 */
export type Cursor<In> = model.Cursor<In>

/**
 * A schedule running from one state, its working state kept in place: how a {@link Driver.Driver} steps a
 * schedule without allocating. `next` answers the delay in ms, or `-1` to stop (any other negative number is a
 * `RangeError`), and moves to the next state; `state` gives the current state as plain JSON (for a snapshot).
 *
 * **Details**
 *
 * Every constructor and combinator builds its own; {@link make} builds one from a pure step. A stepper is never
 * shared between runs, and never changes the JSON state it started from. After it answers `-1` it is not
 * stepped again.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as assert from 'assert'
 *
 * const stepper = Schedule.exponential(100).stepper(400)
 * const driver = Driver.make(Schedule.forever)
 * assert.strictEqual(stepper.next(driver), 400)
 * assert.strictEqual(stepper.state(), 800)
 *
 * @category model
 * @since 1.0.0
 */
export type Stepper<In> = model.Stepper<In>

/**
 * A retry policy as a value. `In` is what the schedule looks at: for `retrying`, the error just seen.
 *
 * **Details**
 *
 * - `description` says how the schedule was built; it is stored with a persisted run so that resuming it with a
 *   different schedule is detected. `initial` is the state before the first retry.
 * - `step(state, context)` is the schedule as a pure function: called after each failure with the schedule's own
 *   state and a {@link StepContext}, it answers a {@link Decision}. `stepper(state)` is the same schedule running
 *   in place, what the {@link Driver.Driver} uses; the two always agree.
 * - Metadata is data: `readsTime` says whether a step may read the time (`now`, `status.elapsed`), so that the
 *   runner reads no clock for a schedule that never does; `timeLimits` lists the {@link TimeLimit}s it holds.
 * - `isState(state)` tells whether a stored state is one this schedule makes, so that `Driver.restore` refuses a
 *   tampered one (`Driver.InvalidState`); a combinator checks its parts with theirs. It never throws.
 * - A schedule is pure: it never reads the clock or `Math.random` itself, and its state is plain {@link Json},
 *   so one value can drive any number of concurrent runs and a run can be stored and resumed.
 * - `Schedule` is contravariant in `In`: a `Schedule<unknown>` (every constructor) retries any error.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // every other retry waits 1 s, the others 10 ms; the state counts the retries
 * const alternating: Schedule.Schedule<unknown> = Schedule.make(
 *   0,
 *   (n: number) => Schedule.continueAfter(n % 2 === 0 ? 10 : 1000, n + 1),
 *   { description: 'alternating', readsTime: false }
 * )
 * assert.deepStrictEqual(Driver.delays(alternating, { limit: 4 }), [10, 1000, 10, 1000])
 * assert.strictEqual(alternating.readsTime, false)
 *
 * @category model
 * @since 0.1.0
 */
export type Schedule<In> = model.Schedule<In>

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `description` (default `"custom"`) names the schedule in logs and in persisted runs: give two different
 *   custom schedules different descriptions, so that resuming a stored run with the wrong one is detected.
 * - `readsTime` (default `true`): whether the step reads `context.now` or `context.status.elapsed`. Say `false`
 *   when it does not, so that the runner can leave the clock alone.
 * - `timeLimits` (default: an `Unknown` {@link TimeLimit} when `readsTime` is true, none otherwise): the limits the
 *   step holds. A combinator of your own written over another schedule's `step` passes that schedule's
 *   `timeLimits` on, so that `withHint` and `Http.retryAfter` still refuse to come after a limit inside it.
 * - `isState` (default: every state is accepted): whether a stored state is one the step can go on from, so that
 *   `Driver.restore` answers `InvalidState` for a tampered one instead of a run that misbehaves. Give it when runs
 *   are stored; a combinator of your own checks its inner schedule's part with that schedule's `isState`. It must
 *   not throw (a throw counts as a refusal).
 *
 * @example
 * import type { MakeOptions } from 'fp-ts-retry/Schedule'
 *
 * const options: MakeOptions = {
 *   description: 'everyOther',
 *   readsTime: false,
 *   isState: (state) => typeof state === 'number' && Number.isSafeInteger(state) && state >= 0
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface MakeOptions {
  readonly description?: string | undefined
  readonly readsTime?: boolean | undefined
  readonly timeLimits?: ReadonlyArray<TimeLimit> | undefined
  readonly isState?: ((state: Json) => boolean) | undefined
}

/**
 * Options of {@link whileInput} and {@link untilInput}: `description` names the predicate in the schedule's
 * description (default `<predicate>`), so that a stored run notices a change of it.
 *
 * @example
 * import type { PredicateOptions } from 'fp-ts-retry/Schedule'
 *
 * const options: PredicateOptions = { description: 'status in [502, 503]' }
 *
 * @category model
 * @since 1.0.0
 */
export interface PredicateOptions {
  readonly description?: string | undefined
}

// -------------------------------------------------------------------------------------
// building blocks
// -------------------------------------------------------------------------------------

/** What a stepper answers to stop. */
const STOP = -1

const identity = (n: number): number => n

/**
 * The `Done` decision.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.make(null, () => Schedule.done)), [])
 *
 * @category constructors
 * @since 0.1.0
 */
export const done: Done = { _tag: 'Done' }

/**
 * The `Continue` decision: retry after `delay` ms, then continue from `state`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(Schedule.continueAfter(250, null).delay, 250)
 *
 * @category constructors
 * @since 0.1.0
 */
export const continueAfter = <S extends Json>(delay: number, state: S): Continue<S> => ({
  _tag: 'Continue',
  delay,
  state
})

/** The cursor of a `StepContext`, for a `step` derived from a stepper. */
const cursorOf = <In>(context: StepContext<In>): Cursor<In> => ({
  input: context.input,
  now: context.now,
  dueAt: context.dueAt,
  random: context.random,
  iterNumber: context.status.iterNumber,
  elapsed: context.status.elapsed,
  cumulativeDelay: context.status.cumulativeDelay,
  context: () => context,
  // A pure step has no interpreter to tell.
  report: () => undefined
})

/** What a schedule is built from: every field of a {@link Schedule} but its `step`, which follows from them. */
interface Parts<In> {
  readonly description: string
  readonly initial: Json
  readonly stepper: (state: Json) => Stepper<In>
  readonly isState: (state: Json) => boolean
  readonly readsTime: boolean
  readonly timeLimits: ReadonlyArray<TimeLimit>
}

/** Every schedule is built here: its pure `step` is its stepper run once from the given state. */
const build = <In>({ description, initial, stepper, isState, readsTime, timeLimits }: Parts<In>): Schedule<In> => ({
  description,
  initial,
  step: (state: Json, context: StepContext<In>): Decision => {
    const running = stepper(state)
    const delay = running.next(cursorOf(context))
    return delay < 0 ? done : continueAfter(delay, running.state())
  },
  stepper,
  isState,
  readsTime,
  timeLimits
})

/** The limits of a schedule that holds none. */
const NO_LIMITS: ReadonlyArray<TimeLimit> = []

/** The state of a schedule that keeps none. */
const isNull = (state: Json): boolean => state === null

/** A number in `[min, max]` (of the schedule's own making: a stored state out of it was not made by it). */
const isWithin =
  (min: number, max: number) =>
  (state: Json): boolean =>
    typeof state === 'number' && state >= min && state <= max

/** A whole number in `[0, max]`: a count of the schedule's own. */
const isCountUpTo =
  (max: number) =>
  (state: Json): boolean =>
    validate.isCount(state) && state <= max

/** An array of `n` items, the form of a composite state, read before its items are. */
const isTuple = (state: Json, n: number): state is ReadonlyArray<Json> => Array.isArray(state) && state.length === n

/** A delay made by user code, checked where it was made: a RangeError naming `where`, never a clamp. */
const checkDelay = (where: string, delay: unknown): number => {
  if (typeof delay === 'number' && delay >= 0 && delay <= validate.MAX_DELAY) return delay + 0 // -0 becomes 0
  throw new RangeError(
    `${where} returned the delay ${showValue(delay)}; ` +
      `a delay must be a finite number of ms in [0, ${validate.MAX_DELAY}]`
  )
}

/** A draw of the run's `Random`, checked (see `validate.drawn`). */
const draw = (cursor: Cursor<unknown>, where: string): number => validate.drawn(where, cursor.random.next())

/** Whether a user's function answered one of the two members of a union (a `Decision`, an `Option`), by its tag. */
const isTagged = (value: unknown, a: string, b: string): boolean => {
  if (value === null || typeof value !== 'object') return false
  const tag = (value as { readonly _tag?: unknown })._tag
  return tag === a || tag === b
}

/** A stepper without state, shared by every run: it allocates nothing, ever. */
const stateless = <In>(next: (cursor: Cursor<In>) => number): (() => Stepper<In>) => {
  const stepper: Stepper<In> = { next, state: () => null }
  return () => stepper
}

/**
 * The stepper of a schedule whose state is one number: `delayOf` reads the delay from it (or `STOP`), `after`
 * moves it on once a retry is decided. Two callbacks rather than a returned pair, so that a step allocates nothing.
 */
const numeric =
  (
    delayOf: (state: number, cursor: Cursor<unknown>) => number,
    after: (state: number, delay: number) => number
  ): ((state: Json) => Stepper<unknown>) =>
  (state) =>
    new NumericStepper(state as number, delayOf, after)

// Steppers are small classes rather than closures: a class's methods are its own functions, so the call sites
// inside one (`this.inner.next`) see only the schedules built with that class, where the JIT can inline them; the
// closures of a shared building block would share one call site between every schedule of the process.

class NumericStepper implements Stepper<unknown> {
  constructor(
    private current: number,
    private readonly delayOf: (state: number, cursor: Cursor<unknown>) => number,
    private readonly after: (state: number, delay: number) => number
  ) {}
  next(cursor: Cursor<unknown>): number {
    const delay = this.delayOf(this.current, cursor)
    if (delay >= 0) this.current = this.after(this.current, delay)
    return delay
  }
  state(): Json {
    return this.current
  }
}

/** `exponential`: the state is the next delay. */
class ExponentialStepper implements Stepper<unknown> {
  constructor(private current: number, private readonly factor: number) {}
  next(): number {
    const delay = this.current
    this.current = validate.saturate(delay * this.factor)
    return delay
  }
  state(): Json {
    return this.current
  }
}

/** `recurs`: the state is the number of retries made. */
class RecursStepper implements Stepper<unknown> {
  constructor(private made: number, private readonly n: number) {}
  next(): number {
    if (this.made >= this.n) return STOP
    this.made++
    return 0
  }
  state(): Json {
    return this.made
  }
}

const UNKNOWN_LIMIT: ReadonlyArray<TimeLimit> = [{ _tag: 'Unknown' }]

/** The default of `make`'s `isState`: a step of the user's may go on from anything it was given. */
const anyState = (): boolean => true

const isTimeLimit = (limit: unknown): boolean => {
  if (limit === null || typeof limit !== 'object') return false
  const { _tag, ms } = limit as { readonly _tag?: unknown; readonly ms?: unknown }
  return _tag === 'Unknown' || ((_tag === 'Elapsed' || _tag === 'CumulativeDelay') && validate.isDuration(ms))
}

/** A list of time limits given by a user, copied: changing the array afterwards does not change the schedule. */
const checkTimeLimits = (where: string, name: string, limits: unknown): ReadonlyArray<TimeLimit> => {
  if (!Array.isArray(limits) || !limits.every(isTimeLimit)) {
    throw new TypeError(`${where}: ${name} must be an array of TimeLimit, received ${showValue(limits)}`)
  }
  return [...(limits as ReadonlyArray<TimeLimit>)]
}

/**
 * A schedule from an initial state and a pure step: how users write a schedule of their own.
 *
 * **Details**
 *
 * - `step(state, context)` sees the schedule's own state and a {@link StepContext} (`input`, `status`, `now`,
 *   `random`) and answers a {@link Decision}. The state type `S` must be plain JSON data; the step must not
 *   mutate it.
 * - `options.description` (default `"custom"`) names the schedule in logs and in persisted runs: give two
 *   different custom schedules different descriptions, so that resuming a stored run with the wrong one is
 *   detected. `options.readsTime` (default `true`) says whether the step reads `now` or `status.elapsed`; say
 *   `false` when it does not, and the runner reads no clock for it. `options.timeLimits` carries the limits of a
 *   schedule the step wraps; `options.isState` tells a stored state of this schedule from junk (see
 *   {@link MakeOptions}).
 * - The delays the step returns are checked where they are made: a negative, NaN, infinite or non-number delay
 *   is a `RangeError` naming the schedule, and anything but a `Decision` a `TypeError`. Never a clamp.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // 10, 20, 30 ms, then stop
 * const three = Schedule.make(1, (n: number) => (n <= 3 ? Schedule.continueAfter(10 * n, n + 1) : Schedule.done), {
 *   description: 'three',
 *   readsTime: false,
 *   isState: (state) => state === 1 || state === 2 || state === 3 || state === 4
 * })
 * assert.deepStrictEqual(Driver.delays(three), [10, 20, 30])
 * assert.strictEqual(three.isState('abc'), false)
 * assert.throws(() => Driver.delays(Schedule.make(null, () => Schedule.continueAfter(-1, null))), RangeError)
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <S extends Json, In = unknown>(
  initial: S,
  step: (state: S, context: StepContext<In>) => Decision<S>,
  options: MakeOptions = {}
): Schedule<In> => {
  validate.callable('Schedule.make', 'step', step)
  validate.object('Schedule.make', 'options', options)
  const description = validate.string(
    'Schedule.make',
    'options.description',
    validate.orDefault(options.description, 'custom')
  )
  const readsTime = validate.boolean('Schedule.make', 'options.readsTime', validate.orDefault(options.readsTime, true))
  const timeLimits =
    options.timeLimits === undefined
      ? readsTime
        ? UNKNOWN_LIMIT
        : NO_LIMITS
      : checkTimeLimits('Schedule.make', 'options.timeLimits', options.timeLimits)
  const isState =
    options.isState === undefined ? anyState : validate.callable('Schedule.make', 'options.isState', options.isState)
  const where = `Schedule.make: the step of ${description}`
  return build<In>({
    description,
    initial,
    stepper: (state) => {
      // The one place where the state's type is forgotten: a schedule is only ever stepped with its own states.
      let current = state as S
      return {
        next: (cursor) => {
          const decision: unknown = step(current, cursor.context())
          if (!isTagged(decision, 'Continue', 'Done')) {
            throw new TypeError(`${where} returned ${showValue(decision)}; it must return a Decision`)
          }
          const d = decision as Decision<S>
          if (d._tag === 'Done') return STOP
          const delay = checkDelay(where, d.delay)
          current = d.state
          return delay
        },
        state: () => current
      }
    },
    isState,
    readsTime,
    timeLimits
  })
}

/**
 * Retries forever with no delay.
 *
 * **Details**
 *
 * The identity of {@link getIntersectionMonoid}. A zero delay does not go through a timer; the runner still
 * yields to the event loop now and then, so an abort can be delivered. Use it with a limit (`recurs`, `upTo`).
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.forever, { limit: 3 }), [0, 0, 0])
 *
 * @category constructors
 * @since 0.1.0
 */
export const forever: Schedule<unknown> = build({
  description: 'forever',
  initial: null,
  stepper: stateless(() => 0),
  isState: isNull,
  readsTime: false,
  timeLimits: NO_LIMITS
})

/**
 * Never retries: one attempt.
 *
 * **Details**
 *
 * The identity of {@link getUnionMonoid} and of {@link andThen}.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.stop), [])
 *
 * @category constructors
 * @since 0.1.0
 */
export const stop: Schedule<unknown> = build({
  description: 'stop',
  initial: null,
  stepper: stateless(() => STOP),
  isState: isNull,
  readsTime: false,
  timeLimits: NO_LIMITS
})

/**
 * Retries forever, waiting `delay` ms each time.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.constant(50), { limit: 3 }), [50, 50, 50])
 *
 * @category constructors
 * @since 0.1.0
 */
export const constant = (delay: number): Schedule<unknown> => {
  const d = validate.saturate(validate.duration('Schedule.constant', 'delay', delay))
  return build({
    description: `constant(${d})`,
    initial: null,
    stepper: stateless(() => d),
    isState: isNull,
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Retries forever, waiting `base`, `base·factor`, `base·factor²`, ... ms.
 *
 * **Details**
 *
 * - `factor` defaults to 2 and must be at least 1; `base` must be finite and `>= 0`.
 * - Growth saturates at `Number.MAX_SAFE_INTEGER` ms instead of reaching `Infinity`: cap it with {@link capped}.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.exponential(100), { limit: 4 }), [100, 200, 400, 800])
 * assert.deepStrictEqual(Driver.delays(Schedule.exponential(100, 3), { limit: 3 }), [100, 300, 900])
 *
 * @category constructors
 * @since 0.1.0
 */
export const exponential = (base: number, factor = 2): Schedule<unknown> => {
  const b = validate.saturate(validate.duration('Schedule.exponential', 'base', base))
  const f = validate.atLeast('Schedule.exponential', 'factor', 1, factor)
  // The state is the next delay: one multiplication a step, no Math.pow; it never falls below `base`.
  return build({
    description: `exponential(${b}, ${f})`,
    initial: b,
    stepper: (state) => new ExponentialStepper(state as number, f),
    isState: isWithin(b, validate.MAX_DELAY),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Retries forever, waiting `step`, `2·step`, `3·step`, ... ms.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.linear(100), { limit: 4 }), [100, 200, 300, 400])
 *
 * @category constructors
 * @since 0.1.0
 */
export const linear = (step: number): Schedule<unknown> => {
  const s = validate.saturate(validate.duration('Schedule.linear', 'step', step))
  // The state is the next delay, never below `step`.
  return build({
    description: `linear(${s})`,
    initial: s,
    stepper: numeric(identity, (delay) => validate.saturate(delay + s)),
    isState: isWithin(s, validate.MAX_DELAY),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Retries forever, waiting `base`, `base`, `2·base`, `3·base`, `5·base`, ... ms (the Fibonacci sequence).
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.fibonacci(10), { limit: 6 }), [10, 10, 20, 30, 50, 80])
 *
 * @category constructors
 * @since 0.1.0
 */
export const fibonacci = (base: number): Schedule<unknown> => {
  const b = validate.saturate(validate.duration('Schedule.fibonacci', 'base', base))
  const isDelay = isWithin(b, validate.MAX_DELAY)
  return build({
    description: `fibonacci(${b})`,
    initial: [b, b],
    stepper: (state) => {
      let [current, next] = state as readonly [number, number]
      return {
        next: () => {
          const delay = current
          current = next
          next = validate.saturate(delay + next)
          return delay
        },
        state: () => [current, next]
      }
    },
    isState: (state) => isTuple(state, 2) && isDelay(state[0]) && isDelay(state[1]),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Retries forever with the AWS "decorrelated jitter": each delay is `min(cap, random_between(base, previous · 3))`.
 *
 * **Details**
 *
 * - `previous` starts at `base` and is then the schedule's own previous (already capped) delay, as in the code
 *   of Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015).
 * - Requires `0 <= base <= cap`, both finite. Delays are exact, not rounded: `57.5` is a possible delay.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * // a draw of 0.5 lands half way between base and 3 · previous
 * const ds = Driver.delays(Schedule.decorrelatedJitter(10, 100), { random: Random.fixed(0.5), limit: 4 })
 * assert.deepStrictEqual(ds, [20, 35, 57.5, 91.25])
 *
 * @category constructors
 * @since 0.1.0
 */
export const decorrelatedJitter = (base: number, cap: number): Schedule<unknown> => {
  const b = validate.saturate(validate.duration('Schedule.decorrelatedJitter', 'base', base))
  const c = validate.saturate(validate.atLeast('Schedule.decorrelatedJitter', 'cap', b, cap)) + 0 // -0 becomes 0
  return build({
    description: `decorrelatedJitter(${b}, ${c})`,
    initial: b,
    stepper: numeric(
      // previous <= c <= MAX_DELAY, so previous · 3 is finite: the AWS formula as written, even at a saturated cap.
      (previous, cursor) => Math.min(c, b + draw(cursor, 'Schedule.decorrelatedJitter') * (previous * 3 - b)),
      (_, delay) => delay
    ),
    // previous >= base keeps every draw >= base, so the state never leaves [base, cap]
    isState: isWithin(b, c),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/** Polly's `f(t) = 2^t · tanh(√(4t))`, whose differences are the delays of `decorrelatedJitterV2`. */
const polly = (t: number): number => 2 ** t * Math.tanh(Math.sqrt(4 * t))

/**
 * Retries forever with Polly's "decorrelated jitter V2": retry `k` (from 0) comes at a median of about
 * `medianFirstRetryDelay · 2^k` ms after the first failure, with smooth jitter and no clusters.
 *
 * **Details**
 *
 * - Retry `k` draws `t = k + u` and waits `f(t) − f(t_prev)` scaled by `medianFirstRetryDelay / 1.4`, where
 *   `f(t) = 2^t · tanh(√(4t))` and `f(t_prev)` is the previous retry's value (0 at first). The waits telescope:
 *   the first `k + 1` add up to `f(k + u) · medianFirstRetryDelay / 1.4`, so the retries are spread evenly in
 *   time while the delays grow exponentially.
 * - Each delay lies between 0 and about `medianFirstRetryDelay · 2^(k+1)`; with `maxDelay`, no delay exceeds
 *   it (Polly v8's `MaxDelay`). Delays are exact, not rounded to .NET ticks.
 * - Past about 1024 retries the formula overflows: every delay is then `maxDelay` (or the largest delay).
 * - The state is `[k, f(t_prev)]`, plain numbers. Requires `medianFirstRetryDelay` and `maxDelay` finite and `>= 0`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * // draws pinned at 0.5: the retries come at about 90, 200, 400, 800, 1600 ms
 * const ds = Driver.delays(Schedule.decorrelatedJitterV2(100), { random: Random.fixed(0.5), limit: 5 })
 * assert.deepStrictEqual(ds.map(Math.round), [90, 109, 204, 405, 808])
 * const capped = Driver.delays(Schedule.decorrelatedJitterV2(100, 300), { random: Random.fixed(0.5), limit: 5 })
 * assert.deepStrictEqual(capped.map(Math.round), [90, 109, 204, 300, 300])
 *
 * @category constructors
 * @since 0.1.0
 */
export const decorrelatedJitterV2 = (medianFirstRetryDelay: number, maxDelay?: number): Schedule<unknown> => {
  const median = validate.saturate(
    validate.duration('Schedule.decorrelatedJitterV2', 'medianFirstRetryDelay', medianFirstRetryDelay)
  )
  const max =
    maxDelay === undefined
      ? validate.MAX_DELAY
      : validate.saturate(validate.duration('Schedule.decorrelatedJitterV2', 'maxDelay', maxDelay))
  // Polly.Core RetryHelper.DecorrelatedJitterBackoffV2 (formula by George Polevoy, Polly issue 530): pFactor 4, scale 1/1.4.
  const scale = median / 1.4
  return build({
    description: maxDelay === undefined ? `decorrelatedJitterV2(${median})` : `decorrelatedJitterV2(${median}, ${max})`,
    initial: [0, 0],
    stepper: (state) => {
      let [k, previous] = state as readonly [number, number]
      return {
        next: (cursor) => {
          const t = k + draw(cursor, 'Schedule.decorrelatedJitterV2')
          const next = polly(t)
          // Overflowed: so will every later step; the state stays as it is, plain finite numbers.
          if (next === Infinity) return median === 0 ? 0 : max
          const delay = validate.saturate((next - previous) * scale)
          k += 1
          previous = next
          return delay > max ? max : delay
        },
        state: () => [k, previous]
      }
    },
    // previous is f(k - 1 + u) for a draw u in [0, 1), so it lies in [f(k - 1), f(k)] (0 before the first retry):
    // the next f(k + u) is then at least previous, and no delay is negative.
    isState: (state) => {
      if (!isTuple(state, 2)) return false
      const [k, previous] = state
      return (
        validate.isCount(k) &&
        typeof previous === 'number' &&
        (k === 0 ? previous === 0 : polly(k - 1) <= previous && previous <= polly(k))
      )
    },
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Retries forever, waiting a uniformly random delay between `min` and `max` ms each time.
 *
 * **Details**
 *
 * `min + u · (max − min)` with `u` in `[0, 1)`; floating-point rounding can make the result equal `max`, as the
 * AWS `random_between`, so treat the range as closed.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.randomBetween(100, 200), { random: Random.fixed(0.25), limit: 2 }), [125, 125])
 *
 * @category constructors
 * @since 0.1.0
 */
export const randomBetween = (min: number, max: number): Schedule<unknown> => {
  const lo = validate.saturate(validate.duration('Schedule.randomBetween', 'min', min))
  const hi = validate.saturate(validate.atLeast('Schedule.randomBetween', 'max', lo, max))
  return build({
    description: `randomBetween(${lo}, ${hi})`,
    initial: null,
    stepper: stateless((cursor) => lo + draw(cursor, 'Schedule.randomBetween') * (hi - lo)),
    isState: isNull,
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Exactly `n` retries with no delay: `n + 1` attempts in all.
 *
 * **Details**
 *
 * `recurs(0)` is one attempt and no retry. Intersect it with a delay schedule to limit the number of retries:
 * `pipe(exponential(100), intersect(recurs(5)))`. `n` must be a whole number `>= 0`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.recurs(3)), [0, 0, 0])
 * assert.deepStrictEqual(Driver.delays(Schedule.recurs(0)), [])
 *
 * @category constructors
 * @since 0.1.0
 */
export const recurs = (n: number): Schedule<unknown> => {
  validate.count('Schedule.recurs', 'n', n)
  return build({
    description: `recurs(${n})`,
    initial: 0,
    stepper: (state) => new RecursStepper(state as number, n),
    isState: isCountUpTo(n),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Waits the given delays in order, one retry each, then stops.
 *
 * **Details**
 *
 * The list is copied: changing the array afterwards does not change the schedule. Each delay must be finite and
 * `>= 0`; the error names its index.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(Schedule.fromDelays([10, 100, 1000])), [10, 100, 1000])
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromDelays = (delays: ReadonlyArray<number>): Schedule<unknown> => {
  if (!Array.isArray(delays)) {
    throw new TypeError(`Schedule.fromDelays: delays must be an array of numbers, received ${showValue(delays)}`)
  }
  // A loop over the indices, not `map`: `map` skips the holes of a sparse array.
  const list: Array<number> = []
  for (let i = 0; i < delays.length; i++) {
    list.push(validate.saturate(validate.duration('Schedule.fromDelays', `delays[${i}]`, delays[i])))
  }
  return build({
    description: `fromDelays([${list.join(', ')}])`,
    initial: 0,
    stepper: numeric(
      (i) => (i < list.length ? list[i] : STOP),
      (i) => i + 1
    ),
    isState: isCountUpTo(list.length),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Truncated binary exponential backoff, built from its two requirements: the delay doubles at most
 * `maxDoublings` times and then stays at `maxDelay`.
 *
 * **Details**
 *
 * - The first delay is `maxDelay / 2^maxDoublings`; retry `maxDoublings + 1` and every later one waits `maxDelay`.
 * - Add {@link fullJitter} for the classic form that draws between 0 and the current delay.
 * - Example: "after 10 failures in a row the problem is not transient, stop growing" and "retry within 10 s of
 *   recovery" give `maxDoublings: 9, maxDelay: 10_000`: a first delay of 19.53 ms.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const s = Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: 8000 })
 * assert.deepStrictEqual(Driver.delays(s, { limit: 6 }), [1000, 2000, 4000, 8000, 8000, 8000])
 *
 * @category constructors
 * @since 0.1.0
 */
export const truncatedBinaryExponential = (options: {
  readonly maxDoublings: number
  readonly maxDelay: number
}): Schedule<unknown> => {
  validate.object('Schedule.truncatedBinaryExponential', 'options', options)
  const maxDoublings = validate.count('Schedule.truncatedBinaryExponential', 'maxDoublings', options.maxDoublings)
  const maxDelay = validate.saturate(
    validate.duration('Schedule.truncatedBinaryExponential', 'maxDelay', options.maxDelay)
  )
  // Counting down from maxDelay by exact powers of two lands the last doubling on maxDelay itself, and stays
  // right when 2^maxDoublings overflows (the early delays are then 0 until they become representable).
  return build({
    description: `truncatedBinaryExponential({ maxDoublings: ${maxDoublings}, maxDelay: ${maxDelay} })`,
    initial: 0,
    stepper: numeric(
      (n) => (n < maxDoublings ? maxDelay * 2 ** (n - maxDoublings) : maxDelay),
      (n) => (n < maxDoublings ? n + 1 : n)
    ),
    isState: isCountUpTo(maxDoublings),
    readsTime: false,
    timeLimits: NO_LIMITS
  })
}

/**
 * Lifts a retry-ts style policy, `(status) => Option<delay>`, into a schedule.
 *
 * **Details**
 *
 * The policy sees the run's {@link RetryStatus}; `none` stops, `some(d)` retries after `d` ms.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as O from 'fp-ts/Option'
 * import * as assert from 'assert'
 *
 * const policy = Schedule.fromPolicy((status) => (status.iterNumber < 3 ? O.some(100 * (status.iterNumber + 1)) : O.none))
 * assert.deepStrictEqual(Driver.delays(policy), [100, 200, 300])
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromPolicy = (policy: (status: RetryStatus) => Option<number>): Schedule<unknown> => {
  validate.callable('Schedule.fromPolicy', 'policy', policy)
  const where = 'Schedule.fromPolicy: the policy'
  return build({
    description: 'fromPolicy(<policy>)',
    initial: null,
    stepper: stateless((cursor) => {
      const delay: unknown = policy(cursor.context().status)
      if (!isTagged(delay, 'Some', 'None')) {
        throw new TypeError(`${where} returned ${showValue(delay)}; it must return an Option of a delay`)
      }
      const option = delay as Option<unknown>
      return option._tag === 'None' ? STOP : checkDelay(where, option.value)
    }),
    isState: isNull,
    readsTime: true,
    timeLimits: UNKNOWN_LIMIT
  })
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/** The metadata a unary combinator adds to its schedule's: whether it reads the time, the limit it holds. */
interface Adds {
  readonly readsTime?: boolean
  readonly limit?: TimeLimit
}

/**
 * The kernel of every combinator of one schedule: `name(args)(self)` goes on from `self`'s states (so it has
 * `self`'s `initial` and `isState`), steps with `start(self, state)`, and keeps `self`'s metadata, plus what it
 * `adds`. `name` is also where a bad `self` is reported (`Schedule.name`).
 */
const unary =
  <In, Out extends In = In>(
    name: string,
    args: string,
    start: (self: Schedule<In>, state: Json) => Stepper<Out>,
    adds: Adds = {}
  ) =>
  (self: Schedule<In>): Schedule<Out> => {
    validate.schedule(`Schedule.${name}`, 'self', self)
    return build<Out>({
      description: `${name}${args}(${self.description})`,
      initial: self.initial,
      stepper: (state) => start(self, state),
      isState: self.isState,
      readsTime: adds.readsTime === true || self.readsTime,
      timeLimits: adds.limit === undefined ? self.timeLimits : [...self.timeLimits, adds.limit]
    })
  }

/** Rewrites the delay of each retry: `f` by default, through a stepper class of its own when given `start`. */
const mapDelay = <In>(
  name: string,
  args: string,
  f: (delay: number, cursor: Cursor<In>) => number,
  start: (inner: Stepper<In>) => Stepper<In> = (inner) => new MapDelayStepper(inner, f)
) => unary<In>(name, args, (self, state) => start(self.stepper(state)))

class MapDelayStepper<In> implements Stepper<In> {
  constructor(private readonly inner: Stepper<In>, private readonly f: (delay: number, cursor: Cursor<In>) => number) {}
  next(cursor: Cursor<In>): number {
    const delay = this.inner.next(cursor)
    return delay < 0 ? delay : this.f(delay, cursor)
  }
  state(): Json {
    return this.inner.state()
  }
}

/** `capped`: its own class, so that its call of the inner stepper is not shared with every other `mapDelay`. */
class CappedStepper<In> implements Stepper<In> {
  constructor(private readonly inner: Stepper<In>, private readonly max: number) {}
  next(cursor: Cursor<In>): number {
    const delay = this.inner.next(cursor)
    return delay > this.max ? this.max : delay
  }
  state(): Json {
    return this.inner.state()
  }
}

/**
 * Caps every delay at `max` ms: `min(delay, max)`.
 *
 * **Details**
 *
 * Never turns a stop into a retry. Idempotent: capping twice at the same value is capping once.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(pipe(Schedule.exponential(100), Schedule.capped(300)), { limit: 4 }), [100, 200, 300, 300])
 *
 * @category combinators
 * @since 0.1.0
 */
export const capped = (max: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const m = validate.saturate(validate.duration('Schedule.capped', 'max', max))
  return <In>(self: Schedule<In>): Schedule<In> =>
    mapDelay<In>(
      'capped',
      `(${m})`,
      (delay) => (delay > m ? m : delay),
      (inner) => new CappedStepper(inner, m)
    )(self)
}

/**
 * Raises every delay to at least `min` ms: `max(delay, min)`.
 *
 * **Details**
 *
 * Never turns a stop into a retry. Useful after a jitter that may draw a delay close to 0.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(1000), Schedule.fullJitter, Schedule.minDelay(100))
 * assert.deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 2 }), [100, 100])
 *
 * @category combinators
 * @since 0.1.0
 */
export const minDelay = (min: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const floor = validate.saturate(validate.duration('Schedule.minDelay', 'min', min))
  return <In>(self: Schedule<In>): Schedule<In> =>
    mapDelay<In>('minDelay', `(${floor})`, (delay) => (delay < floor ? floor : delay))(self)
}

/**
 * Replaces every delay `d` by `f(d)`.
 *
 * **Details**
 *
 * The interpreters check the result: a negative, NaN or infinite delay is a `RangeError`, never a silent clamp.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.linear(100), Schedule.modifyDelay((d) => d + 5))
 * assert.deepStrictEqual(Driver.delays(s, { limit: 3 }), [105, 205, 305])
 *
 * @category combinators
 * @since 0.1.0
 */
export const modifyDelay = (f: (delay: number) => number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  validate.callable('Schedule.modifyDelay', 'f', f)
  return <In>(self: Schedule<In>): Schedule<In> =>
    mapDelay<In>('modifyDelay', '(<f>)', (delay) => checkDelay('Schedule.modifyDelay: f', f(delay)))(self)
}

/**
 * "Full jitter": each delay `d` becomes `d · u`, with `u` drawn from the run's `Random` in `[0, 1)`.
 *
 * **Details**
 *
 * `pipe(exponential(base), capped(cap), fullJitter)` is exactly the AWS full jitter
 * `random_between(0, min(cap, base · 2^n))`. Jitter after a cap never exceeds the cap.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.fullJitter)
 * assert.deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 3 }), [50, 100, 200])
 *
 * @category combinators
 * @since 0.1.0
 */
export const fullJitter = <In>(self: Schedule<In>): Schedule<In> => mapDelay<In>('fullJitter', '', fullJitterOf)(self)

// One function for every schedule it jitters, so that its call site inside MapDelayStepper stays monomorphic.
const fullJitterOf = (delay: number, cursor: Cursor<unknown>): number => delay * draw(cursor, 'Schedule.fullJitter')

/**
 * "Equal jitter": each delay `d` becomes `d/2 + u · d/2`, with `u` drawn from the run's `Random` in `[0, 1)`.
 *
 * **Details**
 *
 * Keeps at least half of each delay, so a retry never comes back immediately; never exceeds `d`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(100), Schedule.equalJitter)
 * assert.deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 2 }), [75, 75])
 *
 * @category combinators
 * @since 0.1.0
 */
export const equalJitter = <In>(self: Schedule<In>): Schedule<In> =>
  mapDelay<In>('equalJitter', '', equalJitterOf)(self)

const equalJitterOf = (delay: number, cursor: Cursor<unknown>): number => {
  const half = delay / 2
  const jittered = half + draw(cursor, 'Schedule.equalJitter') * half
  // Halving a subnormal delay rounds up, so the sum can pass it by a hair.
  return jittered > delay ? delay : jittered
}

/**
 * Options of {@link withHint}: the most a hint may ask for, in ms (`max`, and optionally `maxAbove` the schedule's
 * own delay), and whether `hintOf` reads the time it is given.
 *
 * @example
 * import type { HintOptions } from 'fp-ts-retry/Schedule'
 *
 * const options: HintOptions = { max: 30_000 }
 * // the AWS SDKs' retries 2.1: never more than 5 s past the delay the backoff computed
 * const aws: HintOptions = { max: Number.MAX_SAFE_INTEGER, maxAbove: 5_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface HintOptions {
  readonly max: number
  /** The most a hint may add to the schedule's own delay, in ms. Default: no such limit. */
  readonly maxAbove?: number | undefined
  readonly readsTime?: boolean | undefined
}

/**
 * Waits at least as long as the failure asks: the delay becomes `max(delay, min(hint, options.max))`, where
 * `hint = hintOf(input, now)` is what the error says (HTTP `Retry-After`, gRPC's `grpc-retry-pushback-ms`, an API's
 * `rate_limit_reset`), and the schedule's own delay is the floor.
 *
 * **Details**
 *
 * - `hintOf` answers `undefined` when the failure asks for nothing. A hint that is negative, NaN, infinite or not
 *   a number is ignored, never slept, and reported to the interpreter as a `HintIgnored` {@link ScheduleEvent}
 *   (the runners tell it to `onEvent`). The clamp at `options.max` is not optional: a server asking for a day
 *   would park the caller for a day.
 * - `options.maxAbove` also holds the hint to the schedule's delay plus that much: the delay is then the hint
 *   clamped to `[delay, min(delay + maxAbove, max)]` (the AWS SDKs' retries 2.1 honour `x-amz-retry-after` within
 *   5 s of their backoff: `Http.amzRetryAfter`). `maxAbove: 0` ignores every hint.
 * - The schedule is still stepped, so its counts and its stops hold: `recurs(3)` still ends the run.
 * - Put it **before** `upTo` / `maxCumulativeDelay` in a `pipe`, so that the hinted delay counts toward the time
 *   limit and never extends a run past it: applied to a schedule that holds a time limit (see
 *   `Schedule.timeLimits`), it throws a `TypeError`.
 * - `hintOf` also gets the current time, for hints given as a date; set `options.readsTime` when it uses it.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * interface RateLimited { readonly retryInMs?: number }
 * const policy = pipe(
 *   Schedule.exponential(100),
 *   Schedule.withHint((e: RateLimited) => e.retryInMs, { max: 1_000 }),
 *   Schedule.intersect(Schedule.recurs(3))
 * )
 * assert.deepStrictEqual(Driver.delays(policy, { input: { retryInMs: 250 } }), [250, 250, 400])
 * assert.deepStrictEqual(Driver.delays(policy, { input: { retryInMs: 60_000 } }), [1000, 1000, 1000])
 * assert.deepStrictEqual(Driver.delays(policy, { input: {} }), [100, 200, 400])
 *
 * @category combinators
 * @since 1.0.0
 */
export const withHint = <I>(
  hintOf: (input: I, now: number) => number | undefined,
  options: HintOptions
): (<In>(self: Schedule<In>) => Schedule<In & I>) => {
  validate.callable('Schedule.withHint', 'hintOf', hintOf)
  validate.object('Schedule.withHint', 'options', options)
  const max = validate.saturate(validate.duration('Schedule.withHint', 'options.max', options.max))
  const maxAbove =
    options.maxAbove === undefined
      ? undefined
      : validate.saturate(validate.duration('Schedule.withHint', 'options.maxAbove', options.maxAbove))
  const readsTime = validate.boolean(
    'Schedule.withHint',
    'options.readsTime',
    validate.orDefault(options.readsTime, false)
  )
  const next =
    <In>(inner: Stepper<In & I>) =>
    (cursor: Cursor<In & I>): number => {
      const delay = inner.next(cursor)
      if (delay < 0) return delay
      const hint: unknown = hintOf(cursor.input, cursor.now)
      if (typeof hint !== 'number' || !(hint >= 0 && hint !== Infinity)) {
        if (hint !== undefined) cursor.report({ _tag: 'HintIgnored', hint })
        return delay
      }
      const ceiling = maxAbove === undefined ? max : Math.min(max, validate.saturate(delay + maxAbove))
      const asked = hint > ceiling ? ceiling : hint
      if (asked > delay) {
        cursor.report({ _tag: 'HintUsed', hint: asked })
        return asked
      }
      return delay
    }
  return <In>(self: Schedule<In>): Schedule<In & I> => {
    validate.schedule('Schedule.withHint', 'self', self)
    if (self.timeLimits.length > 0) {
      throw new TypeError(
        `Schedule.withHint: the schedule holds a time limit (Schedule.upTo, Schedule.maxCumulativeDelay, or a step ` +
          `that may read the time: Schedule.make with readsTime true or timeLimits, Schedule.fromPolicy); put ` +
          `withHint before it in the pipe, so that the hinted delay counts toward the limit, or give make ` +
          `readsTime: false when its step reads no time; received ${self.description}`
      )
    }
    return unary<In, In & I>(
      'withHint',
      maxAbove === undefined ? `(<hint>, ${max})` : `(<hint>, ${max}, +${maxAbove})`,
      (inner, state) => {
        const stepper: Stepper<In & I> = inner.stepper(state)
        return { next: next<In>(stepper), state: () => stepper.state() }
      },
      { readsTime }
    )(self)
  }
}

/**
 * Proportional jitter: each delay `d` becomes `d · (min + u · (max − min))`, with `u` drawn from the run's
 * `Random` in `[0, 1)` (Effect's `jittered`, p-retry's `randomize`, resilience4j's `randomizationFactor`).
 *
 * **Details**
 *
 * The defaults, `0.8` and `1.2`, keep each delay within 20% of the schedule's. Requires `0 <= min <= max`, both
 * finite; results saturate at `Number.MAX_SAFE_INTEGER` ms. Put it before a cap to keep the cap a hard limit.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.jittered())
 * assert.deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 3 }), [100, 200, 400])
 * assert.deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 3 }), [80, 160, 320])
 *
 * @category combinators
 * @since 1.0.0
 */
export const jittered = (min = 0.8, max = 1.2): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const lo = validate.duration('Schedule.jittered', 'min', min)
  const hi = validate.atLeast('Schedule.jittered', 'max', lo, max)
  return <In>(self: Schedule<In>): Schedule<In> =>
    mapDelay<In>('jittered', `(${lo}, ${hi})`, (delay, cursor) =>
      validate.saturate(delay * (lo + draw(cursor, 'Schedule.jittered') * (hi - lo)))
    )(self)
}

/**
 * The backoff of the AWS SDKs' standard retries 2.0 (their default until 2.1 replaces it): the retry `n` waits
 * `min(u · 1 s · 2^(n−1), 20 s)`, `u` drawn in `[0, 1)`, whatever the error.
 *
 * **Details**
 *
 * - `pipe(exponential(1000), fullJitter, capped(20_000))`: the jitter comes first, then the cap, so from the 6th
 *   retry on, every draw above `20 s / (1 s · 2^(n−1))` waits exactly 20 s, and clients that back off together
 *   meet again there (2.1 caps first: {@link awsRetries21}).
 * - It retries forever: the SDKs' 3 attempts are `intersect(recurs(2))`. Their quota is `Budget.awsRetries20`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const half = { random: Random.fixed(0.5), limit: 7 }
 * assert.deepStrictEqual(Driver.delays(Schedule.awsRetries20, half), [500, 1000, 2000, 4000, 8000, 16000, 20000])
 *
 * @category constructors
 * @since 1.0.0
 */
export const awsRetries20: Schedule<unknown> = capped(aws.MAX_BACKOFF)(fullJitter(exponential(aws.BASE_20)))

/**
 * The backoff of the AWS SDKs' standard retries 2.1 (opt-in in 2026, their default later): the retry `n` after an
 * error `e` waits `u · min(base · 2^(n−1), 20 s)`, `u` drawn in `[0, 1)`, with `base` 1 s when `isThrottle(e)` and
 * 50 ms otherwise.
 *
 * **Details**
 *
 * - The cap comes before the jitter (2.0 jittered first: {@link awsRetries20}), so every delay is drawn over the
 *   whole of `[0, cap)` and no two clients are pinned to the cap together: `exponential(1)`, scaled by the error's
 *   base, then `capped(20_000)`, then `fullJitter`.
 * - The base is chosen by the error of each retry, the doubling by the retry's number: a throttle at the 3rd retry
 *   draws below 4 s, a transient error below 200 ms.
 * - `isThrottle` defaults to the AWS SDKs' rule (a throttling code in `name`, `code` or `Code`, status 429, the JavaScript
 *   SDK's `$retryable.throttling`, an `x-amzn-errortype` header naming a throttling code); `Http.isThrottle` is that
 *   rule for an `HttpError`.
 * - It retries forever: the SDKs' 3 attempts are `intersect(recurs(2))`. `Http.amzRetryAfter` after it honours
 *   `x-amz-retry-after`; the quota of the same version is `Budget.awsRetries21`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const half = { random: Random.fixed(0.5), limit: 7 }
 * const transient = Driver.delays(Schedule.awsRetries21(), { ...half, input: new Error('503') })
 * assert.deepStrictEqual(transient, [25, 50, 100, 200, 400, 800, 1600])
 * const throttled = Driver.delays(Schedule.awsRetries21(), { ...half, input: { name: 'ThrottlingException' } })
 * assert.deepStrictEqual(throttled, [500, 1000, 2000, 4000, 8000, 10000, 10000]) // capped at 20 s, then halved
 *
 * @category constructors
 * @since 1.0.0
 */
export const awsRetries21 = <I = unknown>(isThrottle: Predicate<I> = aws.isThrottle): Schedule<I> => {
  validate.callable('Schedule.awsRetries21', 'isThrottle', isThrottle)
  const base = mapDelay<I>('awsBase21', '(<isThrottle>)', (delay, cursor) =>
    validate.saturate(delay * (isThrottle(cursor.input) ? aws.BASE_21_THROTTLE : aws.BASE_21_TRANSIENT))
  )
  return fullJitter(capped(aws.MAX_BACKOFF)(base(exponential(1))))
}

/**
 * A failure for which `predicate(input)` holds is retried without using up the schedule: the schedule is asked
 * for the delay it would give, but its state does not move, so a `recurs(3)` inside still allows three other
 * retries (p-retry's `shouldConsumeRetry`).
 *
 * **Details**
 *
 * - Use it for failures that say nothing about the dependency's health, such as a lost connection of a long
 *   poll, or a 429 whose wait is already enforced by {@link withHint}.
 * - **Risk**: a failure that always matches is retried forever. Bound the run with a limit that the predicate
 *   does not bypass: {@link upTo} or {@link maxCumulativeDelay} applied *outside* (after) this combinator, whose
 *   time keeps running.
 * - Random draws made for the free retry's delay are consumed from the run's `Random`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(2)), Schedule.retryFreeWhen((e: string) => e === 'reset'))
 * // resets do not use up the two retries, nor grow the backoff
 * assert.deepStrictEqual(Driver.delays(s, { input: 'reset', limit: 4 }), [100, 100, 100, 100])
 * assert.deepStrictEqual(Driver.delays(s, { input: 'timeout' }), [100, 200])
 *
 * @category combinators
 * @since 1.0.0
 */
export const retryFreeWhen = <I>(predicate: Predicate<I>): (<In>(self: Schedule<In>) => Schedule<In & I>) => {
  validate.callable('Schedule.retryFreeWhen', 'predicate', predicate)
  return <In>(self: Schedule<In>): Schedule<In & I> =>
    unary<In, In & I>('retryFreeWhen', '(<predicate>)', (schedule, state) => {
      const inner: Stepper<In & I> = schedule.stepper(state)
      return {
        // A free retry asks a copy started from the current state, so that the schedule itself does not move.
        next: (cursor) => (predicate(cursor.input) ? schedule.stepper(inner.state()).next(cursor) : inner.next(cursor)),
        state: () => inner.state()
      }
    })(self)
}

/**
 * Starts `self` over when the attempt that just failed ran for at least `ms`: a connection that was up a while
 * is a new outage, and reconnects from the first, short delay (exponential-backoff#66, failsafe#342).
 *
 * **Details**
 *
 * An attempt starts when it was due (the run's start for the first one) and ends when its failure is seen, on
 * the run's clock. Only `self` starts over; the run's status (`iterNumber`, `elapsed`) keeps counting, so a
 * limit applied outside still holds.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const reconnect = pipe(Schedule.exponential(100), Schedule.resetAfter(60_000))
 * // connections that drop at once back off; one that was up for a minute starts again from 100 ms
 * assert.deepStrictEqual(Driver.delays(reconnect, { limit: 3 }), [100, 200, 400])
 * assert.deepStrictEqual(Driver.delays(reconnect, { limit: 3, attemptDuration: 60_000 }), [100, 100, 100])
 *
 * @category combinators
 * @since 1.0.0
 */
export const resetAfter = (ms: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const after = validate.duration('Schedule.resetAfter', 'ms', ms)
  return <In>(self: Schedule<In>): Schedule<In> =>
    unary<In>(
      'resetAfter',
      `(${after})`,
      (schedule, state) => {
        let inner = schedule.stepper(state)
        return {
          // when the failed attempt was due is the cursor's `dueAt`, kept by the interpreter, so that a longer
          // delay chosen around this schedule is counted
          next: (cursor) => {
            if (cursor.now - cursor.dueAt >= after) inner = schedule.stepper(schedule.initial)
            return inner.next(cursor)
          },
          state: () => inner.state()
        }
      },
      { readsTime: true }
    )(self)
}

/**
 * Runs at a fixed rate: each attempt starts `ms` after the previous one was due, whatever it took, without
 * drifting; an attempt that took `ms` or longer is followed at once, and missed slots do not pile up. For polling
 * and heartbeats with {@link repeating}.
 *
 * **Details**
 *
 * - The wait is `max(0, dueAt + ms - now)`: the period counts from when the failed attempt was due (the run's
 *   start for the first one), so the first attempt's own time counts too.
 * - Retries forever: bound it with `recurs`, `upTo` or `whileInput`. Reads the time.
 * - It is not Effect's `Schedule.fixed`, which counts from the end of the first attempt on a grid of its own:
 *   there the first wait is always a whole `ms` (an attempt of 1 ms: `fixed(2)` waits 1 ms here, 2 ms in Effect);
 *   an attempt that ends exactly on a period waits none here and a whole period there; and after a late attempt,
 *   followed at once by both, the next period counts here from when that next attempt started, while Effect goes
 *   back to its grid.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // attempts of 300 ms every second: wait the other 700 ms
 * assert.deepStrictEqual(Driver.delays(Schedule.fixed(1000), { limit: 3, attemptDuration: 300 }), [700, 700, 700])
 * // attempts of 1.5 s: go again at once
 * assert.deepStrictEqual(Driver.delays(Schedule.fixed(1000), { limit: 2, attemptDuration: 1500 }), [0, 0])
 *
 * @category constructors
 * @since 1.0.0
 */
export const fixed = (ms: number): Schedule<unknown> => {
  const period = validate.saturate(validate.duration('Schedule.fixed', 'ms', ms))
  return build({
    description: `fixed(${period})`,
    initial: null,
    // Saturates: at a period near the largest delay, the sum rounds past it.
    stepper: stateless((cursor) => validate.saturate(Math.max(0, cursor.dueAt + period - cursor.now))),
    isState: isNull,
    readsTime: true,
    timeLimits: NO_LIMITS
  })
}

/**
 * Runs on the boundaries of `ms`-long windows counted from the run's start (when its first attempt started): each
 * attempt waits until the next boundary. Attempts stay aligned to the grid, however long they take.
 *
 * **Details**
 *
 * - An attempt that ends exactly on a boundary waits a whole window. Retries forever: bound it. Reads the time.
 * - It is not Effect's `Schedule.windowed`, which counts its windows from the end of the first attempt: there the
 *   first wait is always a whole `ms` (an attempt of 1 ms: `windowed(2)` waits 1 ms here, 2 ms in Effect), and
 *   the grid is shifted by the first attempt's time.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // attempts of 300 ms on a 1 s grid: 0-300, then 1000-1300, 2000-2300
 * assert.deepStrictEqual(Driver.delays(Schedule.windowed(1000), { limit: 2, attemptDuration: 300 }), [700, 700])
 * // attempts of 1.5 s: the next boundary is at 2 s, then at 4 s
 * assert.deepStrictEqual(Driver.delays(Schedule.windowed(1000), { limit: 2, attemptDuration: 1500 }), [500, 500])
 *
 * @category constructors
 * @since 1.0.0
 */
export const windowed = (ms: number): Schedule<unknown> => {
  const window = validate.saturate(validate.duration('Schedule.windowed', 'ms', ms))
  if (window === 0) throw new RangeError('Schedule.windowed: ms must be a finite number > 0, received 0')
  return build({
    description: `windowed(${window})`,
    initial: null,
    stepper: stateless((cursor) => window - (cursor.elapsed % window)),
    isState: isNull,
    readsTime: true,
    timeLimits: NO_LIMITS
  })
}

/** The stepper of a limit: stops instead of a retry when `stopIf` holds for its delay. */
const stopWhen =
  (stopIf: (delay: number, cursor: Cursor<unknown>) => boolean) =>
  <In>(self: Schedule<In>, state: Json): Stepper<In> => {
    const inner = self.stepper(state)
    return {
      next: (cursor) => {
        const delay = inner.next(cursor)
        return delay >= 0 && stopIf(delay, cursor) ? STOP : delay
      },
      state: () => inner.state()
    }
  }

/**
 * Limits the run's elapsed time to `ms`: stops rather than start a retry that would begin after the budget.
 *
 * **Details**
 *
 * Stops when `status.elapsed + nextDelay > ms`, so it never sleeps past its deadline (Effect's `upTo` does) as
 * long as it comes after every combinator that lengthens delays: `withHint` refuses to come after it, but
 * `minDelay`, `modifyDelay`, a jitter or an `intersect` put after it can make a delay it did not judge.
 * Elapsed time includes the time the attempts took, read from the run's clock.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Driver.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000))), [100, 200, 400])
 *
 * @category combinators
 * @since 0.1.0
 */
export const upTo = (ms: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const limit = validate.duration('Schedule.upTo', 'ms', ms)
  const start = stopWhen((delay, c) => c.elapsed + delay > limit)
  return <In>(self: Schedule<In>): Schedule<In> =>
    unary<In>('upTo', `(${limit})`, start, { readsTime: true, limit: { _tag: 'Elapsed', ms: limit } })(self)
}

/**
 * Limits the total time slept to `ms`: stops when `status.cumulativeDelay + nextDelay > ms`.
 *
 * **Details**
 *
 * Unlike {@link upTo}, the time the attempts themselves take does not count (retry-ts's
 * `limitRetriesByCumulativeDelay`).
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(300), Schedule.maxCumulativeDelay(1000))
 * assert.deepStrictEqual(Driver.delays(s, { attemptDuration: 500 }), [300, 300, 300])
 *
 * @category combinators
 * @since 0.1.0
 */
export const maxCumulativeDelay = (ms: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const limit = validate.duration('Schedule.maxCumulativeDelay', 'ms', ms)
  const start = stopWhen((delay, c) => c.cumulativeDelay + delay > limit)
  return <In>(self: Schedule<In>): Schedule<In> =>
    unary<In>('maxCumulativeDelay', `(${limit})`, start, { limit: { _tag: 'CumulativeDelay', ms: limit } })(self)
}

/** `whileInput` and `untilInput`: retries while `retry(input)` holds, without stepping `self` otherwise. */
const retryWhile = <I>(name: string, retry: Predicate<I>, options: PredicateOptions | undefined) => {
  const where = `Schedule.${name}`
  const description = validate.object(where, 'options', options ?? {}).description
  const label = description === undefined ? '<predicate>' : validate.string(where, 'options.description', description)
  return <In>(self: Schedule<In>): Schedule<In & I> =>
    unary<In, In & I>(name, `(${label})`, (schedule, state) => {
      const inner: Stepper<In & I> = schedule.stepper(state)
      return { next: (cursor) => (retry(cursor.input) ? inner.next(cursor) : STOP), state: () => inner.state() }
    })(self)
}

/**
 * Retries only while `predicate(input)` holds (for `retrying`, the input is the error).
 *
 * **Details**
 *
 * - When the predicate fails the schedule stops without stepping the inner schedule. The result's input type is
 *   the intersection of both, so a predicate on `HttpError` makes a `Schedule<HttpError>`.
 * - A function cannot be described: the schedule's description says `whileInput(<predicate>)`, unless
 *   `options.description` names the predicate. Name it when runs are stored, and change the name when the
 *   predicate changes, so that a run stored under the old predicate is not resumed under the new one.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(10), Schedule.whileInput((status: number) => status >= 500, { description: '5xx' }))
 * assert.deepStrictEqual(Driver.delays(s, { input: 503, limit: 2 }), [10, 10])
 * assert.deepStrictEqual(Driver.delays(s, { input: 404 }), [])
 * assert.strictEqual(s.description, 'whileInput(5xx)(constant(10))')
 *
 * @category combinators
 * @since 0.1.0
 */
export const whileInput = <I>(
  predicate: Predicate<I>,
  options?: PredicateOptions
): (<In>(self: Schedule<In>) => Schedule<In & I>) => {
  validate.callable('Schedule.whileInput', 'predicate', predicate)
  return retryWhile('whileInput', predicate, options)
}

/**
 * Retries until `predicate(input)` holds: the opposite of {@link whileInput}; `options.description` names the
 * predicate in the schedule's description, as there.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(10), Schedule.untilInput((e: Error) => e.message === 'fatal'))
 * assert.deepStrictEqual(Driver.delays(s, { input: new Error('fatal') }), [])
 *
 * @category combinators
 * @since 0.1.0
 */
export const untilInput = <I>(
  predicate: Predicate<I>,
  options?: PredicateOptions
): (<In>(self: Schedule<In>) => Schedule<In & I>) => {
  validate.callable('Schedule.untilInput', 'predicate', predicate)
  return retryWhile('untilInput', (input: I) => !predicate(input), options)
}

/** What a combinator of two schedules makes of them: its state from both, its check of one, its stepper, its limits. */
interface Pairing<In2> {
  readonly initial: (self: Schedule<never>) => Json
  readonly isState: (self: Schedule<never>, state: Json) => boolean
  readonly start: <In1>(self: Schedule<In1>, state: Json) => Stepper<In1 & In2>
  readonly timeLimits: (self: Schedule<never>) => ReadonlyArray<TimeLimit>
}

/** The kernel of every combinator of two schedules: `name(that)(self)`, stepped side by side as `pairing` says. */
const binary = <In2>(name: string, that: Schedule<In2>, pairing: Pairing<In2>) => {
  validate.schedule(`Schedule.${name}`, 'that', that)
  return <In1>(self: Schedule<In1>): Schedule<In1 & In2> => {
    validate.schedule(`Schedule.${name}`, 'self', self)
    return build<In1 & In2>({
      description: `${name}(${that.description})(${self.description})`,
      initial: pairing.initial(self),
      stepper: (state) => pairing.start(self, state),
      isState: (state) => pairing.isState(self, state),
      readsTime: self.readsTime || that.readsTime,
      timeLimits: pairing.timeLimits(self)
    })
  }
}

/**
 * The limits of a `union` or an `andThen`: either side may go on when the other's limit is reached, so no limit
 * bounds the whole; they are still there (a combinator that must come before a limit refuses to come after), as
 * one `Unknown`.
 */
const unbound =
  (that: Schedule<never>) =>
  (self: Schedule<never>): ReadonlyArray<TimeLimit> =>
    self.timeLimits.length + that.timeLimits.length === 0 ? NO_LIMITS : UNKNOWN_LIMIT

/**
 * Both schedules must continue; the longer delay wins. The usual way to bound a schedule: `intersect(recurs(5))`.
 *
 * **Details**
 *
 * | `self`   | `that`   | result                          |
 * | -------- | -------- | ------------------------------- |
 * | continue `d1` | continue `d2` | continue `max(d1, d2)` |
 * | continue | done     | done                            |
 * | done     | any      | done (`that` is not stepped)    |
 *
 * Associative, with {@link forever} as identity: see {@link getIntersectionMonoid}.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3)))
 * assert.deepStrictEqual(Driver.delays(s), [100, 200, 400])
 *
 * @category combinators
 * @since 0.1.0
 */
export const intersect = <In2>(that: Schedule<In2>): (<In1>(self: Schedule<In1>) => Schedule<In1 & In2>) =>
  binary('intersect', that, {
    initial: (self) => [self.initial, that.initial],
    isState: (self, state) => isTuple(state, 2) && self.isState(state[0]) && that.isState(state[1]),
    start: <In1>(self: Schedule<In1>, state: Json) => {
      const [s1, s2] = state as readonly [Json, Json]
      return new IntersectStepper<In1 & In2>(self.stepper(s1), that.stepper(s2))
    },
    // both must go on: each limit bounds the whole
    timeLimits: (self) => [...self.timeLimits, ...that.timeLimits]
  })

class IntersectStepper<In> implements Stepper<In> {
  constructor(private readonly left: Stepper<In>, private readonly right: Stepper<In>) {}
  next(cursor: Cursor<In>): number {
    const d1 = this.left.next(cursor)
    if (d1 < 0) return STOP
    const d2 = this.right.next(cursor)
    if (d2 < 0) return STOP
    return d1 >= d2 ? d1 : d2
  }
  state(): Json {
    return [this.left.state(), this.right.state()]
  }
}

// Which sides of a union are still running, as bits: a side that has stopped is not stepped again.
const LEFT = 1
const RIGHT = 2

/**
 * Either schedule may continue; the shorter delay of those continuing wins.
 *
 * **Details**
 *
 * | `self`   | `that`   | result                        |
 * | -------- | -------- | ----------------------------- |
 * | continue `d1` | continue `d2` | continue `min(d1, d2)` |
 * | continue `d1` | done | continue `d1`                 |
 * | done     | continue `d2` | continue `d2`            |
 * | done     | done     | done                          |
 *
 * A side that has stopped stays stopped. Associative, with {@link stop} as identity: see {@link getUnionMonoid}.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * // quick retries first, then slow ones
 * const s = pipe(
 *   Schedule.fromDelays([10, 10]),
 *   Schedule.union(pipe(Schedule.constant(1000), Schedule.intersect(Schedule.recurs(4))))
 * )
 * assert.deepStrictEqual(Driver.delays(s), [10, 10, 1000, 1000])
 *
 * @category combinators
 * @since 0.1.0
 */
export const union = <In2>(that: Schedule<In2>): (<In1>(self: Schedule<In1>) => Schedule<In1 & In2>) =>
  binary('union', that, {
    initial: (self) => [self.initial, that.initial, LEFT | RIGHT],
    isState: (self, state) =>
      isTuple(state, 3) && self.isState(state[0]) && that.isState(state[1]) && isCountUpTo(LEFT | RIGHT)(state[2]),
    start: <In1>(self: Schedule<In1>, state: Json) => {
      const [s1, s2, bits] = state as readonly [Json, Json, number]
      const left: Stepper<In1 & In2> = self.stepper(s1)
      const right: Stepper<In1 & In2> = that.stepper(s2)
      let running = bits
      return {
        next: (cursor: Cursor<In1 & In2>) => {
          const d1 = running & LEFT ? left.next(cursor) : STOP
          const d2 = running & RIGHT ? right.next(cursor) : STOP
          running = (d1 < 0 ? 0 : LEFT) | (d2 < 0 ? 0 : RIGHT)
          if (d1 < 0) return d2
          if (d2 < 0) return d1
          return d1 <= d2 ? d1 : d2
        },
        state: () => [left.state(), right.state(), running]
      }
    },
    timeLimits: unbound(that)
  })

/**
 * Runs `self` until it stops, then `that` from its start.
 *
 * **Details**
 *
 * `that` takes over on the very failure that `self` stopped at, so no retry is lost between the two. Each
 * schedule counts its own retries (a `recurs(2)` second phase makes two more); status-based limits such as
 * {@link upTo} see the whole run's status. Associative, with {@link stop} as identity on both sides.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.fromDelays([0, 0]), Schedule.andThen(Schedule.fromDelays([500, 1000])))
 * assert.deepStrictEqual(Driver.delays(s), [0, 0, 500, 1000])
 *
 * @category combinators
 * @since 0.1.0
 */
export const andThen = <In2>(that: Schedule<In2>): (<In1>(self: Schedule<In1>) => Schedule<In1 & In2>) =>
  binary('andThen', that, {
    initial: (self) => [0, self.initial],
    isState: (self, state) =>
      isTuple(state, 2) && (state[0] === 0 ? self.isState(state[1]) : state[0] === 1 && that.isState(state[1])),
    start: <In1>(self: Schedule<In1>, state: Json) => {
      const [startPhase, s] = state as readonly [0 | 1, Json]
      let phase = startPhase
      let current: Stepper<In1 & In2> = phase === 0 ? self.stepper(s) : that.stepper(s)
      return {
        next: (cursor: Cursor<In1 & In2>) => {
          if (phase === 0) {
            const first = current.next(cursor)
            if (first >= 0) return first
            // `that` takes over on the very failure `self` stopped at.
            phase = 1
            current = that.stepper(that.initial)
          }
          return current.next(cursor)
        },
        state: () => [phase, current.state()]
      }
    },
    timeLimits: unbound(that)
  })

// -------------------------------------------------------------------------------------
// instances
// -------------------------------------------------------------------------------------

/**
 * The monoid of {@link intersect}: both must continue, the longer delay wins, `empty` is {@link forever}
 * (retry-ts's `Monoid`).
 *
 * **Details**
 *
 * Laws: `concat(concat(a, b), c) ≡ concat(a, concat(b, c))` and `concat(empty, a) ≡ a ≡ concat(a, empty)`, where
 * `≡` means "makes the same decisions for every input, status and random draw".
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { concatAll } from 'fp-ts/Monoid'
 * import * as assert from 'assert'
 *
 * const M = Schedule.getIntersectionMonoid<unknown>()
 * const s = concatAll(M)([Schedule.exponential(100), Schedule.recurs(3), Schedule.constant(150)])
 * assert.deepStrictEqual(Driver.delays(s), [150, 200, 400])
 *
 * @category instances
 * @since 0.1.0
 */
export const getIntersectionMonoid = <In>(): Monoid<Schedule<In>> => ({
  concat: (x, y) => intersect(y)(x),
  empty: forever
})

/**
 * The monoid of {@link union}: either may continue, the shorter delay of those continuing wins, `empty` is
 * {@link stop}.
 *
 * **Details**
 *
 * Laws: `concat(concat(a, b), c) ≡ concat(a, concat(b, c))` and `concat(empty, a) ≡ a ≡ concat(a, empty)`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { concatAll } from 'fp-ts/Monoid'
 * import * as assert from 'assert'
 *
 * const M = Schedule.getUnionMonoid<unknown>()
 * const s = concatAll(M)([Schedule.fromDelays([300, 300]), Schedule.fromDelays([100])])
 * assert.deepStrictEqual(Driver.delays(s), [100, 300])
 *
 * @category instances
 * @since 0.1.0
 */
export const getUnionMonoid = <In>(): Monoid<Schedule<In>> => ({
  concat: (x, y) => union(y)(x),
  empty: stop
})

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------
