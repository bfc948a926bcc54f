/**
 * Time, as a service: the runner reads `now` and asks `sleep` for every delay a schedule chooses.
 *
 * Pass `TestClock.make()` instead of `Clock.live` and a test of a five-minute backoff runs in microseconds.
 *
 * @since 0.1.0
 */
import { onAbort } from './internal/abort'
import { showValue } from './internal/show'
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
export interface Clock {
  readonly now: () => number
  readonly sleep: (ms: number, signal?: AbortSignal, kind?: SleepKind) => Promise<void>
}

/**
 * What a sleep is for, as every module of the library says when it asks a clock for one: a retry's `'backoff'`, an
 * attempt's `'timeout'`, a breaker's `'halfOpen'` wait, a `'hedge'`'s delay, a durable run's `'due'` time, a rate
 * limiter's `'throttle'` wait; a sleep that names no kind is the `'user'`'s own.
 *
 * @example
 * import type { SleepKind } from 'fp-ts-retry/Clock'
 *
 * const kind: SleepKind = 'backoff'
 *
 * @category model
 * @since 0.2.0
 */
export type SleepKind = 'backoff' | 'timeout' | 'halfOpen' | 'hedge' | 'due' | 'throttle' | 'user'

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
 * @since 0.2.0
 */
export interface ClockOptions {
  readonly unref?: boolean | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** Node's and browsers' `setTimeout` fire after 1 ms for any delay above this (a signed 32-bit overflow). */
const MAX_TIMER = 2 ** 31 - 1

const origin = performance.timeOrigin

const now = (): number => origin + performance.now()

/** A sleep waiting in a {@link Sleepers} queue. */
class Sleeper {
  /** Where it is in the queue's heap; -1 once out of it. */
  index = -1
  unsubscribe: (() => void) | undefined = undefined
  constructor(readonly deadline: number, readonly seq: number, readonly resolve: () => void) {}
}

const before = (a: Sleeper, b: Sleeper): boolean => a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq)

/**
 * The pending sleeps of one clock, earliest deadline first (a binary heap), behind one timer.
 *
 * Why not a timer per sleep: a Node timer weighs about 200 bytes, a quarter of what a run waiting out its backoff
 * holds, and a service in an outage holds one per request in flight. Here a sleep is one small object; the one
 * timer is armed for the earliest deadline, and whatever is due when it fires is woken, in deadline order (then
 * in the order the sleeps began).
 */
class Sleepers {
  private readonly heap: Array<Sleeper> = []
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  /** The deadline the timer is armed for; Infinity when none is. */
  private armedFor = Infinity
  private seq = 0

  constructor(private readonly unref: boolean) {}

  add(deadline: number, resolve: () => void): Sleeper {
    const sleeper = new Sleeper(deadline, this.seq++, resolve)
    sleeper.index = this.heap.length
    this.heap.push(sleeper)
    this.up(sleeper.index)
    if (deadline < this.armedFor) this.arm()
    return sleeper
  }

  /** Ends a sleep before its deadline (an abort); nothing if it has ended. */
  cancel(sleeper: Sleeper): void {
    if (sleeper.index < 0) return
    this.remove(sleeper.index)
    // The last one gone: nothing is left to keep the process alive. Otherwise an early timer only re-arms.
    if (this.heap.length === 0) this.disarm()
    sleeper.unsubscribe?.()
    sleeper.resolve()
  }

  /** The timer's callback: wakes what is due, re-arms for the rest. */
  private readonly fire = (): void => {
    this.timer = undefined
    this.armedFor = Infinity
    const { heap } = this
    const t = now()
    // A timer may fire a fraction of a millisecond early: what is not due by now() waits for the next one.
    while (heap.length > 0 && heap[0].deadline <= t) {
      const sleeper = heap[0]
      this.remove(0)
      sleeper.unsubscribe?.()
      sleeper.resolve()
    }
    if (heap.length > 0) this.arm()
  }

  /** Arms the timer for the earliest deadline, in pieces of at most `MAX_TIMER`. */
  private arm(): void {
    this.disarm()
    const deadline = this.heap[0].deadline
    const wait = Math.min(Math.max(1, Math.ceil(deadline - now())), MAX_TIMER)
    this.armedFor = wait === MAX_TIMER ? now() + MAX_TIMER : deadline
    const timer = setTimeout(this.fire, wait)
    // Node's timers have unref; a browser's are numbers, which cannot keep anything alive anyway.
    if (this.unref && typeof timer === 'object' && typeof timer.unref === 'function') timer.unref()
    this.timer = timer
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.armedFor = Infinity
  }

  private remove(i: number): void {
    const { heap } = this
    const removed = heap[i]
    removed.index = -1
    const last = heap.pop() as Sleeper
    if (i === heap.length) return
    heap[i] = last
    last.index = i
    this.down(i)
    this.up(last.index)
  }

  private up(i: number): void {
    const { heap } = this
    const sleeper = heap[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(sleeper, heap[parent])) break
      heap[i] = heap[parent]
      heap[i].index = i
      i = parent
    }
    heap[i] = sleeper
    sleeper.index = i
  }

  private down(i: number): void {
    const { heap } = this
    const sleeper = heap[i]
    const n = heap.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const child = left + 1 < n && before(heap[left + 1], heap[left]) ? left + 1 : left
      if (!before(heap[child], sleeper)) break
      heap[i] = heap[child]
      heap[i].index = i
      i = child
    }
    heap[i] = sleeper
    sleeper.index = i
  }
}

const makeSleep =
  (sleepers: Sleepers) =>
  (ms: number, signal?: AbortSignal): Promise<void> => {
    validate.duration('Clock.sleep', 'ms', ms)
    if (ms === 0 || signal?.aborted) return Promise.resolve()
    const deadline = now() + ms
    return new Promise<void>((resolve) => {
      const sleeper = sleepers.add(deadline, resolve)
      // One listener per signal, however many sleeps share it (see internal/abort).
      if (signal !== undefined) sleeper.unsubscribe = onAbort(signal, () => sleepers.cancel(sleeper))
    })
  }

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
export const live: Clock = { now, sleep: makeSleep(new Sleepers(false)) }

const unrefd: Clock = { now, sleep: makeSleep(new Sleepers(true)) }

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
 * @since 0.2.0
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
