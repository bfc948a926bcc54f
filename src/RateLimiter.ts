/**
 * Rate limiters: at most `burst` calls at once, and `rate` calls every `per` ms on average after that
 * ({@link gcra}); or at most `limit` calls in each window of `window` ms ({@link fixedWindow}, {@link slidingWindow}).
 *
 * {@link gcra}, {@link fixedWindow} and {@link slidingWindow} are limiters local to the process. {@link throttle} makes an action wait for its turn, on
 * the clock, first come first served; {@link throttleSignalled} lets a waiting call be aborted. {@link asGuard}
 * limits the retries of the runners instead: a retry beyond the rate is refused and the run ends, reason
 * `'rateLimit'`.
 *
 * The {@link RateLimiter} interface answers by value or by promise, so that a limiter a fleet shares (the same
 * bucket in one Redis script, on the server's time) plugs into the same combinators and guard.
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 2, clock })
 *   const started: Array<number> = []
 *   const call: TaskEither<never, number> = () => (started.push(clock.now()), Promise.resolve({ _tag: 'Right', right: 1 }))
 *   const calls = Array.from({ length: 4 }, () => pipe(call, RateLimiter.throttle(limiter, { clock }))())
 *   await clock.runAll()
 *   await Promise.all(calls)
 *   assert.deepStrictEqual(started, [0, 0, 100, 200]) // a burst of 2, then one every 100 ms
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Signalled } from './Timeout'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import type { Guard } from './Guard'
import { observe } from './internal/observe'
import { isPromise } from './internal/promise'
import { showValue } from './internal/show'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A token reserved by {@link RateLimiter}'s `reserve`: use it after `wait` ms, or give it back with `cancel`.
 *
 * **Details**
 *
 * - `wait`: ms from the reservation until the token is due (`0`: now). Not rounded: with `per / rate` not a whole
 *   number of ms, waits are fractional (a rounded wait would bunch two tokens closer than `per / rate`).
 * - `cancel()`: the token will not be used (its caller gave up). It is given back only if nothing was reserved or
 *   taken after it, else it is lost: the limiter never lets more through for a cancel, and the reservations after
 *   it keep their times. Calling it again does nothing.
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const limiter = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock: TestClock.make() })
 * assert.strictEqual((limiter.reserve() as RateLimiter.Reservation).wait, 0)
 * const next = limiter.reserve() as RateLimiter.Reservation
 * assert.strictEqual(next.wait, 1_000)
 * next.cancel() // the last one: given back
 * assert.strictEqual((limiter.reserve() as RateLimiter.Reservation).wait, 1_000)
 *
 * @category model
 * @since 1.0.0
 */
export interface Reservation {
  readonly wait: number
  readonly cancel: () => void | Promise<void>
}

/**
 * A rate limiter, read on its own time (the clock it was given; a shared limiter's server).
 *
 * **Details**
 *
 * - `take()`: takes a token if one is there now: `true`, else `false` and nothing changes. A token is there only
 *   when no reservation is waiting for it: a waiting reservation is never overtaken.
 * - `reserve()`: reserves the next token, in turn: a {@link Reservation} saying how long to wait for it. Reserving
 *   always succeeds; the waits of successive reservations grow, first come first served.
 * - Either may answer with a promise: a limiter in Redis implements the same bucket in a script, with the server's
 *   `TIME`, and answers by promise; {@link throttle} and {@link asGuard} await only promises.
 * - Whatever the calls, the tokens granted (taken, or reserved and not cancelled, at the time they are due) stay
 *   within the bound of the limiter's algorithm: in any window of `w` ms, at most `burst + rate * w / per` for
 *   {@link gcra}; at most `limit` in each window of {@link fixedWindow} (so up to `2 * limit` in `window` ms across a
 *   boundary); at most `limit` in any window of `window` ms for {@link slidingWindow}. And they are granted in the
 *   order they were asked for: a token's time is never before the time of one taken or reserved before it.
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const limiter: RateLimiter.RateLimiter = RateLimiter.gcra({ rate: 10, per: 1_000, burst: 1, clock: TestClock.make() })
 * assert.strictEqual(limiter.take(), true)
 * assert.strictEqual(limiter.take(), false)
 *
 * @category model
 * @since 1.0.0
 */
export interface RateLimiter {
  readonly take: () => boolean | Promise<boolean>
  readonly reserve: () => Reservation | Promise<Reservation>
}

/**
 * Options of {@link gcra}.
 *
 * **Details**
 *
 * - `rate` tokens every `per` ms: both finite numbers > 0 (`rate: 5, per: 1_000` is 5 a second; `rate: 1,
 *   per: 200` is the same pace).
 * - `burst`: the tokens the bucket holds (a whole number >= 1), all there at the start: that many calls may go at
 *   once after a quiet spell.
 * - `clock` (default `Clock.live`): the limiter's time. Give the throttle the same clock.
 * - `onEvent`: told `RateLimitWaited` when a reservation must wait (its `wait`, ms) and `RateLimitRefused` when
 *   `take` finds no token.
 * - `from`: a limiter of {@link gcra} that this one replaces (its rate changed, as `Policies.reload` does): the new
 *   bucket starts with the tokens `from` has now, at most its own `burst` (Go's `rate.Limiter.SetLimit` keeps them
 *   likewise), and behind the reservations `from` made that are still waiting. Give both the same clock. Any other
 *   value is a `TypeError`.
 *
 * @example
 * import type { GcraOptions } from 'fp-ts-retry/RateLimiter'
 *
 * const options: GcraOptions = { rate: 100, per: 60_000, burst: 10 } // 100 a minute, 10 at once
 *
 * @category model
 * @since 1.0.0
 */
export interface GcraOptions {
  readonly rate: number
  readonly per: number
  readonly burst: number
  readonly clock?: Clock | undefined
  readonly onEvent?: Observer | undefined
  readonly from?: RateLimiter | undefined
}

/**
 * Options of {@link fixedWindow} and {@link slidingWindow}: at most `limit` calls in a window of `window` ms.
 *
 * **Details**
 *
 * - `limit`: a whole number >= 1; `window`: a finite number of ms > 0 (`limit: 100, window: 60_000` is 100 a
 *   minute).
 * - `clock` (default `Clock.live`): the limiter's time. Give the throttle the same clock.
 * - `onEvent`: told `RateLimitWaited` when a reservation must wait (its `wait`, ms) and `RateLimitRefused` when
 *   `take` finds no token, as {@link gcra} tells them.
 * - `from`: a limiter of the same kind that this one replaces (its bounds changed, as `Policies.reload` does), so
 *   that a reload lets no new burst through. The new limiter counts as taken the grants `from` made that fall in
 *   its own window, and the reservations `from` made that still wait, which stay ahead of its own:
 *   {@link fixedWindow} counts the grants of `from`'s current window and the reserved ones, put in its own windows
 *   in order from the current one, `limit` to a window (with another `window` size, the count is re-aligned on the
 *   new windows: a count of the old current window is counted in the new current one, whatever their edges);
 *   {@link slidingWindow} keeps the times of `from`'s grants still inside its new `window` (and those reserved),
 *   at most the `limit` newest. A reservation of `from` cancelled later gives nothing back to the new one. Give
 *   both the same clock. Any other value (a limiter of another kind, or not made here) is a `TypeError` naming it.
 *
 * @example
 * import type { WindowOptions } from 'fp-ts-retry/RateLimiter'
 *
 * const options: WindowOptions = { limit: 100, window: 60_000 } // 100 a minute
 *
 * @category model
 * @since 1.0.0
 */
export interface WindowOptions {
  readonly limit: number
  readonly window: number
  readonly clock?: Clock | undefined
  readonly onEvent?: Observer | undefined
  readonly from?: RateLimiter | undefined
}

/**
 * Options of {@link throttle} and {@link throttleSignalled}: `clock` (default `Clock.live`), the clock a call waits
 * for its token on: the run's, and the limiter's.
 *
 * @example
 * import type { ThrottleOptions } from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 *
 * const options: ThrottleOptions = { clock: TestClock.make() }
 *
 * @category model
 * @since 1.0.0
 */
export interface ThrottleOptions {
  readonly clock?: Clock | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A token bucket local to the process: `burst` tokens, refilled at `rate` tokens every `per` ms.
 *
 * **Details**
 *
 * - Kept as the GCRA (the ATM Forum's generic cell rate algorithm, "virtual scheduling" form), the token bucket in
 *   one number: the theoretical arrival time `tat` of the next token. A call at `t` may go when
 *   `max(tat, t) + T - burst * T <= t`, with `T = per / rate`; going sets `tat = max(tat, t) + T`. A reservation
 *   sets it likewise and waits until then, and a cancel rolls it back only when it is the last change
 *   (`golang.org/x/time/rate`'s `Reserve` and `Cancel`).
 * - Time is counted in units of `1 / rate` ms from the bucket's creation, so that `T` is `per` exactly and whole
 *   numbers stay exact: with whole `rate`, `per` and clock times, every wait is exact.
 * - `rate`, `per` and `burst` are checked (`RangeError` naming the one that is wrong); `clock` must be a `Clock`
 *   (`TypeError`).
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limiter = RateLimiter.gcra({ rate: 2, per: 1_000, burst: 2, clock })
 *   assert.deepStrictEqual([limiter.take(), limiter.take(), limiter.take()], [true, true, false])
 *   await clock.advance(500) // one token back every 500 ms
 *   assert.deepStrictEqual([limiter.take(), limiter.take()], [true, false])
 *   assert.throws(() => RateLimiter.gcra({ rate: 0, per: 1_000, burst: 1 }), /rate must be a finite number > 0/)
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const gcra = (options: GcraOptions): RateLimiter => {
  const where = 'RateLimiter.gcra'
  validate.object(where, 'options', options)
  const positive = (name: string, value: number): number => validate.positive(where, name, value)
  const rate = positive('rate', options.rate)
  const per = positive('per', options.per)
  const burst = validate.positiveCount(where, 'burst', options.burst)
  validate.services(where, 'options', { clock: options.clock })
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  const clock = options.clock ?? LiveClock.live
  const origin = clock.now()
  // In ticks of 1 / rate ms since `origin`: a token every `per` ticks, `burst * per` of tolerance.
  const tolerance = burst * per
  let tat = 0
  if (options.from !== undefined) {
    const tokensOf = carried.get(options.from)
    if (tokensOf === undefined) {
      throw new TypeError(`${where}: from must be a limiter made by RateLimiter.gcra, received ${showValue(options.from)}`)
    }
    // the tokens there now, as `burst - (tat - now) / T`: so many, or fewer when the new bucket is smaller
    tat = (burst - Math.min(burst, tokensOf())) * per
  }
  const ticks = (): number => (clock.now() - origin) * rate
  const limiter = observed(options.onEvent, clock.now, {
    take: () => {
      const t = ticks()
      const next = Math.max(tat, t) + per
      if (next - tolerance > t) return false
      tat = next
      return true
    },
    reserve: () => {
      const t = ticks()
      const next = Math.max(tat, t) + per
      tat = next
      const due = next - tolerance
      return {
        wait: due > t ? (due - t) / rate : 0,
        // Only the last change can be undone: the reservations after this one keep their times.
        cancel: undoOnce(() => {
          if (tat === next) tat = next - per
        })
      }
    }
  })
  carried.set(limiter, () => {
    const t = ticks()
    return burst - (Math.max(tat, t) - t) / per
  })
  return limiter
}

/** The tokens each limiter of {@link gcra} has now (fewer than 0: reservations wait), for a limiter that replaces it. */
const carried = new WeakMap<RateLimiter, () => number>()

/**
 * A fixed-window counter local to the process: at most `limit` tokens in each window of `window` ms, the windows
 * following one another on the clock (`[0, window)`, `[window, 2 * window)`, ...).
 *
 * **Details**
 *
 * - The simplest limit, and the one most APIs state ("100 requests a minute", reset on the minute): the windows
 *   are aligned on multiples of `window` ms of the clock's time (on `Clock.live`, since the epoch).
 * - **Up to `2 * limit` in `window` ms across a boundary**: `limit` at the end of one window and `limit` at the
 *   start of the next are both allowed, however close together. In any `w` ms the tokens granted never exceed
 *   `limit * (floor(w / window) + 2)`. Use {@link slidingWindow} for an exact limit, {@link gcra} for a smooth
 *   pace.
 * - `take()` takes a token if the current window has one left and no reservation waits; `reserve()` gives the
 *   next token in turn: in the current window if it has one left, else at the start of the first window with room
 *   (the wait is then the time to that window's start).
 * - `cancel()` gives the token back only if nothing was taken or reserved after it (as {@link gcra}'s); then
 *   the reservation before it may be cancelled too. A token given back in a window that has passed changes
 *   nothing.
 * - State: two numbers and a counter, whatever the `limit`. `limit` and `window` are checked (`RangeError` naming
 *   the one that is wrong); `clock` must be a `Clock` (`TypeError`).
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limiter = RateLimiter.fixedWindow({ limit: 2, window: 1_000, clock })
 *   await clock.advance(999) // the end of the first window
 *   assert.deepStrictEqual([limiter.take(), limiter.take(), limiter.take()], [true, true, false])
 *   await clock.advance(1) // a new window: 4 tokens in 1 ms, twice the limit
 *   assert.deepStrictEqual([limiter.take(), limiter.take(), limiter.take()], [true, true, false])
 *   assert.strictEqual((limiter.reserve() as RateLimiter.Reservation).wait, 1_000) // the next window's first
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const fixedWindow = (options: WindowOptions): RateLimiter => {
  const where = 'RateLimiter.fixedWindow'
  const { limit, window, clock } = windowOptions(where, options)
  // the last window a token went to, the tokens in it, and the changes made (a cancel undoes only the last)
  let last = -Infinity
  let count = 0
  let changes = 0
  const taken = carriedFrom(fixedTaken, where, options.from)
  if (taken !== undefined) {
    // the old current window's grants and the reservations after them, `limit` to a window from the current one
    const n = taken(clock.now())
    if (n > 0) {
      const full = Math.floor((n - 1) / limit)
      last = Math.floor(clock.now() / window) + full
      count = n - full * limit
    }
  }
  /** The window of the next token at `t`: `last` moved on when it is past or full. */
  const next = (t: number): number => {
    const current = Math.floor(t / window)
    if (last < current) return current
    return count < limit ? last : last + 1
  }
  const grant = (into: number): void => {
    count = into === last ? count + 1 : 1
    last = into
    changes++
  }
  const limiter = observed(options.onEvent, clock.now, {
    take: () => {
      const t = clock.now()
      const into = next(t)
      if (into > Math.floor(t / window)) return false
      grant(into)
      return true
    },
    reserve: () => {
      const t = clock.now()
      const into = next(t)
      grant(into)
      const mine = changes
      return {
        wait: Math.max(0, into * window - t),
        cancel: undoOnce(() => {
          if (changes !== mine) return
          changes--
          count--
          // the first token of its window: the one before it (the last change before) was in a window before
          if (count === 0) [last, count] = [into - 1, limit]
        })
      }
    }
  })
  fixedTaken.set(limiter, (t) => {
    // the windows from the current one to `last` are full but the last (a reservation goes on only to a full one's next)
    const current = Math.floor(t / window)
    return last < current ? 0 : (last - current) * limit + count
  })
  return limiter
}

/** The tokens each limiter of {@link fixedWindow} has granted in the window of `t` and reserved after it. */
const fixedTaken = new WeakMap<RateLimiter, (t: number) => number>()

/** The times of the grants each limiter of {@link slidingWindow} has logged, oldest first (the reserved ones too). */
const slidingTimes = new WeakMap<RateLimiter, () => ReadonlyArray<number>>()

/** What `from` hands over, read through `kind`: a `TypeError` naming it when it is not a limiter of that kind. */
function carriedFrom<A>(kind: WeakMap<RateLimiter, A>, where: string, from: RateLimiter | undefined): A | undefined {
  if (from === undefined) return undefined
  const carried = kind.get(from)
  if (carried === undefined) {
    throw new TypeError(`${where}: from must be a limiter made by ${where}, received ${showValue(from)}`)
  }
  return carried
}

/**
 * A sliding-window log local to the process: at most `limit` tokens in any window of `window` ms, wherever it
 * starts. Exact: no burst across a boundary.
 *
 * **Details**
 *
 * - Kept as the times of the last `limit` tokens (a ring, at most `limit` numbers: memory O(limit)). A token at
 *   `t` may go when fewer than `limit` tokens were granted in `(t - window, t]`, that is when the `limit`-th last
 *   was granted at `t - window` or before: any two tokens `limit` apart are at least `window` ms apart.
 * - `take()` takes a token if one is there now and no reservation waits; `reserve()` gives the next token in
 *   turn, due when the `limit`-th last leaves the window.
 * - `cancel()` gives the token back only if nothing was taken or reserved after it (as {@link gcra}'s): its time
 *   leaves the log and the time it pushed out comes back. Then the reservation before it may be cancelled too.
 * - `limit` and `window` are checked (`RangeError` naming the one that is wrong); `clock` must be a `Clock`
 *   (`TypeError`).
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limiter = RateLimiter.slidingWindow({ limit: 2, window: 1_000, clock })
 *   assert.strictEqual(limiter.take(), true) // at 0
 *   await clock.advance(600)
 *   assert.deepStrictEqual([limiter.take(), limiter.take()], [true, false]) // 2 in (-400, 600]
 *   await clock.advance(400) // the token of 0 has left the window
 *   assert.deepStrictEqual([limiter.take(), limiter.take()], [true, false])
 *   assert.strictEqual((limiter.reserve() as RateLimiter.Reservation).wait, 600) // when the one of 600 leaves
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const slidingWindow = (options: WindowOptions): RateLimiter => {
  const where = 'RateLimiter.slidingWindow'
  const { limit, window, clock } = windowOptions(where, options)
  // the times of the last `limit` tokens, a ring whose oldest is at `oldest`; and the changes made
  const times: Array<number> = []
  let oldest = 0
  let changes = 0
  const logged = carriedFrom(slidingTimes, where, options.from)
  if (logged !== undefined) {
    // the grants still inside the new window (a time out of it never holds a token back again), the newest
    const now = clock.now()
    times.push(...logged().filter((at) => at > now - window).slice(-limit))
  }
  /**
   * When the next token may go, at `t` or later: once the `limit`-th last has left the window. Never before the
   * last token either: each was due at its call or when the one `limit` before it left, which is no later.
   */
  const due = (t: number): number => (times.length < limit ? t : Math.max(t, times[oldest] + window))
  /** Logs a token at `at`; answers the time it pushed out of the log, if any. */
  const grant = (at: number): number | undefined => {
    changes++
    if (times.length < limit) {
      times.push(at)
      return undefined
    }
    const out = times[oldest]
    times[oldest] = at
    oldest = (oldest + 1) % limit
    return out
  }
  const limiter = observed(options.onEvent, clock.now, {
    take: () => {
      const t = clock.now()
      if (due(t) > t) return false
      grant(t)
      return true
    },
    reserve: () => {
      const t = clock.now()
      const at = due(t)
      const out = grant(at)
      const mine = changes
      return {
        wait: at - t,
        cancel: undoOnce(() => {
          if (changes !== mine) return
          changes--
          if (out === undefined) times.pop()
          else {
            oldest = (oldest + limit - 1) % limit
            times[oldest] = out
          }
        })
      }
    }
  })
  slidingTimes.set(limiter, () => [...times.slice(oldest), ...times.slice(0, oldest)])
  return limiter
}

/**
 * A rate limiter as a `Guard` of the runners (reason `'rateLimit'`): each retry takes a token, and a retry that
 * finds none is refused, so the run ends at once with that reason. First attempts take nothing: it limits the
 * retries, across every run that shares it (as Envoy's and Finagle's retry budgets do by rate).
 *
 * **Details**
 *
 * - `allows` (asked for an attempt no failure prompted: a hedge) takes a token too.
 * - Give it a limiter of its own. A limiter that already throttles the action paces the retries with it: made the
 *   guard too, it would charge each retry twice.
 * - A limiter that answers by promise is awaited (see `Guard.Guard`).
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
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
 *   const retries = RateLimiter.gcra({ rate: 1, per: 60_000, burst: 2, clock }) // 2 retries, then 1 a minute
 *   const reasons: Array<StopReason> = []
 *   const run = pipe(
 *     TE.left('503'),
 *     retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(5))), {
 *       clock,
 *       guards: [RateLimiter.asGuard(retries)],
 *       onDone: ({ reason }) => void reasons.push(reason)
 *     })
 *   )()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Left', left: '503' })
 *   assert.deepStrictEqual(clock.sleeps, [100, 100]) // the third retry found no token
 *   assert.deepStrictEqual(reasons, ['rateLimit'])
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const asGuard = (limiter: RateLimiter): Guard => {
  checked('RateLimiter.asGuard', limiter)
  return {
    reason: 'rateLimit',
    readsTime: false,
    admit: (o) => !o.retrying || limiter.take(),
    allows: () => limiter.take()
  }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Runs an action once the limiter has a token for it: at once when one is there, else after waiting for its
 * turn on `options.clock`. Calls are served in the order they came, and never before their token is due.
 *
 * **Details**
 *
 * - Each call reserves its token when it is run (see {@link RateLimiter}'s `reserve`) and sleeps the wait, a
 *   sleep of kind `'throttle'`: a `TestClock` lists them in `sleepsOf('throttle')`.
 * - A waiting call cannot be cancelled: use {@link throttleSignalled} for calls that may be aborted.
 * - Inside `retrying`, each attempt waits for its own token (retries pay like any call).
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limiter = RateLimiter.gcra({ rate: 5, per: 1_000, burst: 1, clock })
 *   const call = pipe(TE.right('ok'), RateLimiter.throttle(limiter, { clock }))
 *   const calls = [call(), call(), call()]
 *   await clock.runAll()
 *   assert.deepStrictEqual(await Promise.all(calls), Array(3).fill({ _tag: 'Right', right: 'ok' }))
 *   assert.deepStrictEqual(clock.sleepsOf('throttle'), [200, 400]) // one every 200 ms
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const throttle = (
  limiter: RateLimiter,
  options: ThrottleOptions = {}
): (<E, A>(action: TaskEither<E, A>) => TaskEither<E, A>) => {
  const clock = checkThrottle('RateLimiter.throttle', limiter, options)
  return (action) => async () => {
    const reserved = limiter.reserve()
    const { wait } = isPromise(reserved) ? await reserved : reserved
    if (wait > 0) await clock.sleep(wait, undefined, 'throttle')
    return action()
  }
}

/**
 * Like {@link throttle}, for an action that takes an `AbortSignal`: the caller's signal, passed on. A call waiting
 * for its token whose signal aborts leaves at once, `Left(onAborted(signal.reason))`, cancelling its reservation;
 * the calls behind it keep their turns.
 *
 * **Details**
 *
 * - The action is handed `{ signal }` (`Timeout.Signalled`, the one form of a signal-aware action), and the result
 *   takes the caller's (optional): `pipe(action, throttleSignalled(...))({ signal })` is a
 *   `TaskEither`. Without one, the action gets a signal that never aborts.
 * - A signal that has aborted already: `Left(onAborted(reason))`, reserving nothing and running nothing.
 *
 * @example
 * import * as RateLimiter from 'fp-ts-retry/RateLimiter'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import type { Signalled } from 'fp-ts-retry/Timeout'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const limiter = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock })
 *   const call = pipe((_: Signalled) => TE.right(clock.now()), RateLimiter.throttleSignalled(limiter, (reason) => `aborted: ${reason}`, { clock }))
 *   assert.deepStrictEqual(await call()(), { _tag: 'Right', right: 0 })
 *   const controller = new AbortController()
 *   const waiting = call({ signal: controller.signal })() // due at 1000
 *   await clock.advance(10)
 *   controller.abort('gave up')
 *   assert.deepStrictEqual(await waiting, { _tag: 'Left', left: 'aborted: gave up' })
 *   assert.strictEqual(clock.now(), 10) // left at once
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const throttleSignalled = <E2>(
  limiter: RateLimiter,
  onAborted: (reason: unknown) => E2,
  options: ThrottleOptions = {}
): (<E1, A>(
  action: (context: Signalled) => TaskEither<E1, A>
) => (context?: Partial<Signalled>) => TaskEither<E1 | E2, A>) => {
  const where = 'RateLimiter.throttleSignalled'
  const clock = checkThrottle(where, limiter, options)
  validate.callable(where, 'onAborted', onAborted)
  return (action) => (context) => {
    const signal = context?.signal
    if (signal !== undefined)
      validate.implementing(where, 'signal', 'an AbortSignal', ['addEventListener', 'removeEventListener'], signal)
    return async () => {
      if (signal?.aborted) return { _tag: 'Left', left: onAborted(signal.reason) }
      const reserved = limiter.reserve()
      const reservation = isPromise(reserved) ? await reserved : reserved
      if (reservation.wait > 0) await clock.sleep(reservation.wait, signal, 'throttle')
      if (signal?.aborted) {
        const cancelled = reservation.cancel()
        if (isPromise(cancelled)) await cancelled
        return { _tag: 'Left', left: onAborted(signal.reason) }
      }
      return action({ signal: signal ?? new AbortController().signal })()
    }
  }
}

// -------------------------------------------------------------------------------------
// internal
// -------------------------------------------------------------------------------------

/**
 * `limiter`, telling `onEvent` of each wait and refusal it answers, timed by `now`: one way for every limiter,
 * local or shared, whether it answers by value or by promise.
 *
 * @internal
 */
export const observed = (onEvent: Observer | undefined, now: () => number, limiter: RateLimiter): RateLimiter => {
  if (onEvent === undefined) return limiter
  const taken = (ok: boolean): boolean => {
    if (!ok) observe(onEvent, { _tag: 'RateLimitRefused', source: 'rateLimit', run: 0, at: now() })
    return ok
  }
  const reserved = (reservation: Reservation): Reservation => {
    const { wait } = reservation
    if (wait > 0) observe(onEvent, { _tag: 'RateLimitWaited', source: 'rateLimit', run: 0, at: now(), wait })
    return reservation
  }
  return {
    take: () => {
      const ok = limiter.take()
      return isPromise(ok) ? ok.then(taken) : taken(ok)
    },
    reserve: () => {
      const reservation = limiter.reserve()
      return isPromise(reservation) ? reservation.then(reserved) : reserved(reservation)
    }
  }
}

function checked(where: string, limiter: RateLimiter): RateLimiter {
  return validate.implementing(where, 'limiter', 'a RateLimiter', ['take', 'reserve'], limiter)
}

function checkThrottle(where: string, limiter: RateLimiter, options: ThrottleOptions): Clock {
  checked(where, limiter)
  validate.object(where, 'options', options)
  validate.services(where, 'options', { clock: options.clock })
  return options.clock ?? LiveClock.live
}

/** The options of a window limiter, checked, with the clock to read. */
function windowOptions(
  where: string,
  options: WindowOptions
): { readonly limit: number; readonly window: number; readonly clock: Clock } {
  validate.object(where, 'options', options)
  const limit = validate.positiveCount(where, 'limit', options.limit)
  const window = validate.positive(where, 'window', options.window)
  validate.services(where, 'options', { clock: options.clock })
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  return { limit, window, clock: options.clock ?? LiveClock.live }
}

/** `undo`, run at the first call only: a reservation's `cancel`, which does nothing when called again. */
function undoOnce(undo: () => void): () => void {
  let done = false
  return () => {
    if (done) return
    done = true
    undo()
  }
}
