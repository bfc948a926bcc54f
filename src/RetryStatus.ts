/**
 * Where a run of retries stands: how many retries were made, how long it has taken, how long it slept.
 *
 * The names follow retry-ts, so a retry-ts policy `(status) => Option<number>` reads a `RetryStatus` unchanged.
 *
 * @since 0.1.0
 */
import * as O from 'fp-ts/Option'
import type * as model from './internal/model'

/**
 * The status of a run, as seen by a schedule deciding on the next retry and by an action that asks for it.
 *
 * **Details**
 *
 * - `iterNumber`: retries made so far. It is `0` during the first attempt and when the schedule decides on the
 *   first retry; attempts = retries + 1.
 * - `elapsed`: ms since the first attempt started, read from the run's `Clock`.
 * - `cumulativeDelay`: the sum of the delays slept so far, in ms.
 * - `previousDelay`: the delay before the latest retry, `none` before the first retry.
 *
 * @example
 * import * as RetryStatus from 'fp-ts-retry/RetryStatus'
 * import * as O from 'fp-ts/Option'
 * import * as assert from 'assert'
 *
 * const status: RetryStatus.RetryStatus = { iterNumber: 2, elapsed: 310, cumulativeDelay: 300, previousDelay: O.some(200) }
 * assert.strictEqual(status.iterNumber + 1, 3) // three attempts so far
 *
 * @category model
 * @since 0.1.0
 */
export type RetryStatus = model.RetryStatus

/**
 * The status of a run that has not retried yet.
 *
 * @example
 * import * as RetryStatus from 'fp-ts-retry/RetryStatus'
 * import * as O from 'fp-ts/Option'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(RetryStatus.initial, { iterNumber: 0, elapsed: 0, cumulativeDelay: 0, previousDelay: O.none })
 *
 * @category constructors
 * @since 0.1.0
 */
export const initial: RetryStatus = { iterNumber: 0, elapsed: 0, cumulativeDelay: 0, previousDelay: O.none }
