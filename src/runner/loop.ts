/**
 * The runner's loop: one run of `retrying` and its kin, as a small state machine (`Going`) over the run's
 * `Decision`. Private to the runner (`Retry`), which sets a run up; the attempt wrappers are in `./attempt`.
 *
 * @internal
 */
import type { Either, Left, Right } from 'fp-ts/Either'
import type { Clock } from '../Clock'
import * as Decision from '../Decision'
import * as Driver from '../Driver'
import type * as Event from '../Event'
import type * as Guard from '../Guard'
import { noop } from '../internal/abort'
import { isPromise } from '../internal/promise'
import type { Sleepers, Wakeable } from '../internal/sleepers'
import type { Random } from '../Random'
import type { RetryState } from '../RetryState'
import * as RetryStatus from '../RetryStatus'
import type { Schedule } from '../Schedule'

type StopReason = Decision.StopReason

/** `attemptTimeout` and `onTimeout`, checked together. */
export interface AttemptTimeout<E> {
  readonly after: number | ((status: RetryStatus.RetryStatus) => number)
  readonly onTimeout: (ms: number) => E
}

/** What the hooks are told (`Retry.Retried`, `Retry.Ended`), as the loop passes them on. */
interface Retried<In> {
  readonly error: unknown
  readonly status: RetryStatus.RetryStatus
  readonly delay: number
  readonly driver: Driver.Driver<In>
}
interface Ended {
  readonly result: Either<unknown, unknown>
  readonly status: RetryStatus.RetryStatus
  readonly reason: StopReason
}

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
export interface Run<In> {
  readonly schedule: Schedule<In>
  readonly clock: Clock
  /** The queue behind `clock` when it is a live clock: a run sleeps on it with no promise (see `Going.sleep`). */
  readonly sleepers: Sleepers | undefined
  readonly random: Random | undefined
  readonly signal: AbortSignal | undefined
  /** The breaker, the budget and the run's own guards, in that order (`Decision.guardsOf`). */
  readonly guards: ReadonlyArray<Guard.Guard>
  readonly resume: RetryState | undefined
  readonly onRetry: ((retried: Retried<In>) => unknown) | undefined
  readonly onEvent: Event.Observer | undefined
  /** Who the events say reported them. */
  readonly source: Event.Source
  readonly onDone: ((ended: Ended) => void) | undefined
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
export interface Progress {
  readonly statusAt: (now: number) => RetryStatus.RetryStatus
}

/** One attempt, given where to read the run's status and the signal the attempt may watch. */
export type Attempt<R> = (progress: Progress, signal: AbortSignal | undefined) => Promise<R>

/** An attempt that is handed a signal of its own (see {@link attemptSignal}). */
export type SignalledAttempt<R> = (progress: Progress, signal: AbortSignal) => Promise<R>

/** What the first attempt of a fresh run sees: no driver is made for a run that needs none (a first success). */
export const FIRST: Progress = { statusAt: (): RetryStatus.RetryStatus => RetryStatus.initial }

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
export class Going<In, R extends Either<unknown, unknown>> extends Decision.Decision<In, Run<In>> implements Wakeable {
  /** Retries since the loop last let the event loop turn, and when they were first timed (see `CHECK_EVERY`). */
  private sinceTurn = 0
  private since = 0
  /** The latest outcome, which the run returns when it ends; `undefined` before the first one of a resumed run. */
  private last: R | undefined = undefined
  /** How the run's promise is settled, once the run has waited (see {@link detach}). */
  private resolve: (result: R) => void = noop
  private reject: (error: unknown) => void = noop

  constructor(run: Run<In>, private readonly attempt: Attempt<R>, start: number, restored?: Driver.Driver<In>) {
    super(run, start, restored)
  }

  /**
   * The run's promise, once it must wait (a sleep, an asynchronous decision, a turn of the event loop): from here the
   * run goes on as a state machine, and no frame waits with it. Until then it runs in {@link loop}'s frame.
   */
  detach(go: () => void): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
      go()
    })
  }

  /**
   * Whether the next attempt follows a decision at once, in the caller's frame: a zero wait, with the event loop not
   * due a turn and the signal not aborted. The one rule of both frames the run attempts in ({@link loop} and
   * {@link next}); what follows otherwise is {@link handOff}'s.
   */
  atOnce(decided: number | Promise<number>): boolean {
    return decided === 0 && !this.mustTurn() && this.policy.signal?.aborted !== true
  }

  /**
   * What follows a decision that does not go on at once, as a state machine: the end of the run, a wait, an abort
   * (no attempt after it) or a turn of the event loop (a zero wait {@link atOnce} refused, the signal not aborted).
   */
  handOff(decided: number | Promise<number>): void {
    if (typeof decided !== 'number') {
      Promise.resolve(decided).then(
        (wait) => this.waited(wait),
        (e: unknown) => this.fail(e)
      )
      return
    }
    if (decided !== 0) return this.waited(decided)
    if (this.policy.signal?.aborted === true) return this.awake()
    setImmediate(() => this.awake())
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
    const wait = Math.max(0, driver.dueAt - run.clock.now())
    return going.detach(() => going?.waited(wait))
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
    return this.policy.readsClock ? this.policy.clock.now() : this.start
  }

  /** An attempt starts: its time is read for an observer, or for guards told latencies. */
  starting(): void {
    const run = this.policy
    // a run that nobody times (no observer, no guard told latencies) only counts its attempts
    if (run.onEvent !== undefined || run.timesAttempts) this.begin(run.clock.now())
    else this.attempts++
  }

  /** An attempt's outcome, decided: the wait before the next attempt, or `END` once the run has ended. */
  step(result: R): number | Promise<number> {
    this.last = result
    const run = this.policy
    const verdict = this.decide(result, this.now(), run.signal?.aborted === true)
    return typeof verdict === 'object' ? verdict.then((v) => this.settled(v)) : this.settled(verdict)
  }

  /** A verdict, acted on: `onRetry` before a retry, `onDone` at the end. */
  private settled(verdict: Decision.Verdict): number | Promise<number> {
    if (typeof verdict !== 'number') return this.finish(verdict, atDecision(verdict))
    const { onRetry } = this.policy
    if (onRetry !== undefined) return this.retried(onRetry, verdict)
    // a retry's time limit is checked when time may have passed since the decision; a clock that stepped back is
    // waited out, so that the retry does not start before its due time
    return this.policy.deadline ? this.dueNow(verdict) : verdict + this.lag
  }

  /** `onRetry`, and the wait after it: until the decided time, not a full delay after the hook's work. */
  private retried(onRetry: NonNullable<Run<In>['onRetry']>, delay: number): number | Promise<number> {
    const { driver } = this
    const error =
      (this.last as R)._tag === 'Left' ? (this.last as Left<unknown>).left : (this.last as Right<unknown>).right
    const pending = onRetry({ error: error as In, status: driver.status, delay, driver })
    if (isPromise(pending)) return Promise.resolve(pending).then(() => this.dueNow(delay))
    return this.policy.deadline ? this.dueNow(delay) : delay + this.lag
  }

  /** The wait left before the retry decided, or the end of a run whose time limit has passed meanwhile. */
  private dueNow(delay: number): number {
    const due = this.due(this.policy.clock.now(), delay)
    return typeof due === 'number' ? due : this.finish(due, false)
  }

  /**
   * Ends the run (told once) and calls `onDone`, with the status at this decision (`decided`) or at the last retry's
   * (an abort during a sleep, a time limit passed during `onRetry`).
   */
  finish(reason: Decision.StopReason, decided: boolean): typeof END {
    const { onDone, onEvent, clock } = this.policy
    this.end(reason, onEvent === undefined ? this.start : clock.now())
    if (onDone !== undefined) {
      const { driver } = this
      onDone({ result: this.last as R, status: decided ? driver.statusAt(this.now()) : driver.status, reason })
    }
    return END
  }

  /** Ends the run with a defect (the action rejected, a hook or a guard threw): told, then the run rejects. */
  fail(error: unknown): void {
    this.end('defect', this.now())
    this.reject(error)
  }

  /**
   * Once the run has waited: makes attempts for as long as it goes on at once, as {@link loop} does before, and
   * settles the run's promise. It never rejects: an error ends the run.
   */
  private async next(): Promise<void> {
    const { signal } = this.policy
    try {
      for (;;) {
        this.starting()
        const decided = this.step(await this.attempt(this.progress, signal))
        if (!this.atOnce(decided)) return this.handOff(decided)
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
    const { clock, sleepers, signal } = this.policy
    try {
      if (ms === 0 || signal?.aborted === true) return this.wake()
      // the live clock's queue, unless its `sleep` was replaced (a spy, a wrapper): then it is asked like any clock's
      if (sleepers !== undefined && clock.sleep === sleepers.promised) return sleepers.sleep(ms, signal, this)
      // `Promise.resolve`: what a clock answers is taken as an `await` would take it
      Promise.resolve(clock.sleep(ms, signal, 'backoff')).then(
        () => this.wake(),
        (e: unknown) => this.fail(e)
      )
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
    const { signal } = this.policy
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
export const loop = async <In, R extends Either<unknown, unknown>>(run: Run<In>, attempt: Attempt<R>): Promise<R> => {
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
      // the end at once needs no promise of the run's; anything else but a next attempt at once is handed off
      if (decided === END) return result
      if (going.atOnce(decided)) continue
      const handed = going
      return handed.detach(() => handed.handOff(decided))
    }
  } catch (e) {
    // a defect ends the run, told once (a run that had ended already stays as it ended)
    going?.end('defect', run.readsClock ? run.clock.now() : start)
    throw e
  }
}
