/**
 * Circuit breakers: a value shared by every call to one dependency, which stops calling it once it looks down,
 * lets one probe through after a wait, and closes again when the probe succeeds.
 *
 * A breaker is closed (calls go through), open (calls fail at once, without reaching the dependency) or half-open
 * (one probe is in flight; the other calls fail at once). Two policies decide when it opens:
 * {@link consecutive} (cockatiel's `ConsecutiveBreaker`) and {@link sampling} (Polly's advanced breaker,
 * cockatiel's `SamplingBreaker`). How long it stays open is a `Schedule`, `halfOpenAfter`: the first delay after
 * it opens, the next after a failed probe, and so on, so the wait grows as the schedule says (cockatiel#68) and
 * `Schedule.delays(halfOpenAfter)` previews it.
 *
 * {@link guard} wraps an action with a breaker. Given to `retrying` as its `breaker` option, the same breaker also
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
 *   const call = pipe(down, Breaker.guard(breaker, () => 'circuit open'))
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
 * @since 0.2.0
 */
import type { Either } from 'fp-ts/Either'
import type { Predicate } from 'fp-ts/Predicate'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import * as Driver from './Driver'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Random } from './Random'
import type { Schedule } from './Schedule'
import { isPromise } from './internal/promise'
import { noop, onAbort } from './internal/abort'

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
 * - `HalfOpen`: one probe is in flight; the other calls fail at once. Its success closes the breaker, its
 *   failure opens it again for the schedule's next delay.
 *
 * @example
 * import type { State } from 'fp-ts-retry/Breaker'
 *
 * const describe = (state: State): string =>
 *   state._tag === 'Open' ? `open until ${new Date(state.halfOpenAt).toISOString()}` : state._tag
 *
 * @category model
 * @since 0.2.0
 */
export type State =
  | { readonly _tag: 'Closed'; readonly since: number }
  | { readonly _tag: 'Open'; readonly since: number; readonly halfOpenAt: number }
  | { readonly _tag: 'HalfOpen'; readonly since: number }

/**
 * What the `onStateChange` hook is told: the state left, the state entered, and whether this process made the
 * change (`'local'`) or adopted it from the fleet's {@link Store} (`'store'`).
 *
 * @example
 * import type { StateChange } from 'fp-ts-retry/Breaker'
 *
 * const log = (change: StateChange): string => `${change.from._tag} -> ${change.to._tag} at ${change.to.since} (${change.source})`
 *
 * @category model
 * @since 0.2.0
 */
export interface StateChange {
  readonly from: State
  readonly to: State
  readonly source: 'local' | 'store'
}

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
 * @since 0.2.0
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
 * @since 0.2.0
 */
export interface Permit {
  readonly onSuccess: () => void | Promise<void>
  readonly onFailure: () => void | Promise<void>
}

/**
 * The breaker's state as a fleet shares it: plain JSON, `halfOpenAt` `null` for "never". Half-open is not
 * shared: each process probes for itself.
 *
 * @example
 * import type { StoredState } from 'fp-ts-retry/Breaker'
 *
 * const stored: StoredState = { _tag: 'Open', since: 1_700_000_000_000, halfOpenAt: 1_700_000_005_000 }
 *
 * @category model
 * @since 0.2.0
 */
export type StoredState =
  | { readonly _tag: 'Closed'; readonly since: number }
  | { readonly _tag: 'Open'; readonly since: number; readonly halfOpenAt: number | null }

/**
 * Where a fleet keeps the state of one breaker (a key in the Redis that holds the retry budget, say), so that when
 * one process opens the circuit the others stop calling too.
 *
 * **Details**
 *
 * - `read()` answers the newest state written, or `undefined` when none was.
 * - `write(state)` keeps `state` if it is newer (a larger `since`) than the one held: the newest transition wins,
 *   whichever process wrote it last. In Redis, a compare-and-set in one Lua script.
 * - Either may answer with a promise. A breaker with a store reads it before each decision ({@link Breaker.enter},
 *   {@link Breaker.admitsIn}) and writes each change it makes (open, close); a store that caches its reads for a
 *   moment trades freshness for round trips.
 * - A write that fails (throws, or rejects) does not undo the change in this process, nor change what
 *   {@link guard}'s call answers: its error is thrown on its own, as a hook's is (see {@link BreakerOptions}). A
 *   read that fails makes the call fail before the action runs.
 * - Times are compared across processes: the fleet's clocks are taken to agree to within a small part of
 *   `halfOpenAfter`.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const store = Breaker.memoryStore()
 *   const options = { threshold: 1, halfOpenAfter: Schedule.constant(5_000), clock, store }
 *   const [a, b] = [Breaker.consecutive(options), Breaker.consecutive(options)] // two processes
 *   const permit = await a.enter()
 *   await permit?.onFailure() // a opens, and says so
 *   assert.strictEqual(await b.enter(), undefined) // b has read it: refused
 *   assert.deepStrictEqual(b.state, { _tag: 'Open', since: 0, halfOpenAt: 5_000 })
 * }
 * main()
 *
 * @category model
 * @since 0.2.0
 */
export interface Store {
  readonly read: () => StoredState | undefined | Promise<StoredState | undefined>
  readonly write: (state: StoredState) => void | Promise<void>
}

/**
 * A circuit breaker: shared by every call to one dependency, used through {@link guard} and the `breaker` option
 * of `retrying`.
 *
 * **Details**
 *
 * - `state` is this process's view, as of the last decision; `metrics` the counts so far.
 * - `enter()` asks to make a call now: a {@link Permit} when it may go (closed, or the probe once `halfOpenAt`
 *   has come), `undefined` when it is refused. With a {@link Store}, it reads the store first and answers a promise.
 * - `admitsIn(ms)` answers whether a call made `ms` from now would be let through, changing nothing: closed, or
 *   open with `halfOpenAt` by then. `retrying` asks it before each sleep.
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
 *
 * @category model
 * @since 0.2.0
 */
export interface Breaker {
  readonly state: State
  readonly metrics: Metrics
  readonly enter: () => Permit | undefined | Promise<Permit | undefined>
  readonly admitsIn: (ms: number) => boolean | Promise<boolean>
}

/**
 * Options every breaker takes.
 *
 * **Details**
 *
 * - `halfOpenAfter`: the waits before a probe, as a `Schedule` (fed nothing: its input is `undefined`). Its first
 *   delay is the wait after the circuit opens, the next the wait after a failed probe, and so on. Use
 *   `Schedule.capped` to bound the growth; a schedule that stops leaves the circuit open for good, and so does one
 *   that throws (its error is thrown on its own, as a hook's is).
 * - `clock` (default `Clock.live`) gives the time; give it the run's clock. `random` (default `Random.live`)
 *   draws the jitter of `halfOpenAfter`, if any.
 * - `store`: share the state with a fleet (see {@link Store}).
 * - `onStateChange`: called at every change of state (see {@link StateChange}), with the time in `to.since`. It
 *   observes: an error it throws does not undo or stop the change, and is thrown on its own once the breaker's
 *   call is over (an uncaught exception, as Node reports an error thrown by an `EventTarget` listener).
 *
 * @example
 * import type { BreakerOptions } from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 *
 * const changes: Array<string> = []
 * const options: BreakerOptions = {
 *   halfOpenAfter: pipe(Schedule.exponential(1_000), Schedule.capped(30_000), Schedule.jittered()),
 *   onStateChange: (change) => void changes.push(`${change.from._tag} -> ${change.to._tag}`)
 * }
 *
 * @category model
 * @since 0.2.0
 */
export interface BreakerOptions {
  readonly halfOpenAfter: Schedule<unknown>
  readonly clock?: Clock | undefined
  readonly random?: Random | undefined
  readonly store?: Store | undefined
  readonly onStateChange?: ((change: StateChange) => void) | undefined
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
 * @since 0.2.0
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
 *
 * @example
 * import type { SamplingOptions } from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * // Polly's defaults: half of the calls over 30 s, once there are at least 100 of them
 * const options: SamplingOptions = { window: 30_000, minThroughput: 100, failureRate: 0.5, halfOpenAfter: Schedule.constant(5_000) }
 *
 * @category model
 * @since 0.2.0
 */
export interface SamplingOptions extends BreakerOptions {
  readonly window: number
  readonly minThroughput: number
  readonly failureRate: number
}

/**
 * Options of {@link guard}: `isFailure` (default: every `Left`) says which errors count against the dependency;
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
 * import type { GuardOptions } from 'fp-ts-retry/Breaker'
 *
 * const options: GuardOptions<{ status: number }> = {
 *   isFailure: (e) => e.status >= 500,
 *   signal: new AbortController().signal // in a run, the attempt's: `AttemptContext.signal`
 * }
 *
 * @category model
 * @since 0.2.0
 */
export interface GuardOptions<E> {
  readonly isFailure?: Predicate<E> | undefined
  readonly signal?: AbortSignal | undefined
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** When to open, as a policy sees the outcomes of one closed period. */
interface Policy {
  readonly success: (now: number) => void
  /** Records a failure; answers whether the circuit opens. */
  readonly failure: (now: number) => boolean
  readonly reset: () => void
}

/** Runs `then` on a value or on what its promise resolves to. */
const andThen = <A, B>(value: A | Promise<A>, then: (a: A) => B | Promise<B>): B | Promise<B> =>
  isPromise(value) ? value.then(then) : then(value)

const NEVER = Number.POSITIVE_INFINITY

/**
 * Throws `error` on its own, after the current call: what the breaker does with an error that must neither stop a
 * change half-way nor replace a call's own answer (a hook's, a schedule's, a store's), as Node does with an error
 * thrown by an `EventTarget` listener.
 */
const throwAside = (error: unknown): void =>
  queueMicrotask(() => {
    throw error
  })

/** Reports an outcome to a permit; an error of the report (the store's write) is thrown on its own. */
const tell = (report: () => void | Promise<void>): void | Promise<void> => {
  try {
    const told = report()
    if (isPromise(told)) return told.catch(throwAside)
  } catch (e) {
    throwAside(e)
  }
}

const isStoredState = (u: unknown): u is StoredState => {
  if (u === null || typeof u !== 'object') return false
  const s = u as Record<string, unknown>
  if (!validate.isFiniteNumber(s.since)) return false
  if (s._tag === 'Closed') return true
  return s._tag === 'Open' && (s.halfOpenAt === null || validate.isFiniteNumber(s.halfOpenAt))
}

class Circuit implements Breaker {
  state: State
  readonly counts = { successes: 0, failures: 0, rejections: 0 }
  /** Bumped at every change of state: a permit from another generation is stale. */
  private generation = 0
  /** The time of the latest change, for comparing with the store's; the first state is older than any. */
  private version = -NEVER
  /** The run of `halfOpenAfter` since the circuit last opened from closed. */
  private waits: Driver.Driver<unknown> | undefined

  constructor(
    private readonly policy: Policy,
    private readonly halfOpenAfter: Schedule<unknown>,
    private readonly clock: Clock,
    private readonly random: Random | undefined,
    private readonly store: Store | undefined,
    private readonly onStateChange: ((change: StateChange) => void) | undefined
  ) {
    this.state = { _tag: 'Closed', since: clock.now() }
  }

  get metrics(): Metrics {
    return { ...this.counts }
  }

  private change(to: State, source: StateChange['source']): void {
    const from = this.state
    this.state = to
    this.generation++
    this.version = to.since
    this.policy.reset()
    if (to._tag === 'Closed') this.waits = undefined
    const hook = this.onStateChange
    if (hook === undefined) return
    try {
      hook({ from, to, source })
    } catch (e) {
      // A hook observes: its error must not stop a change half-way (a half-open circuit whose probe was never
      // handed out stays half-open for good).
      throwAside(e)
    }
  }

  private publish(state: StoredState): void | Promise<void> {
    return this.store?.write(state)
  }

  private open(now: number): void | Promise<void> {
    let wait: number
    try {
      this.waits ??= Driver.make(this.halfOpenAfter, { start: now, random: this.random })
      wait = this.waits.advance(undefined, now)
    } catch (e) {
      // A schedule that throws is taken as one that stopped: the circuit opens for good rather than stay half-open
      // for good with its probe spent, and the error is not lost.
      this.waits = undefined
      wait = -1
      throwAside(e)
    }
    const halfOpenAt = wait < 0 ? NEVER : now + wait
    this.change({ _tag: 'Open', since: now, halfOpenAt }, 'local')
    return this.publish({ _tag: 'Open', since: now, halfOpenAt: wait < 0 ? null : halfOpenAt })
  }

  private close(now: number): void | Promise<void> {
    this.change({ _tag: 'Closed', since: now }, 'local')
    return this.publish({ _tag: 'Closed', since: now })
  }

  /** Takes the fleet's state when it is newer than this process's. */
  private adopt(stored: StoredState | undefined): void {
    if (stored === undefined) return
    if (!isStoredState(stored)) {
      throw new TypeError(`Breaker: store.read answered ${showValue(stored)}, which is not a StoredState`)
    }
    if (!(stored.since > this.version)) return
    if (stored._tag === 'Open') {
      this.change({ _tag: 'Open', since: stored.since, halfOpenAt: stored.halfOpenAt ?? NEVER }, 'store')
    } else if (this.state._tag === 'Closed') {
      this.version = stored.since
    } else {
      this.change({ _tag: 'Closed', since: stored.since }, 'store')
    }
  }

  /** Reads the store, if any, then decides synchronously: every count is made in one step. */
  private decide<A>(decision: () => A): A | Promise<A> {
    if (this.store === undefined) return decision()
    return andThen(this.store.read(), (stored) => {
      this.adopt(stored)
      return decision()
    })
  }

  private permit(): Permit {
    const generation = this.generation
    let reported = false
    const report = (succeeded: boolean): void | Promise<void> => {
      if (reported) return
      reported = true
      if (succeeded) this.counts.successes++
      else this.counts.failures++
      if (generation !== this.generation) return
      const now = this.clock.now()
      if (this.state._tag === 'HalfOpen') return succeeded ? this.close(now) : this.open(now)
      if (succeeded) this.policy.success(now)
      else if (this.policy.failure(now)) return this.open(now)
    }
    return { onSuccess: () => report(true), onFailure: () => report(false) }
  }

  readonly enter = (): Permit | undefined | Promise<Permit | undefined> =>
    this.decide(() => {
      const state = this.state
      if (state._tag === 'Closed') return this.permit()
      if (state._tag === 'Open') {
        const now = this.clock.now()
        if (now >= state.halfOpenAt) {
          this.change({ _tag: 'HalfOpen', since: now }, 'local')
          return this.permit()
        }
      }
      this.counts.rejections++
      return undefined
    })

  readonly admitsIn = (ms: number): boolean | Promise<boolean> => {
    validate.duration('Breaker.admitsIn', 'ms', ms)
    return this.decide(() => {
      const state = this.state
      return state._tag === 'Closed' || (state._tag === 'Open' && this.clock.now() + ms >= state.halfOpenAt)
    })
  }
}

const checkOptions = (where: string, options: BreakerOptions): void => {
  validate.object(where, 'options', options)
  validate.schedule(where, 'halfOpenAfter', options.halfOpenAfter)
  validate.services(where, 'options', { clock: options.clock, random: options.random })
  if (options.onStateChange !== undefined) validate.callable(where, 'onStateChange', options.onStateChange)
  const store = options.store as unknown as Record<string, unknown> | null | undefined
  if (
    store !== undefined &&
    (store === null || typeof store.read !== 'function' || typeof store.write !== 'function')
  ) {
    throw new TypeError(`${where}: store must have read and write functions, received ${showValue(options.store)}`)
  }
}

const wholeAtLeastOne = (where: string, name: string, value: number): number =>
  validate.that(where, name, 'a whole number >= 1', (n) => validate.isCount(n) && n >= 1, value)

const build = (policy: Policy, options: BreakerOptions): Breaker =>
  new Circuit(
    policy,
    options.halfOpenAfter,
    options.clock ?? LiveClock.live,
    options.random,
    options.store,
    options.onStateChange
  )

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
 * @since 0.2.0
 */
export const consecutive = (options: ConsecutiveOptions): Breaker => {
  const where = 'Breaker.consecutive'
  checkOptions(where, options)
  const threshold = wholeAtLeastOne(where, 'threshold', options.threshold)
  let failures = 0
  return build(
    {
      success: () => {
        failures = 0
      },
      failure: () => ++failures >= threshold,
      reset: () => {
        failures = 0
      }
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
 *   counts do not jump when a bucket rolls over. It holds one entry per outcome in the window.
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
 * @since 0.2.0
 */
export const sampling = (options: SamplingOptions): Breaker => {
  const where = 'Breaker.sampling'
  checkOptions(where, options)
  const { window, failureRate } = options
  validate.that(where, 'window', 'a finite number > 0', (w) => validate.isDuration(w) && w > 0, window)
  const minThroughput = wholeAtLeastOne(where, 'minThroughput', options.minThroughput)
  validate.that(
    where,
    'failureRate',
    'a number in (0, 1]',
    (r) => validate.isDuration(r) && r > 0 && r <= 1,
    failureRate
  )
  // The outcomes in the window, oldest first, from `head` on.
  let times: Array<number> = []
  let failed: Array<boolean> = []
  let head = 0
  let failures = 0
  const expire = (now: number): void => {
    const cutoff = now - window
    while (head < times.length && times[head] <= cutoff) {
      if (failed[head]) failures--
      head++
    }
    // Compact now and then, so that the arrays hold about the window's outcomes and no more.
    if (head > 1024 && head * 2 > times.length) {
      times = times.slice(head)
      failed = failed.slice(head)
      head = 0
    }
  }
  const record = (isFailure: boolean, now: number): void => {
    expire(now)
    times.push(now)
    failed.push(isFailure)
    if (isFailure) failures++
  }
  return build(
    {
      success: (now) => record(false, now),
      failure: (now) => {
        record(true, now)
        const outcomes = times.length - head
        return outcomes >= minThroughput && failures / outcomes >= failureRate
      },
      reset: () => {
        times = []
        failed = []
        head = 0
        failures = 0
      }
    },
    options
  )
}

/**
 * A {@link Store} in memory: the newest state written wins. For tests, for breakers shared by workers of one
 * process, and as the reference a Redis store must behave like.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as assert from 'assert'
 *
 * const store = Breaker.memoryStore()
 * store.write({ _tag: 'Open', since: 2_000, halfOpenAt: 7_000 })
 * store.write({ _tag: 'Closed', since: 1_000 }) // older: ignored
 * assert.deepStrictEqual(store.read(), { _tag: 'Open', since: 2_000, halfOpenAt: 7_000 })
 *
 * @category constructors
 * @since 0.2.0
 */
export const memoryStore = (): Store => {
  let held: StoredState | undefined
  return {
    read: () => held,
    write: (state) => {
      if (held === undefined || state.since > held.since) held = state
    }
  }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Runs an action through a breaker: while the circuit is open it fails at once with `onOpen(state)`, without
 * running the action; in half-open one call goes through as the probe and the others fail at once.
 *
 * **Details**
 *
 * - Each outcome is reported to the breaker: a `Right`, or a `Left` that `options.isFailure` rejects, as a
 *   success; any other `Left` as a failure.
 * - An action that rejects is a defect: it is reported as a failure (a dependency that throws is not healthy),
 *   and the rejection propagates unchanged.
 * - The call answers what the action answered: a report that fails (a {@link Store} whose write fails) never
 *   replaces it; its error is thrown on its own, as a hook's is.
 * - An attempt given up before it settles must still be reported, or a probe holds the circuit half-open for good:
 *   under `retryingWithContext` with `attemptTimeout`, pass the attempt's signal as `options.signal` (see
 *   {@link GuardOptions}); its abort reports the call as a failure at once. Under `retrying`, whose action sees no
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
 *     Breaker.guard(breaker, () => 'circuit open'),
 *     retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(5))), { clock, breaker, onDone: (_, __, reason) => void reasons.push(reason) })
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
 * @since 0.2.0
 */
export const guard = <E2, E = unknown>(
  breaker: Breaker,
  onOpen: (state: State) => E2,
  options: GuardOptions<E> = {}
): (<E1 extends E, A>(action: TaskEither<E1, A>) => TaskEither<E1 | E2, A>) => {
  const where = 'Breaker.guard'
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
