/**
 * A timeout on the clock, as a combinator of its own: an action that has not settled after `ms` gives way to a
 * typed `Left`, and an action that can see an `AbortSignal` is told to stop.
 *
 * Put the timeout inside the retry, so that each attempt has its own: a timeout outside `retrying` cuts the whole
 * run, retries and all (cockatiel#115). See docs/resilience-order.md for which wraps which.
 *
 * @example
 * import * as Timeout from 'fp-ts-retry/Timeout'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const hangs: TaskEither<string, number> = () => new Promise(() => undefined)
 *   const call = pipe(hangs, Timeout.timeout(1_000, (ms) => `timed out after ${ms} ms`, { clock }))()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await call, { _tag: 'Left', left: 'timed out after 1000 ms' })
 *   assert.strictEqual(clock.now(), 1_000)
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import { noop, onAbort } from './internal/abort'
import { observe } from './internal/observe'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Options of {@link timeout} and {@link timeoutSignalled}: `clock` (default `Clock.live`), the clock the timeout
 * sleeps on. Give it the run's clock, so that a `TestClock` drives the timeout too. `onEvent` is told `TimedOut`
 * (`source: 'timeout'`, the `timeout` in ms) each time an action is given up on.
 *
 * @example
 * import type { TimeoutOptions } from 'fp-ts-retry/Timeout'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 *
 * const lines: Array<string> = []
 * const options: TimeoutOptions = { clock: TestClock.make(), onEvent: (event) => void lines.push(JSON.stringify(event)) }
 *
 * @category model
 * @since 1.0.0
 */
export interface TimeoutOptions {
  readonly clock?: Clock | undefined
  readonly onEvent?: Observer | undefined
}

/**
 * What a signal-aware action is handed: a record with its `signal` (the one form in this library: the runner's
 * `AttemptContext` and hedging's `HedgeContext` are such records, with more fields).
 *
 * @example
 * import type { Signalled } from 'fp-ts-retry/Timeout'
 *
 * const aborted = ({ signal }: Signalled): boolean => signal.aborted
 *
 * @category model
 * @since 1.0.0
 */
export interface Signalled {
  readonly signal: AbortSignal
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

const TIMED_OUT: unique symbol = Symbol('timed out')

interface Checked {
  readonly clock: Clock
  readonly onEvent: Observer | undefined
}

const check = (where: string, ms: number, onTimeout: unknown, options: TimeoutOptions): Checked => {
  validate.duration(where, 'ms', ms)
  validate.callable(where, 'onTimeout', onTimeout)
  validate.object(where, 'options', options)
  validate.services(where, 'options', { clock: options.clock })
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  return { clock: options.clock ?? LiveClock.live, onEvent: options.onEvent }
}

/**
 * Runs `action` with a signal of its own that aborts with `outer`'s reason, or at the timeout with a
 * `TimeoutError` DOMException; at the timeout the answer is `onTimeout(ms)`, whatever the action does later.
 */
const race = async <E1, E2, A>(
  ms: number,
  onTimeout: (ms: number) => E2,
  { clock, onEvent }: Checked,
  outer: AbortSignal | undefined,
  action: (context: Signalled) => TaskEither<E1, A>
): Promise<Either<E1 | E2, A>> => {
  const controller = new AbortController()
  let unlink = noop
  if (outer?.aborted) controller.abort(outer.reason)
  else if (outer !== undefined) unlink = onAbort(outer, () => controller.abort(outer.reason))
  // The timer ends only when the action settles, not when `outer` aborts: an action that cannot see its signal
  // still gives way at the timeout.
  const timer = new AbortController()
  try {
    const running = action({ signal: controller.signal })()
    // 0 ms is no time at all, not a sleep of 0: `Promise.race` settles as the first of its arguments already settled
    // says, in their order, so the action wins only if its promise had settled when it returned it.
    const expiry: Promise<typeof TIMED_OUT> =
      ms === 0 ? Promise.resolve(TIMED_OUT) : clock.sleep(ms, timer.signal, 'timeout').then(() => TIMED_OUT)
    const first = await Promise.race([running, expiry])
    if (first !== TIMED_OUT) return first
    controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError'))
    // Abandoned: what it answers or throws from now on is nobody's, and must not be an unhandled rejection.
    running.then(noop, noop)
    observe(onEvent, { _tag: 'TimedOut', source: 'timeout', run: 0, at: clock.now(), timeout: ms })
    return { _tag: 'Left', left: onTimeout(ms) }
  } finally {
    unlink()
    timer.abort()
  }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Gives an action `ms` milliseconds of `options.clock`: if it has not settled by then, the answer is
 * `Left(onTimeout(ms))`, and the action is abandoned.
 *
 * **Details**
 *
 * - Never early: the timeout is a `clock.sleep(ms)` of kind `'timeout'`, which never wakes before `ms` have passed. An action that
 *   settles first wins, and the timer is cleared at once (nothing left to keep the process alive).
 * - `0` gives the action no time at all, not even a microtask: its answer is taken only if the promise it returns
 *   has already settled when it returns it (`TE.right(a)`, an `async` function that returns before any `await`),
 *   else it times out at once, however soon it would have settled (a promise resolved to another promise has not
 *   settled yet). No sleep is asked of the clock.
 * - An abandoned action cannot be told to stop (use {@link timeoutSignalled} for one that can): its later
 *   result is ignored, its later rejection too. An action that rejects before the timeout rejects the task.
 * - `ms` must be a finite number >= 0 (`RangeError` naming it, for `NaN`, a negative or an infinite number);
 *   `onTimeout` a function (`TypeError`).
 * - `options.onEvent` is told `TimedOut` when the action is given up on; nothing when it settles in time.
 *
 * @example
 * import * as Timeout from 'fp-ts-retry/Timeout'
 * import type { Event } from 'fp-ts-retry/Event'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const events: Array<Event> = []
 *   const slow: TaskEither<string, string> = () => clock.sleep(300).then(() => ({ _tag: 'Right', right: 'ok' }))
 *   const within = Timeout.timeout(500, () => 'timeout', { clock, onEvent: (e) => void events.push(e) })
 *   const call = pipe(slow, within)()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await call, { _tag: 'Right', right: 'ok' })
 *   assert.deepStrictEqual(clock.sleepsOf('timeout'), [500]) // a sleep of kind 'timeout', cleared at 300
 *   const hangs: TaskEither<string, string> = () => new Promise(() => undefined)
 *   const late = pipe(hangs, within)()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await late, { _tag: 'Left', left: 'timeout' })
 *   assert.deepStrictEqual(events, [{ _tag: 'TimedOut', source: 'timeout', run: 0, at: 800, timeout: 500 }])
 *   assert.throws(() => Timeout.timeout(NaN, () => 'timeout'), RangeError)
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const timeout = <E2>(
  ms: number,
  onTimeout: (ms: number) => E2,
  options: TimeoutOptions = {}
): (<E1, A>(action: TaskEither<E1, A>) => TaskEither<E1 | E2, A>) => {
  const checked = check('Timeout.timeout', ms, onTimeout, options)
  return (action) => () => race(ms, onTimeout, checked, undefined, () => action)
}

/**
 * Like {@link timeout}, for an action that can be told to stop: it is given a signal of its own that aborts at the
 * timeout, with a `TimeoutError` `DOMException` as its reason, or when the caller's signal aborts, with that
 * signal's reason.
 *
 * **Details**
 *
 * - The action is handed one record, `{ signal }` (the one form of a signal-aware action in this library: as
 *   `retryingWithContext` hands `{ status, signal }` and hedging `{ signal, index }`), and the result takes the
 *   caller's (optional): `pipe(action, timeoutSignalled(...))({ signal })` is a `TaskEither`. So it fits anywhere
 *   such an action does: `Bulkhead.protectSignalled`, `RateLimiter.throttleSignalled`, or `retryingWithContext`
 *   as it is.
 * - When the caller's signal aborts, the action is told through its signal and its answer is awaited (it decides
 *   what an abort means); the timeout still runs, so an action that ignores its signal still gives way at `ms`.
 *   A caller's signal that has aborted already gives the action an aborted signal.
 * - The action's signal is linked to the caller's only while the action runs: one listener per caller's signal,
 *   however many calls share it, and none left behind. It is not aborted once the action has settled, so a
 *   response it returned can still be read.
 * - `ms` and `onTimeout` are checked as in {@link timeout}; `0` is no time at all, as there: an action whose promise
 *   has not settled when it returns it times out at once, its signal aborted with the `TimeoutError`.
 *
 * @example
 * import * as Timeout from 'fp-ts-retry/Timeout'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const reasons: Array<string> = []
 *   const hangs = ({ signal }: Timeout.Signalled): TaskEither<string, string> => () =>
 *     new Promise((resolve) => signal.addEventListener('abort', () => {
 *       reasons.push((signal.reason as DOMException).name)
 *       resolve({ _tag: 'Left', left: 'aborted' })
 *     }))
 *   const call = pipe(hangs, Timeout.timeoutSignalled(1_000, () => 'timeout', { clock }))()()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await call, { _tag: 'Left', left: 'timeout' })
 *   assert.deepStrictEqual(reasons, ['TimeoutError'])
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const timeoutSignalled = <E2>(
  ms: number,
  onTimeout: (ms: number) => E2,
  options: TimeoutOptions = {}
): (<E1, A>(
  action: (context: Signalled) => TaskEither<E1, A>
) => (context?: Partial<Signalled>) => TaskEither<E1 | E2, A>) => {
  const where = 'Timeout.timeoutSignalled'
  const checked = check(where, ms, onTimeout, options)
  return (action) => (context) => {
    const signal = context?.signal
    if (signal !== undefined)
      validate.implementing(where, 'signal', 'an AbortSignal', ['addEventListener', 'removeEventListener'], signal)
    return () => race(ms, onTimeout, checked, signal, action)
  }
}
