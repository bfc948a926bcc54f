/**
 * Guards: whatever may refuse a retry that the schedule wants. A circuit breaker and a retry budget are guards;
 * so is anything else that must have its say before another attempt (a rate limiter, a bulkhead). This module is
 * the protocol alone: each resource adapts itself to it with its own `asGuard` (`Breaker.asGuard`,
 * `Budget.asGuard`, `RateLimiter.asGuard`, `Bulkhead.asGuard`), and `Decision.guardsOf` puts a run's in order.
 *
 * Every module that retries (the runners, `Hedging`, `Http`, the durable engines) tells its guards of each attempt
 * through one protocol, {@link Outcome} in, a yes or no out, in the order they are given: breaker before budget,
 * so that a retry the breaker refuses is no retry and the budget does not pay for it. The guard that refuses names
 * why the run stopped. While every answer is a boolean, the run decides synchronously; a guard that answers by
 * promise (one shared through a server) is awaited alone.
 *
 * @example
 * import * as Guard from 'fp-ts-retry/Guard'
 * import * as Budget from 'fp-ts-retry/Budget'
 * import { retrying } from 'fp-ts-retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   // a guard of one's own: no more than two retries in all, across runs
 *   let left = 2
 *   const quota: Guard.Guard = { reason: 'budget', readsTime: false, admit: (o) => !o.retrying || left-- > 0 }
 *   const reasons: Array<string> = []
 *   const run = retrying(Schedule.recurs(5), { guards: [quota], onDone: ({ reason }) => void reasons.push(reason) })
 *   await pipe(TE.left('down'), run)()
 *   await pipe(TE.left('down'), run)()
 *   assert.deepStrictEqual(reasons, ['budget', 'budget'])
 *   assert.ok(Budget.asGuard(Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })).readsTime)
 * }
 * main()
 *
 * @since 1.0.0
 */
import type * as model from './internal/model'
import { isPromise } from './internal/promise'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The stop reasons a guard may give: a run a guard ended stops with the reason of the guard that refused. A retry
 * budget refuses with `'budget'`, a circuit breaker with `'breaker'`, a rate limiter with `'rateLimit'`, a bulkhead
 * with `'bulkhead'`, a load shedder (`AdaptiveLimit`, `AdaptiveThrottle`) with `'shed'`.
 *
 * @example
 * import type { GuardReason } from 'fp-ts-retry/Guard'
 *
 * const reason: GuardReason = 'breaker'
 *
 * @category model
 * @since 1.0.0
 */
export type GuardReason = model.GuardReason

/**
 * What a guard is told of each attempt, once the schedule has decided.
 *
 * **Details**
 *
 * - `ok`: the attempt succeeded. `error`: a failure's error; for a success, the error of the failure before it
 *   (`undefined` after a first attempt), so that a budget can refund what that failure cost.
 * - `latency`: how long the attempt took, and `now` the time it ended (ms, on the run's clock; both `0` unless a
 *   guard of the run `readsTime`).
 * - `retries`: the retries the run made before this attempt.
 * - `retrying`: whether another attempt is wanted (the schedule continues, and no guard before this one refused);
 *   then `delay` is the wait before it, else `delay` is `-1`. A guard answers whether that attempt may go;
 *   when `retrying` is `false` its answer is not read.
 *
 * @example
 * import type { Outcome } from 'fp-ts-retry/Guard'
 *
 * const firstFailure: Outcome = { ok: false, error: 'timeout', latency: 12, now: 12, retries: 0, retrying: true, delay: 100 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Outcome {
  readonly ok: boolean
  readonly error: unknown
  readonly latency: number
  readonly now: number
  readonly retries: number
  readonly retrying: boolean
  readonly delay: number
}

/**
 * Whatever may refuse a retry the schedule wants.
 *
 * **Details**
 *
 * - `admit(outcome)` is told of every attempt (see {@link Outcome}) and answers whether the retry the outcome
 *   asks for may go: `true`, `false`, or a promise of one. A guard after one that refused is told the outcome with
 *   `retrying: false`.
 * - `reason`: the run's stop reason when this guard refuses.
 * - `readsTime`: whether `admit` reads `latency` and `now` (the run reads its clock only when something does).
 * - `allows(now)` (optional): whether an attempt that no failure prompted may go, such as a hedge whose delay ran
 *   out (a budget's `allows`). Without it, such an attempt is let through.
 * - `refused(error)` (optional): whether a failure is this guard's own refusal of the attempt, made before any
 *   I/O (a `Breaker.protect`'s typed `Left` while the circuit is open): a run that such a failure ends stops with
 *   this guard's reason, not the schedule's.
 *
 * @example
 * import type { Guard } from 'fp-ts-retry/Guard'
 *
 * // refuses any retry that would wait longer than a second
 * const impatient: Guard = { reason: 'budget', readsTime: false, admit: (o) => !o.retrying || o.delay <= 1_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Guard {
  readonly reason: GuardReason
  readonly readsTime: boolean
  readonly admit: (outcome: Outcome) => boolean | Promise<boolean>
  readonly allows?: ((now: number) => boolean | Promise<boolean>) | undefined
  readonly refused?: ((error: unknown) => boolean) | undefined
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Tells every guard of an outcome, in order, and answers the reason of the first that refused the retry the
 * outcome asks for, or `undefined` when none did (or none was asked). Synchronous while every answer is a
 * boolean.
 *
 * **Details**
 *
 * - A guard after one that refused is told the outcome with `retrying: false` and `delay: -1`: that retry will
 *   not be made.
 * - Every guard is told, whatever the others answer or throw. A guard that throws or rejects when told of a
 *   failure makes the whole answer throw or reject with the first such error, once every guard has been told.
 *   Told of a success, with `onError` given, its error goes to `onError` and the success stands: the caller
 *   must not run a success again because a guard failed to hear of it.
 *
 * @example
 * import * as Guard from 'fp-ts-retry/Guard'
 * import * as assert from 'assert'
 *
 * const told: Array<boolean> = []
 * const no: Guard.Guard = { reason: 'breaker', readsTime: false, admit: () => false }
 * const spy: Guard.Guard = { reason: 'budget', readsTime: false, admit: (o) => (told.push(o.retrying), true) }
 * const outcome = { ok: false, error: 'x', latency: 0, now: 0, retries: 0, retrying: true, delay: 10 }
 * assert.strictEqual(Guard.decide([no, spy], outcome), 'breaker')
 * assert.deepStrictEqual(told, [false]) // the budget heard of a failure that will not be retried
 *
 * @category utils
 * @since 1.0.0
 */
export const decide = (
  guards: ReadonlyArray<Guard>,
  outcome: Outcome,
  onError?: (error: unknown, guard: Guard) => void
): GuardReason | undefined | Promise<GuardReason | undefined> => {
  const deciding = new Deciding(outcome, onError)
  for (let i = 0; i < guards.length; i++) {
    let answer: boolean | Promise<boolean>
    try {
      answer = guards[i].admit(deciding.told)
    } catch (error) {
      deciding.fault(error, guards[i])
      continue
    }
    if (isPromise(answer)) return decideLater(guards, i, answer, deciding)
    deciding.heed(answer, guards[i])
  }
  return deciding.verdict()
}

/** What {@link decide} carries from one guard to the next. */
class Deciding {
  refused: GuardReason | undefined = undefined
  told: Outcome
  private failed = false
  private error: unknown = undefined

  constructor(readonly outcome: Outcome, private readonly onError?: (error: unknown, guard: Guard) => void) {
    this.told = outcome
  }

  heed(admitted: boolean, guard: Guard): void {
    if (admitted || !this.told.retrying) return
    this.refused = guard.reason
    this.told = { ...this.told, retrying: false, delay: -1 }
  }

  /** A guard that threw: a success stays one (its error to `onError`); on a failure, the first error is thrown. */
  fault(error: unknown, guard: Guard): void {
    if (this.outcome.ok && this.onError !== undefined) return this.onError(error, guard)
    if (this.failed) return
    this.failed = true
    this.error = error
  }

  verdict(): GuardReason | undefined {
    if (this.failed) throw this.error
    return this.refused
  }
}

/** {@link decide} from the guard at `i`, whose answer is a promise. */
const decideLater = async (
  guards: ReadonlyArray<Guard>,
  i: number,
  pending: Promise<boolean>,
  deciding: Deciding
): Promise<GuardReason | undefined> => {
  let answer: boolean | Promise<boolean> = pending
  for (;;) {
    try {
      deciding.heed(await answer, guards[i])
    } catch (error) {
      deciding.fault(error, guards[i])
    }
    if (++i === guards.length) return deciding.verdict()
    try {
      answer = guards[i].admit(deciding.told)
    } catch (error) {
      deciding.fault(error, guards[i])
      answer = true
    }
  }
}

/**
 * Asks every guard that has `allows` whether an attempt no failure prompted may go at `now` (a hedge whose delay
 * ran out): the reason of the first that refuses, or `undefined`. Synchronous while every answer is a boolean.
 *
 * @example
 * import * as Guard from 'fp-ts-retry/Guard'
 * import * as assert from 'assert'
 *
 * const closed: Guard.Guard = { reason: 'budget', readsTime: false, admit: () => true, allows: () => false }
 * assert.strictEqual(Guard.allows([closed], 0), 'budget')
 *
 * @category utils
 * @since 1.0.0
 */
export const allows = (
  guards: ReadonlyArray<Guard>,
  now: number
): GuardReason | undefined | Promise<GuardReason | undefined> => {
  for (let i = 0; i < guards.length; i++) {
    const answer = guards[i].allows?.(now) ?? true
    if (isPromise(answer)) return allowsLater(guards, i, answer, now)
    if (!answer) return guards[i].reason
  }
  return undefined
}

const allowsLater = async (
  guards: ReadonlyArray<Guard>,
  i: number,
  pending: Promise<boolean>,
  now: number
): Promise<GuardReason | undefined> => {
  if (!(await pending)) return guards[i].reason
  return allows(guards.slice(i + 1), now)
}

/**
 * The reason of the guard whose own refusal `error` is (see {@link Guard}'s `refused`), if any.
 *
 * @example
 * import * as Guard from 'fp-ts-retry/Guard'
 * import * as assert from 'assert'
 *
 * const open: Guard.Guard = { reason: 'breaker', readsTime: false, admit: () => true, refused: (e) => e === 'circuit open' }
 * assert.strictEqual(Guard.refusedBy([open], 'circuit open'), 'breaker')
 * assert.strictEqual(Guard.refusedBy([open], 'timeout'), undefined)
 *
 * @category utils
 * @since 1.0.0
 */
export const refusedBy = (guards: ReadonlyArray<Guard>, error: unknown): GuardReason | undefined => {
  for (const guard of guards) if (guard.refused?.(error) === true) return guard.reason
  return undefined
}
