/**
 * Hedged requests: when an attempt is slow, start another beside it and take whichever succeeds first, to cut the
 * latency tail ("The Tail at Scale", Dean and Barroso, 2013; gRPC's hedging policy, gRFC A6; Polly v8's hedging).
 *
 * The launch delays are a `Schedule`: `hedging(pipe(Schedule.constant(p95), Schedule.intersect(Schedule.recurs(1))))`
 * starts a second attempt when the first has been out for the 95th-percentile latency, and no third.
 * `Driver.delays` previews the launches, and under a `TestClock` a hedged call is exactly reproducible.
 *
 * Hedging repeats a request that may already be in progress: use it for idempotent operations only (see
 * `Http.hedgingFetch`, which refuses the others).
 *
 * @example
 * import { hedging, type HedgeContext } from 'fp-ts-retry/Hedging'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as E from 'fp-ts/Either'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const latencies = [500, 30] // the first replica is slow today
 *   const read = ({ signal, index }: HedgeContext) => () =>
 *     clock.sleep(latencies[index], signal).then(() => E.right(`replica ${index}`))
 *   const call = pipe(read, hedging(pipe(Schedule.constant(50), Schedule.intersect(Schedule.recurs(1))), { clock }))
 *   const result = call()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await result, E.right('replica 1')) // at 50 + 30 = 80 ms, not 500
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import type { Predicate } from 'fp-ts/Predicate'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { RetryBudget } from './Budget'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import * as Decision from './Decision'
import type { RetryStatus } from './RetryStatus'
import * as Event from './Event'
import * as Guard from './Guard'
import { noop, onAbort } from './internal/abort'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Random } from './Random'
import type { Schedule } from './Schedule'
import { isPromise } from './internal/promise'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What each attempt of a hedged call is handed, as one record (as `Retry.AttemptContext` is): its own `signal`
 * (aborted when another attempt wins, when a fatal failure ends the call, or when the caller's signal aborts) and
 * its `index` (0 for the first attempt, `n` for the `n`-th hedge).
 *
 * @example
 * import type { HedgeContext } from 'fp-ts-retry/Hedging'
 *
 * const describe = ({ index, signal }: HedgeContext): string => `hedge ${index}${signal.aborted ? ' (aborted)' : ''}`
 *
 * @category model
 * @since 1.0.0
 */
export interface HedgeContext {
  readonly signal: AbortSignal
  readonly index: number
}

/**
 * One attempt of a hedged call, given its {@link HedgeContext}.
 *
 * @example
 * import type { Attempt } from 'fp-ts-retry/Hedging'
 * import * as TE from 'fp-ts/TaskEither'
 *
 * const read: Attempt<Error, string> = ({ signal, index }) =>
 *   TE.tryCatch(() => fetch(`https://replica-${index}.example.com/item/1`, { signal }).then((r) => r.text()), (e) => e as Error)
 *
 * @category model
 * @since 1.0.0
 */
export type Attempt<E, A> = (context: HedgeContext) => TaskEither<E, A>

/**
 * Why a hedged call ended, in the one vocabulary of every run (`Decision.StopReason`): an attempt succeeded
 * (`'succeeded'`); a fatal failure ended it (`'failed'`); every attempt the schedule allowed failed
 * (`'schedule'`); a guard (the budget) refused a hedge and the attempts already out failed (that guard's reason);
 * the caller's signal aborted (`'aborted'`); or a defect (`'defect'`: an attempt rejected, the schedule or a guard
 * threw).
 *
 * @example
 * import type { StopReason } from 'fp-ts-retry/Hedging'
 *
 * const reason: StopReason = 'schedule'
 *
 * @category model
 * @since 1.0.0
 */
export type StopReason = Decision.StopReason

/**
 * What the `onDone` hook is told of a hedged call: the runners' record (`Retry.Ended`: the call's result, the
 * status of its last decision, why it ended), with when each attempt was launched (ms on the clock, in order) and
 * which one won (its index, `undefined` when none did).
 *
 * @example
 * import type { Summary } from 'fp-ts-retry/Hedging'
 *
 * const extraLoad = (summary: Summary<Error, string>): number => summary.launches.length - 1
 *
 * @category model
 * @since 1.0.0
 */
export interface Summary<E = unknown, A = unknown> {
  readonly result: Either<E | ReadonlyArray<E>, A>
  readonly status: RetryStatus
  readonly reason: StopReason
  readonly launches: ReadonlyArray<number>
  readonly winner: number | undefined
}

/**
 * Options of {@link hedging}.
 *
 * **Details**
 *
 * - `clock` (default `Clock.live`) times the launches; `random` (default `Random.live`) draws the schedule's
 *   jitter, if any.
 * - `signal`: the caller's. When it aborts, no attempt is launched and every attempt in flight is aborted; the
 *   call then ends as its attempts settle. Already aborted, the task rejects with `signal.reason`.
 * - `maxConcurrent` (default: no limit but the schedule's): the most attempts in flight at once, a whole number
 *   >= 1. A launch that falls due at the limit waits for a failure to free a slot.
 * - `isFatal` (default: none is): a failure that says the request itself is wrong (gRFC A6: a status not in
 *   `nonFatalStatusCodes`). It ends the call with that error at once: no more launches, the others aborted.
 * - `budget`: told of every attempt's outcome as gRFC A6 counts them (see {@link hedging}), and asked before each
 *   hedge.
 * - `errors` (default `'last'`): on failure, the last `Left`, or `'all'` of them in the order they arrived.
 * - `release`: called with every result the call does not return (an attempt that settles after the winner, the
 *   `Left`s it does not return), so that what they hold (a response body) is released. Its errors are ignored:
 *   it may run after the call has returned.
 * - `onDone`: called once with the call's {@link Summary}, before the result is returned. If it throws, the task
 *   rejects with that error.
 *
 * @example
 * import type { HedgingOptions } from 'fp-ts-retry/Hedging'
 * import * as Budget from 'fp-ts-retry/Budget'
 *
 * const options: HedgingOptions<{ status: number }, Response> = {
 *   maxConcurrent: 2,
 *   isFatal: (e) => e.status >= 400 && e.status < 500,
 *   budget: Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 }),
 *   release: (result) => void (result._tag === 'Right' && result.right.body?.cancel())
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface HedgingOptions<E, A> {
  readonly clock?: Clock | undefined
  readonly random?: Random | undefined
  readonly signal?: AbortSignal | undefined
  readonly maxConcurrent?: number | undefined
  readonly isFatal?: Predicate<E> | undefined
  readonly budget?: RetryBudget | undefined
  readonly guards?: ReadonlyArray<Guard.Guard> | undefined
  readonly errors?: 'last' | 'all' | undefined
  readonly release?: ((result: Either<E, A>) => unknown) | undefined
  readonly onDone?: ((summary: Summary<E, A>) => void) | undefined
  readonly onEvent?: Event.Observer | undefined
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

interface Config<E, A> {
  readonly schedule: Schedule<unknown>
  readonly clock: Clock
  readonly random: Random | undefined
  readonly signal: AbortSignal | undefined
  readonly maxConcurrent: number
  readonly isFatal: Predicate<E> | undefined
  /** The budget and the call's own guards (`Decision.guardsOf`): told of every outcome, asked before every hedge. */
  readonly guards: ReadonlyArray<Guard.Guard>
  readonly all: boolean
  readonly release: ((result: Either<E, A>) => unknown) | undefined
  readonly onDone: ((summary: Summary<E, A>) => void) | undefined
  readonly onEvent: Event.Observer | undefined
}

/** One hedged call in progress. Every decision is made synchronously when an event arrives. */
class Call<E, A> {
  private readonly launches: Array<number> = []
  /** The controller of each attempt in flight, by index; `undefined` once it has settled. */
  private readonly controllers: Array<AbortController | undefined> = []
  private readonly lefts: Array<E> = []
  private inFlight = 0
  /** Decisions waiting on a guard's promised answer: the call cannot end while one may launch. */
  private waiting = 0
  private scheduleDone = false
  /** Why launching stopped early, if it did. */
  private stopped: StopReason | undefined
  private finished = false
  private timer: AbortController | undefined
  private unsubscribe: () => void = noop
  /**
   * The call's decisions: its events, the one `Guard.Outcome`, its end told once. Its `retries` are the hedges a
   * failure prompted, each after the guards admitted it (and a quota charged it); a hedge its timer launched was
   * asked of `allows`, which charges nothing, so a success after it is not refunded as a retry's.
   */
  private readonly decision: Decision.Decision<unknown>

  constructor(
    private readonly c: Config<E, A>,
    private readonly action: Attempt<E, A>,
    private readonly resolve: (result: Either<E | ReadonlyArray<E>, A>) => void,
    private readonly reject: (error: unknown) => void
  ) {
    const now = c.clock.now()
    this.decision = new Decision.Decision(
      { schedule: c.schedule, guards: c.guards, random: c.random, onEvent: c.onEvent, source: 'hedging' },
      now
    )
    if (c.signal !== undefined) this.unsubscribe = onAbort(c.signal, () => this.abortedByCaller())
    this.guarded(() => this.launch(now))
  }

  private launch(now: number): void {
    const index = this.launches.length
    this.launches.push(now)
    const controller = new AbortController()
    this.controllers[index] = controller
    this.inFlight++
    const { decision } = this
    if (this.c.onEvent !== undefined) decision.emit({ _tag: 'HedgeLaunched', ...decision.base(now), index })
    decision.begin(now)
    // The schedule's delay is the time from this launch to the next.
    const delay = decision.driver.advance(undefined, now)
    if (delay < 0) {
      this.scheduleDone = true
      this.cancelTimer()
    } else {
      this.arm(delay)
    }
    const task = this.action({ signal: controller.signal, index })()
    task.then(
      (result) => this.guarded(() => this.settle(index, result)),
      (defect) => {
        this.controllers[index] = undefined
        this.fail(defect)
      }
    )
  }

  private arm(delay: number): void {
    this.cancelTimer()
    const timer = new AbortController()
    this.timer = timer
    const due = this.launches.length
    this.c.clock.sleep(delay, timer.signal, 'hedge').then(
      () => {
        if (timer.signal.aborted) return
        this.timer = undefined
        this.guarded(() => this.hedge(due))
      },
      (error) => this.fail(error)
    )
  }

  private cancelTimer(): void {
    this.timer?.abort()
    this.timer = undefined
  }

  private canLaunch(due: number): boolean {
    return (
      !this.finished &&
      this.stopped === undefined &&
      !this.scheduleDone &&
      this.launches.length === due &&
      this.inFlight < this.c.maxConcurrent
    )
  }

  private stop(reason: StopReason): void {
    this.stopped ??= reason
    this.cancelTimer()
  }

  /** The timer of launch `due` fired: a hedge, if the limit and the guards allow it. */
  private hedge(due: number): void {
    if (!this.canLaunch(due)) return
    const { guards, clock } = this.c
    this.afterAnswer(Guard.allows(guards, clock.now()), () => this.canLaunch(due), false)
  }

  private settle(index: number, result: Either<E, A>): void {
    this.controllers[index] = undefined
    if (this.finished) return this.release(result)
    this.inFlight--
    const { guards, clock, signal } = this.c
    const { decision } = this
    const now = decision.time(clock.now())
    const latency = now - this.launches[index]
    if (this.c.onEvent !== undefined) decision.attemptEnded(result, index + 1, latency, now)
    // Outcomes of attempts the caller aborted say nothing of the dependency: the guards are not told.
    const counted = guards.length > 0 && signal?.aborted !== true
    if (result._tag === 'Right') {
      const told = counted ? decision.judge(result, now, latency, -1) : undefined
      return this.finish(result, 'succeeded', index, this.lefts, told)
    }
    this.lefts.push(result.left)
    if (signal?.aborted) return this.checkDone()
    if (this.c.isFatal?.(result.left) === true) {
      this.stop('failed')
      return this.giveUp('failed')
    }
    // gRFC A6: a non-fatal failure sends the next hedge at once, if the guards allow it.
    const wanted = this.stopped === undefined && !this.scheduleDone
    const refused = counted ? decision.judge(result, now, latency, wanted ? 0 : -1) : undefined
    const free = (): boolean =>
      !this.finished && this.stopped === undefined && !this.scheduleDone && this.inFlight < this.c.maxConcurrent
    // The hedge this failure prompts replaces the timer's: while the guards answer, the timer must not launch one.
    if (isPromise(refused) && free()) this.cancelTimer()
    this.afterAnswer(refused, free, true)
  }

  /** Launches a hedge once the guards have answered (awaited only when they answer by promise), if `may()` still. */
  private afterAnswer(
    answer: Guard.GuardReason | undefined | Promise<Guard.GuardReason | undefined>,
    may: () => boolean,
    prompted: boolean
  ): void {
    const then = (refused: Guard.GuardReason | undefined): void => {
      if (this.finished) return
      if (may()) {
        const { decision } = this
        if (refused === undefined) {
          if (prompted) decision.retries++
          return this.launch(decision.time(this.c.clock.now()))
        }
        const at = decision.time(this.c.clock.now())
        decision.emit({ _tag: 'GuardRefused', ...decision.base(at), attempt: this.launches.length, reason: refused })
        this.stop(refused)
      }
      this.checkDone()
    }
    if (!isPromise(answer)) return then(answer)
    this.waiting++
    answer.then(
      (refused) => {
        this.waiting--
        this.guarded(() => then(refused))
      },
      (error) => this.fail(error)
    )
  }

  private abortedByCaller(): void {
    if (this.finished) return
    this.stopped = 'aborted'
    this.cancelTimer()
    const reason = this.c.signal?.reason
    for (const controller of this.controllers) controller?.abort(reason)
    this.checkDone()
  }

  private checkDone(): void {
    if (this.finished || this.inFlight > 0 || this.waiting > 0) return
    if (this.stopped !== undefined || this.scheduleDone) this.giveUp(this.stopped ?? 'schedule')
  }

  /** Ends the call with its `Left`(s). */
  private giveUp(reason: StopReason): void {
    const lefts = this.lefts
    if (this.c.all) return this.finish({ _tag: 'Left', left: lefts.slice() }, reason, undefined, [])
    this.finish({ _tag: 'Left', left: lefts[lefts.length - 1] }, reason, undefined, lefts.slice(0, -1))
  }

  private finish(
    result: Either<E | ReadonlyArray<E>, A>,
    reason: StopReason,
    winner: number | undefined,
    unused: ReadonlyArray<E>,
    told?: unknown
  ): void {
    const { clock, onEvent } = this.c
    const { decision } = this
    if (onEvent !== undefined && winner !== undefined)
      decision.emit({ _tag: 'HedgeWon', ...decision.base(decision.time(clock.now())), index: winner })
    this.end(new DOMException('Hedging: the call has ended', 'AbortError'))
    decision.end(reason, onEvent === undefined ? 0 : clock.now())
    for (const left of unused) this.release({ _tag: 'Left', left })
    const deliver = (): void => {
      try {
        this.c.onDone?.({ result, status: this.decision.driver.status, reason, launches: this.launches, winner })
      } catch (error) {
        return this.reject(error)
      }
      this.resolve(result)
    }
    if (isPromise(told)) told.then(deliver, this.reject)
    else deliver()
  }

  private end(reason: unknown): void {
    this.finished = true
    this.cancelTimer()
    this.unsubscribe()
    const { decision } = this
    this.controllers.forEach((controller, index) => {
      if (controller === undefined) return
      controller.abort(reason)
      if (this.c.onEvent !== undefined)
        decision.emit({ _tag: 'HedgeAborted', ...decision.base(decision.time(this.c.clock.now())), index })
    })
  }

  /** A defect (the action rejected or threw, a budget or the schedule threw): the call rejects with it. */
  private fail(error: unknown): void {
    if (this.finished) return // a loser's rejection, after the call ended
    this.end(error)
    this.decision.end('defect', this.c.onEvent === undefined ? 0 : this.c.clock.now())
    this.reject(error)
  }

  private guarded(f: () => void): void {
    try {
      f()
    } catch (error) {
      this.fail(error)
    }
  }

  private release(result: Either<E, A>): void {
    if (this.c.release === undefined) return
    try {
      const released = this.c.release(result)
      if (isPromise(released)) released.catch(noop)
    } catch {
      // Nobody is left to tell: the call may have returned already.
    }
  }
}

const configOf = <E, A>(schedule: Schedule<unknown>, options: HedgingOptions<E, A>): Config<E, A> => {
  const where = 'hedging'
  validate.schedule(where, 'schedule', schedule)
  validate.object(where, 'options', options)
  validate.services(where, 'options', options)
  const maxConcurrent = validate.orDefault(options.maxConcurrent, Infinity)
  if (!(maxConcurrent === Infinity || (Number.isSafeInteger(maxConcurrent) && maxConcurrent >= 1))) {
    throw new RangeError(
      `${where}: options.maxConcurrent must be a whole number >= 1, received ${showValue(maxConcurrent)}`
    )
  }
  const errors = validate.orDefault(options.errors, 'last')
  if (errors !== 'last' && errors !== 'all') {
    throw new RangeError(`${where}: options.errors must be 'last' or 'all', received ${showValue(errors)}`)
  }
  for (const name of ['isFatal', 'release', 'onDone', 'onEvent'] as const) {
    if (options[name] !== undefined) validate.callable(where, `options.${name}`, options[name])
  }
  return {
    schedule,
    clock: options.clock ?? LiveClock.live,
    random: options.random,
    signal: options.signal,
    maxConcurrent,
    isFatal: options.isFatal,
    guards: Decision.guardsOf(where, options),
    all: errors === 'all',
    release: options.release,
    onDone: options.onDone,
    onEvent: options.onEvent
  }
}

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * Runs an action as a hedged call: the first attempt starts at once; while none has succeeded, the next starts
 * after the schedule's next delay, up to `maxConcurrent` in flight; the first `Right` wins and every other attempt
 * is aborted through its `AbortSignal`. If all fail, the call returns the last `Left` (or all of them, with
 * `errors: 'all'`).
 *
 * **Details**
 *
 * - Launches: the schedule is asked at each launch for the delay until the next (fed `undefined`), so
 *   `Driver.delays(schedule)` lists the gaps between launches, and `recurs(n)` allows `n` hedges, `n + 1`
 *   attempts. When an attempt fails (not fatally), the next is launched at once rather than when its delay ends,
 *   and the delays go on from there (gRFC A6).
 * - The call ends when an attempt succeeds, when a fatal failure arrives (`options.isFatal`: the others are
 *   aborted and that error returned), or when every attempt launched has failed and no more may be launched.
 * - The winner is returned as soon as it arrives: the losers are aborted, not awaited. Results that arrive after
 *   the end go to `options.release`. A loser that rejects after the end is ignored; before it, a rejection is a
 *   defect and the task rejects with it, after aborting the others.
 * - Budget (gRFC A6 throttling): every attempt's outcome is reported, successes with `onSuccess` and non-fatal
 *   failures with `onFailure` (fatal ones, like a 400, say nothing of the server's health, and outcomes of
 *   attempts the caller aborted are not reported). The first attempt always goes; a hedge goes only while the
 *   budget allows: the answer of `onFailure` for the hedge a failure prompts, `budget.allows(now)` for one whose
 *   delay has run out. A refusal stops the launches; the attempts out may still win. The budget is told as the
 *   run's `retries` the hedges that failures prompted: one its timer launched was never charged, so a success
 *   after it is not refunded as a retry's (`Budget.retryQuota` gives back `noRetryIncrement`).
 * - Determinism: times come from `options.clock` alone, so under a `TestClock` the launches, the winner and
 *   the aborts are the same on every run.
 * - Hedge idempotent requests only: the losers may have been applied too.
 *
 * @example
 * import { hedging, type HedgeContext, type Summary } from 'fp-ts-retry/Hedging'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as E from 'fp-ts/Either'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const summaries: Array<Summary> = []
 *   const aborted: Array<number> = []
 *   // attempt 0 fails at 40 ms, attempt 1 hangs, attempt 2 answers after 25 ms
 *   const read = ({ signal, index }: HedgeContext) => async () => {
 *     signal.addEventListener('abort', () => aborted.push(index))
 *     await clock.sleep([40, 10_000, 25][index], signal)
 *     return index === 0 ? E.left('503') : E.right(`from attempt ${index}`)
 *   }
 *   const policy = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3)))
 *   const call = pipe(read, hedging(policy, { clock, onDone: (s) => void summaries.push(s) }))()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await call, E.right('from attempt 2'))
 *   // 0 at once; its failure at 40 launches 1 at once; 2 is due 100 ms later, at 140, and wins at 165
 *   assert.deepStrictEqual(summaries.map(({ launches, winner, reason }) => ({ launches, winner, reason })), [{ launches: [0, 40, 140], winner: 2, reason: 'succeeded' }])
 *   assert.deepStrictEqual(aborted, [1])
 * }
 * main()
 *
 * @category interpreters
 * @since 1.0.0
 */
export function hedging<E = unknown, A = unknown>(
  schedule: Schedule<unknown>,
  options: HedgingOptions<E, A> & { readonly errors: 'all' }
): <E1 extends E, A1 extends A>(action: Attempt<E1, A1>) => TaskEither<ReadonlyArray<E1>, A1>
export function hedging<E = unknown, A = unknown>(
  schedule: Schedule<unknown>,
  options?: HedgingOptions<E, A> & { readonly errors?: 'last' | undefined }
): <E1 extends E, A1 extends A>(action: Attempt<E1, A1>) => TaskEither<E1, A1>
export function hedging<E = unknown, A = unknown>(
  schedule: Schedule<unknown>,
  options?: HedgingOptions<E, A>
): <E1 extends E, A1 extends A>(action: Attempt<E1, A1>) => TaskEither<E1 | ReadonlyArray<E1>, A1>
export function hedging<E, A>(
  schedule: Schedule<unknown>,
  options: HedgingOptions<E, A> = {}
): (action: Attempt<E, A>) => TaskEither<E | ReadonlyArray<E>, A> {
  const config = configOf(schedule, options)
  return (action) => {
    validate.callable('hedging', 'action', action)
    return () => {
      const { signal } = config
      if (signal?.aborted) return Promise.reject(signal.reason)
      return new Promise((resolve, reject) => {
        try {
          new Call(config, action, resolve, reject)
        } catch (error) {
          reject(error) // the schedule's first step threw
        }
      })
    }
  }
}
