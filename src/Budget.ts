/**
 * Retry budgets: shared limits on retrying, consulted by the runner before every retry, that stop retries from
 * multiplying through a chain of services.
 *
 * A budget is mutable and shared by every run that uses it, so it lives beside the clock in the runner's options
 * or environment, not in the pure schedule.
 *
 * @since 0.1.0
 */
import type * as Guard from './Guard'
import * as aws from './internal/aws'
import { isPromise } from './internal/promise'
import { showValue } from './internal/show'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the runner needs from a budget: to be told of every attempt's outcome, and, on a failure, whether a retry
 * is allowed.
 *
 * **Details**
 *
 * - Each is told one record, a {@link BudgetAttempt}: how long the attempt took, when it ended, its run's retries
 *   before it, the error, and whether the schedule wants to retry.
 * - `onSuccess(attempt)` is called after every successful attempt of every run that uses the budget, first
 *   attempts included (`retrying: false`).
 * - `onFailure(attempt)` is called after every failed attempt, once the schedule has decided (`attempt.retrying`):
 *   it records the failure and answers, in one step, whether a retry may follow (gRPC takes the failure's token and
 *   decides on the retry atomically, so that concurrent runs can neither over- nor under-spend). `false` ends the
 *   run with its last error if the schedule wanted to retry, and the `onDone` hook's reason is `'budget'`.
 * - Either may answer with a promise (a budget kept on a server shared by a fleet): the runner awaits only those.
 * - `allows(now)` (optional) answers whether a retry would be allowed now, recording nothing. `hedging` asks it
 *   before each hedge that no failure prompted: as gRFC A6 says, hedges are sent only while the throttle allows
 *   retries. A budget without it lets those hedges go.
 *
 * @example
 * import type { RetryBudget } from 'fp-ts-retry/Budget'
 *
 * // at most 10 retries in the life of the process
 * let left = 10
 * const budget: RetryBudget = { onSuccess: () => undefined, onFailure: ({ retrying }) => retrying && left-- > 0 }
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryBudget {
  readonly onSuccess: (attempt: BudgetAttempt) => void | Promise<void>
  readonly onFailure: (attempt: BudgetAttempt) => boolean | Promise<boolean>
  readonly allows?: ((now: number) => boolean | Promise<boolean>) | undefined
}

/**
 * What a budget is told of an attempt, in one record: what happened first (`latency`, how long the attempt took in
 * ms, and `now`, when it ended on the runner's clock), then how many retries its run had made before it, the error
 * (of this failed attempt for `onFailure`; for `onSuccess`, of the failure before it, `undefined` after a first
 * attempt), and whether the schedule wants to retry it (`false` for a success).
 *
 * @example
 * import type { BudgetAttempt } from 'fp-ts-retry/Budget'
 *
 * // a first attempt that failed after 120 ms, at 1 s on the runner's clock, and that the schedule will retry
 * const firstFailure: BudgetAttempt = { latency: 120, now: 1_000, retries: 0, error: new Error('503'), retrying: true }
 *
 * @category model
 * @since 1.0.0
 */
export interface BudgetAttempt {
  /** How long the attempt took, in ms. */
  readonly latency: number
  /** When it ended, in ms on the runner's clock. */
  readonly now: number
  /** How many retries its run had made before it (0 for a first attempt). */
  readonly retries: number
  /** The error of this failed attempt (`onFailure`), or of the failure before a success (`onSuccess`). */
  readonly error: unknown
  /** Whether the schedule wants to retry this attempt: `false` for a success. */
  readonly retrying: boolean
}

/**
 * A {@link RetryBudget} kept in this process: it answers at once, never with a promise.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const budget: Budget.LocalBudget = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
 * const allowed: boolean = budget.onFailure({ latency: 5, now: 0, retries: 0, error: 'timeout', retrying: true })
 * assert.strictEqual(allowed, true)
 *
 * @category model
 * @since 1.0.0
 */
export interface LocalBudget extends RetryBudget {
  readonly onSuccess: (attempt: BudgetAttempt) => void
  readonly onFailure: (attempt: BudgetAttempt) => boolean
  readonly allows?: ((now: number) => boolean) | undefined
}

/**
 * A {@link RetryBudget} that can tell how many tokens it holds: see {@link retryThrottle}.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const bucket: Budget.RetryThrottle = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
 * assert.strictEqual(bucket.tokens, 10)
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryThrottle extends LocalBudget {
  /** The tokens left, in `[0, maxTokens]`. */
  readonly tokens: number
}

/**
 * Options of {@link retryThrottle}, named as in gRPC's service config (`retryThrottling`).
 *
 * **Details**
 *
 * - `from`: a budget of {@link retryThrottle} that this one replaces (its numbers changed, as `Policies.reload`
 *   does): the new bucket starts with the tokens `from` has now, at most its own `maxTokens` (capped, not scaled:
 *   a budget an outage spent stays spent), instead of full. Any other value is a `TypeError` naming it.
 *
 * @example
 * import type { RetryThrottleOptions } from 'fp-ts-retry/Budget'
 *
 * // gRPC's example: throttles retries once failures pass about 10% of calls
 * const options: RetryThrottleOptions = { maxTokens: 10, tokenRatio: 0.1 }
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryThrottleOptions {
  readonly maxTokens: number
  readonly tokenRatio: number
  readonly from?: RetryBudget | undefined
}

/**
 * Options of {@link adaptive}.
 *
 * **Details**
 *
 * - `window`: how far back the samples count, in ms (finite, > 0).
 * - `minSuccessRate`: in `[0, 1]`; retries are refused while the share of successful attempts in the window is
 *   below it.
 * - `maxLatencyPercentile` (optional): `{ percentile, ms }`, with `percentile` in `(0, 100]`; retries are refused
 *   while that percentile of the attempts' latencies in the window is above `ms`.
 * - `minSamples`: a whole number `>= 1`; with fewer attempts in the window there is too little evidence, and
 *   retries are allowed.
 *
 * @example
 * import type { AdaptiveOptions } from 'fp-ts-retry/Budget'
 *
 * // over the last 10 s: stop retrying below 50% success, or when p95 latency passes 2 s
 * const options: AdaptiveOptions = {
 *   window: 10_000,
 *   minSuccessRate: 0.5,
 *   maxLatencyPercentile: { percentile: 95, ms: 2_000 },
 *   minSamples: 20
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface AdaptiveOptions {
  readonly window: number
  readonly minSuccessRate: number
  readonly maxLatencyPercentile?: { readonly percentile: number; readonly ms: number } | undefined
  readonly minSamples: number
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** gRPC keeps its token count in thousandths, so that `tokenRatio` additions never drift (0.1 · 10 is exactly 1). */
const MILLI = 1000

/**
 * gRPC's retry throttling (gRFC A6): a token bucket shared by every run that uses it, which stops retries once
 * failures pass a share of the calls.
 *
 * **Details**
 *
 * - The bucket starts full, at `maxTokens`. Every failed attempt takes 1 token (not below 0); every successful one
 *   gives back `tokenRatio` (not above `maxTokens`).
 * - A retry is allowed only while `tokens > maxTokens / 2`: at exactly half, it is refused.
 * - In a total outage a fresh bucket allows at most `ceil(maxTokens / 2) - 1` retries in all, across every run
 *   that shares it, then one attempt per call until successes refill it above half. In steady state, retries go
 *   on while failures stay below about `tokenRatio / (1 + tokenRatio)` of attempts (gRPC's 10/0.1: ~9%).
 * - Both numbers must be `>= 0.001`; like gRPC, they count in thousandths of a token (3 decimal places).
 * - Every attempt the runner reports counts, first attempts included, and every failure takes its token whether
 *   or not the schedule retries it (gRPC's rule). `Http.retryingFetch` reports only transient
 *   failures as failures (gRPC counts only retryable status codes).
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const bucket = Budget.retryThrottle({ maxTokens: 4, tokenRatio: 0.5 })
 * const failure = { latency: 10, now: 0, retries: 0, error: new Error('503'), retrying: true }
 * assert.strictEqual(bucket.onFailure(failure), true) // 3 tokens: 3 > 2
 * assert.strictEqual(bucket.onFailure(failure), false) // 2 tokens: 2 > 2 is false
 * bucket.onSuccess({ latency: 10, now: 0, retries: 0, error: undefined, retrying: false }) // 2.5 tokens
 * assert.strictEqual(bucket.tokens, 2.5)
 *
 * @category constructors
 * @since 0.1.0
 */
export const retryThrottle = (options: RetryThrottleOptions): RetryThrottle => {
  const where = 'Budget.retryThrottle'
  validate.object(where, 'options', options)
  const max = validate.thousandths(where, 'maxTokens', options.maxTokens)
  const ratio = validate.thousandths(where, 'tokenRatio', options.tokenRatio)
  let tokens = max
  if (options.from !== undefined) {
    const tokensOf = throttles.get(options.from)
    if (tokensOf === undefined) {
      throw new TypeError(
        `${where}: from must be a budget made by Budget.retryThrottle, received ${showValue(options.from)}`
      )
    }
    tokens = Math.min(max, tokensOf())
  }
  const budget: RetryThrottle = {
    onSuccess: () => {
      tokens = Math.min(max, tokens + ratio)
    },
    onFailure: () => {
      tokens = Math.max(0, tokens - MILLI)
      return tokens * 2 > max
    },
    allows: () => tokens * 2 > max,
    get tokens() {
      return tokens / MILLI
    }
  }
  throttles.set(budget, () => tokens)
  return budget
}

/** The tokens (in thousandths) each budget of {@link retryThrottle} has now, for a budget that replaces it. */
const throttles = new WeakMap<RetryBudget, () => number>()

/** A latency in a {@link PercentileWindow}: which of its heaps holds it, and where. */
interface Sample {
  readonly latency: number
  low: boolean
  index: number
}

/**
 * A binary heap of samples, the largest latency on top (`low`) or the smallest, each sample knowing its index so
 * that any one of them is removed in O(log n).
 */
class Heap {
  readonly items: Array<Sample> = []
  constructor(readonly low: boolean) {}

  /** Whether `a` belongs nearer the top than `b`. */
  private above(a: Sample, b: Sample): boolean {
    return this.low ? a.latency > b.latency : a.latency < b.latency
  }

  private put(i: number, sample: Sample): void {
    this.items[i] = sample
    sample.index = i
  }

  push(sample: Sample): void {
    sample.low = this.low
    this.put(this.items.length, sample)
    this.siftUp(sample.index)
  }

  remove(sample: Sample): void {
    const last = this.items.pop() as Sample
    if (last === sample) return
    this.put(sample.index, last)
    this.siftDown(this.siftUp(last.index))
  }

  pop(): Sample {
    const top = this.items[0]
    this.remove(top)
    return top
  }

  /** Moves the sample at `i` up to its place; answers that place. */
  private siftUp(i: number): number {
    const sample = this.items[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.above(sample, this.items[parent])) break
      this.put(i, this.items[parent])
      i = parent
    }
    this.put(i, sample)
    return i
  }

  private siftDown(i: number): void {
    const { items } = this
    const sample = items[i]
    for (;;) {
      let child = 2 * i + 1
      if (child >= items.length) break
      if (child + 1 < items.length && this.above(items[child + 1], items[child])) child++
      if (!this.above(items[child], sample)) break
      this.put(i, items[child])
      i = child
    }
    this.put(i, sample)
  }
}

/** The latencies of {@link adaptive}'s window, by order: see {@link percentileWindow}. */
interface PercentileWindow {
  readonly add: (latency: number) => Sample
  readonly remove: (sample: Sample) => void
  /** The nearest-rank percentile of the `count` latencies held. */
  readonly value: (count: number) => number
}

/**
 * The latencies of a sliding window split at the nearest rank `k = ceil(percentile / 100 · count)`: a max-heap of
 * the `k` smallest and a min-heap of the rest, so the percentile is the first's top (the two-heap sliding median,
 * generalised). Adding or removing a latency is O(log n); `k` moves by at most one per change of `count`, so the
 * rebalancing before an answer moves O(1) latencies per change, amortised. Exact: no sketch, no error.
 */
const percentileWindow = (percentile: number): PercentileWindow => {
  const low = new Heap(true)
  const high = new Heap(false)
  return {
    add: (latency) => {
      const sample: Sample = { latency, low: false, index: 0 }
      const top = low.items[0]
      // Every latency in `low` is at most every latency in `high`: a new one joins the side it belongs to.
      ;(top !== undefined && latency <= top.latency ? low : high).push(sample)
      return sample
    },
    remove: (sample) => (sample.low ? low : high).remove(sample),
    value: (count) => {
      const k = Math.max(1, Math.ceil((percentile * count) / 100))
      while (low.items.length > k) high.push(low.pop())
      while (low.items.length < k) low.push(high.pop())
      return low.items[0].latency
    }
  }
}

/**
 * An adaptive retry guard (as in the "How to implement retries" write-up, 如何实现重试, 2021): over a sliding window
 * of recent attempts, refuses retries while the success rate is below a threshold or a latency percentile is above
 * one, so that a struggling dependency is not asked twice.
 *
 * **Details**
 *
 * - An attempt is in the window at `now` when it ended less than `window` ms before `now` (at `now - window` it
 *   is out). Times come from the runner's clock, so a `TestClock` drives it.
 * - With fewer than `minSamples` attempts in the window, retries are allowed.
 * - Otherwise a retry is refused when `successes / samples < minSuccessRate` (exactly at the threshold it is
 *   allowed), or when the `percentile`-th latency (nearest rank: the `ceil(percentile / 100 · samples)`-th
 *   smallest) is `> ms` (exactly at `ms` it is allowed).
 * - Shared by every run that uses it; it keeps one sample per attempt in the window. With a percentile, an attempt
 *   costs O(log n) of the window: its latencies are kept in order, and the percentile is exact.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const guard = Budget.adaptive({ window: 10_000, minSuccessRate: 0.5, minSamples: 4 })
 * const success = { latency: 20, retries: 0, error: undefined, retrying: false }
 * const failure = { latency: 20, retries: 0, error: new Error('503'), retrying: true }
 * guard.onSuccess({ ...success, now: 1_000 })
 * guard.onFailure({ ...failure, now: 2_000 })
 * assert.strictEqual(guard.onFailure({ ...failure, now: 3_000 }), true) // 3 samples: too few to judge
 * assert.strictEqual(guard.onFailure({ ...failure, now: 4_000 }), false) // 1 success in 4 < 50%
 * assert.strictEqual(guard.onFailure({ ...failure, now: 12_500 }), true) // the first two have left the window: 3 samples
 *
 * @category constructors
 * @since 0.1.0
 */
export const adaptive = (options: AdaptiveOptions): LocalBudget => {
  const where = 'Budget.adaptive'
  validate.object(where, 'options', options)
  const { window, minSuccessRate, maxLatencyPercentile, minSamples } = options
  validate.positive(where, 'window', window)
  validate.that(where, 'minSuccessRate', 'a number in [0, 1]', (r) => validate.isDuration(r) && r <= 1, minSuccessRate)
  validate.positiveCount(where, 'minSamples', minSamples)
  if (maxLatencyPercentile !== undefined) {
    const { percentile, ms } = validate.object(where, 'maxLatencyPercentile', maxLatencyPercentile)
    validate.that(
      where,
      'maxLatencyPercentile.percentile',
      'a number in (0, 100]',
      (p) => validate.isDuration(p) && p > 0 && p <= 100,
      percentile
    )
    validate.duration(where, 'maxLatencyPercentile.ms', ms)
  }

  // The samples in the window, oldest first, from `head` on; the front is dropped as time passes.
  const times: Array<number> = []
  const outcomes: Array<boolean> = []
  // Their latencies, only when a percentile is asked for: kept in order, so that an attempt costs O(log n), not a sort.
  const samples: Array<Sample> = []
  const latencies = maxLatencyPercentile === undefined ? undefined : percentileWindow(maxLatencyPercentile.percentile)
  let head = 0
  let successes = 0

  const expire = (now: number): void => {
    const cutoff = now - window
    while (head < times.length && times[head] <= cutoff) {
      if (outcomes[head]) successes--
      latencies?.remove(samples[head])
      head++
    }
    // Compact now and then, so that the arrays hold about the window's samples and no more.
    if (head > 1024 && head * 2 > times.length) {
      times.splice(0, head)
      outcomes.splice(0, head)
      samples.splice(0, head)
      head = 0
    }
  }

  const record = (succeeded: boolean, latency: number, now: number): void => {
    // a NaN time would never leave the window, a NaN latency would refuse every percentile check
    validate.duration(where, 'latency', latency)
    validate.finite(where, 'now', now)
    expire(now)
    times.push(now)
    outcomes.push(succeeded)
    if (latencies !== undefined) samples.push(latencies.add(latency))
    if (succeeded) successes++
  }

  const allowed = (): boolean => {
    const count = times.length - head
    if (count < minSamples) return true
    if (successes / count < minSuccessRate) return false
    return maxLatencyPercentile === undefined || (latencies as PercentileWindow).value(count) <= maxLatencyPercentile.ms
  }

  return {
    onSuccess: ({ latency, now }) => record(true, latency, now),
    onFailure: ({ latency, now }) => {
      record(false, latency, now)
      return allowed()
    },
    allows: (now) => {
      expire(validate.finite(where, 'now', now))
      return allowed()
    }
  }
}

/**
 * Options of {@link retryQuota}, with the defaults of the AWS SDKs' standard retries 2.0 (see {@link awsRetries20}
 * and {@link awsRetries21}).
 *
 * @example
 * import type { RetryQuotaOptions } from 'fp-ts-retry/Budget'
 *
 * const options: RetryQuotaOptions = { tokens: 500, retryCost: 5, timeoutCost: 10, noRetryIncrement: 1 }
 *
 * @category model
 * @since 1.0.0
 */
export interface RetryQuotaOptions {
  /** The quota's size, and what it starts with. Default 500. */
  readonly tokens?: number | undefined
  /** What a retry takes. Default 5. */
  readonly retryCost?: number | undefined
  /** What the retry of a timeout takes. Default 10. */
  readonly timeoutCost?: number | undefined
  /**
   * What the retry of a throttle takes, whether or not it is also a timeout. Default: none, throttles cost as any
   * other error (retries 2.0); retries 2.1 says 5.
   */
  readonly throttleCost?: number | undefined
  /** What a success after no retry gives back. Default 1. */
  readonly noRetryIncrement?: number | undefined
  /** Which errors are timeouts. Default: an error whose `_tag`, `name` or `code` says so (`TimeoutError`, `ETIMEDOUT`). */
  readonly isTimeout?: ((error: unknown) => boolean) | undefined
  /**
   * Which errors are throttles, read only with a `throttleCost`. Default: as the AWS SDKs say, an error named by a
   * throttling code (`name`, `code` or `Code`: `ThrottlingException`, `TooManyRequestsException`, `SlowDown`, ...),
   * of status 429 (`status`, `statusCode`, `$metadata.httpStatusCode`), flagged `$retryable.throttling`, or whose
   * response's `x-amzn-errortype` header names a throttling code (an `Http.StatusError`).
   */
  readonly isThrottle?: ((error: unknown) => boolean) | undefined
}

/**
 * The options of the AWS SDKs' standard retry quota in retries 2.0, their default until the SDKs switch to 2.1:
 * 500 tokens, 5 for a retry, 10 for the retry of a timeout, 1 back for a success that needed no retry. They are
 * {@link retryQuota}'s defaults: `retryQuota(awsRetries20)` is `retryQuota()`, written to be compared with
 * {@link awsRetries21}.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const quota = Budget.retryQuota(Budget.awsRetries20)
 * const timeout = { latency: 10, now: 0, retries: 0, error: { name: 'TimeoutError' }, retrying: true }
 * assert.strictEqual(quota.onFailure(timeout), true)
 * assert.strictEqual(quota.tokens, 490)
 *
 * @category constructors
 * @since 1.0.0
 */
export const awsRetries20: RetryQuotaOptions = Object.freeze({
  tokens: 500,
  retryCost: 5,
  timeoutCost: 10,
  noRetryIncrement: 1
})

/**
 * The options of the AWS SDKs' standard retry quota in retries 2.1 (opt-in in 2026, their default later): a
 * retry takes 14 tokens, the retry of a throttle 5, and timeouts are no longer special. Named after the version of
 * the SDKs' shared retry behaviour, as {@link awsRetries20} is, so that the two read side by side; the schedule of
 * the same version is `Schedule.awsRetries21`.
 *
 * **Details**
 *
 * - 500 tokens: 35 transient retries in a row empty it (100 in 2.0), 100 retries of throttles: an outage is
 *   retried less, a server that asks for patience gets it.
 * - A success gives back what its run's last retry took (14 or 5), or 1 after no retry.
 * - Throttles are told by {@link RetryQuotaOptions}' default `isThrottle`; give your own beside these options:
 *   `retryQuota({ ...awsRetries21, isThrottle })`.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const quota = Budget.retryQuota(Budget.awsRetries21)
 * const failure = (error: unknown) => ({ latency: 10, now: 0, retries: 0, error, retrying: true })
 * assert.strictEqual(quota.onFailure(failure(new Error('503'))), true) // 500 - 14
 * assert.strictEqual(quota.onFailure(failure({ name: 'ThrottlingException' })), true) // 486 - 5
 * assert.strictEqual(quota.onFailure(failure({ name: 'TimeoutError' })), true) // 481 - 14: no timeout cost
 * assert.strictEqual(quota.tokens, 467)
 *
 * @category constructors
 * @since 1.0.0
 */
export const awsRetries21: RetryQuotaOptions = Object.freeze({
  tokens: 500,
  retryCost: 14,
  timeoutCost: 14,
  throttleCost: 5,
  noRetryIncrement: 1
})

/**
 * A {@link RetryBudget} that can tell how many tokens it holds: see {@link retryQuota}.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const quota: Budget.RetryQuota = Budget.retryQuota()
 * assert.strictEqual(quota.tokens, 500)
 *
 * @category model
 * @since 1.0.0
 */
export interface RetryQuota extends LocalBudget {
  readonly tokens: number
}

const isTimeoutError = (error: unknown): boolean => {
  if (error === null || typeof error !== 'object') return false
  const e = error as { readonly _tag?: unknown; readonly name?: unknown; readonly code?: unknown }
  return e._tag === 'TimeoutError' || e.name === 'TimeoutError' || e.code === 'ETIMEDOUT'
}

/**
 * The AWS SDK v3 standard retry quota: a retry takes `retryCost` tokens (`timeoutCost` for a timeout) and is
 * refused when fewer are left; a success gives back what its run's last retry took, or `noRetryIncrement` when it
 * needed no retry.
 *
 * **Details**
 *
 * - Unlike {@link retryThrottle}, where every failure costs a token, only retries cost here: a failure that the
 *   schedule will not retry takes nothing. With the defaults, 100 retries in a row (50 of timeouts) empty it.
 * - With a `throttleCost`, the retry of a throttle (`isThrottle`) takes that instead, timeout or not: retries 2.1
 *   ({@link awsRetries21}). Without one, throttles cost as any other error, as in 2.0.
 * - The quota is shared by every run that uses it and never exceeds `tokens`. `allows(now)` (asked before a hedge)
 *   answers whether `retryCost` is left.
 * - Every option is checked when built: a `RangeError` names a number out of range, a `TypeError` an `isTimeout`
 *   or `isThrottle` that is not a function.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const quota = Budget.retryQuota({ tokens: 12 })
 * const failure = { latency: 10, now: 0, retries: 0, error: new Error('503'), retrying: true }
 * assert.strictEqual(quota.onFailure(failure), true) // 7 left
 * assert.strictEqual(quota.onFailure({ ...failure, error: { _tag: 'TimeoutError' } }), false) // 10 > 7
 * quota.onSuccess({ latency: 10, now: 0, retries: 1, error: new Error('503'), retrying: false }) // the retry's 5 come back
 * assert.strictEqual(quota.tokens, 12)
 *
 * @category constructors
 * @since 1.0.0
 */
export const retryQuota = (options: RetryQuotaOptions = {}): RetryQuota => {
  const where = 'Budget.retryQuota'
  validate.object(where, 'options', options)
  const size = validate.duration(where, 'tokens', options.tokens ?? 500)
  const retryCost = validate.duration(where, 'retryCost', options.retryCost ?? 5)
  const timeoutCost = validate.duration(where, 'timeoutCost', options.timeoutCost ?? 10)
  const noRetryIncrement = validate.duration(where, 'noRetryIncrement', options.noRetryIncrement ?? 1)
  const isTimeout = validate.callable(where, 'isTimeout', options.isTimeout ?? isTimeoutError)
  const throttleCost =
    options.throttleCost === undefined ? undefined : validate.duration(where, 'throttleCost', options.throttleCost)
  const isThrottle = validate.callable(where, 'isThrottle', options.isThrottle ?? aws.isThrottle)
  // 2.1 asks whether a throttle first, and has no timeout cost of its own; 2.0 (no throttleCost) never asks.
  const costOf = (error: unknown): number =>
    throttleCost !== undefined && isThrottle(error) ? throttleCost : isTimeout(error) ? timeoutCost : retryCost
  let tokens = size
  return {
    onSuccess: ({ retries, error }) => {
      tokens = Math.min(size, tokens + (retries > 0 ? costOf(error) : noRetryIncrement))
    },
    onFailure: ({ retrying, error }) => {
      if (!retrying) return false
      const cost = costOf(error)
      if (tokens < cost) return false
      tokens -= cost
      return true
    },
    allows: () => tokens >= retryCost,
    get tokens() {
      return tokens
    }
  }
}

/**
 * A retry budget as a guard: the one place a budget is told of outcomes, each as one {@link BudgetAttempt} built
 * from the `Guard.Outcome` (its `latency`, `now`, `retries`, `error` and `retrying`). A success is told with
 * `onSuccess` (the error of the failure before it, `retrying: false`), a failure with `onFailure`, whose answer
 * admits the retry.
 *
 * **Details**
 *
 * - `options.counts(error)`: which failures say something of the dependency's health (default: every one). A
 *   failure that does not count is not told, and is admitted: gRPC's retry throttling counts only the transient
 *   ones, so a 400 does not drain the budget. Its retry was charged nothing, so the success after it refunds
 *   nothing either: the budget is told it as a success that needed no retry (`retries: 0`, `error: undefined`,
 *   with its own `latency` and `now`).
 * - `allows(now)` is the budget's own, when it has one.
 *
 * @example
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as assert from 'assert'
 *
 * const bucket = Budget.retryThrottle({ maxTokens: 4, tokenRatio: 0.1 })
 * const guard = Budget.asGuard(bucket, { counts: (e) => e !== 'bad request' })
 * const failure = { ok: false, latency: 0, now: 0, retries: 0, retrying: true, delay: 10 }
 * assert.strictEqual(guard.admit({ ...failure, error: 'timeout' }), true) // 4 tokens -> 3: above half
 * assert.strictEqual(guard.admit({ ...failure, error: 'timeout' }), false) // 3 -> 2: refused
 * assert.strictEqual(guard.admit({ ...failure, error: 'bad request' }), true) // not counted
 * assert.strictEqual(bucket.tokens, 2)
 *
 * @category constructors
 * @since 1.0.0
 */
export const asGuard = (
  budget: RetryBudget,
  options: { readonly counts?: ((error: unknown) => boolean) | undefined } = {}
): Guard.Guard => {
  const where = 'Budget.asGuard'
  validate.implementing(where, 'budget', 'a RetryBudget', ['onSuccess', 'onFailure'], budget)
  validate.object(where, 'options', options)
  const counts = options.counts === undefined ? undefined : validate.callable(where, 'options.counts', options.counts)
  const { allows } = budget
  return {
    reason: 'budget',
    readsTime: true,
    admit: (o) => {
      if (o.ok) {
        // A retry after an uncounted failure was charged nothing: its success refunds nothing, as a first success.
        const charged = counts === undefined || o.retries === 0 || counts(o.error)
        const told = budget.onSuccess(
          charged
            ? { latency: o.latency, now: o.now, retries: o.retries, error: o.error, retrying: false }
            : { latency: o.latency, now: o.now, retries: 0, error: undefined, retrying: false }
        )
        return isPromise(told) ? told.then(() => true) : true
      }
      if (counts !== undefined && !counts(o.error)) return true
      const told = budget.onFailure({
        latency: o.latency,
        now: o.now,
        retries: o.retries,
        error: o.error,
        retrying: o.retrying
      })
      return isPromise(told) ? told.then((allowed) => allowed !== false) : told !== false
    },
    allows: allows === undefined ? undefined : (now) => allows.call(budget, now)
  }
}
