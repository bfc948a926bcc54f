/**
 * The runner: interprets a `Schedule` over an fp-ts `TaskEither`.
 *
 * `retrying` retries a failing `TaskEither` as the schedule says; `retryingWithStatus` gives the action the
 * retry status; `retryingReaderTaskEither` takes its clock and random from a `ReaderTaskEither` environment;
 * `repeating` runs again after each success while a schedule fed with the success value continues. One loop
 * serves them all.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/Either'
import type { ReaderTaskEither } from 'fp-ts/ReaderTaskEither'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { RetryBudget } from './Budget'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import { Progress } from './internal/Progress'
import { isTimeless } from './internal/timeless'
import * as validate from './internal/validate'
import type { Random } from './Random'
import * as Rand from './Random'
import type { RetryState } from './RetryState'
import { check, fromProgress, toProgress } from './RetryState'
import * as RetryStatus from './RetryStatus'
import type { Schedule } from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a run ended: its last attempt succeeded or failed and needs no further run (`retrying` stops on a
 * success, `repeating` on a failure), the schedule stopped, a retry budget refused the retry, or the signal
 * aborted.
 *
 * @example
 * import type { StopReason } from 'fp-ts-retry/Retry'
 *
 * const reason: StopReason = 'schedule'
 *
 * @category model
 * @since 0.1.0
 */
export type StopReason = 'succeeded' | 'failed' | 'schedule' | 'budget' | 'aborted'

/**
 * Hooks into a run, for logging and metrics. They see every decision; they cannot change one.
 *
 * **Details**
 *
 * - `onRetry(input, status, delay)` is called before each sleep, with the input the schedule saw (for
 *   `retrying`, the error), the status it decided with, and the chosen delay.
 * - `onDone(result, status, reason)` is called once, with the run's final `Either`, why it ended and a status:
 *   when the last attempt ended the run, the status at its end (`iterNumber` = retries made, so attempts =
 *   `iterNumber + 1`); when the schedule stopped or the signal aborted, the status of the last decision.
 * - A hook that throws makes the run reject with that error.
 *
 * @example
 * import type { Hooks } from 'fp-ts-retry/Retry'
 *
 * const log: Array<string> = []
 * const hooks: Hooks<Error> = {
 *   onRetry: (error, status, delay) => log.push(`attempt ${status.iterNumber + 1} failed (${error.message}), waiting ${delay} ms`),
 *   onDone: (result, status, reason) => log.push(`${result._tag} after ${status.iterNumber + 1} attempts: ${reason}`)
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface Hooks<In> {
  readonly onRetry?: (input: In, status: RetryStatus.RetryStatus, delay: number) => void
  readonly onDone?: (result: Either<unknown, unknown>, status: RetryStatus.RetryStatus, reason: StopReason) => void
}

/**
 * Options of {@link retrying}, {@link retryingWithStatus} and {@link repeating}.
 *
 * **Details**
 *
 * - `clock` (default `Clock.live`) gives the time and the sleeps; `random` (default `Random.live`) the jitter.
 * - `signal`: once it aborts, no attempt starts and a sleep in progress ends at once; the run returns the last
 *   error. A signal already aborted before the first attempt makes the task reject with `signal.reason`, as
 *   `fetch` does: there is no error to return yet.
 * - `budget`: a shared {@link RetryBudget} told of every attempt and asked before every retry.
 * - `persist`: called with the run's {@link RetryState} after each decision to retry, and awaited before the
 *   sleep, so that a store can write it (atomically) first; the sleep then lasts until the state's `dueAt`, so
 *   the time the store took is not slept again.
 * - `resume`: a stored {@link RetryState} to go on with instead of starting afresh: the run waits until its
 *   `dueAt`, then makes the attempt that was due. It must come from the same schedule (same `description`),
 *   else the task rejects with a `ScheduleMismatch`. Without a `random` option, a stored seeded position is
 *   restored with `Random.fromState`.
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
export interface RetryOptions<In> extends Hooks<In> {
  readonly clock?: Clock
  readonly random?: Random
  readonly signal?: AbortSignal
  readonly budget?: RetryBudget
  readonly resume?: RetryState
  readonly persist?: (state: RetryState) => void | Promise<void>
}

/**
 * The environment of {@link retryingReaderTaskEither}: where a Reader-based service layer keeps its clock, its
 * random source, its shared retry budget and, per request, an abort signal.
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
  readonly signal?: AbortSignal
  readonly budget?: RetryBudget
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
// the loop
// -------------------------------------------------------------------------------------

/** Consecutive zero-delay retries after which the loop lets the event loop run (timers, I/O, aborts). */
const YIELD_EVERY = 1024

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface Run<In> {
  readonly schedule: Schedule<In>
  readonly clock: Clock
  readonly random: Random
  readonly signal: AbortSignal | undefined
  readonly budget: RetryBudget | undefined
  readonly persist: RetryOptions<In>['persist']
  readonly resume: RetryState | undefined
  /** No `random` was given: a resumed run restores the stored seeded position. */
  readonly restoreRandom: boolean
  readonly hooks: Hooks<In>
  /** The side of the `Either` that asks the schedule for another run: `Left` to retry, `Right` to repeat. */
  readonly continueOn: 'Left' | 'Right'
  /**
   * Whether anything looks at the run's time: a schedule that may read it (not known timeless), hooks (their
   * statuses), a budget, a store or a resumed run; an action given the status is told per run. When nothing
   * does, the clock is not read at all: a read costs about as much as awaiting an attempt that settles at once.
   */
  readonly readsClock: boolean
}

type Attempt<R> = (status: RetryStatus.RetryStatus) => Promise<R>

/**
 * The one loop behind every runner: attempt, ask the schedule about the outcome, sleep, attempt again.
 * `attempt` receives the status only when `withStatus` is set, so the plain forms build none.
 * The first attempt is kept apart from the rest so that the common case, a first attempt that needs no
 * retry, reads the clock at most once and allocates nothing of ours.
 */
const loop = async <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  attempt: Attempt<R>,
  withStatus: boolean
): Promise<R> => {
  const signal = run.signal
  if (signal?.aborted) throw signal.reason
  if (run.resume !== undefined) return resumeLoop(run, attempt, withStatus, run.resume)
  // Nobody sees the start of a run that reads no clock (see `Run.readsClock`).
  const start = run.readsClock || withStatus ? run.clock.now() : 0
  const first = await timed(run, attempt, RetryStatus.initial)
  if (first._tag === run.continueOn) return retryLoop(run, attempt, withStatus, first, new Progress(run.schedule, start))
  const onDone = run.hooks.onDone
  if (onDone !== undefined) {
    const status = new Progress(run.schedule, start).statusAt(run.clock.now())
    onDone(first, status, first._tag === 'Right' ? 'succeeded' : 'failed')
  }
  return first
}

/** Goes on with a stored run: wait until the attempt that was due is due, make it, and carry on. */
const resumeLoop = async <In, R extends Either<unknown, unknown>>(
  given: Run<In>,
  attempt: Attempt<R>,
  withStatus: boolean,
  stored: RetryState
): Promise<R> => {
  const checked = check(given.schedule, stored)
  if (checked._tag === 'Left') throw checked.left
  // A resumed run draws from where the stored one stopped, unless told otherwise.
  const run =
    given.restoreRandom && stored.random !== null ? { ...given, random: Rand.fromState(stored.random) } : given
  const { clock, signal } = run
  const progress = toProgress(run.schedule, stored)
  const wait = stored.dueAt - clock.now()
  if (wait > 0) await clock.sleep(wait, signal)
  // There is no error in hand to return (it was seen before the restart), so an abort rejects, as before a start.
  if (signal?.aborted) throw signal.reason
  const result = await timed(run, attempt, withStatus ? progress.statusAt(clock.now()) : RetryStatus.initial)
  return retryLoop(run, attempt, withStatus, result, progress)
}

/** Runs one attempt, telling the budget (if any) how it went. Not `async`: without a budget it adds no step. */
const timed = <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  attempt: Attempt<R>,
  status: RetryStatus.RetryStatus
): Promise<R> => {
  const budget = run.budget
  if (budget === undefined) return attempt(status)
  const clock = run.clock
  const started = clock.now()
  return attempt(status).then((result) => {
    const ended = clock.now()
    budget.record(result._tag === 'Right', ended - started, ended)
    return result
  })
}

/** The time, when something looks at it (see `Run.readsClock`); else the run's start, which nobody sees. */
const timeOf = <In>(run: Run<In>, withStatus: boolean, progress: Progress<In>): number =>
  run.readsClock || withStatus ? run.clock.now() : progress.start

const retryLoop = async <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  attempt: Attempt<R>,
  withStatus: boolean,
  result: R,
  progress: Progress<In>
): Promise<R> => {
  // `run.x` rather than local copies: an async function saves and restores its live locals at every await, and
  // with a dozen of them that cost about a tenth of a zero-delay retry.
  let zeroDelays = 0
  while (result._tag === run.continueOn) {
    const hooks = run.hooks
    // An abort that came while the attempt ran: no decision, no hook, no sleep.
    if (run.signal?.aborted) {
      return finish(result, progress.statusAt(timeOf(run, withStatus, progress)), 'aborted', hooks)
    }
    const input = (result._tag === 'Left' ? result.left : result.right) as In
    const now = timeOf(run, withStatus, progress)
    const decision = progress.decide(input, now, run.random)
    if (decision._tag === 'Done') return finish(result, progress.status, 'schedule', hooks)
    if (run.budget !== undefined && !run.budget.allowRetry(now)) return finish(result, progress.status, 'budget', hooks)
    const delay = decision.delay
    let wait = delay
    if (run.persist !== undefined) {
      await run.persist(fromProgress(progress, now + delay, run.random))
      // The stored state says the attempt is due at now + delay: the time the store took is not slept again.
      const spent = run.clock.now() - now
      if (spent > 0) wait = spent < delay ? delay - spent : 0
    }
    hooks.onRetry?.(input, progress.status, delay)
    if (wait > 0) {
      zeroDelays = 0
      await run.clock.sleep(wait, run.signal)
    } else if (++zeroDelays === YIELD_EVERY) {
      zeroDelays = 0
      await yieldToEventLoop()
    }
    if (run.signal?.aborted) return finish(result, progress.status, 'aborted', run.hooks)
    result = await timed(run, attempt, withStatus ? progress.statusAt(run.clock.now()) : RetryStatus.initial)
  }
  const reason = result._tag === 'Right' ? 'succeeded' : 'failed'
  return finish(result, progress.statusAt(timeOf(run, withStatus, progress)), reason, run.hooks)
}

const finish = <R extends Either<unknown, unknown>, In>(
  result: R,
  status: RetryStatus.RetryStatus,
  reason: StopReason,
  hooks: Hooks<In>
): R => {
  hooks.onDone?.(result, status, reason)
  return result
}

const makeRun = <In>(
  where: string,
  schedule: Schedule<In>,
  options: RetryOptions<In>,
  continueOn: Run<In>['continueOn']
): Run<In> => {
  if (schedule === null || typeof schedule !== 'object' || typeof schedule.step !== 'function') {
    throw new TypeError(`${where}: schedule must be a Schedule, received ${String(schedule)}`)
  }
  if (options.onRetry !== undefined) validate.callable(where, 'options.onRetry', options.onRetry)
  if (options.onDone !== undefined) validate.callable(where, 'options.onDone', options.onDone)
  if (options.persist !== undefined) validate.callable(where, 'options.persist', options.persist)
  return {
    schedule,
    clock: options.clock ?? LiveClock.live,
    random: options.random ?? Rand.live,
    signal: options.signal,
    budget: options.budget,
    persist: options.persist,
    resume: options.resume,
    restoreRandom: options.random === undefined,
    hooks: { onRetry: options.onRetry, onDone: options.onDone },
    continueOn,
    readsClock:
      !isTimeless(schedule) ||
      options.onRetry !== undefined ||
      options.onDone !== undefined ||
      options.budget !== undefined ||
      options.persist !== undefined ||
      options.resume !== undefined
  }
}

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
 *   the schedule's delays; a zero delay does not go through a timer.
 * - An action that rejects or throws is a defect, not a failure: it is not retried, and the rejection
 *   propagates unchanged.
 * - All set-up happens once, in `retrying(schedule, options)`: wrapping a `TaskEither` and running it adds
 *   no allocation beyond its own on the success path.
 * - `clock.now()` is read only when something looks at the time: a schedule that may (`upTo`, `fromPolicy`,
 *   `make`), a hook, a budget, `persist`, `resume`, or the action of `retryingWithStatus`. A run of the
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
export const retrying = <In>(
  schedule: Schedule<In>,
  options: RetryOptions<In> = {}
): (<E extends In, A>(action: TaskEither<E, A>) => TaskEither<E, A>) => {
  const run = makeRun('retrying', schedule, options, 'Left')
  return (action) => () => loop(run, action, false)
}

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
export const retryingWithStatus = <In>(
  schedule: Schedule<In>,
  options: RetryOptions<In> = {}
): (<E extends In, A>(action: (status: RetryStatus.RetryStatus) => TaskEither<E, A>) => TaskEither<E, A>) => {
  const run = makeRun('retryingWithStatus', schedule, options, 'Left')
  return (action) => () => loop(run, (status) => action(status)(), true)
}

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
export const retryingReaderTaskEither = <In>(
  schedule: Schedule<In>,
  options: Hooks<In> = {}
): (<R extends RetryEnv, E extends In, A>(action: ReaderTaskEither<R, E, A>) => ReaderTaskEither<R, E, A>) => {
  const template = makeRun('retryingReaderTaskEither', schedule, options, 'Left')
  return (action) => (env) => () =>
    loop(
      {
        ...template,
        clock: env.clock,
        random: env.random,
        signal: env.signal,
        budget: env.budget,
        readsClock: template.readsClock || env.budget !== undefined
      },
      () => action(env)(),
      false
    )
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
 * - Hooks: `onRetry` is called before each further run, with the success value.
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
export const repeating = <In>(
  schedule: Schedule<In>,
  options: RetryOptions<In> = {}
): (<S, E, A extends In>(program: Program<S, E, A>) => TaskEither<E, ReadonlyArray<A>>) => {
  const run = makeRun('repeating', schedule, options, 'Right')
  return <S, E, A extends In>({ initial, action, next }: Program<S, E, A>): TaskEither<E, ReadonlyArray<A>> =>
    async () => {
      const results: Array<A> = []
      let input = initial
      const last = await loop(
        run,
        () =>
          action(input)().then((result) => {
            if (result._tag === 'Right') {
              results.push(result.right)
              input = next(result.right, input)
            }
            return result
          }),
        false
      )
      return last._tag === 'Left' ? last : { _tag: 'Right', right: results }
    }
}
