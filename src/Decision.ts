/**
 * What follows an attempt, decided once: the one step behind every module that retries (the runners, the durable
 * engines, hedging, `Http`).
 *
 * Given what an attempt answered and when, a {@link Decision} asks the run's `Driver` (the schedule), then its
 * guards (breaker, budget, rate limiter, bulkhead), and answers a {@link Verdict}: retry after a delay, or stop
 * with a reason. It builds the `Guard.Outcome` the guards are told, and tells the run's observer every event of
 * the run, in order, ending with exactly one `RunStopped`. A module keeps only what is its own: how it sleeps,
 * stores a run or launches a hedge.
 *
 * **Details**
 *
 * - The run's time only moves forward: a clock that steps back (`Date.now()` does) is read as the latest time seen,
 *   so a latency is never negative and a status never goes back.
 * - A success tells the guards the error of the failure before it (a budget refunds what that retry cost).
 * - A retry whose hook ended past a time limit of the schedule (`upTo`) is not made: {@link Decision.due} stops
 *   the run with reason `'schedule'`, so that a run never starts an attempt past its deadline.
 * - A defect (an action that rejects, a hook or a guard that throws) ends the run with reason `'defect'`.
 *
 * @example
 * import * as Decision from 'fp-ts-retry/Decision'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import type * as Event from 'fp-ts-retry/Event'
 * import * as E from 'fp-ts/Either'
 * import * as assert from 'assert'
 *
 * // an engine of one's own: the decisions, delays and events are the runner's
 * const events: Array<Event.Event> = []
 * const decision = Decision.make({ schedule: Schedule.fromDelays([100]), onEvent: (e) => void events.push(e) })
 * decision.begin(0)
 * assert.strictEqual(decision.decide(E.left('busy'), 5), 100)
 * decision.begin(decision.driver.dueAt)
 * assert.strictEqual(decision.decide(E.left('busy'), 110), 'schedule')
 * assert.deepStrictEqual(events.map((e) => e._tag), [
 *   'AttemptStarted', 'AttemptFailed', 'RetryScheduled', 'AttemptStarted', 'AttemptFailed', 'RunStopped'
 * ])
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import * as Breaker from './Breaker'
import * as Budget from './Budget'
import type { RetryBudget } from './Budget'
import * as Driver from './Driver'
import * as Event from './Event'
import * as Guard from './Guard'
import type * as model from './internal/model'
import { observe } from './internal/observe'
import { isPromise } from './internal/promise'
import { jsonValue, showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Random } from './Random'
import type { Schedule, ScheduleEvent } from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a run ended: its last attempt succeeded, or failed in a way not to run again (`retrying` stops on a
 * success, `repeating` on a failure, hedging on a fatal failure); the schedule stopped (`'schedule'`, its time
 * limit included); a guard refused the retry (its reason: `'budget'`, `'breaker'`, `'rateLimit'`, `'bulkhead'`, `'shed'`);
 * the signal aborted; or a defect ended it (`'defect'`: the action rejected or threw, a hook or a guard threw).
 *
 * @example
 * import type { StopReason } from 'fp-ts-retry/Decision'
 *
 * const reason: StopReason = 'schedule'
 *
 * @category model
 * @since 1.0.0
 */
export type StopReason = model.StopReason

/**
 * What a {@link Decision} answers after an attempt: a number is the wait before the next attempt (ms, `>= 0`), a
 * {@link StopReason} the end of the run.
 *
 * @example
 * import type { Verdict } from 'fp-ts-retry/Decision'
 * import * as assert from 'assert'
 *
 * const line = (verdict: Verdict): string => (typeof verdict === 'number' ? `again in ${verdict} ms` : `stopped: ${verdict}`)
 * assert.strictEqual(line(100), 'again in 100 ms')
 *
 * @category model
 * @since 1.0.0
 */
export type Verdict = number | StopReason

/**
 * What a run is decided by: its schedule and guards, and who is told of it.
 *
 * **Details**
 *
 * - `continueOn`: the side of the `Either` that asks the schedule for another attempt: `'Left'` to retry (the
 *   default), `'Right'` to repeat.
 * - `source`: who the events say reported them (default `'retry'`); `id` and `definition` name a durable run.
 * - `onGuardError(error, guard)`: a guard that threw when told of a success (the success stands). Default: a
 *   `ServiceUnavailable` event when observed, else a process warning.
 * - `run`: the run's number in its events (default: a fresh one when observed, see `Event.nextRun`).
 *
 * @example
 * import type { Policy } from 'fp-ts-retry/Decision'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * const policy: Policy<Error> = { schedule: Schedule.recurs(3), source: 'durable', id: 'order-7', definition: 'charge' }
 *
 * @category model
 * @since 1.0.0
 */
export interface Policy<In> {
  readonly schedule: Schedule<In>
  readonly guards?: ReadonlyArray<Guard.Guard> | undefined
  readonly random?: Random | undefined
  readonly onEvent?: Event.Observer | undefined
  readonly source?: Event.Source | undefined
  readonly continueOn?: 'Left' | 'Right' | undefined
  readonly id?: string | undefined
  readonly definition?: string | undefined
  readonly run?: number | undefined
  readonly onGuardError?: ((error: unknown, guard: Guard.Guard) => void) | undefined
}

/** The results a timeout made, and after how long: reported as `AttemptTimedOut`. */
const timeouts = new WeakMap<object, number>()

/**
 * Marks `result` as the `Left` a timeout of `ms` made, so that a {@link Decision} reports its attempt as
 * `AttemptTimedOut`.
 *
 * @example
 * import * as Decision from 'fp-ts-retry/Decision'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as E from 'fp-ts/Either'
 * import * as assert from 'assert'
 *
 * const events: Array<string> = []
 * const decision = Decision.make({ schedule: Schedule.recurs(0), onEvent: (e) => void events.push(e._tag) })
 * decision.begin(0)
 * decision.decide(Decision.timedOut(E.left('timeout'), 50), 50)
 * assert.deepStrictEqual(events, ['AttemptStarted', 'AttemptTimedOut', 'RunStopped'])
 *
 * @category utils
 * @since 1.0.0
 */
export const timedOut = <R extends Either<unknown, unknown>>(result: R, ms: number): R => {
  timeouts.set(result, ms)
  return result
}

/**
 * The hint the schedule used for the decision being made, if any: told by the driver during `advance`, read right
 * after it. A decision is synchronous, so one slot serves every run, and a run keeps no field for it.
 */
let usedHint: number | undefined = undefined

/** A failure's error or a success's value: what the schedule is fed. */
const inputOf = (result: Either<unknown, unknown>): unknown => (result._tag === 'Left' ? result.left : result.right)

// -------------------------------------------------------------------------------------
// the decision
// -------------------------------------------------------------------------------------

/**
 * One run's decisions, from its first attempt to its end. Make it with {@link make} (or extend it: the runner's
 * loop is one); then, for each attempt, {@link Decision.begin} when it starts and {@link Decision.decide} when it
 * ends; {@link Decision.due} before a retry whose hook took time; {@link Decision.end} for an end no attempt
 * decided (an abort, a defect). Every method that answers a verdict tells `RunStopped` when it stops the run, once.
 *
 * @example
 * import * as Decision from 'fp-ts-retry/Decision'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as E from 'fp-ts/Either'
 * import * as assert from 'assert'
 *
 * const decision = Decision.make({ schedule: Schedule.recurs(1) })
 * decision.begin(0)
 * assert.strictEqual(decision.decide(E.left('x'), 0), 0)
 * decision.begin(0)
 * assert.strictEqual(decision.decide(E.right(1), 3), 'succeeded')
 * assert.strictEqual(decision.stopped, 'succeeded')
 *
 * @category model
 * @since 1.0.0
 */
export class Decision<In, P extends Policy<In> = Policy<In>> {
  /**
   * The run's driver, made at the first decision (or restored): a first success of a plain run makes none.
   *
   * @since 1.0.0
   */
  protected made: Driver.Driver<In> | undefined
  /**
   * The attempts made, the one in flight included.
   *
   * @since 1.0.0
   */
  attempts: number
  /**
   * The retries made (each one the guards admitted).
   *
   * @since 1.0.0
   */
  retries: number
  /**
   * Why the run ended, once it has.
   *
   * @since 1.0.0
   */
  stopped: StopReason | undefined = undefined
  /**
   * The run's number in its events (0 when nobody observes it).
   *
   * @since 1.0.0
   */
  readonly number: number
  /** When the attempt in flight started, and the latest time seen (the run's time never goes back). */
  private started: number
  private latest: number
  /**
   * How far the clock read behind the run's time at the last decision (a clock that stepped back): a module that
   * sleeps a delay sleeps this much longer, so that a retry never starts before its due time on the run's time.
   *
   * @since 1.0.0
   */
  lag = 0
  /**
   * The error of the last failure: a success tells the guards of it.
   *
   * @since 1.0.0
   */
  lastError: unknown

  constructor(
    /** The run's schedule, guards and observer. */
    readonly policy: P,
    /** When the run started (its first attempt), on the run's clock. */
    readonly start: number,
    restored?: Driver.Driver<In>,
    lastError?: unknown
  ) {
    this.made = restored
    this.attempts = restored === undefined ? 0 : restored.iterNumber
    this.retries = this.attempts
    this.started = start
    this.latest = restored === undefined ? start : Math.max(start, restored.now)
    this.lastError = lastError
    this.number = policy.onEvent === undefined ? 0 : policy.run ?? Event.nextRun()
  }

  /**
   * The run's driver (made at the first call, with the policy's random and its schedule's events).
   *
   * @since 1.0.0
   */
  get driver(): Driver.Driver<In> {
    const { policy } = this
    return (this.made ??= Driver.make(policy.schedule, {
      start: this.start,
      random: policy.random,
      onEvent: policy.onEvent === undefined ? undefined : (event) => this.scheduleEvent(event)
    }))
  }

  /**
   * `now`, or the latest time seen when `now` is earlier: the run's time never goes back.
   *
   * @since 1.0.0
   */
  time(now: number): number {
    return now > this.latest ? (this.latest = now) : this.latest
  }

  /**
   * An attempt starts at `now`: it is counted, and told as `AttemptStarted`.
   *
   * @since 1.0.0
   */
  begin(now: number): void {
    this.started = this.time(now)
    this.attempts++
    if (this.policy.onEvent !== undefined)
      this.emit({ _tag: 'AttemptStarted', ...this.base(this.started), attempt: this.attempts })
  }

  /**
   * The verdict on an attempt that ended at `now` with `result`: the schedule is fed its error (or, to repeat, its
   * value), then the guards are told; a stop tells `RunStopped`. `aborted`: the run's signal aborted during the
   * attempt (no retry; the guards are still told). Synchronous unless a guard answers by promise. Throws (or
   * rejects) when the schedule or a guard told of a failure throws: end the run with {@link Decision.end}
   * `('defect')`.
   *
   * @since 1.0.0
   */
  decide(result: Either<unknown, unknown>, now: number, aborted = false): Verdict | Promise<Verdict> {
    // the run's time moves on, or, for a clock that stepped back, stays where it was (and the wait makes up the lag)
    if (now >= this.latest) {
      this.latest = now
      if (this.lag !== 0) this.lag = 0
    } else {
      this.lag = this.latest - now
      now = this.latest
    }
    const { policy } = this
    if (policy.onEvent !== undefined) this.attemptEnded(result, this.attempts, now - this.started, now)
    const goOn = result._tag === (policy.continueOn ?? 'Left')
    const input = inputOf(result) as In
    const driver = this.made ?? this.driver
    // what the schedule reports while deciding (synchronously: no other run's decision comes in between); only an
    // observed run's driver reports
    const observed = policy.onEvent !== undefined
    if (observed) usedHint = undefined
    const delay = goOn && !aborted ? driver.advance(input, now) : -1
    const hint = observed ? usedHint : undefined
    if (policy.guards === undefined || policy.guards.length === 0)
      return this.verdict(result, input, now, delay, undefined, hint)
    const refused = this.judge(result, now, now - this.started, delay)
    return isPromise(refused)
      ? refused.then((reason) => this.verdict(result, input, now, delay, reason, hint))
      : this.verdict(result, input, now, delay, refused, hint)
  }

  /**
   * Tells the guards of an attempt's outcome (the one `Guard.Outcome` of the library): a success with the error
   * of the failure before it, a failure with whether a retry is wanted (`delay >= 0`). Answers the reason of the
   * guard that refused, if one did. For a module that decides its retries itself (hedging): {@link Decision.decide}
   * calls it.
   *
   * @since 1.0.0
   */
  judge(
    result: Either<unknown, unknown>,
    now: number,
    latency: number,
    delay: number
  ): Guard.GuardReason | undefined | Promise<Guard.GuardReason | undefined> {
    const guards = this.policy.guards ?? []
    const ok = result._tag === 'Right'
    const error = ok ? this.lastError : result.left
    if (!ok) this.lastError = error
    const outcome: Guard.Outcome = {
      ok,
      error,
      latency: latency > 0 ? latency : 0,
      now,
      retries: this.retries,
      retrying: delay >= 0,
      delay
    }
    // a success stays one: a guard that failed to hear of it is reported, never a reason to run it again
    return Guard.decide(guards, outcome, ok ? (e, guard) => this.guardFailed(e, guard, now) : undefined)
  }

  /** The verdict, once the schedule and the guards have answered; a stop is told. */
  /**
   * @ignore
   */
  private verdict(
    result: Either<unknown, unknown>,
    input: In,
    now: number,
    delay: number,
    refused: Guard.GuardReason | undefined,
    hint: number | undefined
  ): Verdict {
    if (delay >= 0 && refused === undefined) {
      this.retries++
      if (this.policy.onEvent !== undefined) this.retryScheduled(now, delay, hint)
      return delay
    }
    return this.end(this.reasonOf(result, input, refused), now)
  }

  /** Why a run stops after an attempt. */
  /**
   * @ignore
   */
  private reasonOf(result: Either<unknown, unknown>, input: In, refused: Guard.GuardReason | undefined): StopReason {
    const { policy } = this
    if (result._tag !== (policy.continueOn ?? 'Left')) return result._tag === 'Right' ? 'succeeded' : 'failed'
    if (refused !== undefined) {
      if (policy.onEvent !== undefined)
        this.emit({ _tag: 'GuardRefused', ...this.base(this.latest), attempt: this.attempts, reason: refused })
      return refused
    }
    if (!this.driver.done) return 'aborted'
    // The schedule stopped on a failure that a guard made (a breaker's refusal, before any I/O): the guard's reason.
    return Guard.refusedBy(policy.guards ?? [], input) ?? 'schedule'
  }

  /**
   * Whether the retry of `delay` ms decided can still start at `now` (after a hook that took time): the wait left
   * before it, or `'schedule'` (the run is ended) when starting it would pass a time limit of the schedule (`upTo`).
   *
   * @since 1.0.0
   */
  due(now: number, delay: number): Verdict {
    const decidedAt = this.latest
    const read = now
    now = this.time(now)
    // no time has passed: the decision stands as made (the schedule kept its own limits)
    if (now === decidedAt) return delay + this.lag
    const dueAt = this.driver.dueAt
    const at = dueAt > now ? dueAt : now
    for (const limit of this.policy.schedule.timeLimits) {
      if (limit._tag === 'Elapsed' && at - this.start > limit.ms) return this.end('schedule', now)
    }
    this.lag = now - read
    return at - now + this.lag
  }

  /**
   * Ends the run for `reason` at `now`, telling `RunStopped` (once: a run already ended stays as it ended).
   *
   * @since 1.0.0
   */
  end(reason: StopReason, now: number): StopReason {
    if (this.stopped !== undefined) return this.stopped
    this.stopped = reason
    if (this.policy.onEvent !== undefined) {
      const at = this.time(now)
      this.emit({ _tag: 'RunStopped', ...this.base(at), attempts: this.attempts, elapsed: at - this.start, reason })
    }
    return reason
  }

  /**
   * Tells the observer, unless the run has ended: `RunStopped` is the last event of a run.
   *
   * @since 1.0.0
   */
  emit(event: Event.Event): void {
    if (this.stopped !== undefined && event._tag !== 'RunStopped') return
    // an observer that throws never changes the run: its error is reported (internal/observe)
    observe(this.policy.onEvent, event)
  }

  /**
   * The fields every event of this run carries.
   *
   * @since 1.0.0
   */
  base(at: number): {
    readonly source: Event.Source
    readonly run: number
    readonly at: number
    readonly id?: string
    readonly definition?: string
  } {
    const { policy } = this
    const common = { source: policy.source ?? 'retry', run: this.number, at }
    if (policy.id === undefined) return common
    return policy.definition === undefined
      ? { ...common, id: policy.id }
      : { ...common, id: policy.id, definition: policy.definition }
  }

  /**
   * Tells the observer how an attempt ended.
   *
   * @since 1.0.0
   */
  attemptEnded(result: Either<unknown, unknown>, attempt: number, latency: number, now: number): void {
    const common = { ...this.base(now), attempt, latency: latency > 0 ? latency : 0 }
    if (result._tag === 'Right') return this.emit({ _tag: 'AttemptSucceeded', ...common })
    const timeout = timeouts.get(result)
    this.emit(
      timeout === undefined
        ? { _tag: 'AttemptFailed', ...common, error: result.left }
        : { _tag: 'AttemptTimedOut', ...common, timeout, error: result.left }
    )
  }

  /**
   * @ignore
   */
  private retryScheduled(now: number, delay: number, hint: number | undefined): void {
    const common = { _tag: 'RetryScheduled' as const, ...this.base(now), attempt: this.attempts, delay }
    this.emit(hint === undefined ? common : { ...common, hint })
  }

  /**
   * What the schedule reports while deciding, as this run's event (a used hint goes on the `RetryScheduled`).
   *
   * @since 1.0.0
   */
  scheduleEvent(event: ScheduleEvent): void {
    if (event._tag === 'HintUsed') {
      usedHint = event.hint
      return
    }
    this.emit({ ...this.base(this.latest), attempt: this.attempts, _tag: 'HintIgnored', hint: jsonValue(event.hint) })
  }

  /** A guard that threw when told of a success: reported (the success stands). */
  /**
   * @ignore
   */
  private guardFailed(error: unknown, guard: Guard.Guard, now: number): void {
    if (this.policy.onGuardError !== undefined) return this.policy.onGuardError(error, guard)
    if (this.policy.onEvent === undefined) {
      process.emitWarning(`fp-ts-retry: a ${guard.reason} guard failed when told of a success: ${String(error)}`, {
        type: 'GuardWarning',
        detail: error instanceof Error ? error.stack : undefined
      })
      return
    }
    this.emit({
      _tag: 'ServiceUnavailable',
      ...this.base(now),
      service: guard.reason,
      fallback: 'success stands',
      error
    })
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A {@link Decision} for a run that starts at `start` (default 0) with `policy`; `restored` goes on with a stored
 * run's driver (its attempts and retries are the driver's), `lastError` with the error of its last failure.
 *
 * @example
 * import * as Decision from 'fp-ts-retry/Decision'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as E from 'fp-ts/Either'
 * import * as assert from 'assert'
 *
 * const decision = Decision.make({ schedule: Schedule.exponential(100) }, 1_000)
 * decision.begin(1_000)
 * assert.strictEqual(decision.decide(E.left('x'), 1_010), 100)
 * assert.strictEqual(decision.driver.dueAt, 1_110)
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = <In>(
  policy: Policy<In>,
  start = 0,
  restored?: Driver.Driver<In>,
  lastError?: unknown
): Decision<In> => new Decision(policy, start, restored, lastError)

/** No guard at all: one list for every run without one. */
const NONE: ReadonlyArray<Guard.Guard> = Object.freeze([])

/**
 * The guards of a run's options (`where` names the caller in the errors), in the one order: the breaker, the
 * budget, then the run's own `guards`, each checked.
 *
 * @example
 * import * as Decision from 'fp-ts-retry/Decision'
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const guards = Decision.guardsOf('myRunner', { budget: Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 }) })
 * assert.deepStrictEqual(guards.map((g) => g.reason), ['budget'])
 * assert.throws(() => Decision.guardsOf('myRunner', { guards: [{}] as never }), TypeError)
 *
 * @category constructors
 * @since 1.0.0
 */
export const guardsOf = (
  where: string,
  options: {
    readonly breaker?: Breaker.Breaker | undefined
    readonly budget?: RetryBudget | undefined
    readonly guards?: ReadonlyArray<Guard.Guard> | undefined
  }
): ReadonlyArray<Guard.Guard> => {
  const own = options.guards ?? []
  if (!Array.isArray(own))
    throw new TypeError(`${where}: options.guards must be an array of guards, received ${showValue(own)}`)
  own.forEach((guard: unknown, i) => {
    validate.implementing(where, `options.guards[${i}]`, 'a Guard', ['admit'], guard)
    const { reason, readsTime } = guard as Guard.Guard
    if (typeof reason !== 'string' || typeof readsTime !== 'boolean')
      throw new TypeError(
        `${where}: options.guards[${i}] must have a reason and readsTime, received ${showValue(guard)}`
      )
  })
  // the common case shares one empty list: a run built per request (for its signal) holds nothing for it
  if (options.breaker === undefined && options.budget === undefined && own.length === 0) return NONE
  return [
    ...(options.breaker === undefined ? [] : [Breaker.asGuard(options.breaker)]),
    ...(options.budget === undefined ? [] : [Budget.asGuard(options.budget)]),
    ...own
  ]
}
