/**
 * The runner: interprets a `Schedule` over an fp-ts `TaskEither`.
 *
 * `retrying` retries a failing `TaskEither` as the schedule says; `retryingWithStatus` gives the action the
 * retry status; `retryingReaderTaskEither` takes its clock and random from a `ReaderTaskEither` environment;
 * `repeating` runs again after each success while a schedule fed with the success value continues. One short
 * loop serves them all; its decisions are made by a {@link Driver.Driver}.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/Either'
import type { ReaderTaskEither } from 'fp-ts/ReaderTaskEither'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Breaker } from './Breaker'
import type { RetryBudget } from './Budget'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import * as Decision from './Decision'
import * as Driver from './Driver'
import * as Loop from './runner/loop'
import { attemptOf, signalledAttemptOf } from './runner/attempt'
import * as Event from './Event'
import * as Guard from './Guard'
import type * as model from './internal/model'
import { withKey } from './internal/observe'
import * as validate from './internal/validate'
import type { Random } from './Random'
import type { RetryState } from './RetryState'
import * as RetryStatus from './RetryStatus'
import type { Schedule } from './Schedule'
import { sleepersOf } from './internal/sleepers'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a run ended: its last attempt succeeded or failed and needs no further run (`retrying` stops on a
 * success, `repeating` on a failure), the schedule stopped, a retry budget refused the retry, a circuit breaker
 * was open (`'breaker'`), or the signal aborted.
 *
 * @example
 * import type { StopReason } from 'fp-ts-retry/Retry'
 *
 * const reason: StopReason = 'schedule'
 *
 * @category model
 * @since 0.1.0
 */
export type StopReason = model.StopReason

/**
 * What `onRetry` is told, before each sleep: the error the schedule was fed (the action's `Left`), the status it
 * decided with, the chosen delay and the run's {@link Driver.Driver}.
 *
 * @example
 * import type { Retried } from 'fp-ts-retry/Retry'
 *
 * const line = ({ error, status, delay }: Retried<Error>): string =>
 *   `attempt ${status.iterNumber} failed (${error.message}), next in ${delay} ms`
 *
 * @category model
 * @since 1.0.0
 */
export interface Retried<E, In = E> {
  readonly error: E
  readonly status: RetryStatus.RetryStatus
  readonly delay: number
  readonly driver: Driver.Driver<In>
}

/**
 * What `onDone` is told, once, at the end of a run: its final `Either`, a status, and why it ended.
 *
 * @example
 * import type { Ended } from 'fp-ts-retry/Retry'
 *
 * const line = ({ result, status, reason }: Ended<Error, number>): string =>
 *   `${result._tag === 'Right' ? result.right : result.left.message} after ${status.iterNumber + 1} attempts: ${reason}`
 *
 * @category model
 * @since 1.0.0
 */
export interface Ended<E, A> {
  readonly result: Either<E, A>
  readonly status: RetryStatus.RetryStatus
  readonly reason: StopReason
}

/**
 * Hooks into a run, for logging, metrics and persistence. They see every decision; they cannot change one. Each
 * is told one record (the same order everywhere: what happened, the status, then the decision).
 *
 * **Details**
 *
 * - `onRetry({ error, status, delay, driver })` is called before each sleep ({@link Retried}). When it returns a
 *   promise, the run awaits it before sleeping, and then sleeps until `driver.dueAt`, so the time the hook took
 *   is not slept again: persist a run with `onRetry: ({ driver }) => store.save(driver.snapshot())`.
 * - `onDone({ result, status, reason })` is called once ({@link Ended}): when the last attempt ended the run,
 *   the status at its end (`iterNumber` = retries made, so attempts = `iterNumber + 1`); when the schedule, a
 *   guard or the signal stopped it, the status of the last decision.
 * - `onEvent(event)` is told of every attempt, retry and stop as an `Event.Event` (`source: 'retry'`), and of what
 *   the schedule reports while deciding, such as a `Schedule.withHint` hint that was ignored (`HintIgnored`):
 *   plain records for logs and `fp-ts-retry/OpenTelemetry`.
 * - `key` (a string): the policy key the run goes through (a host, a tenant: see `Keyed`), set on every event the
 *   run tells (`event.key`), so that a run through a keyed policy is told with its key, as that policy's own
 *   events are.
 * - The hooks see the action's error and value types, inferred from the action in both forms: in a `pipe`
 *   (`pipe(action, retrying(schedule, { onRetry }))`, as `TaskEither.map` is typed by what it is applied to) and
 *   given the action first (`retrying(action, schedule, options)`). A runner made apart from any action with a
 *   typed hook (`const run = retrying(schedule, { onDone })`) is typed by its hooks: annotate them there.
 * - `onRetry` or `onDone` that throws (or whose promise rejects) makes the run reject with that error; `onEvent`
 *   that throws is reported as a warning and changes nothing (the one rule, in the `Event` module). An action that
 *   rejects is a defect, not a failure: the run rejects with it, `onDone` is not called, and `onEvent` is told
 *   `RunStopped` with reason `'defect'`.
 *
 * @example
 * import type { Hooks } from 'fp-ts-retry/Retry'
 *
 * const log: Array<string> = []
 * const hooks: Hooks<Error, Error, number> = {
 *   onRetry: ({ error, status, delay }) => {
 *     log.push(`attempt ${status.iterNumber} failed (${error.message}), waiting ${delay} ms`)
 *   },
 *   onDone: ({ result, status, reason }) => {
 *     log.push(`${result._tag === 'Right' ? result.right : result.left.message} after ${status.iterNumber + 1} attempts: ${reason}`)
 *   }
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface Hooks<In, E = In, A = unknown> {
  readonly onRetry?: ((retried: Retried<E, In>) => unknown) | undefined
  readonly onDone?: ((ended: Ended<E, A>) => void) | undefined
  readonly onEvent?: Event.Observer | undefined
  readonly key?: string | undefined
}

/**
 * Options of {@link retrying}, {@link retryingWithStatus}, {@link retryingWithContext} and {@link repeating}.
 *
 * **Details**
 *
 * - `clock` (default `Clock.live`) gives the time and the sleeps; `random` (default `Random.live`) the jitter.
 * - `signal`: once it aborts, no attempt starts and a sleep in progress ends at once; the run returns the last
 *   error. A signal already aborted before the first attempt makes the task reject with `signal.reason`, as
 *   `fetch` does: there is no error to return yet.
 * - `budget`: a shared {@link RetryBudget}, told of every attempt's outcome; when it refuses a retry the run ends
 *   with the last error, reason `'budget'`. Its answers may be promises (a budget shared through a server): the
 *   run awaits only those.
 * - `breaker`: a `Breaker.Breaker`, asked before each sleep whether the next attempt would be let through
 *   (`admitsIn(delay)`); when it would not (open past then, or half-open with every probe slot taken), the run
 *   ends at once with the last error, reason `'breaker'`, without sleeping. Wrap the action with `Breaker.protect`
 *   and the same breaker.
 * - `resume`: a stored {@link RetryState} to go on with instead of starting afresh (Haskell's `resumeRetrying`):
 *   the run restores a {@link Driver.Driver} from it, waits until its `dueAt`, then makes the attempt that was
 *   due. It must come from the same schedule (same `description`), else the task rejects with a
 *   `Driver.ScheduleMismatch`. Without a `random` option, a stored seeded position is restored.
 * - `attemptTimeout` (ms, or a function of the status that gives ms) with `onTimeout(ms)` (required with it: a
 *   `TypeError` otherwise; `ms` is the timeout the attempt had, as `Timeout.timeout` tells it): an attempt that
 *   has not settled in time counts as the failure `onTimeout(ms)`, a typed
 *   `Left` the schedule sees like any other. The timeout runs on `clock` (a `TestClock` drives it, and lists it
 *   as a `'timeout'` timer) and is clamped to what is left of the schedule's `upTo` limits. With
 *   {@link retryingWithContext} the attempt's signal aborts; with `retrying` and `retryingWithStatus` the attempt
 *   is abandoned, as it cannot be told to stop.
 * - `guards`: more {@link Guard.Guard}s, asked after the breaker and the budget (see the `Guard` module).
 *
 * @example
 * import type { RetryOptions } from 'fp-ts-retry/Retry'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as Random from 'fp-ts-retry/Random'
 *
 * const options: RetryOptions<Error> = { clock: TestClock.make(), random: Random.seeded(1), signal: AbortSignal.timeout(10_000) }
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryOptions<In, E = In, A = unknown> extends Hooks<In, E, A> {
  readonly clock?: Clock | undefined
  readonly random?: Random | undefined
  readonly signal?: AbortSignal | undefined
  readonly budget?: RetryBudget | undefined
  readonly breaker?: Breaker | undefined
  readonly guards?: ReadonlyArray<Guard.Guard> | undefined
  readonly resume?: RetryState | undefined
  readonly attemptTimeout?: number | ((status: RetryStatus.RetryStatus) => number) | undefined
  readonly onTimeout?: ((ms: number) => E) | undefined
}

/**
 * Options that hold a hook typed by the action (`onRetry` or `onDone`): given data-last, in a `pipe`, the runner
 * takes the action's error and value types from where it is applied (as `TaskEither.map` does), so that the hooks
 * see them; a runner given options without such a hook stays generic in the action it wraps.
 *
 * @example
 * import type { TypedHooks } from 'fp-ts-retry/Retry'
 *
 * const hooks: TypedHooks<Error, Error, number> = { onDone: ({ result }) => void result }
 *
 * @category model
 * @since 1.0.0
 */
export type TypedHooks<In, E, A> =
  | { readonly onRetry: (retried: Retried<E, In>) => unknown }
  | { readonly onDone: (ended: Ended<E, A>) => void }

/**
 * The environment of {@link retryingReaderTaskEither}: where a Reader-based service layer keeps its clock, its
 * random source, its shared retry budget and circuit breaker and, per request, an abort signal.
 *
 * @example
 * import type { RetryEnv } from 'fp-ts-retry/Retry'
 * import * as Clock from 'fp-ts-retry/Clock'
 * import * as Random from 'fp-ts-retry/Random'
 *
 * const env: RetryEnv = { clock: Clock.live, random: Random.live }
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryEnv {
  readonly clock: Clock
  readonly random: Random
  readonly signal?: AbortSignal | undefined
  readonly budget?: RetryBudget | undefined
  readonly breaker?: Breaker | undefined
  readonly guards?: ReadonlyArray<Guard.Guard> | undefined
}

/**
 * What `onRepeat` is told before each further run of {@link repeating}: the success value the schedule saw, the
 * status it decided with, the chosen delay and the run's {@link Driver.Driver}.
 *
 * @example
 * import type { Repeated } from 'fp-ts-retry/Retry'
 *
 * const line = ({ value, delay }: Repeated<number>): string => `got ${value}, again in ${delay} ms`
 *
 * @category model
 * @since 1.0.0
 */
export interface Repeated<In> {
  readonly value: In
  readonly status: RetryStatus.RetryStatus
  readonly delay: number
  readonly driver: Driver.Driver<In>
}

/**
 * Options of {@link repeating}: those of {@link retrying}, with `onRepeat` (told of each further run) in place
 * of `onRetry`.
 *
 * @example
 * import type { RepeatOptions } from 'fp-ts-retry/Retry'
 *
 * const seen: Array<number> = []
 * const options: RepeatOptions<number> = { onRepeat: ({ value }) => void seen.push(value) }
 *
 * @category model
 * @since 1.0.0
 */
export interface RepeatOptions<In, E = unknown, A = unknown> extends Omit<RetryOptions<In, E, A>, 'onRetry'> {
  readonly onRepeat?: ((repeated: Repeated<In>) => unknown) | undefined
}

/**
 * What {@link repeating} runs: the first input, the action, and how a success makes the next input.
 *
 * @example
 * import type { Program } from 'fp-ts-retry/Retry'
 * import * as TE from 'fp-ts/TaskEither'
 *
 * // page through results: each page's cursor is the next input
 * const pages: Program<string, Error, { items: Array<number>; cursor: string }> = {
 *   initial: '',
 *   action: (cursor) => TE.right({ items: [], cursor: cursor + '>' }),
 *   next: (page) => page.cursor
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface Program<S, E, A> {
  readonly initial: S
  readonly action: (input: S) => TaskEither<E, A>
  readonly next: (result: A, input: S) => S
}

// -------------------------------------------------------------------------------------
// set-up
// -------------------------------------------------------------------------------------

const makeRun = <In, E, A>(
  where: string,
  schedule: Schedule<In>,
  options: RetryOptions<In, E, A>,
  continueOn: Loop.Run<In>['continueOn'],
  readsStatus: boolean
): Loop.Run<In> => {
  validate.schedule(where, 'schedule', schedule)
  validate.object(where, 'options', options)
  validate.services(where, 'options', options)
  if (options.onRetry !== undefined) validate.callable(where, 'options.onRetry', options.onRetry)
  if (options.onDone !== undefined) validate.callable(where, 'options.onDone', options.onDone)
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  if (options.key !== undefined) validate.string(where, 'options.key', options.key)
  const { attemptTimeout, onTimeout } = options
  if (typeof attemptTimeout === 'number') validate.duration(where, 'options.attemptTimeout', attemptTimeout)
  else if (attemptTimeout !== undefined) validate.callable(where, 'options.attemptTimeout', attemptTimeout)
  if (attemptTimeout !== undefined) validate.callable(where, 'options.onTimeout', onTimeout)
  const readsTime =
    schedule.readsTime ||
    readsStatus ||
    attemptTimeout !== undefined ||
    options.onRetry !== undefined ||
    options.onDone !== undefined ||
    options.onEvent !== undefined ||
    options.resume !== undefined
  const clock = options.clock ?? LiveClock.live
  return {
    schedule,
    clock,
    sleepers: sleepersOf(clock),
    random: options.random,
    signal: options.signal,
    resume: options.resume,
    onRetry: options.onRetry as Loop.Run<In>['onRetry'],
    onEvent:
      options.key === undefined || options.onEvent === undefined
        ? options.onEvent
        : withKey(options.key, options.onEvent),
    source: 'retry',
    // The run's error and value types are known to the caller: the loop only passes the result along.
    onDone: options.onDone as Loop.Run<In>['onDone'],
    continueOn,
    where,
    timeout: attemptTimeout === undefined || onTimeout === undefined ? undefined : { after: attemptTimeout, onTimeout },
    ...timing(schedule, readsTime, Decision.guardsOf(where, options))
  }
}

/** Whether a run reads its clock: when something besides its guards does (`readsTime`), or one of its guards. */
const timing = <In>(
  schedule: Schedule<In>,
  readsTime: boolean,
  guards: ReadonlyArray<Guard.Guard>
): Pick<Loop.Run<In>, 'guards' | 'readsTime' | 'readsClock' | 'timesAttempts' | 'deadline'> => {
  const readsClock = readsTime || guards.some((guard) => guard.readsTime)
  return {
    guards,
    readsTime,
    readsClock,
    timesAttempts: readsClock && guards.length > 0,
    deadline: readsClock && schedule.timeLimits.some((limit) => limit._tag === 'Elapsed')
  }
}

/**
 * A runner in both forms (Effect's `dual`): data-last, `runner(schedule, options)(action)`, for a `pipe`; and
 * data-first, `runner(action, schedule, options)`, so that the hooks' types are inferred from the action. A
 * `Schedule` is an object and every action a function, so the first argument tells them apart.
 */
const dual =
  <S, O, F, T>(dataLast: (schedule: S, options?: O) => (action: F) => T) =>
  (...args: ReadonlyArray<unknown>): never =>
    (typeof args[0] === 'function'
      ? dataLast(args[1] as S, args[2] as O | undefined)(args[0] as F)
      : dataLast(args[0] as S, args[1] as O | undefined)) as never

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * Retries a `TaskEither` as `schedule` says: the first attempt runs at once; a `Right` ends the run; after a
 * `Left`, the schedule (fed with the error) decides whether to retry and after how long.
 *
 * **Details**
 *
 * - When the schedule stops, the run returns that last `Left`. The sleeps requested from the clock are exactly
 *   the schedule's delays; a zero delay does not go through a timer, and once retries have run for a millisecond
 *   since the event loop last turned, the run lets it turn, so timers and aborts always get through, whatever the
 *   delays and the clock.
 * - An action that rejects or throws is a defect, not a failure: it is not retried, and the rejection
 *   propagates unchanged.
 * - All set-up happens once, in `retrying(schedule, options)`: wrapping a `TaskEither` and running it adds
 *   no allocation beyond its own on the success path.
 * - `clock.now()` is read only when something looks at the time: a schedule whose `readsTime` is set (`upTo`,
 *   `fromPolicy`, `make` by default), a hook, a budget, `resume`, or the action of `retryingWithStatus`. A run of the
 *   built-in delay schedules and their combinations, without those, never reads it.
 * - The schedule's input type must accept the error type `E`.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as E from 'fp-ts/Either'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   let calls = 0
 *   const flaky: TE.TaskEither<string, number> = () => Promise.resolve(++calls < 3 ? E.left('busy') : E.right(42))
 *   const clock = TestClock.make()
 *   const run = pipe(flaky, retrying(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(5))), { clock }))()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Right', right: 42 })
 *   assert.deepStrictEqual(clock.sleeps, [100, 200])
 * }
 * main()
 *
 * @category interpreters
 * @since 0.1.0
 */
export const retrying: {
  <In, E extends In, A>(schedule: Schedule<In>, options: RetryOptions<In, E, A> & TypedHooks<In, E, A>): (
    action: TaskEither<E, A>
  ) => TaskEither<E, A>
  <In>(schedule: Schedule<In>, options?: RetryOptions<In>): <E extends In, A>(
    action: TaskEither<E, A>
  ) => TaskEither<E, A>
  <In, E extends In, A>(schedule: Schedule<In>, options: RetryOptions<In, E, A>): (
    action: TaskEither<E, A>
  ) => TaskEither<E, A>
  <E extends In, A, In>(action: TaskEither<E, A>, schedule: Schedule<In>, options?: RetryOptions<In, E, A>): TaskEither<
    E,
    A
  >
} = dual(<In>(schedule: Schedule<In>, options: RetryOptions<In> = {}) => {
  const run = makeRun('retrying', schedule, options, 'Left', false)
  return (action: TaskEither<unknown, unknown>): TaskEither<unknown, unknown> => {
    const attempt = attemptOf(run, () => action())
    return () => Loop.loop(run, attempt)
  }
})

/**
 * Like {@link retrying}, for an action that needs the retry status (for instance to log the attempt number or
 * to shorten its own timeout as the run goes on).
 *
 * **Details**
 *
 * The action receives `RetryStatus.initial` on the first attempt; later, `iterNumber` is the number of retries
 * made so far and `elapsed` is read when the attempt starts.
 *
 * @example
 * import { retryingWithStatus } from 'fp-ts-retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const attempt = (status: { iterNumber: number }) =>
 *     status.iterNumber < 2 ? TE.left(`attempt ${status.iterNumber + 1} failed`) : TE.right(`attempt ${status.iterNumber + 1}`)
 *   const result = await pipe(attempt, retryingWithStatus(Schedule.recurs(5)))()
 *   assert.deepStrictEqual(result, { _tag: 'Right', right: 'attempt 3' })
 * }
 * main()
 *
 * @category interpreters
 * @since 0.1.0
 */
export const retryingWithStatus: {
  <In, E extends In, A>(schedule: Schedule<In>, options: RetryOptions<In, E, A> & TypedHooks<In, E, A>): (
    action: (status: RetryStatus.RetryStatus) => TaskEither<E, A>
  ) => TaskEither<E, A>
  <In>(schedule: Schedule<In>, options?: RetryOptions<In>): <E extends In, A>(
    action: (status: RetryStatus.RetryStatus) => TaskEither<E, A>
  ) => TaskEither<E, A>
  <In, E extends In, A>(schedule: Schedule<In>, options: RetryOptions<In, E, A>): (
    action: (status: RetryStatus.RetryStatus) => TaskEither<E, A>
  ) => TaskEither<E, A>
  <E extends In, A, In>(
    action: (status: RetryStatus.RetryStatus) => TaskEither<E, A>,
    schedule: Schedule<In>,
    options?: RetryOptions<In, E, A>
  ): TaskEither<E, A>
} = dual(<In>(schedule: Schedule<In>, options: RetryOptions<In> = {}) => {
  const run = makeRun('retryingWithStatus', schedule, options, 'Left', true)
  return (action: (status: RetryStatus.RetryStatus) => TaskEither<unknown, unknown>): TaskEither<unknown, unknown> => {
    const attempt = attemptOf(run, (driver) => action(driver.statusAt(run.clock.now()))())
    return () => Loop.loop(run, attempt)
  }
})

/**
 * What {@link retryingWithContext} hands each attempt: the run's status and a signal that aborts when the run is
 * aborted or the attempt times out.
 *
 * @example
 * import type { AttemptContext } from 'fp-ts-retry/Retry'
 *
 * const describe = (context: AttemptContext): string =>
 *   `attempt ${context.status.iterNumber + 1}${context.signal.aborted ? ' (aborted)' : ''}`
 *
 * @category model
 * @since 1.0.0
 */
export interface AttemptContext {
  readonly status: RetryStatus.RetryStatus
  readonly signal: AbortSignal
}

/**
 * Like {@link retrying}, for an action that can be cancelled: each attempt receives an {@link AttemptContext},
 * whose `signal` aborts when the run's `signal` does or when the attempt times out (cockatiel hands its policies
 * `{ signal, attempt }`). Pass it on to `fetch` or to the driver of a database.
 *
 * **Details**
 *
 * - With `options.attemptTimeout` (ms, or a function of the status) an attempt that has not settled in time is
 *   aborted through its signal and counts as the failure `options.onTimeout()`, a typed `Left` the schedule sees
 *   like any other. The timeout runs on the run's clock, so a `TestClock` drives it.
 * - When the schedule holds an `upTo` limit, an attempt's timeout is clamped to what is left of it (gax's
 *   `totalTimeout`), so the run ends on time even when an attempt hangs.
 * - The same options work with {@link retrying} and {@link retryingWithStatus}; there the timed-out attempt is
 *   abandoned, since it cannot be told to stop.
 * - Each attempt has a signal of its own, linked to the run's while the attempt runs: listeners an attempt adds
 *   to it go with it, however many runs share one `options.signal`. It is not aborted once the attempt has
 *   settled, so a response it returns can still be read.
 *
 * @example
 * import { retryingWithContext } from 'fp-ts-retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const aborted: Array<number> = []
 *   // the first attempt hangs until aborted; the second answers at once
 *   const action = ({ status, signal }: { status: { iterNumber: number }; signal: AbortSignal }): TE.TaskEither<string, string> =>
 *     status.iterNumber === 0
 *       ? () => new Promise((resolve) => signal.addEventListener('abort', () => { aborted.push(clock.now()); resolve({ _tag: 'Left', left: 'aborted' }) }))
 *       : TE.right('ok')
 *   const run = pipe(
 *     action,
 *     retryingWithContext(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(2))), {
 *       clock,
 *       attemptTimeout: 1_000,
 *       onTimeout: () => 'timeout'
 *     })
 *   )()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Right', right: 'ok' })
 *   assert.deepStrictEqual(aborted, [1_000])
 *   assert.deepStrictEqual(clock.sleeps, [100]) // the backoffs
 *   assert.deepStrictEqual(clock.sleepsOf('timeout'), [1_000, 1_000]) // each attempt's timeout is a sleep on the clock too
 * }
 * main()
 *
 * @category interpreters
 * @since 1.0.0
 */
export const retryingWithContext: {
  <In, E extends In, A>(schedule: Schedule<In>, options: RetryOptions<In, E, A> & TypedHooks<In, E, A>): (
    action: (context: AttemptContext) => TaskEither<E, A>
  ) => TaskEither<E, A>
  <In>(schedule: Schedule<In>, options?: RetryOptions<In>): <E extends In, A>(
    action: (context: AttemptContext) => TaskEither<E, A>
  ) => TaskEither<E, A>
  <In, E extends In, A>(schedule: Schedule<In>, options: RetryOptions<In, E, A>): (
    action: (context: AttemptContext) => TaskEither<E, A>
  ) => TaskEither<E, A>
  <E extends In, A, In>(
    action: (context: AttemptContext) => TaskEither<E, A>,
    schedule: Schedule<In>,
    options?: RetryOptions<In, E, A>
  ): TaskEither<E, A>
} = dual(<In>(schedule: Schedule<In>, options: RetryOptions<In> = {}) => {
  const run = makeRun('retryingWithContext', schedule, options, 'Left', true)
  return (action: (context: AttemptContext) => TaskEither<unknown, unknown>): TaskEither<unknown, unknown> => {
    const attempt = signalledAttemptOf(run, (driver, signal) =>
      action({ status: driver.statusAt(run.clock.now()), signal })()
    )
    return () => Loop.loop(run, attempt)
  }
})

/**
 * Like {@link retrying}, for a `ReaderTaskEither` whose environment provides the clock, the random source and
 * optionally the abort signal ({@link RetryEnv}), so a Reader-based service layer injects them once.
 *
 * **Details**
 *
 * The clock, the random source and the abort signal come from the environment, read on each run; hooks come
 * from `options`. The action receives the same environment.
 *
 * @example
 * import { retryingReaderTaskEither } from 'fp-ts-retry'
 * import type { RetryEnv } from 'fp-ts-retry/Retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as RTE from 'fp-ts/ReaderTaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * interface Env extends RetryEnv { readonly endpoint: string }
 *
 * async function main() {
 *   const fetchUser: RTE.ReaderTaskEither<Env, string, string> = (env) => async () => ({ _tag: 'Left', left: `${env.endpoint} is down` })
 *   const clock = TestClock.make()
 *   const run = pipe(fetchUser, retryingReaderTaskEither(Schedule.fromDelays([100, 200])))({ clock, random: Random.seeded(1), endpoint: 'users' })()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Left', left: 'users is down' })
 *   assert.deepStrictEqual(clock.sleeps, [100, 200])
 * }
 * main()
 *
 * @category interpreters
 * @since 0.1.0
 */
export const retryingReaderTaskEither: {
  <In, E extends In, A>(schedule: Schedule<In>, options: Hooks<In, E, A> & TypedHooks<In, E, A>): <R>(
    action: ReaderTaskEither<R, E, A>
  ) => ReaderTaskEither<R & RetryEnv, E, A>
  <In>(schedule: Schedule<In>, options?: Hooks<In>): <R, E extends In, A>(
    action: ReaderTaskEither<R, E, A>
  ) => ReaderTaskEither<R & RetryEnv, E, A>
  <In, E extends In, A>(schedule: Schedule<In>, options: Hooks<In, E, A>): <R>(
    action: ReaderTaskEither<R, E, A>
  ) => ReaderTaskEither<R & RetryEnv, E, A>
} = <In>(
  schedule: Schedule<In>,
  options: Hooks<In> = {}
): (<R, E extends In, A>(action: ReaderTaskEither<R, E, A>) => ReaderTaskEither<R & RetryEnv, E, A>) => {
  const where = 'retryingReaderTaskEither'
  const template = makeRun(where, schedule, options, 'Left', false)
  return (action) => (env) => {
    validate.services(where, 'env', validate.object(where, 'env', env), true)
    const run: Loop.Run<In> = {
      ...template,
      clock: env.clock,
      sleepers: sleepersOf(env.clock),
      random: env.random,
      signal: env.signal,
      ...timing(schedule, template.readsTime, Decision.guardsOf(`${where}: env`, env))
    }
    return () => Loop.loop(run, () => action(env)())
  }
}

/**
 * Runs an action again after each success, for as long as `schedule` (fed with the success value) continues,
 * and collects the results in order: like `collect_and_retry` of the Rust crate `again`.
 *
 * **Details**
 *
 * - `initial` is the first run's input; after a success `a`, the next run's input is `next(a, input)`.
 * - The schedule sees each success value and decides whether to run again and after how long; use
 *   `whileInput` to stop on a value, `recurs(n)` for `n` more runs.
 * - A `Left` ends the run at once with that error. To retry failures inside each run, wrap the action with
 *   {@link retrying} first.
 * - Hooks ({@link RepeatOptions}): `onRepeat({ value, status, delay, driver })` is called before each further
 *   run, with the success value the schedule saw; `onDone` and `onEvent` as for {@link retrying}.
 *
 * @example
 * import { repeating } from 'fp-ts-retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   // run with 0, 1, ... while the result is below 3
 *   const run = repeating(pipe(Schedule.forever, Schedule.whileInput((n: number) => n < 3)))({
 *     initial: 0,
 *     action: (n: number) => TE.right(n + 1),
 *     next: (result) => result
 *   })
 *   assert.deepStrictEqual(await run(), { _tag: 'Right', right: [1, 2, 3] })
 * }
 * main()
 *
 * @category interpreters
 * @since 0.1.0
 */
export const repeating: {
  <In, E, A extends In>(
    schedule: Schedule<In>,
    options: RepeatOptions<In, E, A> & { readonly onDone: (ended: Ended<E, A>) => void }
  ): <S>(program: Program<S, E, A>) => TaskEither<E, ReadonlyArray<A>>
  <In>(schedule: Schedule<In>, options?: RepeatOptions<In>): <S, E, A extends In>(
    program: Program<S, E, A>
  ) => TaskEither<E, ReadonlyArray<A>>
  <In, E, A extends In>(schedule: Schedule<In>, options: RepeatOptions<In, E, A>): <S>(
    program: Program<S, E, A>
  ) => TaskEither<E, ReadonlyArray<A>>
} = <In>(
  schedule: Schedule<In>,
  options: RepeatOptions<In> = {}
): (<S, E, A extends In>(program: Program<S, E, A>) => TaskEither<E, ReadonlyArray<A>>) => {
  const where = 'repeating'
  validate.object(where, 'options', options)
  const { onRepeat, ...rest } = options
  if (onRepeat !== undefined) validate.callable(where, 'options.onRepeat', onRepeat)
  const onRetry =
    onRepeat === undefined
      ? undefined
      : ({ error, status, delay, driver }: Retried<unknown, In>) =>
          onRepeat({ value: error as In, status, delay, driver })
  const run = makeRun(where, schedule, { ...rest, onRetry }, 'Right', false)
  return <S, E, A extends In>({ initial, action, next }: Program<S, E, A>): TaskEither<E, ReadonlyArray<A>> =>
    async () => {
      const results: Array<A> = []
      let input = initial
      const last = await Loop.loop(run, () =>
        action(input)().then((result) => {
          if (result._tag === 'Right') {
            results.push(result.right)
            input = next(result.right, input)
          }
          return result
        })
      )
      return last._tag === 'Left' ? last : { _tag: 'Right', right: results }
    }
}
