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
import type { Either, Left, Right } from 'fp-ts/Either'
import type { ReaderTaskEither } from 'fp-ts/ReaderTaskEither'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Breaker } from './Breaker'
import type { RetryBudget } from './Budget'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import * as Decision from './Decision'
import * as Driver from './Driver'
import * as Event from './Event'
import * as Guard from './Guard'
import type * as model from './internal/model'
import { noop, onAbort } from './internal/abort'
import * as validate from './internal/validate'
import type { Random } from './Random'
import type { RetryState } from './RetryState'
import * as RetryStatus from './RetryStatus'
import * as Timeout from './Timeout'
import type { Schedule } from './Schedule'
import { isPromise } from './internal/promise'
import { sleepersOf, type Sleepers, type Wakeable } from './internal/sleepers'

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
 * @since 0.2.0
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
 * @since 0.2.0
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
 * - The hooks see the action's error and value types, inferred from the action in both forms: in a `pipe`
 *   (`pipe(action, retrying(schedule, { onRetry }))`, as `TaskEither.map` is typed by what it is applied to) and
 *   given the action first (`retrying(action, schedule, options)`). A runner made apart from any action with a
 *   typed hook (`const run = retrying(schedule, { onDone })`) is typed by its hooks: annotate them there.
 * - A hook that throws (or whose promise rejects) makes the run reject with that error. An action that rejects
 *   is a defect, not a failure: the run rejects with it and `onDone` is not called.
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
 *   (`admitsIn(delay)`); when it would not (open past then, or a probe in flight), the run ends at once with the
 *   last error, reason `'breaker'`, without sleeping. Wrap the action with `Breaker.guard` and the same breaker.
 * - `resume`: a stored {@link RetryState} to go on with instead of starting afresh (Haskell's `resumeRetrying`):
 *   the run restores a {@link Driver.Driver} from it, waits until its `dueAt`, then makes the attempt that was
 *   due. It must come from the same schedule (same `description`), else the task rejects with a
 *   `Driver.ScheduleMismatch`. Without a `random` option, a stored seeded position is restored.
 * - `attemptTimeout` (ms, or a function of the status that gives ms) with `onTimeout` (required with it: a
 *   `TypeError` otherwise): an attempt that has not settled in time counts as the failure `onTimeout()`, a typed
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
  readonly onTimeout?: (() => E) | undefined
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

/** `attemptTimeout` and `onTimeout`, checked together. */
interface AttemptTimeout<E> {
  readonly after: number | ((status: RetryStatus.RetryStatus) => number)
  readonly onTimeout: () => E
}

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
 * @since 0.2.0
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
 * @since 0.2.0
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
// the loop
// -------------------------------------------------------------------------------------

/**
 * Retries whose waits go through no timer (a zero delay, a tiny one that `Clock.live` serves at once, or a clock
 * whose `sleep` settles by promise jobs alone) never let the event loop run by themselves, and the loop cannot
 * tell which sleeps did. So every `CHECK_EVERY` retries it looks at the process's time (not the run's clock: this
 * is about the event loop, and a test clock does not move), and once `YIELD_AFTER_MS` have passed since it last
 * let the event loop turn, it lets it turn, so that timers, I/O and aborts get through. A turn costs about as much
 * as a thousand retries of an action that settles at once: a fast action pays ~1%, a slow one (a busy millisecond
 * per attempt) still lets timers through within ~2 · `CHECK_EVERY` attempts, and retries that slept on a timer
 * pay one turn every `2 · CHECK_EVERY`.
 */
const CHECK_EVERY = 64
const YIELD_AFTER_MS = 1

/** Everything a run needs, set up once per `retrying(...)`. */
interface Run<In> {
  readonly schedule: Schedule<In>
  readonly clock: Clock
  /** The queue behind `clock` when it is a live clock: a run sleeps on it with no promise (see `Going.sleep`). */
  readonly sleepers: Sleepers | undefined
  readonly random: Random | undefined
  readonly signal: AbortSignal | undefined
  /** The breaker, the budget and the run's own guards, in that order (`Decision.guardsOf`). */
  readonly guards: ReadonlyArray<Guard.Guard>
  readonly resume: RetryState | undefined
  readonly onRetry: ((retried: Retried<unknown, In>) => unknown) | undefined
  readonly onEvent: Event.Observer | undefined
  /** Who the events say reported them. */
  readonly source: Event.Source
  readonly onDone: ((ended: Ended<unknown, unknown>) => void) | undefined
  /** The side of the `Either` that asks the schedule for another run: `Left` to retry, `Right` to repeat. */
  readonly continueOn: 'Left' | 'Right'
  /** The runner's name, for the errors found while running. */
  readonly where: string
  readonly timeout: AttemptTimeout<unknown> | undefined
  /**
   * Whether anything besides the guards looks at the run's time: a schedule that reads it, hooks (their statuses),
   * a timeout, the action's status or a resumed run (see {@link readsClock}).
   */
  readonly readsTime: boolean
  /** `readsTime`, or a guard that reads it: when nothing does, the clock is not read at all (a read costs about as
   * much as awaiting an attempt that settles at once). */
  readonly readsClock: boolean
  /** Whether an attempt's start is read for the guards (a budget told latencies), on an unobserved run. */
  readonly timesAttempts: boolean
  /**
   * Whether the schedule holds a deadline (`upTo`) that the run's clock is read for: a retry is then checked against
   * it once its hook has run, so that none starts past it (see `Decision.due`).
   */
  readonly deadline: boolean
}

/** Where an attempt reads the run's status. */
interface Progress {
  readonly statusAt: (now: number) => RetryStatus.RetryStatus
}

/** One attempt, given where to read the run's status and the signal the attempt may watch. */
type Attempt<R> = (progress: Progress, signal: AbortSignal | undefined) => Promise<R>

/** An attempt that is handed a signal of its own (see {@link attemptSignal}). */
type SignalledAttempt<R> = (progress: Progress, signal: AbortSignal) => Promise<R>

/** What the first attempt of a fresh run sees: no driver is made for a run that needs none (a first success). */
const FIRST: Progress = { statusAt: (): RetryStatus.RetryStatus => RetryStatus.initial }

/** What `Going.step` answers when the run ends (after `onDone`); any other answer is the time to wait, in ms. */
const END = -1

/** The verdicts for which `onDone` is told the status at the decision (the others: the status of the last retry). */
const atDecision = (reason: StopReason): boolean =>
  reason === 'succeeded' || reason === 'failed' || reason === 'aborted'

/**
 * A run past its first outcome (or one that needs its state from the start: a guard, `onDone`, `onEvent`,
 * `resume`): its {@link Decision.Decision} (the driver, the guards, the events), what it carries from one attempt to
 * the next, and the promise it settles. What follows an attempt is decided by the `Decision` it extends; this class
 * keeps only what is the runner's own: the hooks, the sleeps and the turns of the event loop.
 *
 * It is the loop itself, as a small state machine rather than an async function: a run waiting out its backoff
 * holds this object, its driver, one promise and a sleep, and no suspended frame. An async function's suspended
 * frame, its promise and the promise it awaits cost more than all the rest of a pending run (see the "pending runs"
 * benchmark: a service in an outage holds one run per request in flight).
 */
class Going<In, R extends Either<unknown, unknown>> extends Decision.Decision<In> implements Wakeable {
  /** Retries since the loop last let the event loop turn, and when they were first timed (see `CHECK_EVERY`). */
  private sinceTurn = 0
  private since = 0
  /** The latest outcome, which the run returns when it ends; `undefined` before the first one of a resumed run. */
  private last: R | undefined = undefined
  /** How the run's promise is settled, once the run has waited (see {@link detach}). */
  private resolve: (result: R) => void = noop
  private reject: (error: unknown) => void = noop

  constructor(
    readonly run: Run<In>,
    private readonly attempt: Attempt<R>,
    start: number,
    restored?: Driver.Driver<In>
  ) {
    super(run, start, restored)
  }

  /**
   * The run's promise, once it must wait (a sleep, an asynchronous decision, a turn of the event loop): from here the
   * run goes on as a state machine, and no frame waits with it. Until then it runs in {@link loop}'s frame.
   */
  detach(decided: number | Promise<number>, turn: boolean): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
      if (turn) setImmediate(() => this.awake())
      else if (typeof decided === 'number') this.waited(decided)
      else Promise.resolve(decided).then((wait) => this.waited(wait), this.fail)
    })
  }

  /** Goes on with a stored run: restores its driver and waits until the attempt that was due is due. */
  static resumed<In, R extends Either<unknown, unknown>>(
    run: Run<In>,
    attempt: Attempt<R>,
    stored: RetryState
  ): Promise<R> {
    let going: Going<In, R> | undefined = undefined
    const restored = Driver.restore(
      run.schedule,
      stored,
      run.random,
      run.onEvent === undefined ? undefined : (event) => going?.scheduleEvent(event)
    )
    if (restored._tag === 'Left') return Promise.reject(restored.left)
    const driver = restored.right
    going = new Going(run, attempt, driver.start, driver)
    return going.detach(Math.max(0, driver.dueAt - run.clock.now()), false)
  }

  /** Whether the event loop is due a turn: retries since it last turned have kept it long (see `CHECK_EVERY`). */
  mustTurn(): boolean {
    return ++this.sinceTurn % CHECK_EVERY === 0 && this.longStreak()
  }

  /** Where the next attempt reads its status: the driver once there is one. */
  get progress(): Progress {
    return this.made ?? FIRST
  }

  /** The run's time, when anything reads it. */
  private now(): number {
    return this.run.readsClock ? this.run.clock.now() : this.start
  }

  /** An attempt starts: its time is read for an observer, or for guards told latencies. */
  starting(): void {
    const { run } = this
    this.begin(run.onEvent !== undefined || run.timesAttempts ? run.clock.now() : this.start)
  }

  /** An attempt's outcome, decided: the wait before the next attempt, or `END` once the run has ended. */
  step(result: R): number | Promise<number> {
    this.last = result
    const { run } = this
    const verdict = this.decide(result, this.now(), run.signal?.aborted === true)
    return typeof verdict === 'object' ? verdict.then((v) => this.settled(v)) : this.settled(verdict)
  }

  /** A verdict, acted on: `onRetry` before a retry, `onDone` at the end. */
  private settled(verdict: Decision.Verdict): number | Promise<number> {
    if (typeof verdict !== 'number') return this.finish(verdict, atDecision(verdict))
    const { onRetry } = this.run
    if (onRetry !== undefined) return this.retried(onRetry, verdict)
    // a retry's time limit is checked when time may have passed since the decision; a clock that stepped back is
    // waited out, so that the retry does not start before its due time
    return this.run.deadline ? this.dueNow(verdict) : verdict + this.lag
  }

  /** `onRetry`, and the wait after it: until the decided time, not a full delay after the hook's work. */
  private retried(onRetry: NonNullable<Run<In>['onRetry']>, delay: number): number | Promise<number> {
    const { driver } = this
    const error =
      (this.last as R)._tag === 'Left' ? (this.last as Left<unknown>).left : (this.last as Right<unknown>).right
    const pending = onRetry({ error: error as In, status: driver.status, delay, driver })
    if (isPromise(pending)) return Promise.resolve(pending).then(() => this.dueNow(delay))
    return this.run.deadline ? this.dueNow(delay) : delay + this.lag
  }

  /** The wait left before the retry decided, or the end of a run whose time limit has passed meanwhile. */
  private dueNow(delay: number): number {
    const due = this.due(this.run.clock.now(), delay)
    return typeof due === 'number' ? due : this.finish(due, false)
  }

  /**
   * Ends the run (told once) and calls `onDone`, with the status at this decision (`decided`) or at the last retry's
   * (an abort during a sleep, a time limit passed during `onRetry`).
   */
  finish(reason: Decision.StopReason, decided: boolean): typeof END {
    const { onDone, onEvent, clock } = this.run
    this.end(reason, onEvent === undefined ? this.start : clock.now())
    if (onDone !== undefined) {
      const { driver } = this
      onDone({ result: this.last as R, status: decided ? driver.statusAt(this.now()) : driver.status, reason })
    }
    return END
  }

  /** Ends the run with a defect (the action rejected, a hook or a guard threw): told, then the run rejects. */
  readonly fail = (error: unknown): void => {
    this.end('defect', this.now())
    this.reject(error)
  }

  /**
   * Once the run has waited: makes attempts for as long as it goes on at once, as {@link loop} does before, and
   * settles the run's promise. It never rejects: an error ends the run.
   */
  private async next(): Promise<void> {
    const { signal } = this.run
    try {
      for (;;) {
        this.starting()
        const decided = this.step(await this.attempt(this.progress, signal))
        if (typeof decided !== 'number') {
          Promise.resolve(decided).then((wait) => this.waited(wait), this.fail)
          return
        }
        if (decided !== 0) return this.waited(decided)
        if (this.mustTurn()) return void setImmediate(() => this.awake())
        if (signal?.aborted === true) return this.awake()
      }
    } catch (e) {
      this.fail(e)
    }
  }

  /** What `step` answered: the end of the run, or the wait before the next attempt. */
  private waited(wait: number): void {
    if (wait < 0) this.resolve(this.last as R)
    else if (wait > 0) this.sleep(wait)
    else this.wake()
  }

  /** Sleeps `ms` on the run's clock, then wakes; the live clocks wake this run with no promise of their own. */
  private sleep(ms: number): void {
    const { clock, sleepers, signal } = this.run
    try {
      if (ms === 0 || signal?.aborted === true) return this.wake()
      // the live clock's queue, unless its `sleep` was replaced (a spy, a wrapper): then it is asked like any clock's
      if (sleepers !== undefined && clock.sleep === sleepers.promised) return sleepers.sleep(ms, signal, this)
      // `Promise.resolve`: what a clock answers is taken as an `await` would take it
      Promise.resolve(clock.sleep(ms, signal, 'backoff')).then(() => this.wake(), this.fail)
    } catch (e) {
      this.fail(e)
    }
  }

  /** After a sleep (or a zero wait): goes on, unless retries since the event loop last turned have kept it long. */
  wake(): void {
    if (this.mustTurn()) setImmediate(() => this.awake())
    else this.awake()
  }

  private awake(): void {
    const { signal } = this.run
    if (signal?.aborted !== true) return void this.next()
    // A resumed run has no error in hand to return (it was seen before the restart): it rejects, as before a start.
    if (this.last === undefined) return this.fail(signal.reason)
    try {
      this.finish('aborted', false)
    } catch (e) {
      return this.fail(e)
    }
    this.resolve(this.last)
  }

  /** Whether the retries since the event loop last turned have run long enough that it must turn now. */
  longStreak(): boolean {
    const now = performance.now()
    if (this.sinceTurn === CHECK_EVERY) this.since = now
    if (now - this.since < YIELD_AFTER_MS) return false
    this.sinceTurn = 0
    return true
  }
}

/**
 * The one loop behind every runner: attempt, let the run decide (driver, breaker, budget, `onRetry`), pause,
 * attempt again. A first success of a run without a guard, `onDone` or `onEvent` allocates nothing of ours. The
 * attempts that follow each other at once run in this frame; once the run must wait, it goes on as a state machine
 * ({@link Going.detach}) and this frame ends, so that a run waiting out its backoff holds no frame.
 */
const loop = async <In, R extends Either<unknown, unknown>>(run: Run<In>, attempt: Attempt<R>): Promise<R> => {
  const { signal } = run
  if (signal?.aborted) throw signal.reason
  if (run.resume !== undefined) return Going.resumed(run, attempt, run.resume)
  const start = run.readsClock ? run.clock.now() : 0
  // a first success needs nothing more when there is no guard to tell, no `onDone` to call and no event
  let going =
    run.guards.length === 0 && run.onDone === undefined && run.onEvent === undefined
      ? undefined
      : new Going<In, R>(run, attempt, start)
  try {
    for (;;) {
      going?.starting()
      const result = await attempt(going?.progress ?? FIRST, signal)
      if (going === undefined) {
        if (result._tag !== run.continueOn) return result
        going = new Going(run, attempt, start)
      }
      const decided = going.step(result)
      if (typeof decided !== 'number' || decided > 0) return going.detach(decided, false)
      if (decided < 0) return result
      if (going.mustTurn()) return going.detach(0, true)
      if (signal?.aborted) {
        going.finish('aborted', false)
        return result
      }
    }
  } catch (e) {
    // a defect ends the run, told once (a run that had ended already stays as it ended)
    going?.end('defect', run.readsClock ? run.clock.now() : start)
    throw e
  }
}

/**
 * An attempt under a timeout, on the run's clock: the attempt's own signal aborts when the run's does or when the
 * time is up; a timeout becomes the `Left` of `onTimeout`. The time is clamped to what is left of the schedule's
 * `upTo` limits, so that a hanging attempt cannot outlive the run's deadline.
 */
const withTimeout =
  <In, R extends Either<unknown, unknown>>(
    run: Run<In>,
    timeout: AttemptTimeout<unknown>,
    attempt: SignalledAttempt<R>
  ): Attempt<R> =>
  async (driver, signal) => {
    const status = driver.statusAt(run.clock.now())
    let ms = typeof timeout.after === 'number' ? timeout.after : timeout.after(status)
    validate.duration(run.where, 'options.attemptTimeout(status)', ms)
    for (const limit of run.schedule.timeLimits) {
      if (limit._tag === 'Elapsed') ms = Math.min(ms, Math.max(0, limit.ms - status.elapsed))
    }
    // One timeout in the library (Timeout.timeoutSignalled): the attempt's own signal aborts with the run's or at
    // the timeout, and an attempt that cannot see its signal still times out after a run abort.
    let timedOut = false
    const result = (await Timeout.timeoutSignalled(ms, () => ((timedOut = true), timeout.onTimeout()), {
      clock: run.clock
    })((own: AbortSignal) => () => attempt(driver, own))(signal)()) as R
    return timedOut ? Decision.timedOut(result, ms) : result
  }

/**
 * A signal of the attempt's own that aborts when the run's does, and how to let go of the run's: what an attempt
 * hangs on its signal leaves with it, so no number of attempts or runs piles listeners onto one signal.
 */
const attemptSignal = (
  signal: AbortSignal | undefined
): { readonly controller: AbortController; readonly unlink: () => void } => {
  const controller = new AbortController()
  const unlink = signal === undefined ? noop : onAbort(signal, () => controller.abort(signal.reason))
  return { controller, unlink }
}

/** An attempt given a signal of its own (see {@link attemptSignal}). */
const withOwnSignal =
  <R>(attempt: SignalledAttempt<R>): Attempt<R> =>
  async (progress, signal) => {
    const { controller, unlink } = attemptSignal(signal)
    try {
      return await attempt(progress, controller.signal)
    } finally {
      unlink()
    }
  }

const makeRun = <In, E, A>(
  where: string,
  schedule: Schedule<In>,
  options: RetryOptions<In, E, A>,
  continueOn: Run<In>['continueOn'],
  readsStatus: boolean
): Run<In> => {
  validate.schedule(where, 'schedule', schedule)
  validate.object(where, 'options', options)
  validate.services(where, 'options', options)
  if (options.onRetry !== undefined) validate.callable(where, 'options.onRetry', options.onRetry)
  if (options.onDone !== undefined) validate.callable(where, 'options.onDone', options.onDone)
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
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
    onRetry: options.onRetry as Run<In>['onRetry'],
    onEvent: options.onEvent,
    source: 'retry',
    // The run's error and value types are known to the caller: the loop only passes the result along.
    onDone: options.onDone as Run<In>['onDone'],
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
): Pick<Run<In>, 'guards' | 'readsTime' | 'readsClock' | 'timesAttempts' | 'deadline'> => {
  const readsClock = readsTime || guards.some((guard) => guard.readsTime)
  return {
    guards,
    readsTime,
    readsClock,
    timesAttempts: readsClock && guards.length > 0,
    deadline: readsClock && schedule.timeLimits.some((limit) => limit._tag === 'Elapsed')
  }
}

/** The runner's attempt for an action that sees no signal: `base`, under the run's timeout when it has one. */
const attemptOf = <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  base: (progress: Progress) => Promise<R>
): Attempt<R> => (run.timeout === undefined ? base : withTimeout(run, run.timeout, base))

/** The runner's attempt for an action that sees its signal: one of its own, which the run's timeout also aborts. */
const signalledAttemptOf = <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  base: SignalledAttempt<R>
): Attempt<R> => (run.timeout === undefined ? withOwnSignal(base) : withTimeout(run, run.timeout, base))

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
    return () => loop(run, attempt)
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
    return () => loop(run, attempt)
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
 * @since 0.2.0
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
 * @since 0.2.0
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
    return () => loop(run, attempt)
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
    const run: Run<In> = {
      ...template,
      clock: env.clock,
      sleepers: sleepersOf(env.clock),
      random: env.random,
      signal: env.signal,
      ...timing(schedule, template.readsTime, Decision.guardsOf(`${where}: env`, env))
    }
    return () => loop(run, () => action(env)())
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
      const last = await loop(run, () =>
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
