/**
 * Circuit breakers: a value shared by every call to one dependency, which stops calling it once it looks down,
 * lets probes through after a wait (`halfOpenProbes`, default one), and closes again when they succeed.
 *
 * A breaker is closed (calls go through), open (calls fail at once, without reaching the dependency) or half-open
 * (its probes are in flight; the other calls fail at once). Three policies decide when it opens:
 * {@link consecutive} (cockatiel's `ConsecutiveBreaker`), {@link sampling} (Polly's advanced breaker,
 * cockatiel's `SamplingBreaker`) and {@link count} (resilience4j's count-based window). A {@link Store}
 * (`RedisBreaker.store`) shares the state and the count of outcomes with a fleet, which then opens as one breaker
 * seeing every process's calls would. How long it stays open is a `Schedule`, `halfOpenAfter`: the first delay after
 * it opens, the next after a failed probe, and so on, so the wait grows as the schedule says (cockatiel#68) and
 * `Driver.delays(halfOpenAfter)` previews it.
 *
 * {@link protect} wraps an action with a breaker. Given to `retrying` as its `breaker` option, the same breaker also
 * ends a run whose circuit is open (reason `'breaker'`) instead of sleeping toward a dependency known to be down
 * (cockatiel#107). See docs/breakers-and-hedging.md for the order of the two and its arithmetic.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as E from 'fp-ts/Either'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const breaker = Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.exponential(1_000), clock })
 *   let calls = 0
 *   const down: TaskEither<string, number> = () => (calls++, Promise.resolve(E.left('503')))
 *   const call = pipe(down, Breaker.protect(breaker, () => 'circuit open'))
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: '503' })
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: '503' }) // 2 failures in a row: it opens
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: 'circuit open' }) // not called
 *   assert.strictEqual(calls, 2)
 *   await clock.advance(1_000) // the probe may go
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: '503' }) // it fails: open for 2 s now
 *   assert.deepStrictEqual(breaker.state, { _tag: 'Open', since: 1_000, halfOpenAt: 3_000 })
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import type { Predicate } from 'fp-ts/Predicate'
import type { TaskEither } from 'fp-ts/TaskEither'
import { FleetCircuit } from './breaker/fleet'
import { Circuit, tell, type Policy } from './breaker/machine'
import { memory } from './breaker/store'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Random } from './Random'
import type { Schedule } from './Schedule'
import { isPromise } from './internal/promise'
import { noop, onAbort } from './internal/abort'
import { inARow, lastCalls, lastMs } from './internal/counters'
import type * as model from './internal/model'
import type * as Event from './Event'
import type * as Guard from './Guard'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Where a breaker stands, with the time (ms, on its clock) it got there.
 *
 * **Details**
 *
 * - `Closed`: calls go through, and their outcomes feed the policy.
 * - `Open`: calls fail at once. From `halfOpenAt` on, the next call is let through as a probe; `halfOpenAt` is
 *   `Infinity` once `halfOpenAfter` has stopped: `pipe(constant(1_000), intersect(recurs(3)))` allows 3 probes,
 *   and after the third fails the circuit stays open.
 * - `HalfOpen`: up to `halfOpenProbes` probes are in flight; the other calls fail at once. That many successes
 *   close the breaker; the first failure opens it again for the schedule's next delay.
 *
 * @example
 * import type { State } from 'fp-ts-retry/Breaker'
 *
 * const describe = (state: State): string =>
 *   state._tag === 'Open' ? `open until ${new Date(state.halfOpenAt).toISOString()}` : state._tag
 *
 * @category model
 * @since 1.0.0
 */
export type State =
  | { readonly _tag: 'Closed'; readonly since: number }
  | { readonly _tag: 'Open'; readonly since: number; readonly halfOpenAt: number }
  | { readonly _tag: 'HalfOpen'; readonly since: number }

/**
 * Counts kept since the breaker was made: outcomes reported (`successes`, `failures`) and calls refused
 * (`rejections`). Every call is counted exactly once, whatever the interleaving of concurrent calls.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const breaker = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000) })
 * assert.deepStrictEqual(breaker.metrics, { successes: 0, failures: 0, rejections: 0 })
 *
 * @category model
 * @since 1.0.0
 */
export interface Metrics {
  readonly successes: number
  readonly failures: number
  readonly rejections: number
}

/**
 * A call let through by {@link Breaker.enter}: report its outcome once, with `onSuccess` or `onFailure`.
 *
 * **Details**
 *
 * - Only the first report counts; later ones do nothing.
 * - An outcome feeds the policy only if the breaker has not changed state since the call was let through: a call
 *   that started while closed and fails after the circuit opened is counted in `metrics`, not held against the
 *   dependency again.
 * - Either may answer with a promise when the breaker publishes a change to its {@link Store}.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const breaker = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000) })
 * const permit = breaker.enter() as Breaker.Permit
 * permit.onFailure()
 * assert.strictEqual(breaker.state._tag, 'Open')
 * assert.strictEqual(breaker.enter(), undefined) // refused
 *
 * @category model
 * @since 1.0.0
 */
export interface Permit {
  readonly onSuccess: () => void | Promise<void>
  readonly onFailure: () => void | Promise<void>
}

/**
 * The outcomes of the current closed period that a fleet's {@link Store} holds, as a {@link Window} keeps them: how
 * many, and how many of them failed. Each breaker judges it by its own policy (threshold, failure rate, minimum).
 *
 * **Details**
 *
 * - `consecutive`: the failures since the last success (`outcomes` is `failures`).
 * - `count`: the last `size` outcomes at most; `sampling`: those of the window's buckets.
 * - `{ outcomes: 0, failures: 0 }` before any outcome, and again after every change of state.
 *
 * @example
 * import type { Tally } from 'fp-ts-retry/Breaker'
 *
 * const failureRate = (tally: Tally): number => (tally.outcomes === 0 ? 0 : tally.failures / tally.outcomes)
 *
 * @category model
 * @since 1.0.0
 */
export type Tally = model.Tally

/**
 * Which outcomes of a closed period a fleet's {@link Store} keeps for a breaker's policy: plain data, sent with each
 * `outcome` {@link Transition}.
 *
 * **Details**
 *
 * - `consecutive` ({@link consecutive}): the failures in a row; a success sets them back to 0.
 * - `count` ({@link count}): the last `size` outcomes.
 * - `sampling` ({@link sampling}): the last `duration` ms, in `buckets` buckets of `width = duration / buckets` ms
 *   of the store's clock. An outcome at `t` falls in bucket `floor(t / width)` and counts while the bucket of the
 *   store's now is fewer than `buckets` after it: between `duration - width` and `duration` ms (Polly v7's advanced
 *   breaker, resilience4j's time-based window). A store keeps one entry per bucket, not per outcome.
 *
 * @example
 * import type { Window } from 'fp-ts-retry/Breaker'
 *
 * // Breaker.sampling({ window: 30_000, buckets: 10, ... }): the last 30 s in buckets of 3 s
 * const window: Window = { _tag: 'sampling', duration: 30_000, buckets: 10 }
 *
 * @category model
 * @since 1.0.0
 */
export type Window = model.Window

/**
 * The breaker's state as a fleet's {@link Store} holds it: plain JSON, its times relative to the store's own clock
 * (so that the fleet's clocks need not agree), and a `version` the store bumps at every change.
 *
 * **Details**
 *
 * - `Closed`, with the closed period's `tally` when the store counts the fleet's outcomes (`memoryStore`,
 *   `RedisBreaker.store`: see the `outcome` {@link Transition}); `Open`, a probe allowed `halfOpenIn` ms from the
 *   store's now (`null`: never, as after {@link Breaker.isolate} or a `halfOpenAfter` that stopped); `HalfOpen`,
 *   with the `probes` in flight in the fleet (their leases unexpired) and the `successes` reported so far.
 * - A store that holds nothing answers `{ _tag: 'Closed', version: 0 }` (and a zero `tally` if it counts).
 * - A store that leaves `tally` out does not count: each process's breaker then counts its own outcomes, and only
 *   the state it leads to is shared.
 *
 * @example
 * import type { StoredState } from 'fp-ts-retry/Breaker'
 *
 * const open: StoredState = { _tag: 'Open', version: 3, halfOpenIn: 5_000 }
 * const closed: StoredState = { _tag: 'Closed', version: 4, tally: { outcomes: 2, failures: 1 } }
 *
 * @category model
 * @since 1.0.0
 */
export type StoredState =
  | { readonly _tag: 'Closed'; readonly version: number; readonly tally?: Tally | undefined }
  | { readonly _tag: 'Open'; readonly version: number; readonly halfOpenIn: number | null }
  | { readonly _tag: 'HalfOpen'; readonly version: number; readonly probes: number; readonly successes: number }

/**
 * A change a breaker asks its {@link Store} to make, in one atomic step.
 *
 * **Details**
 *
 * - `open`: the breaker's policy opened the circuit; made only if the store is still at `version` (the one the
 *   breaker last saw) and not open, for a probe `wait` ms later (`null`: never).
 * - `enter`: a call wants to go. Closed: it goes. Open and its wait over: the circuit turns half-open and this
 *   call is its first probe. Half-open: a probe permit while fewer than `probes` are in flight or succeeded, in the
 *   whole fleet. A permit is given up `lease` ms after it was handed out if never reported (its process died).
 * - `probed`: probe `permit` of `version` ended. A success counts toward `probes` successes, which close the
 *   circuit; a failure opens it again, for a probe `wait` ms later. A permit given up or of another version: nothing.
 * - `isolate`: open, with no probe ever, until `reset` (open with no probe already: nothing, not even the
 *   version); `reset`: closed, at a new version, so the count is emptied even when it was closed.
 * - `outcome`: a call let through while the circuit was closed at `version` ended, `ok` or not. A store that counts
 *   (its closed state has a `tally`) adds it to the closed period's outcomes as `window` keeps them, if it is still
 *   closed at `version`; otherwise it does nothing. Every change of version empties the count, and an outcome
 *   under another `window` than the one counted so far starts it afresh. The answer's `tally` is then the fleet's:
 *   a breaker opens (`open`) when its policy says so of it. A store without a `tally` is never sent one.
 *
 * @example
 * import type { Transition } from 'fp-ts-retry/Breaker'
 *
 * const ask: Transition = { _tag: 'enter', probes: 1, lease: 10_000 }
 * const failed: Transition = { _tag: 'outcome', version: 4, ok: false, window: { _tag: 'count', size: 100 } }
 *
 * @category model
 * @since 1.0.0
 */
export type Transition =
  | { readonly _tag: 'open'; readonly version: number; readonly wait: number | null }
  | { readonly _tag: 'enter'; readonly probes: number; readonly lease: number }
  | {
      readonly _tag: 'probed'
      readonly version: number
      readonly permit: string
      readonly ok: boolean
      readonly probes: number
      readonly wait: number | null
    }
  | { readonly _tag: 'isolate' }
  | { readonly _tag: 'reset' }
  | { readonly _tag: 'outcome'; readonly version: number; readonly ok: boolean; readonly window: Window }

/**
 * What a {@link Store} answers to a {@link Transition}: the state after it, and for `enter` the probe permit it
 * handed out, if any.
 *
 * @example
 * import type { StoreAnswer } from 'fp-ts-retry/Breaker'
 *
 * const answer: StoreAnswer = { state: { _tag: 'HalfOpen', version: 4, probes: 1, successes: 0 }, permit: '17' }
 *
 * @category model
 * @since 1.0.0
 */
export interface StoreAnswer {
  readonly state: StoredState
  readonly permit?: string | undefined
}

/**
 * Where a fleet keeps the state of one breaker (`RedisBreaker.store`, a key in Redis), so that when one process
 * opens the circuit the others stop calling too, and the fleet probes a half-open circuit as one.
 *
 * **Details**
 *
 * - `read()` answers the fleet's state; `apply(transition, timeout)` makes a change in one atomic step (see
 *   {@link Transition}) and answers the state after it. Either may answer with a promise. Times are the store's:
 *   a Redis store reads the server's `TIME`, so the fleet's clocks need not agree.
 * - `timeout` is how long the breaker waits for `apply`'s answer (`storeTimeout`): a store whose call may still
 *   be made after it (queued in a Redis client while the server is down, or in the socket of a paused server) must
 *   then make no change, so that a change the breaker gave up on never lands late, on a version nobody awaits.
 *   `RedisBreaker.store` sends each change with a deadline on the server's clock, which the script checks.
 * - The breaker keeps a local copy of the fleet's state: while the copy is younger than `staleness`
 *   ({@link BreakerOptions}) a closed or open circuit decides without the store; otherwise a call costs one store
 *   call (an `enter`). Every answer of the store, whatever it was asked, refreshes the copy. Probes always go
 *   through the store.
 * - A store whose closed state carries a `tally` counts the fleet's outcomes: each breaker tells it the outcomes of
 *   its calls (`outcome`), and the fleet opens when the policy says so of the outcomes of all its processes in the
 *   order the store received them. A success is not told when all this process learnt of the tally from its call's
 *   entry to its end (the store's answers, its own failures told meanwhile) said it could change nothing: with
 *   `consecutive`, no failure counted; with `count`, a full window without failure. It counts as if it had come at
 *   that entry, so a failure of another process since, not yet learnt, may count as in a row with the next one
 *   (within `staleness` and a call's time). A store without a `tally` is told nothing: each breaker counts its own
 *   outcomes (as every breaker also does, for when the store does not answer).
 * - The store calls a call costs while the circuit is closed and the store answers (each one round trip to Redis):
 *
 * | outcome | `consecutive` | `count` | `sampling` |
 * | --- | ---: | ---: | ---: |
 * | a success, nothing counted against it (above) | 0 | 0 | 1 |
 * | any other success | 1 | 1 | 1 |
 * | a failure | 1 | 1 | 1 |
 *
 *   plus the `enter` when the copy is stale, and one more (`open`) for the failure that opens the circuit. With a
 *   `staleness` longer than the gap between a process's calls, the copy an outcome refreshed is still fresh at the
 *   next call: a healthy dependency costs no store call per call under `consecutive` or `count` (one `enter` per
 *   `staleness`), one under `sampling`. With `staleness: 0` add the `enter` to every call. A failure makes the
 *   successes of the calls already in flight in its process count too (bench/RESULTS.md: 0.59 store calls per call
 *   for `consecutive` with 1 call in 10 failing and 16 in flight, on a fresh copy).
 * - Every store call is bounded by `storeTimeout`. A call that fails or does not answer in time does not fail the
 *   breaker's call: the breaker goes on with its local state and its own count (as a breaker without a store), and
 *   tells `ServiceUnavailable` (`service: 'breaker store'`, `fallback: 'local'`), then `ServiceRecovered` once the
 *   store answers again, when the fleet's state and count win: a change the process made alone meanwhile (an
 *   opening on its own count) gives way to the fleet's state.
 * - {@link memoryStore} is the reference: a Redis store behaves like it.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const store = Breaker.memoryStore({ clock })
 *   const options = { threshold: 2, halfOpenAfter: Schedule.constant(5_000), clock, store }
 *   const [a, b] = [Breaker.consecutive(options), Breaker.consecutive(options)] // two processes
 *   await (await a.enter())?.onFailure()
 *   await (await b.enter())?.onFailure() // the fleet's second failure in a row: b opens, and says so
 *   assert.deepStrictEqual(b.state, { _tag: 'Open', since: 0, halfOpenAt: 5_000 })
 *   assert.strictEqual(await a.enter(), undefined) // a has read it: refused
 *   assert.deepStrictEqual(a.state, { _tag: 'Open', since: 0, halfOpenAt: 5_000 })
 * }
 * main()
 *
 * @category model
 * @since 1.0.0
 */
export interface Store {
  readonly read: () => StoredState | Promise<StoredState>
  readonly apply: (transition: Transition, timeout?: number) => StoreAnswer | Promise<StoreAnswer>
}

/**
 * A circuit breaker: shared by every call to one dependency, used through {@link protect} and the `breaker` option
 * of `retrying`.
 *
 * **Details**
 *
 * - `state` is this process's view, as of the last decision; `metrics` the counts so far.
 * - `enter()` asks to make a call now: a {@link Permit} when it may go (closed, or a probe once `halfOpenAt` has
 *   come), `undefined` when it is refused. With a {@link Store}, it may answer a promise.
 * - `admitsIn(ms)` answers what `enter()` would answer `ms` from now, as far as the breaker knows now, changing
 *   nothing: closed, yes; open, when `halfOpenAt` has come by then (that call is a probe); half-open, while a probe
 *   slot is free (fewer than `halfOpenProbes` probes in flight or succeeded; with a {@link Store}, in the fleet).
 *   `retrying` asks it before each sleep, so a retry that would be probe 2 of 3 is made.
 * - `isolate()` opens the circuit by hand, for good: no probe goes until `reset()` closes it (resilience4j's
 *   forced open state and `reset`). Through a {@link Store}, for the whole fleet. On an open circuit it only takes
 *   the probe away (`halfOpenAt` becomes `Infinity`, `since` stays): no change of state is told, and on an isolated
 *   one it does nothing.
 * - `reset()` closes the circuit and empties the count, in every state: on a closed circuit no change is told and
 *   `since` stays, but the count starts again (the calls let through before it no longer count), as a store's
 *   `reset` empties the fleet's.
 * - Time is the breaker's clock's `now()`; the waits come from a `Driver` of `halfOpenAfter` started when the
 *   circuit opens and dropped when it closes, so that the next opening starts the schedule afresh.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const breaker: Breaker.Breaker = Breaker.consecutive({ threshold: 5, halfOpenAfter: Schedule.constant(1_000) })
 * assert.strictEqual(breaker.state._tag, 'Closed')
 * assert.strictEqual(breaker.admitsIn(100), true)
 * breaker.isolate() // taken out of service by hand
 * assert.strictEqual(breaker.admitsIn(3_600_000), false)
 * breaker.reset()
 * assert.strictEqual(breaker.state._tag, 'Closed')
 *
 * @category model
 * @since 1.0.0
 */
export interface Breaker {
  readonly state: State
  readonly metrics: Metrics
  readonly enter: () => Permit | undefined | Promise<Permit | undefined>
  readonly admitsIn: (ms: number) => boolean | Promise<boolean>
  readonly isolate: () => void | Promise<void>
  readonly reset: () => void | Promise<void>
}

/**
 * Options every breaker takes.
 *
 * **Details**
 *
 * - `halfOpenAfter`: the waits before a probe, as a `Schedule` (fed nothing: its input is `undefined`). Its first
 *   delay is the wait after the circuit opens, the next the wait after a failed probe, and so on. Use
 *   `Schedule.capped` to bound the growth; a schedule that stops leaves the circuit open for good, and so does one
 *   that throws (its error is thrown on its own once the breaker's call is over: a broken schedule is a bug).
 * - `halfOpenProbes` (default 1, a whole number >= 1): how many probes may be in flight at once while half-open;
 *   that many successes close the circuit, and the first failure opens it again. With a store, in the whole fleet.
 * - `clock` (default `Clock.live`) gives the time; give it the run's clock. `random` (default `Random.live`)
 *   draws the jitter of `halfOpenAfter`, if any.
 * - `store`: share the state and the count with a fleet (see {@link Store}, and its table of the store calls per
 *   call). `staleness` (ms, default 0): how old the local copy of the fleet's state may be before a call reads the
 *   store again (0: every call that is not refused at once costs one store call, besides its outcome's). `storeTimeout` (ms, default 100): the longest any store call is waited for, on
 *   `clock`. `probeLease` (ms, default 10,000): how long a probe permit of the fleet lasts if its process never
 *   reports it (it died): then another process may probe. Make it longer than a call takes.
 * - `name`: the breaker's name in its events. `onEvent` is told a `BreakerStateChanged` at every change of state,
 *   the one way to be told of one, as plain JSON: `from` and `to` (the states' tags), `since` (when the new state
 *   began, on `clock`), for `to: 'Open'` `halfOpenAt` (when a probe may go; `null` when none ever will: isolated,
 *   or `halfOpenAfter` stopped) and `origin` (`'local'` when this process made the change, `'store'` when it was
 *   read from the fleet); and the store's `ServiceUnavailable` and `ServiceRecovered`. A wait that changes within
 *   one opening (the fleet's wait wins, or `isolate()` takes the probe away) is no change of state: `state` shows
 *   it, nothing is told.
 * - `onEvent` observes, under the library's one rule (see the `Event` module): an error it throws is reported as a
 *   process warning (`ObserverWarning`) and the change goes on, as if it had returned.
 * - `from`: a breaker of this module that this one replaces (its configuration changed, as `Policies.reload` does):
 *   the new breaker starts in `from`'s state and with its metrics. Closed, it keeps the outcomes `from` counted,
 *   those its own window allows (the last `size` of them, those of the last `window` ms, the failures in a row);
 *   open, it stays open until the same `halfOpenAt` (isolated, for good); half-open, it stays half-open, and the
 *   probes in flight report to `from`. Nothing is told, as no state changed; a next opening waits by this breaker's
 *   own `halfOpenAfter`, from its first delay. Give both the same clock. Any other value is a `TypeError`.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import type { BreakerOptions } from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const clock = TestClock.make()
 * const probes: Array<number | null> = []
 * const options: BreakerOptions = {
 *   halfOpenAfter: Schedule.constant(1_000),
 *   clock,
 *   name: 'payments-api',
 *   onEvent: (event) => void (event._tag === 'BreakerStateChanged' && event.to === 'Open' && probes.push(event.halfOpenAt))
 * }
 * const breaker = Breaker.consecutive({ ...options, threshold: 1 })
 * ;(breaker.enter() as Breaker.Permit).onFailure() // opens: a probe may go 1 s later
 * breaker.reset()
 * breaker.isolate() // open, and no probe ever
 * assert.deepStrictEqual(probes, [1_000, null])
 *
 * @category model
 * @since 1.0.0
 */
export interface BreakerOptions {
  readonly halfOpenAfter: Schedule<unknown>
  readonly halfOpenProbes?: number | undefined
  readonly clock?: Clock | undefined
  readonly random?: Random | undefined
  readonly store?: Store | undefined
  readonly staleness?: number | undefined
  readonly storeTimeout?: number | undefined
  readonly probeLease?: number | undefined
  readonly name?: string | undefined
  readonly onEvent?: Event.Observer | undefined
  readonly from?: Breaker | undefined
}

/**
 * Options of {@link consecutive}: `threshold`, the failures in a row that open the circuit (a whole number >= 1).
 *
 * @example
 * import type { ConsecutiveOptions } from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * const options: ConsecutiveOptions = { threshold: 5, halfOpenAfter: Schedule.constant(10_000) }
 *
 * @category model
 * @since 1.0.0
 */
export interface ConsecutiveOptions extends BreakerOptions {
  readonly threshold: number
}

/**
 * Options of {@link sampling}.
 *
 * **Details**
 *
 * - `window`: how far back outcomes count, in ms (finite, > 0). An outcome reported at `t` counts until
 *   `t + window` (at `t + window` it is out).
 * - `minThroughput`: a whole number >= 1; with fewer outcomes in the window the circuit never opens.
 * - `failureRate`: in `(0, 1]`; the circuit opens when a failure brings the window's share of failures to it or
 *   above (Polly's `FailureRatio`).
 * - `buckets` (default 10, a whole number >= 1): with a {@link Store} that counts the fleet's outcomes, the window
 *   the store keeps is `buckets` buckets of `window / buckets` ms (see {@link Window}): an outcome counts in the
 *   fleet for between `window - window / buckets` and `window` ms. The breaker's own window, which decides without
 *   a store or when it does not answer, stays exact.
 *
 * @example
 * import type { SamplingOptions } from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * // Polly's defaults: half of the calls over 30 s, once there are at least 100 of them
 * const options: SamplingOptions = { window: 30_000, minThroughput: 100, failureRate: 0.5, halfOpenAfter: Schedule.constant(5_000) }
 *
 * @category model
 * @since 1.0.0
 */
export interface SamplingOptions extends BreakerOptions {
  readonly window: number
  readonly minThroughput: number
  readonly failureRate: number
  readonly buckets?: number | undefined
}

/**
 * Options of {@link protect}: `isFailure` (default: every `Left`) says which errors count against the dependency;
 * `signal`, the attempt's signal, tells it when the attempt has been given up.
 *
 * **Details**
 *
 * - An error `isFailure` rejects (a 404, a validation error) counts as a success: the dependency answered. As in
 *   Polly, where outcomes its `ShouldHandle` does not handle are successes for the breaker.
 * - When `signal` aborts before the action settles (the attempt timed out, or the run was aborted), the call is
 *   reported as a failure at once, and its outcome, if it ever comes, is not reported again. Give it the
 *   `AttemptContext`'s signal under `retryingWithContext`: an attempt that hangs past `attemptTimeout` then frees
 *   the probe it holds.
 *
 * @example
 * import type { ProtectOptions } from 'fp-ts-retry/Breaker'
 *
 * const options: ProtectOptions<{ status: number }> = {
 *   isFailure: (e) => e.status >= 500,
 *   signal: new AbortController().signal // in a run, the attempt's: `AttemptContext.signal`
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface ProtectOptions<E> {
  readonly isFailure?: Predicate<E> | undefined
  readonly signal?: AbortSignal | undefined
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** The rule of `count` and `sampling`: at least `minimum` outcomes, and failures at `failureRate` of them or more. */
const rated =
  (minimum: number, failureRate: number) =>
  (tally: Tally): boolean =>
    tally.outcomes >= minimum && tally.failures / tally.outcomes >= failureRate

const rate = (where: string, value: number): number =>
  validate.that(where, 'failureRate', 'a number in (0, 1]', (r) => validate.isDuration(r) && r > 0 && r <= 1, value)

const build = (where: string, policy: Policy, options: BreakerOptions): Breaker => {
  const clock = options.clock ?? LiveClock.live
  const ms = (name: string, value: number | undefined, fallback: number): number =>
    value === undefined ? fallback : validate.duration(where, name, value)
  const name = options.name === undefined ? undefined : validate.string(where, 'name', options.name)
  const config = {
    halfOpenAfter: options.halfOpenAfter,
    probes:
      options.halfOpenProbes === undefined
        ? 1
        : validate.positiveCount(where, 'halfOpenProbes', options.halfOpenProbes),
    clock,
    random: options.random,
    name,
    onEvent: options.onEvent
  }
  // checked with a store or without
  const staleness = ms('staleness', options.staleness, 0)
  const storeTimeout = ms('storeTimeout', options.storeTimeout, 100)
  const lease = ms('probeLease', options.probeLease, 10_000)
  const { store, from } = options
  const circuit =
    store === undefined
      ? new Circuit(policy, config)
      : new FleetCircuit(policy, { ...config, store, staleness, storeTimeout, lease })
  if (from !== undefined) circuit.takeOver(from as unknown as Circuit<unknown>)
  return circuit
}

const checkOptions = (where: string, options: BreakerOptions): void => {
  validate.object(where, 'options', options)
  validate.schedule(where, 'halfOpenAfter', options.halfOpenAfter)
  validate.services(where, 'options', { clock: options.clock, random: options.random })
  if (options.onEvent !== undefined) validate.callable(where, 'onEvent', options.onEvent)
  const store = options.store as unknown as Record<string, unknown> | null | undefined
  if (
    store !== undefined &&
    (store === null || typeof store.read !== 'function' || typeof store.apply !== 'function')
  ) {
    throw new TypeError(`${where}: store must have read and apply functions, received ${showValue(options.store)}`)
  }
  if (options.from !== undefined && !(options.from instanceof Circuit)) {
    throw new TypeError(`${where}: from must be a breaker made by this module, received ${showValue(options.from)}`)
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A breaker that opens after `threshold` failures in a row (cockatiel's `ConsecutiveBreaker`).
 *
 * **Details**
 *
 * - A success sets the count back to 0. Only the outcomes of calls let through in the current closed period count
 *   (see {@link Permit}).
 * - `threshold` must be a whole number >= 1 (`RangeError` otherwise); `halfOpenAfter` a `Schedule` (`TypeError`).
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const clock = TestClock.make()
 * const breaker = Breaker.consecutive({ threshold: 3, halfOpenAfter: Schedule.constant(1_000), clock })
 * const fail = () => (breaker.enter() as Breaker.Permit).onFailure()
 * fail()
 * fail()
 * ;(breaker.enter() as Breaker.Permit).onSuccess() // the count starts again
 * fail()
 * fail()
 * assert.strictEqual(breaker.state._tag, 'Closed')
 * fail()
 * assert.deepStrictEqual(breaker.state, { _tag: 'Open', since: 0, halfOpenAt: 1_000 })
 * assert.throws(() => Breaker.consecutive({ threshold: 0, halfOpenAfter: Schedule.constant(1_000) }), RangeError)
 *
 * @category constructors
 * @since 1.0.0
 */
export const consecutive = (options: ConsecutiveOptions): Breaker => {
  const where = 'Breaker.consecutive'
  checkOptions(where, options)
  const threshold = validate.positiveCount(where, 'threshold', options.threshold)
  return build(
    where,
    {
      counter: inARow(),
      window: { _tag: 'consecutive' },
      trips: (tally) => tally.failures >= threshold,
      idle: (tally) => tally.failures === 0
    },
    options
  )
}

/**
 * A breaker that opens when, over the last `window` ms, at least `minThroughput` outcomes were reported and the
 * share of failures among them reaches `failureRate` (Polly's advanced circuit breaker, cockatiel's
 * `SamplingBreaker`).
 *
 * **Details**
 *
 * - The window slides exactly: every outcome is kept with its time until it leaves the window (no buckets), so
 *   counts do not jump when a bucket rolls over. It holds one entry per outcome in the window. With a {@link Store}
 *   that counts the fleet's outcomes, the fleet's window is kept there in `buckets` (see {@link SamplingOptions}).
 * - It is checked when a failure is reported: `failures / outcomes >= failureRate`, with `outcomes >= minThroughput`.
 * - Closing the circuit empties the window: the failures that opened it are not held against the recovered
 *   dependency.
 * - `window` must be a finite number > 0, `minThroughput` a whole number >= 1, `failureRate` in `(0, 1]`: anything
 *   else is a `RangeError` naming the argument.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const clock = TestClock.make()
 * const breaker = Breaker.sampling({ window: 10_000, minThroughput: 4, failureRate: 0.5, halfOpenAfter: Schedule.constant(1_000), clock })
 * const report = (ok: boolean) => { const p = breaker.enter() as Breaker.Permit; ok ? p.onSuccess() : p.onFailure() }
 * report(true)
 * report(false)
 * report(false) // 2 of 3: too few outcomes to judge
 * assert.strictEqual(breaker.state._tag, 'Closed')
 * report(true)
 * report(false) // 3 of 5 >= 50%
 * assert.strictEqual(breaker.state._tag, 'Open')
 * assert.throws(() => Breaker.sampling({ window: 10_000, minThroughput: 4, failureRate: 1.5, halfOpenAfter: Schedule.constant(1) }), /failureRate/)
 *
 * @category constructors
 * @since 1.0.0
 */
export const sampling = (options: SamplingOptions): Breaker => {
  const where = 'Breaker.sampling'
  checkOptions(where, options)
  const window = validate.positive(where, 'window', options.window)
  const minThroughput = validate.positiveCount(where, 'minThroughput', options.minThroughput)
  const failureRate = rate(where, options.failureRate)
  const buckets = options.buckets === undefined ? 10 : validate.positiveCount(where, 'buckets', options.buckets)
  return build(
    where,
    {
      counter: lastMs(window),
      window: { _tag: 'sampling', duration: window, buckets },
      trips: rated(minThroughput, failureRate),
      // every success weighs against the failures to come
      idle: () => false
    },
    options
  )
}

/**
 * Options of {@link count}.
 *
 * **Details**
 *
 * - `size`: how many of the last calls count (a whole number in `[1, 2^29]`), resilience4j's `slidingWindowSize`.
 * - `minimumCalls` (default `size`): a whole number in `[1, size]`; with fewer outcomes in the window the circuit
 *   never opens (resilience4j's `minimumNumberOfCalls`).
 * - `failureRate`: in `(0, 1]`; the circuit opens when a failure brings the window's share of failures to it or
 *   above.
 *
 * @example
 * import type { CountOptions } from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * // resilience4j's defaults: half of the last 100 calls
 * const options: CountOptions = { size: 100, failureRate: 0.5, halfOpenAfter: Schedule.constant(60_000) }
 *
 * @category model
 * @since 1.0.0
 */
export interface CountOptions extends BreakerOptions {
  readonly size: number
  readonly minimumCalls?: number | undefined
  readonly failureRate: number
}

/**
 * A breaker that opens when, among the last `size` outcomes (and at least `minimumCalls` of them), the share of
 * failures reaches `failureRate`: resilience4j's count-based sliding window.
 *
 * **Details**
 *
 * - The window holds the last `size` outcomes in a ring: each new one pushes out the oldest. Time plays no part:
 *   for a window in time, see {@link sampling}.
 * - It is checked when a failure is reported. Closing the circuit empties the window.
 * - `size` and `minimumCalls` must be whole numbers (`1 <= minimumCalls <= size`), `failureRate` in `(0, 1]`:
 *   anything else is a `RangeError` naming the argument.
 * - `size` is at most 2^29 = 536,870,912: the window is a ring of `size` bytes, allocated when the breaker is made,
 *   and with `RedisBreaker.store` a string of `size` bytes in Redis, whose strings hold 512 MB at most. A larger
 *   `size` is a `RangeError` naming it, where V8 would have thrown an array-length error naming nothing (above
 *   2^32) or allocated gigabytes.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const breaker = Breaker.count({ size: 4, failureRate: 0.5, halfOpenAfter: Schedule.constant(1_000) })
 * const report = (ok: boolean) => { const p = breaker.enter() as Breaker.Permit; ok ? p.onSuccess() : p.onFailure() }
 * report(false)
 * report(true)
 * report(false) // 3 outcomes: fewer than the 4 it needs
 * assert.strictEqual(breaker.state._tag, 'Closed')
 * report(false) // 3 of the last 4 failed
 * assert.strictEqual(breaker.state._tag, 'Open')
 * assert.throws(() => Breaker.count({ size: 2 ** 32 + 1, failureRate: 0.5, halfOpenAfter: Schedule.constant(1_000) }), /size must be a whole number in \[1, 536870912\], received 4294967297/)
 *
 * @category constructors
 * @since 1.0.0
 */
export const count = (options: CountOptions): Breaker => {
  const where = 'Breaker.count'
  checkOptions(where, options)
  const size = validate.sizeAtMost(where, 'size', validate.MAX_WINDOW_SIZE, options.size)
  const minimumCalls = validate.that(
    where,
    'minimumCalls',
    `a whole number in [1, size = ${size}]`,
    (n) => validate.isCount(n) && n >= 1 && n <= size,
    options.minimumCalls ?? size
  )
  const failureRate = rate(where, options.failureRate)
  return build(
    where,
    {
      counter: lastCalls(size),
      window: { _tag: 'count', size },
      trips: rated(minimumCalls, failureRate),
      // a success that replaces a success in a full window changes nothing
      idle: (tally) => tally.failures === 0 && tally.outcomes === size
    },
    options
  )
}

/**
 * A {@link Store} in memory: the reference of the fleet's state machine and of its count (a Redis store behaves like
 * it), for tests and for breakers shared by workers of one process. Its time is `options.clock`'s (default
 * `Clock.live`).
 *
 * **Details**
 *
 * - It counts the fleet's outcomes (`outcome`, see {@link Transition}): its closed state has a `tally`.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const clock = TestClock.make()
 * const store = Breaker.memoryStore({ clock })
 * const window: Breaker.Window = { _tag: 'count', size: 3 }
 * store.apply({ _tag: 'outcome', version: 0, ok: false, window })
 * store.apply({ _tag: 'outcome', version: 0, ok: true, window })
 * assert.deepStrictEqual(store.read(), { _tag: 'Closed', version: 0, tally: { outcomes: 2, failures: 1 } })
 * store.apply({ _tag: 'open', version: 0, wait: 5_000 }) // the count is emptied
 * store.apply({ _tag: 'outcome', version: 0, ok: false, window }) // a call let through before: nothing
 * store.apply({ _tag: 'open', version: 0, wait: 9_000 }) // already open: nothing
 * assert.deepStrictEqual(store.read(), { _tag: 'Open', version: 1, halfOpenIn: 5_000 })
 * const entered = store.apply({ _tag: 'enter', probes: 1, lease: 1_000 })
 * assert.ok(!(entered instanceof Promise) && entered.permit === undefined) // open: no probe yet
 *
 * @category constructors
 * @since 1.0.0
 */
export const memoryStore = (options: { readonly clock?: Clock | undefined } = {}): Store => {
  validate.object('Breaker.memoryStore', 'options', options)
  validate.services('Breaker.memoryStore', 'options', { clock: options.clock })
  return memory(options.clock ?? LiveClock.live)
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Runs an action through a breaker: while the circuit is open it fails at once with `onOpen(state)`, without
 * running the action; half-open, a call goes through as a probe while a probe slot is free (`halfOpenProbes`), and
 * the others fail at once.
 *
 * **Details**
 *
 * - Each outcome is reported to the breaker: a `Right`, or a `Left` that `options.isFailure` rejects, as a
 *   success; any other `Left` as a failure.
 * - An action that rejects is a defect: it is reported as a failure (a dependency that throws is not healthy),
 *   and the rejection propagates unchanged.
 * - The call answers what the action answered: a report that fails (a {@link Store} whose write fails) never
 *   replaces it; its error is thrown on its own once the call is over.
 * - An attempt given up before it settles must still be reported, or a probe holds the circuit half-open for good:
 *   under `retryingWithContext` with `attemptTimeout`, pass the attempt's signal as `options.signal` (see
 *   {@link ProtectOptions}); its abort reports the call as a failure at once. Under `retrying`, whose action sees no
 *   signal, a timed-out attempt is reported only when it settles.
 * - Inside `retrying`, give the runner the same breaker (`retrying(schedule, { breaker })`): a refused attempt
 *   then ends the run at once, reason `'breaker'`, instead of retrying into the open circuit. See
 *   docs/breakers-and-hedging.md for the order.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import { retrying } from 'fp-ts-retry'
 * import type { StopReason } from 'fp-ts-retry/Retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const breaker = Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.constant(30_000), clock })
 *   const reasons: Array<StopReason> = []
 *   const call = pipe(
 *     TE.left<string, number>('503'),
 *     Breaker.protect(breaker, () => 'circuit open'),
 *     retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(5))), { clock, breaker, onDone: ({ reason }) => void reasons.push(reason) })
 *   )
 *   const run = call()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Left', left: '503' }) // the second failure opened the circuit
 *   assert.deepStrictEqual(clock.sleeps, [100]) // one retry, then no sleep toward a dependency known to be down
 *   assert.deepStrictEqual(reasons, ['breaker'])
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const protect = <E2, E = unknown>(
  breaker: Breaker,
  onOpen: (state: State) => E2,
  options: ProtectOptions<E> = {}
): (<E1 extends E, A>(action: TaskEither<E1, A>) => TaskEither<E1 | E2, A>) => {
  const where = 'Breaker.protect'
  validate.implementing(where, 'breaker', 'a Breaker', ['enter', 'admitsIn'], breaker)
  validate.callable(where, 'onOpen', onOpen)
  validate.object(where, 'options', options)
  const isFailure =
    options.isFailure === undefined ? undefined : validate.callable(where, 'options.isFailure', options.isFailure)
  validate.services(where, 'options', { signal: options.signal })
  const { signal } = options
  return <E1 extends E, A>(action: TaskEither<E1, A>): TaskEither<E1 | E2, A> =>
    async () => {
      const entered = breaker.enter()
      const permit = isPromise(entered) ? await entered : entered
      if (permit === undefined) return { _tag: 'Left', left: onOpen(breaker.state) }
      // An attempt given up through its signal (a runner's attemptTimeout) is a failure now: a probe that waited
      // for it to settle would hold the circuit half-open for good. Its later outcome is not reported again.
      const abandon = (): void => void tell(permit.onFailure)
      const unlink = signal === undefined ? noop : signal.aborted ? (abandon(), noop) : onAbort(signal, abandon)
      let succeeded: boolean
      let result: Either<E1, A>
      try {
        result = await action()
        succeeded = result._tag === 'Right' || (isFailure !== undefined && !isFailure(result.left))
      } catch (defect) {
        // Whatever threw (the action, or `isFailure` on what it answered), the permit is reported: a probe that
        // is never reported would hold a half-open circuit for good. The defect is the call's answer, whatever the
        // report does.
        await tell(permit.onFailure)
        throw defect
      } finally {
        unlink()
      }
      const told = tell(succeeded ? permit.onSuccess : permit.onFailure)
      if (isPromise(told)) await told
      return result
    }
}

/**
 * A circuit breaker as a guard: a retry is admitted when the breaker would let a call through once its delay has
 * passed (`admitsIn(delay)`), so a run ends at once rather than sleep toward an open circuit.
 *
 * **Details**
 *
 * - The breaker is not told of outcomes here: wrap the action with `Breaker.protect` and the same breaker.
 * - `options.refused`: which failures are the breaker's own refusal (the `Left` that `Breaker.protect` makes while
 *   the circuit is open), so that a run they end stops with reason `'breaker'`.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const guard = Breaker.asGuard(Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000) }))
 * assert.strictEqual(guard.admit({ ok: false, error: 'x', latency: 0, now: 0, retries: 0, retrying: true, delay: 10 }), true)
 *
 * @category constructors
 * @since 1.0.0
 */
export const asGuard = (
  breaker: Breaker,
  options: { readonly refused?: ((error: unknown) => boolean) | undefined } = {}
): Guard.Guard => {
  const where = 'Breaker.asGuard'
  validate.implementing(where, 'breaker', 'a Breaker', ['enter', 'admitsIn'], breaker)
  validate.object(where, 'options', options)
  if (options.refused !== undefined) validate.callable(where, 'options.refused', options.refused)
  return {
    reason: 'breaker',
    readsTime: false,
    admit: (outcome) => !outcome.retrying || breaker.admitsIn(outcome.delay),
    refused: options.refused
  }
}
