/**
 * Adaptive concurrency limits: like a bulkhead, at most `limit` calls to one dependency in flight, but the limit is
 * learned from the latencies and drops the calls see, as Netflix's concurrency-limits and failsafe-go's adaptive
 * limiter do. A call beyond the limit waits in a bounded queue, by priority, or is shed at once.
 *
 * An {@link Algorithm} is a value: {@link aimd} (additive increase, multiplicative decrease on a drop or a slow
 * window) or {@link gradient} (Gradient2: the limit follows the ratio of the no-load latency to the latency now).
 * The samples are gathered in windows on the clock, and the algorithm moves the limit once per window, within
 * `[min, max]`. {@link protect} wraps a `TaskEither`, {@link protectSignalled} an action handed `{ signal }`, and
 * {@link asGuard} makes a limit a `Guard` of the runners (reason `'shed'`). It goes where a bulkhead goes, outside
 * the retry: see docs/resilience-order.md and docs/adaptive-concurrency.md.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limit = AdaptiveLimit.make({
 *     algorithm: AdaptiveLimit.aimd({ backoffRatio: 0.5 }),
 *     min: 1,
 *     max: 10,
 *     initial: 4,
 *     window: { duration: 100, minSamples: 1 },
 *     clock
 *   })
 *   const permits = [1, 2, 3, 4].map(() => limit.enter() as AdaptiveLimit.Permit)
 *   assert.strictEqual(limit.enter(), undefined) // 4 in flight: shed
 *   await clock.advance(100)
 *   permits[0].dropped() // an overload: the window closes, the limit halves
 *   assert.deepStrictEqual([limit.limit, limit.inFlight], [2, 3])
 *   permits.slice(1).forEach((p) => p.success())
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { LimitChanged, LoadShed, Observer } from './Event'
import type { Guard } from './Guard'
import { noop, onAbort } from './internal/abort'
import { Line, Successor, type Linked } from './internal/line'
import { observe } from './internal/observe'
import { isPromise } from './internal/promise'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Signalled } from './Timeout'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Additive increase, multiplicative decrease (Netflix's `AIMDLimit`): at the end of a window with a drop, or whose
 * mean latency is above `latencyThreshold`, the limit is multiplied by `backoffRatio` (rounded down); else, when the
 * window kept at least half the limit in flight (a limit that is not used is not raised), it grows by `increase`.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const algorithm: AdaptiveLimit.Aimd = AdaptiveLimit.aimd({ backoffRatio: 0.9, latencyThreshold: 500 })
 * assert.strictEqual(algorithm.increase, 1)
 *
 * @category model
 * @since 1.0.0
 */
export interface Aimd {
  readonly _tag: 'Aimd'
  readonly backoffRatio: number
  readonly increase: number
  readonly latencyThreshold: number | undefined
}

/**
 * Gradient2 (Netflix's `Gradient2Limit`): the no-load latency is a long-term average of the windows' latencies (an
 * exponential moving average over `longWindow` windows); the gradient is `tolerance * noLoad / latency`, within
 * `[0.5, 1]`; the new limit is `limit * gradient + queueSize(limit)`, smoothed by `smoothing`.
 *
 * **Details**
 *
 * - While the latency stays within `tolerance` times the no-load latency, the gradient is 1 and the limit grows by
 *   `smoothing * queueSize(limit)` a window; above it, the limit falls, by at most half of `smoothing` a window.
 * - A window with a drop has the gradient's floor, 0.5. A window that kept less than half the limit in flight moves
 *   nothing but the no-load latency.
 * - When the no-load latency is more than twice the latency now (load has gone), it is lowered by 5% a window, so
 *   that it need not wait for the long average to forget a long overload.
 * - `queueSize`: `'sqrt'` (the square root of the limit) or a number >= 0.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const algorithm: AdaptiveLimit.Gradient = AdaptiveLimit.gradient()
 * assert.deepStrictEqual([algorithm.tolerance, algorithm.smoothing, algorithm.longWindow, algorithm.queueSize], [1.5, 0.2, 600, 'sqrt'])
 *
 * @category model
 * @since 1.0.0
 */
export interface Gradient {
  readonly _tag: 'Gradient'
  readonly tolerance: number
  readonly smoothing: number
  readonly longWindow: number
  readonly queueSize: 'sqrt' | number
}

/**
 * How a limit moves: {@link aimd} or {@link gradient}. A value: {@link step} is its one interpreter.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 *
 * const algorithms: ReadonlyArray<AdaptiveLimit.Algorithm> = [AdaptiveLimit.aimd({ backoffRatio: 0.9 }), AdaptiveLimit.gradient()]
 *
 * @category model
 * @since 1.0.0
 */
export type Algorithm = Aimd | Gradient

/**
 * What an algorithm keeps: `estimate`, the limit before rounding down (within the bounds), and `noLoadLatency`,
 * the latency without queueing (ms; `NaN` before the first window with a latency). For {@link aimd} it is the
 * lowest window latency seen, which it only reports; for {@link gradient}, the long-term average it steers by.
 *
 * @example
 * import type { LimitState } from 'fp-ts-retry/AdaptiveLimit'
 *
 * const state: LimitState = { estimate: 20, noLoadLatency: Number.NaN }
 *
 * @category model
 * @since 1.0.0
 */
export interface LimitState {
  readonly estimate: number
  readonly noLoadLatency: number
}

/**
 * One window of samples, as an algorithm is told of it: `samples` (every call that ended with `success` or
 * `dropped`), `dropped` (those that saw an overload), `latency` (the mean latency of the successes, ms; `NaN`
 * when there were none) and `maxInFlight` (the most calls in flight during the window).
 *
 * @example
 * import type { Window } from 'fp-ts-retry/AdaptiveLimit'
 *
 * const window: Window = { samples: 10, dropped: 0, latency: 12.5, maxInFlight: 8 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Window {
  readonly samples: number
  readonly dropped: number
  readonly latency: number
  readonly maxInFlight: number
}

/**
 * A place in flight, given by {@link AdaptiveLimit}'s `enter`: end it with one of `success()` (the call answered: its
 * latency is a sample), `dropped()` (it saw an overload: a timeout, a 503, a throttle) or `ignore()` (it says nothing
 * of the dependency's load: a validation error, a cancellation). The latency runs from `enter` to the end, on the
 * limit's clock. The first call ends it; any later one does nothing.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const limit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 10, initial: 1 })
 * const permit = limit.enter() as AdaptiveLimit.Permit
 * permit.success()
 * permit.dropped() // ended already: nothing
 * assert.strictEqual(limit.inFlight, 0)
 *
 * @category model
 * @since 1.0.0
 */
export interface Permit {
  // methods, called on the permit (`permit.success()`): a permit is one object whose methods share its prototype,
  // so that entering allocates nothing more; the method form lets `@typescript-eslint/unbound-method` catch a
  // detached `const { success } = permit`
  success(): void
  dropped(): void
  ignore(): void
}

/**
 * An adaptive concurrency limit, shared by every call to one dependency: used through {@link protect},
 * {@link protectSignalled} and {@link asGuard}, or `enter` by hand.
 *
 * **Details**
 *
 * - `enter({ priority, signal })` asks for a place: a {@link Permit} when fewer than `limit` calls are in flight and
 *   nobody waits before it; `undefined` when it is shed at once (the limit reached and the queue full, with nobody
 *   of a lower priority to displace); else a promise, which resolves to a `Permit` when a place is handed over
 *   (highest priority first, oldest first within one), or to `undefined` when it is shed from the queue (its
 *   deadline passed, or a call of a higher priority took its place) or its `signal` aborts.
 * - `priority`: one of `priorities` (a `RangeError` naming it otherwise); a call that names none has the lowest.
 * - `limit`: the calls in flight at most now, a whole number in `[min, max]`; `inFlight <= limit` always, but just
 *   after the limit falls (those in flight finish; none enters until it is below again). `queued`: the waiters,
 *   at most `maxQueue`. `noLoadLatency`: see {@link LimitState}.
 * - The numbers are read-only (getters of `make`'s limit).
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const limit: AdaptiveLimit.AdaptiveLimit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 5, max: 100, initial: 20 })
 * assert.deepStrictEqual([limit.limit, limit.inFlight, limit.queued], [20, 0, 0])
 * assert.ok(Number.isNaN(limit.noLoadLatency))
 *
 * @category model
 * @since 1.0.0
 */
export interface AdaptiveLimit {
  readonly limit: number
  readonly inFlight: number
  readonly queued: number
  readonly noLoadLatency: number
  readonly maxQueue: number
  readonly priorities: ReadonlyArray<string>
  readonly enter: (options?: EnterOptions) => Permit | undefined | Promise<Permit | undefined>
}

/**
 * Options of `enter` (see {@link AdaptiveLimit}): the call's `priority` and the `signal` that takes it out of the
 * queue.
 *
 * @example
 * import type { EnterOptions } from 'fp-ts-retry/AdaptiveLimit'
 *
 * const options: EnterOptions = { priority: 'critical', signal: new AbortController().signal }
 *
 * @category model
 * @since 1.0.0
 */
export interface EnterOptions {
  readonly priority?: string | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `algorithm`: {@link aimd} or {@link gradient}. `min`, `max`, `initial`: whole numbers >= 1 with
 *   `min <= initial <= max`.
 * - `window` (default `{ duration: 1000, minSamples: 10 }`): the algorithm is told of the samples once a window is
 *   at least `duration` ms long on `clock` and holds at least `minSamples` samples; a window short of samples goes
 *   on gathering.
 * - `maxQueue` (default 0: shed at once) and `queueTimeout` (ms; default none): the calls waiting at most, and how
 *   long each may wait before it is shed (`'deadline'`).
 * - `priorities` (default `['normal']`): the priorities a call may name, highest first, each a distinct string.
 * - `onEvent`: told `LimitChanged` when the limit moves and `LoadShed` when a call is shed; `clock` (default
 *   `Clock.live`) times the latencies, the windows, the deadlines and the events.
 * - `from`: a limit of {@link make} that this one replaces (as `Policies.reload` does): at its first use this one
 *   takes over its learned limit (within this one's bounds) and no-load latency, counts its calls in flight (whose
 *   permits end here), and takes its waiters (by priority; one of a priority not declared here has the lowest), and
 *   every later call to `from` is made here. One built and never used leaves `from` as it was.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 *
 * const options: AdaptiveLimit.AdaptiveLimitOptions = {
 *   algorithm: AdaptiveLimit.gradient(),
 *   min: 10,
 *   max: 500,
 *   initial: 50,
 *   window: { duration: 1_000, minSamples: 20 },
 *   maxQueue: 100,
 *   queueTimeout: 250,
 *   priorities: ['critical', 'normal', 'sheddable']
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface AdaptiveLimitOptions {
  readonly algorithm: Algorithm
  readonly min: number
  readonly max: number
  readonly initial: number
  readonly window?: { readonly duration: number; readonly minSamples: number } | undefined
  readonly maxQueue?: number | undefined
  readonly queueTimeout?: number | undefined
  readonly priorities?: ReadonlyArray<string> | undefined
  readonly onEvent?: Observer | undefined
  readonly clock?: Clock | undefined
  readonly from?: AdaptiveLimit | undefined
}

/**
 * Why a call was shed: the limit was reached and the queue was `'full'`; it waited past its `'deadline'`; or it
 * was `'displaced'` from the queue by a call of a higher priority.
 *
 * @example
 * import type { ShedCause } from 'fp-ts-retry/AdaptiveLimit'
 *
 * const cause: ShedCause = 'deadline'
 *
 * @category model
 * @since 1.0.0
 */
export type ShedCause = 'full' | 'deadline' | 'displaced'

/**
 * What {@link protect} hands its `onShed`: why the call was shed, its priority, and the limit then.
 *
 * @example
 * import type { Shed } from 'fp-ts-retry/AdaptiveLimit'
 *
 * const shed: Shed = { _tag: 'Shed', cause: 'full', priority: 'normal', limit: 20 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Shed {
  readonly _tag: 'Shed'
  readonly cause: ShedCause
  readonly priority: string
  readonly limit: number
}

/**
 * Options of {@link protect} and {@link protectSignalled}: the calls' `priority` (default the lowest), and which
 * failures are `dropped` (an overload seen: the limit falls). A success is a latency sample; any other failure,
 * and a rejection, is ignored (it says nothing of the dependency's load).
 *
 * @example
 * import type { ProtectOptions } from 'fp-ts-retry/AdaptiveLimit'
 *
 * const options: ProtectOptions = { priority: 'critical', dropped: (error) => error === 'timeout' }
 *
 * @category model
 * @since 1.0.0
 */
export interface ProtectOptions {
  readonly priority?: string | undefined
  readonly dropped?: ((error: unknown) => boolean) | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The AIMD algorithm (see {@link Aimd}).
 *
 * **Details**
 *
 * - `backoffRatio`: a number in `[0.5, 1)`; `increase` (default 1): a whole number >= 1; `latencyThreshold` (ms,
 *   optional): a finite number > 0. Anything else is a `RangeError` naming it.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const state = AdaptiveLimit.step(AdaptiveLimit.aimd({ backoffRatio: 0.5 }), { min: 1, max: 100 }, { estimate: 10, noLoadLatency: Number.NaN }, { samples: 5, dropped: 1, latency: 20, maxInFlight: 10 })
 * assert.strictEqual(state.estimate, 5)
 * assert.throws(() => AdaptiveLimit.aimd({ backoffRatio: 1 }), RangeError)
 *
 * @category constructors
 * @since 1.0.0
 */
export const aimd = (options: {
  readonly backoffRatio: number
  readonly increase?: number | undefined
  readonly latencyThreshold?: number | undefined
}): Aimd => {
  const where = 'AdaptiveLimit.aimd'
  validate.object(where, 'options', options)
  const backoffRatio = validate.that(
    where,
    'backoffRatio',
    'a number in [0.5, 1)',
    (r: unknown) => typeof r === 'number' && r >= 0.5 && r < 1,
    options.backoffRatio
  )
  const increase = validate.positiveCount(where, 'increase', validate.orDefault(options.increase, 1))
  const latencyThreshold =
    options.latencyThreshold === undefined
      ? undefined
      : validate.positive(where, 'latencyThreshold', options.latencyThreshold)
  return { _tag: 'Aimd', backoffRatio, increase, latencyThreshold }
}

/**
 * The Gradient2 algorithm (see {@link Gradient}).
 *
 * **Details**
 *
 * - `tolerance` (default 1.5): a finite number >= 1, the latency taken for no queueing, as a multiple of the no-load
 *   latency; `smoothing` (default 0.2): a number in `(0, 1]`; `longWindow` (default 600): the windows the no-load
 *   average spans, a whole number >= 1; `queueSize` (default `'sqrt'`): `'sqrt'` or a finite number >= 0. Anything
 *   else is a `RangeError` naming it.
 * - The bound it keeps under a latency step up by a factor of at least `2 * tolerance` (the gradient at its floor
 *   while the no-load latency has not caught up): each window multiplies the estimate by at most
 *   `1 - smoothing / 2` and adds `smoothing * queueSize(limit)`; with the defaults, a limit of 64 or more halves
 *   within 10 windows. Back under the tolerance, it grows by `smoothing * queueSize(limit)` a window: with
 *   `'sqrt'`, its square root grows by `smoothing / 2` a window.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const algorithm = AdaptiveLimit.gradient({ queueSize: 0, smoothing: 1 })
 * const bounds = { min: 1, max: 100 }
 * const calm = AdaptiveLimit.step(algorithm, bounds, { estimate: 40, noLoadLatency: 10 }, { samples: 5, dropped: 0, latency: 10, maxInFlight: 40 })
 * assert.strictEqual(calm.estimate, 40) // the gradient is 1, and no queue is allowed for
 * const slow = AdaptiveLimit.step(algorithm, bounds, calm, { samples: 5, dropped: 0, latency: 100, maxInFlight: 40 })
 * assert.strictEqual(slow.estimate, 20) // 10x slower: the gradient's floor, 0.5
 *
 * @category constructors
 * @since 1.0.0
 */
export const gradient = (
  options: {
    readonly tolerance?: number | undefined
    readonly smoothing?: number | undefined
    readonly longWindow?: number | undefined
    readonly queueSize?: 'sqrt' | number | undefined
  } = {}
): Gradient => {
  const where = 'AdaptiveLimit.gradient'
  validate.object(where, 'options', options)
  const tolerance = validate.atLeast(where, 'tolerance', 1, validate.orDefault(options.tolerance, 1.5))
  const smoothing = validate.that(
    where,
    'smoothing',
    'a number in (0, 1]',
    (s: unknown) => typeof s === 'number' && s > 0 && s <= 1,
    validate.orDefault(options.smoothing, 0.2)
  )
  const longWindow = validate.positiveCount(where, 'longWindow', validate.orDefault(options.longWindow, 600))
  const queueSize = validate.that(
    where,
    'queueSize',
    "'sqrt' or a finite number >= 0",
    (q: unknown) => q === 'sqrt' || validate.isDuration(q),
    validate.orDefault<'sqrt' | number>(options.queueSize, 'sqrt')
  )
  return { _tag: 'Gradient', tolerance, smoothing, longWindow, queueSize }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

const clamp = (x: number, min: number, max: number): number => (x < min ? min : x > max ? max : x)

/**
 * The algorithm's one interpreter: the state after a window, the estimate kept within `[bounds.min, bounds.max]`
 * (the limit is the estimate rounded down). Pure: {@link make}'s limit calls it at the end of each window, and a
 * simulation may call it alone.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * const aimd = AdaptiveLimit.aimd({ backoffRatio: 0.9 })
 * const busy = { samples: 10, dropped: 0, latency: 5, maxInFlight: 10 }
 * assert.strictEqual(AdaptiveLimit.step(aimd, { min: 1, max: 10 }, { estimate: 10, noLoadLatency: 5 }, busy).estimate, 10) // at max
 * assert.strictEqual(AdaptiveLimit.step(aimd, { min: 1, max: 20 }, { estimate: 10, noLoadLatency: 5 }, busy).estimate, 11)
 * assert.strictEqual(AdaptiveLimit.step(aimd, { min: 1, max: 20 }, { estimate: 10, noLoadLatency: 5 }, { ...busy, maxInFlight: 4 }).estimate, 10) // not used: not raised
 *
 * @category utils
 * @since 1.0.0
 */
export const step = (
  algorithm: Algorithm,
  bounds: { readonly min: number; readonly max: number },
  state: LimitState,
  window: Window
): LimitState => {
  const { min, max } = bounds
  const { estimate } = state
  if (!(Number.isNaN(window.latency) || validate.isDuration(window.latency)))
    throw new RangeError(
      `AdaptiveLimit.step: window.latency must be a finite number >= 0 (or NaN: no success), received ${showValue(
        window.latency
      )}`
    )
  const limit = Math.floor(estimate)
  const measured = !Number.isNaN(window.latency)
  if (algorithm._tag === 'Aimd') {
    const noLoadLatency =
      measured && !(state.noLoadLatency <= window.latency) ? window.latency : state.noLoadLatency
    const over = algorithm.latencyThreshold !== undefined && measured && window.latency > algorithm.latencyThreshold
    // Netflix's AIMDLimit: back off on a drop or a slow window; grow only a limit the window used half of
    const next =
      window.dropped > 0 || over
        ? Math.floor(limit * algorithm.backoffRatio)
        : window.maxInFlight * 2 >= limit
        ? limit + algorithm.increase
        : estimate
    return { estimate: clamp(next, min, max), noLoadLatency }
  }
  // Gradient2Limit (Netflix concurrency-limits): a long average of the latency as the no-load estimate
  let long = state.noLoadLatency
  if (measured) {
    long = Number.isNaN(long) ? window.latency : long + (window.latency - long) * (2 / (algorithm.longWindow + 1))
    // load has gone: bring the estimate down sooner than the long average would
    if (long / window.latency > 2) long *= 0.95
  }
  if (window.dropped === 0 && (!measured || window.maxInFlight * 2 < limit)) return { estimate, noLoadLatency: long }
  const tolerated = algorithm.tolerance * long
  // written so that a latency of 0 (and a no-load latency of 0) is a gradient of 1, not NaN
  const slope = window.dropped > 0 ? 0.5 : window.latency <= tolerated ? 1 : Math.max(0.5, tolerated / window.latency)
  const queue = algorithm.queueSize === 'sqrt' ? Math.sqrt(estimate) : algorithm.queueSize
  const next = estimate * (1 - algorithm.smoothing) + (estimate * slope + queue) * algorithm.smoothing
  return { estimate: clamp(next, min, max), noLoadLatency: long }
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** What a call asking for a place may get instead of one: shed (why), or out of the queue by its signal. */
type Refusal = ShedCause | 'aborted'

/** A call waiting for a place: a node of its priority's line, so that it leaves from anywhere in O(1). */
interface Waiter extends Linked<Waiter> {
  /** The limit whose queue it is in: the one that took over, once it has moved. */
  owner: Limiter
  level: number
  readonly priority: string
  readonly resolve: (entered: Slot | Refusal) => void
  unsubscribe: () => void
  /** Ends the sleep toward its deadline, if it has one. */
  readonly deadline: AbortController | undefined
}

/** A place in flight: its methods on the prototype, so that entering allocates one object. */
class Slot implements Permit {
  private ended = false
  constructor(private readonly owner: Limiter, private readonly started: number) {}
  success(): void {
    this.end(0)
  }
  dropped(): void {
    this.end(1)
  }
  ignore(): void {
    this.end(2)
  }
  private end(how: 0 | 1 | 2): void {
    if (this.ended) return
    this.ended = true
    this.owner.finish(how, this.started)
  }
}

class Limiter extends Successor<Limiter> implements AdaptiveLimit {
  private taken = 0
  private waiting = 0
  private state: LimitState
  private current: number
  /** The calls waiting, a line per priority, the highest first. */
  private readonly lines: ReadonlyArray<Line<Waiter>>
  private readonly levels: ReadonlyMap<string, number>
  /** The window being gathered: when it began, its samples, drops, latency total and most in flight. */
  private windowStart: number
  private samples = 0
  private drops = 0
  private latencySum = 0
  private measured = 0
  private peak = 0

  constructor(
    private readonly algorithm: Algorithm,
    private readonly bounds: { readonly min: number; readonly max: number },
    initial: number,
    private readonly duration: number,
    private readonly minSamples: number,
    private readonly queueSize: number,
    private readonly queueTimeout: number | undefined,
    private readonly declared: ReadonlyArray<string>,
    private readonly onEvent: Observer | undefined,
    private readonly clock: Clock
  ) {
    super()
    this.state = { estimate: initial, noLoadLatency: Number.NaN }
    this.current = initial
    this.lines = declared.map(() => new Line<Waiter>())
    this.levels = new Map(declared.map((p, i) => [p, i]))
    this.windowStart = clock.now()
  }

  get limit(): number {
    return this.successor?.limit ?? this.settled().current
  }

  get inFlight(): number {
    return this.successor?.inFlight ?? this.settled().taken
  }

  get queued(): number {
    return this.successor?.queued ?? this.settled().waiting
  }

  get noLoadLatency(): number {
    return this.successor?.noLoadLatency ?? this.settled().state.noLoadLatency
  }

  get maxQueue(): number {
    return this.successor?.maxQueue ?? this.queueSize
  }

  get priorities(): ReadonlyArray<string> {
    return this.successor?.priorities ?? this.declared
  }

  /** The name of a level of this limit's (not of the one that took it over). */
  nameOf(level: number): string {
    return this.declared[level]
  }

  /** The level of a priority (0 the highest), or a `RangeError` naming one not declared. */
  levelOf(priority: string | undefined, lowest = false): number {
    if (priority === undefined) return this.lines.length - 1
    const level = this.levels.get(priority)
    if (level !== undefined) return level
    // a priority of the limit this one replaced, which it does not declare: the lowest
    if (lowest) return this.lines.length - 1
    throw new RangeError(
      `AdaptiveLimit: priority must be one of ${this.declared
        .map((p) => JSON.stringify(p))
        .join(', ')}, received ${showValue(priority)}`
    )
  }

  readonly enter = (options?: EnterOptions): Permit | undefined | Promise<Permit | undefined> => {
    if (this.successor !== undefined) return this.successor.enter(options)
    let level = this.lines.length - 1
    let signal: AbortSignal | undefined
    if (options !== undefined) {
      validate.object('AdaptiveLimit.enter', 'options', options)
      level = this.levelOf(options.priority)
      signal = options.signal
    }
    const entered = this.take(level, signal)
    if (isPromise(entered)) return entered.then(permitOf)
    return permitOf(entered)
  }

  /** Asks for a place at `level`: a slot, why not, or a promise of either (queued). */
  take(level: number, signal: AbortSignal | undefined): Slot | Refusal | Promise<Slot | Refusal> {
    const successor = this.successor
    if (successor !== undefined) return successor.take(successor.levelOf(this.declared[level], true), signal)
    this.settled()
    if (signal?.aborted === true) return 'aborted'
    if (this.taken < this.current && this.waiting === 0) return this.grant()
    if (this.waiting >= this.queueSize && !this.displace(level)) {
      this.shed('full', this.declared[level])
      return 'full'
    }
    return new Promise((resolve) => {
      const deadline = this.queueTimeout === undefined ? undefined : new AbortController()
      const waiter: Waiter = {
        owner: this,
        level,
        priority: this.declared[level],
        resolve,
        unsubscribe: noop,
        deadline,
        prev: undefined,
        next: undefined
      }
      this.join(waiter)
      if (signal !== undefined)
        waiter.unsubscribe = onAbort(signal, () => {
          waiter.owner.leave(waiter)
          deadline?.abort()
          resolve('aborted')
        })
      if (deadline !== undefined && this.queueTimeout !== undefined)
        void this.clock.sleep(this.queueTimeout, deadline.signal, 'timeout').then(() => {
          // ended otherwise: served, shed, or its signal aborted
          if (deadline.signal.aborted) return
          waiter.owner.leave(waiter)
          waiter.owner.drop(waiter, 'deadline')
        })
    })
  }

  /** Ends a slot: a sample for the window (not an ignored one), and its place to the next waiter. */
  finish(how: 0 | 1 | 2, started: number): void {
    if (this.successor !== undefined) return this.successor.finish(how, started)
    this.taken--
    if (how !== 2) {
      const now = this.clock.now()
      const latency = now - started
      if (!validate.isDuration(latency)) {
        // the place is given back all the same: a bad clock must not wedge the queue
        this.handOn()
        throw new RangeError(
          `AdaptiveLimit: a latency must be a finite number >= 0, received ${showValue(latency)} (did the clock go back?)`
        )
      }
      this.samples++
      if (how === 1) this.drops++
      else {
        this.latencySum += latency
        this.measured++
      }
      if (now - this.windowStart >= this.duration && this.samples >= this.minSamples) this.close(now)
    }
    this.handOn()
  }

  protected takeOver(from: Limiter): void {
    const { min, max } = this.bounds
    this.state = { estimate: clamp(from.state.estimate, min, max), noLoadLatency: from.state.noLoadLatency }
    this.taken = this.peak = from.taken
    from.taken = 0
    from.successor = this
    this.moved(from.current, Math.floor(this.state.estimate))
    // the waiters in the order they would have been served there
    for (const line of from.lines)
      for (const waiter of line.takeAll()) {
        waiter.owner = this
        waiter.level = this.levels.get(waiter.priority) ?? this.lines.length - 1
        if (this.taken < this.current && this.waiting === 0) this.serve(waiter)
        else if (this.waiting < this.queueSize) this.join(waiter)
        else this.drop(waiter, 'full')
      }
    from.waiting = 0
  }

  /** The end of a window: the algorithm's step, and a new window. */
  private close(now: number): void {
    const window: Window = {
      samples: this.samples,
      dropped: this.drops,
      latency: this.measured === 0 ? Number.NaN : this.latencySum / this.measured,
      maxInFlight: this.peak
    }
    this.windowStart = now
    this.samples = this.drops = this.latencySum = this.measured = 0
    this.peak = this.taken
    this.state = step(this.algorithm, this.bounds, this.state, window)
    this.moved(this.current, Math.floor(this.state.estimate))
  }

  private moved(from: number, to: number): void {
    this.current = to
    if (from === to || this.onEvent === undefined) return
    const event: LimitChanged = {
      _tag: 'LimitChanged',
      source: 'adaptiveLimit',
      run: 0,
      at: this.clock.now(),
      from,
      to,
      inFlight: this.taken,
      noLoadLatency: this.state.noLoadLatency
    }
    observe(this.onEvent, event)
  }

  /** Tells `onEvent` of a call shed, which watches: an error it throws is reported, never thrown from here. */
  shed(cause: ShedCause, priority: string): void {
    if (this.onEvent === undefined) return
    const event: LoadShed = {
      _tag: 'LoadShed',
      source: 'adaptiveLimit',
      run: 0,
      at: this.clock.now(),
      cause,
      priority,
      inFlight: this.taken,
      limit: this.current
    }
    observe(this.onEvent, event)
  }

  private grant(): Slot {
    if (++this.taken > this.peak) this.peak = this.taken
    return new Slot(this, this.clock.now())
  }

  /** The places free now to the waiters, highest priority first, oldest first. */
  private handOn(): void {
    while (this.waiting > 0 && this.taken < this.current) {
      const waiter = this.first()
      if (waiter === undefined) return
      this.leave(waiter)
      this.serve(waiter)
    }
  }

  private serve(waiter: Waiter): void {
    waiter.unsubscribe()
    waiter.deadline?.abort()
    waiter.resolve(this.grant())
  }

  drop(waiter: Waiter, cause: ShedCause): void {
    waiter.unsubscribe()
    waiter.deadline?.abort()
    waiter.resolve(cause)
    this.shed(cause, waiter.priority)
  }

  private first(): Waiter | undefined {
    for (const line of this.lines) if (line.head !== undefined) return line.head
    return undefined
  }

  /** Makes room for a call at `level`: the youngest waiter of the lowest priority below it leaves, shed. */
  private displace(level: number): boolean {
    for (let l = this.lines.length - 1; l > level; l--) {
      const youngest = this.lines[l].tail
      if (youngest === undefined) continue
      this.leave(youngest)
      this.drop(youngest, 'displaced')
      return true
    }
    return false
  }

  leave(waiter: Waiter): void {
    this.lines[waiter.level].remove(waiter)
    this.waiting--
  }

  private join(waiter: Waiter): void {
    this.lines[waiter.level].push(waiter)
    this.waiting++
  }
}

const permitOf = (entered: Slot | Refusal): Permit | undefined => (typeof entered === 'string' ? undefined : entered)

const checked = (where: string, limit: AdaptiveLimit): AdaptiveLimit =>
  validate.implementing(where, 'limit', 'an AdaptiveLimit', ['enter'], limit)

/** What a call without a signal answers for an abort: it cannot abort. */
const unreachable = (): never => {
  throw new Error('AdaptiveLimit: a call without a signal was aborted')
}

const none = (): boolean => false

/** The options of a protected call, checked once: its priority (and level, for a limit of `make`) and `dropped`. */
interface Protection {
  readonly priority: string
  readonly level: number
  readonly dropped: (error: unknown) => boolean
}

const protection = (where: string, limit: AdaptiveLimit, options: ProtectOptions): Protection => {
  validate.object(where, 'options', options)
  const dropped = options.dropped === undefined ? none : validate.callable(where, 'options.dropped', options.dropped)
  if (limit instanceof Limiter) {
    const level = limit.levelOf(options.priority)
    return { priority: limit.nameOf(level), level, dropped }
  }
  const { priorities } = limit
  const priority = options.priority ?? priorities[priorities.length - 1]
  if (!priorities.includes(priority))
    throw new RangeError(`${where}: options.priority must be one of the limit's priorities, received ${showValue(priority)}`)
  return { priority, level: -1, dropped }
}

/** Runs `start` with a permit of `limit`, ended by its result; the refusals become `Left`s. */
const withPermit = async <E1, E2, E3, A>(
  limit: AdaptiveLimit,
  p: Protection,
  onShed: (shed: Shed) => E2,
  onAborted: (reason: unknown) => E3,
  signal: AbortSignal | undefined,
  start: () => Promise<Either<E1, A>>
): Promise<Either<E1 | E2 | E3, A>> => {
  let entered: Permit | Refusal | undefined | Promise<Permit | Refusal | undefined> =
    limit instanceof Limiter ? limit.take(p.level, signal) : limit.enter({ priority: p.priority, signal })
  // the success path first: a place at once
  if (!(entered instanceof Slot)) {
    if (isPromise(entered)) entered = await entered
    if (entered === undefined || typeof entered === 'string') {
      if (signal?.aborted === true) return { _tag: 'Left', left: onAborted(signal.reason) }
      const cause = entered === undefined || entered === 'aborted' ? 'full' : entered
      return { _tag: 'Left', left: onShed({ _tag: 'Shed', cause, priority: p.priority, limit: limit.limit }) }
    }
  }
  const permit = entered
  let result: Either<E1, A>
  try {
    result = await start()
  } catch (error) {
    permit.ignore()
    throw error
  }
  if (result._tag === 'Right') permit.success()
  else if (p.dropped(result.left)) permit.dropped()
  else permit.ignore()
  return result
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A new adaptive limit, empty, at its `initial` limit (see {@link AdaptiveLimitOptions}).
 *
 * **Details**
 *
 * - Every option is checked here: `min`, `max`, `initial` whole numbers >= 1 (`RangeError`), in order
 *   (`min <= initial <= max`, a `RangeError` naming the three); `window.duration` a finite number > 0 and
 *   `window.minSamples` a whole number >= 1; `maxQueue` a whole number >= 0; `queueTimeout` a finite number > 0;
 *   `priorities` a non-empty array of distinct strings; `algorithm` one of {@link aimd} or {@link gradient}; a
 *   `TypeError` for a value of the wrong kind.
 * - A latency is the clock's `now()` at the end less at `enter`: a clock that goes back makes the permit's end throw
 *   a `RangeError` (a latency must be a finite number >= 0), its place given back first.
 * - Its memory is fixed: the window is a handful of numbers, the queue at most `maxQueue` waiters (a deadline's
 *   sleep each, with `queueTimeout`).
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const limit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 10, initial: 1, maxQueue: 2, priorities: ['critical', 'sheddable'] })
 *   const held = limit.enter() as AdaptiveLimit.Permit
 *   const low = limit.enter({ priority: 'sheddable' }) as Promise<AdaptiveLimit.Permit | undefined>
 *   const high = limit.enter({ priority: 'critical' }) as Promise<AdaptiveLimit.Permit | undefined>
 *   held.success() // the critical call goes first, though it came last
 *   const first = await high
 *   assert.strictEqual(limit.queued, 1)
 *   first?.success()
 *   ;(await low)?.success()
 *   assert.throws(() => AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 10, max: 5, initial: 7 }), /min <= initial <= max/)
 *   assert.throws(() => limit.enter({ priority: 'urgent' }), /"urgent"/)
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: AdaptiveLimitOptions): AdaptiveLimit => {
  const where = 'AdaptiveLimit.make'
  validate.object(where, 'options', options)
  const algorithm = validate.object(where, 'options.algorithm', options.algorithm)
  if (algorithm._tag !== 'Aimd' && algorithm._tag !== 'Gradient')
    throw new TypeError(
      `${where}: options.algorithm must be AdaptiveLimit.aimd(...) or AdaptiveLimit.gradient(...), received ${showValue(
        algorithm
      )}`
    )
  const min = validate.positiveCount(where, 'min', options.min)
  const max = validate.positiveCount(where, 'max', options.max)
  const initial = validate.positiveCount(where, 'initial', options.initial)
  if (!(min <= initial && initial <= max))
    throw new RangeError(`${where}: min <= initial <= max is required, received min ${min}, initial ${initial}, max ${max}`)
  const window = validate.object(where, 'options.window', validate.orDefault(options.window, DEFAULT_WINDOW))
  const duration = validate.positive(where, 'window.duration', window.duration)
  const minSamples = validate.positiveCount(where, 'window.minSamples', window.minSamples)
  const maxQueue = validate.count(where, 'maxQueue', validate.orDefault(options.maxQueue, 0))
  const queueTimeout =
    options.queueTimeout === undefined ? undefined : validate.positive(where, 'queueTimeout', options.queueTimeout)
  const priorities = prioritiesOf(where, validate.orDefault(options.priorities, DEFAULT_PRIORITIES))
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  validate.services(where, 'options', { clock: options.clock })
  const from = options.from
  if (from !== undefined && !(from instanceof Limiter))
    throw new TypeError(`${where}: from must be a limit made by AdaptiveLimit.make, received ${showValue(from)}`)
  const limit = new Limiter(
    algorithm,
    { min, max },
    initial,
    duration,
    minSamples,
    maxQueue,
    queueTimeout,
    priorities,
    options.onEvent,
    options.clock ?? LiveClock.live
  )
  limit.pending = from
  return limit
}

const DEFAULT_WINDOW = { duration: 1_000, minSamples: 10 }
const DEFAULT_PRIORITIES: ReadonlyArray<string> = ['normal']

const prioritiesOf = (where: string, priorities: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (!Array.isArray(priorities) || priorities.length === 0)
    throw new TypeError(`${where}: priorities must be a non-empty array of strings, received ${showValue(priorities)}`)
  const seen = new Set<string>()
  priorities.forEach((p: unknown, i) => {
    const priority = validate.string(where, `priorities[${i}]`, p)
    if (seen.has(priority)) throw new RangeError(`${where}: priorities must be distinct, ${showValue(p)} is twice`)
    seen.add(priority)
  })
  return [...priorities]
}

/**
 * An adaptive limit as a `Guard` of the runners (reason `'shed'`): a retry is refused while the limit is reached
 * and the queue full (the retry would be shed too), and the run ends at once instead of sleeping toward it.
 *
 * **Details**
 *
 * - `options.refused(error)` (default {@link isShed}) says which failures are the limit's own: a run that such a
 *   failure ends stops with reason `'shed'`, as `Fallback.stoppedBy('shed')` and `onDone` see. Give it when
 *   `onShed` maps the refusal to an error of your own.
 * - It is told nothing and reads no time: the permits are taken by {@link protect} around the action. Its `allows`
 *   refuses a hedge while full, likewise.
 * - It knows no call's priority: while the limit is reached and the queue full, it refuses a retry even of a
 *   priority that could have displaced a waiter.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
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
 *   const limit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.aimd({ backoffRatio: 0.9 }), min: 1, max: 10, initial: 1, clock })
 *   const hold = limit.enter() as AdaptiveLimit.Permit // another caller holds the only place
 *   const reasons: Array<StopReason> = []
 *   const run = pipe(
 *     TE.right<never, string>('ok'),
 *     AdaptiveLimit.protect(limit, (shed) => shed),
 *     retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3))), {
 *       clock,
 *       guards: [AdaptiveLimit.asGuard(limit)],
 *       onDone: ({ reason }) => void reasons.push(reason)
 *     })
 *   )()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Left', left: { _tag: 'Shed', cause: 'full', priority: 'normal', limit: 1 } })
 *   assert.deepStrictEqual(clock.sleeps, []) // no sleep toward a full limit
 *   assert.deepStrictEqual(reasons, ['shed'])
 *   hold.ignore()
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const asGuard = (
  limit: AdaptiveLimit,
  options: { readonly refused?: ((error: unknown) => boolean) | undefined } = {}
): Guard => {
  const where = 'AdaptiveLimit.asGuard'
  checked(where, limit)
  validate.object(where, 'options', options)
  const refused = options.refused === undefined ? isShed : validate.callable(where, 'options.refused', options.refused)
  const full = (): boolean => limit.inFlight >= limit.limit && limit.queued >= limit.maxQueue
  return { reason: 'shed', readsTime: false, admit: (o) => !o.retrying || !full(), allows: () => !full(), refused }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Runs an action with a permit of the limit: at once when there is room, after waiting in the queue when it has
 * room, else not at all: `Left(onShed(shed))`. The result ends the permit: a `Right` is a success (its latency a
 * sample), a `Left` that `options.dropped` chooses a drop, any other `Left` or a rejection is ignored.
 *
 * **Details**
 *
 * - `options.priority` (default the lowest) is checked here, a `RangeError` naming one the limit does not declare.
 * - A call waiting here cannot be cancelled: use {@link protectSignalled} for calls that may be aborted.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const limit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 100, initial: 1 })
 *   const call = pipe(TE.right('ok'), AdaptiveLimit.protect(limit, (shed) => `shed: ${shed.cause} at ${shed.limit}`))
 *   assert.deepStrictEqual(await call(), { _tag: 'Right', right: 'ok' })
 *   const hold = limit.enter() as AdaptiveLimit.Permit
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: 'shed: full at 1' })
 *   hold.success()
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const protect = <E2>(
  limit: AdaptiveLimit,
  onShed: (shed: Shed) => E2,
  options: ProtectOptions = {}
): (<E1, A>(action: TaskEither<E1, A>) => TaskEither<E1 | E2, A>) => {
  const where = 'AdaptiveLimit.protect'
  checked(where, limit)
  validate.callable(where, 'onShed', onShed)
  const p = protection(where, limit, options)
  return (action) => () => withPermit(limit, p, onShed, unreachable, undefined, action)
}

/**
 * Like {@link protect}, for an action handed `{ signal }` (`Timeout.Signalled`): a call waiting in the queue whose
 * signal aborts leaves it at once, `Left(onAborted(signal.reason))`, and holds no place.
 *
 * **Details**
 *
 * - The result takes the caller's signal (optional); without one, the action gets a signal that never aborts.
 * - A signal that has aborted already: `Left(onAborted(reason))` without a permit or running the action.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import type { Signalled } from 'fp-ts-retry/Timeout'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const limit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 10, initial: 1, maxQueue: 5 })
 *   const hold = limit.enter() as AdaptiveLimit.Permit
 *   const call = pipe((_: Signalled) => TE.right('ok'), AdaptiveLimit.protectSignalled(limit, () => 'shed', (reason) => `aborted: ${reason}`))
 *   const controller = new AbortController()
 *   const waiting = call({ signal: controller.signal })()
 *   assert.strictEqual(limit.queued, 1)
 *   controller.abort('cancelled')
 *   assert.deepStrictEqual(await waiting, { _tag: 'Left', left: 'aborted: cancelled' })
 *   assert.strictEqual(limit.queued, 0)
 *   hold.success()
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const protectSignalled = <E2, E3>(
  limit: AdaptiveLimit,
  onShed: (shed: Shed) => E2,
  onAborted: (reason: unknown) => E3,
  options: ProtectOptions = {}
): (<E1, A>(
  action: (context: Signalled) => TaskEither<E1, A>
) => (context?: Partial<Signalled>) => TaskEither<E1 | E2 | E3, A>) => {
  const where = 'AdaptiveLimit.protectSignalled'
  checked(where, limit)
  validate.callable(where, 'onShed', onShed)
  validate.callable(where, 'onAborted', onAborted)
  const p = protection(where, limit, options)
  return (action) => (context) => {
    const signal = context?.signal
    if (signal !== undefined)
      validate.implementing(where, 'signal', 'an AbortSignal', ['addEventListener', 'removeEventListener'], signal)
    return () =>
      withPermit(limit, p, onShed, onAborted, signal, () => action({ signal: signal ?? new AbortController().signal })())
  }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Whether `error` is a {@link Shed}: the default `refused` of {@link asGuard}.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(AdaptiveLimit.isShed({ _tag: 'Shed', cause: 'full', priority: 'normal', limit: 5 }), true)
 * assert.strictEqual(AdaptiveLimit.isShed('timeout'), false)
 *
 * @category utils
 * @since 1.0.0
 */
export const isShed = (error: unknown): error is Shed =>
  error !== null && typeof error === 'object' && (error as { readonly _tag?: unknown })._tag === 'Shed'
