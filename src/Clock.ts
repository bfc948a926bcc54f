/**
 * Time, as a service: the runner reads `now` and asks `sleep` for every delay a schedule chooses.
 *
 * Pass `TestClock.make()` instead of `Clock.live` and a test of a five-minute backoff runs in microseconds.
 *
 * @since 0.1.0
 */
import type * as model from './internal/model'
import { clockOn, now, TimerSleepers } from './internal/sleepers'
import { showValue } from './internal/show'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the runner needs from time.
 *
 * **Details**
 *
 * - `now()` is in milliseconds since the Unix epoch, so that an HTTP date (`Retry-After`) can be read against it.
 * - `sleep(ms, signal, kind)` resolves once `ms` milliseconds have passed by `now()`, or as soon as `signal`
 *   aborts, whichever comes first. It never rejects for an abort: the caller checks `signal.aborted` afterwards.
 *   A negative, NaN or infinite `ms` is a `RangeError`. `kind` says what the wait is for (see {@link SleepKind});
 *   a real clock ignores it, `TestClock` lists and advances timers by it.
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
export type Clock = model.Clock

/**
 * What a sleep is for, as every module of the library says when it asks a clock for one: a retry's `'backoff'`, an
 * attempt's `'timeout'`, a `'hedge'`'s delay, a durable run's `'due'` time, a rate limiter's `'throttle'` wait, the
 * latency `fp-ts-retry/Chaos` injects (`'chaos'`); a sleep that names no kind is the `'user'`'s own. A breaker
 * never sleeps: it compares its `halfOpenAt` with the clock's `now()` when a call comes.
 *
 * @example
 * import type { SleepKind } from 'fp-ts-retry/Clock'
 *
 * const kind: SleepKind = 'backoff'
 *
 * @category model
 * @since 1.0.0
 */
export type SleepKind = model.SleepKind

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `unref` (default `false`): when `true`, a pending `sleep` does not keep the Node.js process alive, as with
 *   `timeout.unref()`. A process whose only pending work is such a sleep exits, and the run that slept never
 *   ends: no result, no `onDone`. Meant for best-effort work in a program that should exit when its main work
 *   is done (a CLI's telemetry, a cache refresh); p-retry calls it `unref` too. Where timers cannot be unref'd
 *   (a browser), the option changes nothing.
 *
 * @example
 * import * as Clock from 'fp-ts-retry/Clock'
 * import * as assert from 'assert'
 *
 * const options: Clock.ClockOptions = { unref: true }
 * assert.ok(Clock.make(options).now() > 0)
 *
 * @category model
 * @since 1.0.0
 */
export interface ClockOptions {
  readonly unref?: boolean | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** The queues of the live clocks' sleeps: one each, so that `unref` applies to its own timer. */
const liveSleepers = new TimerSleepers(false)
const unrefdSleepers = new TimerSleepers(true)

/**
 * Real time: a monotonic clock anchored to the epoch (`performance.timeOrigin + performance.now()`), and timers.
 *
 * **Details**
 *
 * - `sleep` never wakes early: a delay above 2^31 − 1 ms (about 24.8 days, where `setTimeout` would fire after
 *   1 ms) is slept in pieces, and a timer that fires before the deadline is re-armed for the rest.
 * - An abort clears the timer and unsubscribes from the signal, so nothing is left to keep the process alive.
 * - All the sleeps on one signal share one 'abort' listener: any number of runs can share a signal without a
 *   `MaxListenersExceededWarning`, and once they are over the signal holds no listener of theirs.
 * - A pending sleep keeps the process alive, as a timer does; {@link make} with `unref: true` gives a clock
 *   whose sleeps do not.
 * - The pending sleeps of a clock share one timer, armed for the earliest deadline: a sleep weighs a small object,
 *   not a timer (about 200 bytes in Node), which matters when thousands of runs wait out a backoff. Sleeps due by
 *   the time the timer fires wake together, earliest deadline first (then in the order they began).
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
export const live: Clock = clockOn({ now, sleep: liveSleepers.promised }, liveSleepers)

const unrefd: Clock = clockOn({ now, sleep: unrefdSleepers.promised }, unrefdSleepers)

/**
 * Real time, as {@link live}, with options: `make({ unref: true })` is a clock whose pending sleeps do not keep
 * the process alive (see {@link ClockOptions}).
 *
 * **Details**
 *
 * - `make()` and `make({ unref: false })` behave as `live`.
 * - `options` must be an object or `undefined`, and `unref` a boolean or `undefined`, else a `TypeError`.
 *
 * @example
 * import * as Clock from 'fp-ts-retry/Clock'
 * import * as assert from 'assert'
 *
 * // A best-effort retry: the process ends with this script, without waiting a minute for this sleep.
 * const clock = Clock.make({ unref: true })
 * const slept = clock.sleep(60_000)
 * assert.ok(slept instanceof Promise)
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options?: ClockOptions): Clock => {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new TypeError(`Clock.make: options must be an object or undefined, received ${showValue(options)}`)
  }
  const unref: unknown = options?.unref
  if (unref !== undefined && typeof unref !== 'boolean') {
    throw new TypeError(`Clock.make: options.unref must be a boolean or undefined, received ${showValue(unref)}`)
  }
  return unref === true ? unrefd : live
}
