/**
 * Retry budgets: shared limits on retrying, consulted by the runner before every retry, that stop retries from
 * multiplying through a chain of services.
 *
 * A budget is mutable and shared by every run that uses it, so it lives beside the clock in the runner's options
 * or environment, not in the pure schedule.
 *
 * @since 0.1.0
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the runner needs from a budget.
 *
 * **Details**
 *
 * - `record(succeeded, latency, now)` is called after every attempt of every run that uses the budget, first
 *   attempts included, with whether it succeeded and how long it took in ms.
 * - `allowRetry(now)` is asked after the schedule has chosen to retry and before the sleep; `false` ends the run
 *   with its last error, and the `onDone` hook's reason is `'budget'`.
 *
 * @example
 * import type { RetryBudget } from 'fp-ts-retry/Budget'
 *
 * // at most 10 retries in the life of the process
 * let left = 10
 * const budget: RetryBudget = { record: () => undefined, allowRetry: () => left-- > 0 }
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryBudget {
  readonly record: (succeeded: boolean, latency: number, now: number) => void
  readonly allowRetry: (now: number) => boolean
}
