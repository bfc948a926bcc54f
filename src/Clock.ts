/**
 * Time, as a service: the runner reads `now` and asks `sleep` for every delay a schedule chooses.
 *
 * Pass `TestClock.make()` instead of `Clock.live` and a test of a five-minute backoff runs in microseconds.
 *
 * @since 0.1.0
 */
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the runner needs from time.
 *
 * **Details**
 *
 * - `now()` is in milliseconds since the Unix epoch, so that an HTTP date (`Retry-After`) can be read against it.
 * - `sleep(ms, signal)` resolves once `ms` milliseconds have passed by `now()`, or as soon as `signal` aborts,
 *   whichever comes first. It never rejects for an abort: the caller checks `signal.aborted` afterwards.
 *   A negative, NaN or infinite `ms` is a `RangeError`.
 *
 * @example
 * import * as Clock from 'fp-ts-retry/Clock'
 * import * as assert from 'assert'
 *
 * const clock: Clock.Clock = Clock.live
 * assert.ok(clock.now() > 0)
 *
 * @category model
 * @since 0.1.0
 */
export interface Clock {
  readonly now: () => number
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** Node's and browsers' `setTimeout` fire after 1 ms for any delay above this (a signed 32-bit overflow). */
const MAX_TIMER = 2 ** 31 - 1

const origin = performance.timeOrigin

const now = (): number => origin + performance.now()

const sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
  validate.duration('Clock.sleep', 'ms', ms)
  if (ms === 0 || signal?.aborted) return Promise.resolve()
  const deadline = now() + ms
  return new Promise<void>((resolve) => {
    let timer: ReturnType<typeof setTimeout>
    const finish = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', finish)
      resolve()
    }
    // Re-arm until the deadline has really passed: a long sleep is cut into timer-sized pieces, and a timer
    // that fires a fraction of a millisecond early is topped up rather than trusted.
    const arm = (): void => {
      const remaining = deadline - now()
      if (remaining <= 0) finish()
      else timer = setTimeout(arm, Math.min(Math.ceil(remaining), MAX_TIMER))
    }
    signal?.addEventListener('abort', finish, { once: true })
    arm()
  })
}

/**
 * Real time: a monotonic clock anchored to the epoch (`performance.timeOrigin + performance.now()`), and timers.
 *
 * **Details**
 *
 * - `sleep` never wakes early: a delay above 2^31 − 1 ms (about 24.8 days, where `setTimeout` would fire after
 *   1 ms) is slept in pieces, and a timer that fires before the deadline is re-armed for the rest.
 * - An abort clears the timer and removes the listener, so nothing is left to keep the process alive.
 *
 * @example
 * import * as Clock from 'fp-ts-retry/Clock'
 * import * as assert from 'assert'
 *
 * const controller = new AbortController()
 * const slept = Clock.live.sleep(60_000, controller.signal)
 * controller.abort()
 * slept.then(() => assert.ok(controller.signal.aborted))
 *
 * @category constructors
 * @since 0.1.0
 */
export const live: Clock = { now, sleep }
