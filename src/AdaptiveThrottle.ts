/**
 * Client-side adaptive throttling (Google's SRE book, "Handling Overload"): a client that counts the requests it
 * made and those the backend accepted drops a share of its new requests itself, before they reach an overloaded
 * backend, with probability `max(0, (requests - k * accepts) / (requests + 1))`.
 *
 * While the backend accepts everything, `requests` stays below `k * accepts` and nothing is dropped: the throttle
 * only acts once more than `1 / k` of the requests are refused (with the default `k = 2`, more than half). Each
 * dropped request still counts as a request, so that a backend that keeps refusing sees less and less traffic
 * from this client, down to what it accepts times `k`; as accepts come back, so does the traffic.
 *
 * {@link make} is a throttle of this process; `RedisAdaptiveThrottle.make` keeps the counts in Redis, so that a fleet
 * shares one drop probability. {@link protect} counts an action's calls and drops them; {@link asGuard} drops
 * retries too (reason `'shed'`): retries amplify an overload.
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const throttle = AdaptiveThrottle.make({ clock, random: Random.seeded(1) })
 *   const overloaded = { status: 503 }
 *   const call = pipe(TE.left(overloaded), AdaptiveThrottle.protect(throttle, () => 'dropped here'))
 *   for (let i = 0; i < 100; i++) await call()
 *   assert.strictEqual(throttle.requests, 100)
 *   assert.strictEqual(throttle.accepts, 0)
 *   assert.ok(throttle.dropProbability() > 0.99) // 100 / 101: almost every request now stays here
 *   await clock.advance(2 * 60_000) // the window (2 minutes) has passed: the counts are gone
 *   assert.strictEqual(throttle.dropProbability(), 0)
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import type { Guard } from './Guard'
import * as aws from './internal/aws'
import { observe } from './internal/observe'
import { isPromise } from './internal/promise'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Random } from './Random'
import * as LiveRandom from './Random'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A client-side adaptive throttle: the counts of a sliding window, and the drop they give.
 *
 * **Details**
 *
 * - `request()` counts a request and draws whether it is dropped: `undefined` when it may go, else a
 *   {@link Throttled} with the probability it was dropped at (the counts before it, as the SRE book's formula says:
 *   `max(0, (requests - k * accepts) / (requests + 1))`). A dropped request counts as a request all the same.
 * - `accept()` counts an accept: a request the backend accepted (it answered, whatever it answered, without
 *   refusing it for overload). Call it once for each request that went and was accepted.
 * - `admits()` draws against the drop probability now and counts nothing: whether a retry may go (see
 *   {@link asGuard}). A `false` is told as a `LoadShed`, as a dropped request is.
 * - `requests`, `accepts`: the counts in the window now; `dropProbability(now)` the probability a request made at
 *   `now` would be dropped at (default: now). A throttle shared through Redis answers them as the fleet's counts
 *   were at its last answer (it reads no clock of its own).
 * - `k`: the multiplier of the accepts (>= 1).
 * - `request` and `accept` may answer by promise (a throttle shared through Redis); {@link protect} awaits only
 *   promises.
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const throttle: AdaptiveThrottle.AdaptiveThrottle = AdaptiveThrottle.make({ clock: TestClock.make(), random: Random.fixed(0.5) })
 * assert.strictEqual(throttle.request(), undefined) // (0 - 0) / 1 = 0: it goes
 * throttle.accept()
 * assert.deepStrictEqual([throttle.requests, throttle.accepts], [1, 1])
 * throttle.request() // refused by the backend: no accept
 * throttle.request()
 * throttle.request()
 * assert.strictEqual(throttle.dropProbability(), (4 - 2 * 1) / 5)
 *
 * @category model
 * @since 1.0.0
 */
export interface AdaptiveThrottle {
  readonly k: number
  readonly requests: number
  readonly accepts: number
  readonly dropProbability: (now?: number) => number
  readonly request: () => Throttled | undefined | Promise<Throttled | undefined>
  readonly accept: () => void | Promise<void>
  readonly admits: () => boolean
}

/**
 * A request the throttle dropped: the probability it was dropped at. What {@link protect} hands its `onShed`, and
 * what {@link asGuard} knows as the throttle's own refusal.
 *
 * @example
 * import type { Throttled } from 'fp-ts-retry/AdaptiveThrottle'
 *
 * const dropped: Throttled = { _tag: 'Throttled', probability: 0.4 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Throttled {
  readonly _tag: 'Throttled'
  readonly probability: number
}

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `k` (default 2, the SRE book's): a finite number >= 1. The throttle drops nothing while `requests <= k *
 *   accepts`; a lower `k` throttles sooner (1: as soon as any request is refused), a higher one later.
 * - `window` (default 120,000 ms: two minutes, the book's) and `buckets` (default 10): how far back the counts go,
 *   kept in `buckets` buckets of `window / buckets` ms each, aligned on the clock's multiples of that width. A
 *   count leaves the window with its whole bucket: a count made at `t` counts at `now` while `floor(t / width) >
 *   floor(now / width) - buckets`. `window` is a finite number > 0, `buckets` a whole number from 1 to 1,000.
 * - `clock` (default `Clock.live`), `random` (default `Random.live`): the throttle's time and draws.
 * - `onEvent`: told `LoadShed` (`source: 'throttle'`, `cause: 'throttled'`) for each request or retry dropped, with
 *   `inFlight` the requests in the window and `limit` `k` times its accepts (the requests it lets through without
 *   dropping), `priority` `'normal'` (the throttle knows no priorities).
 * - `from`: a throttle of {@link make} that this one replaces (its numbers changed, as `Policies.reload` does): the
 *   new one starts with the counts `from` has in its window, each bucket's put in the new bucket its start falls
 *   in (and left out if that is outside the new window), so that a reload does not forget an overload. Give both
 *   the same clock. Any other value is a `TypeError` naming it.
 *
 * @example
 * import type { AdaptiveThrottleOptions } from 'fp-ts-retry/AdaptiveThrottle'
 *
 * // throttle once more than a third of the requests are refused, over the last minute
 * const options: AdaptiveThrottleOptions = { k: 1.5, window: 60_000, buckets: 6 }
 *
 * @category model
 * @since 1.0.0
 */
export interface AdaptiveThrottleOptions {
  readonly k?: number | undefined
  readonly window?: number | undefined
  readonly buckets?: number | undefined
  readonly clock?: Clock | undefined
  readonly random?: Random | undefined
  readonly onEvent?: Observer | undefined
  readonly from?: AdaptiveThrottle | undefined
}

/**
 * Options of {@link protect}: `rejected(error)`, whether a failure is the backend refusing the request for overload
 * (default {@link isOverload}).
 *
 * @example
 * import type { ProtectOptions } from 'fp-ts-retry/AdaptiveThrottle'
 *
 * // every failure counts against the backend (timeouts and 5xx too)
 * const options: ProtectOptions = { rejected: () => true }
 *
 * @category model
 * @since 1.0.0
 */
export interface ProtectOptions {
  readonly rejected?: ((error: unknown) => boolean) | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** The SRE book's defaults: a window of two minutes, `K = 2`. */
const DEFAULT_K = 2
const DEFAULT_WINDOW = 120_000
const DEFAULT_BUCKETS = 10

/** A bucket that leaves the window: its start, and the counts made in it. */
interface Counted {
  readonly start: number
  readonly requests: number
  readonly accepts: number
}

/**
 * The drop probability of the SRE book: `max(0, (requests - k * accepts) / (requests + 1))`.
 *
 * @internal
 */
export const probability = (k: number, requests: number, accepts: number): number =>
  Math.max(0, (requests - k * accepts) / (requests + 1))

/**
 * The options every throttle takes, checked (`where` names the caller): `k`, `window`, `buckets`, with their
 * defaults. A `RangeError` names a bad one.
 *
 * @internal
 */
export const checkWindow = (
  where: string,
  options: Pick<AdaptiveThrottleOptions, 'k' | 'window' | 'buckets'>
): { readonly k: number; readonly window: number; readonly buckets: number } => ({
  k: validate.atLeast(where, 'options.k', 1, validate.orDefault(options.k, DEFAULT_K)),
  window: validate.positive(where, 'options.window', validate.orDefault(options.window, DEFAULT_WINDOW)),
  buckets: validate.sizeAtMost(
    where,
    'options.buckets',
    validate.MAX_BUCKETS,
    validate.orDefault(options.buckets, DEFAULT_BUCKETS)
  )
})

/**
 * A client-side adaptive throttle of this process: the SRE book's, over a window of `window` ms in `buckets`
 * buckets, on `clock`, drawing from `random`.
 *
 * **Details**
 *
 * - See {@link AdaptiveThrottle} for what it counts and {@link AdaptiveThrottleOptions} for the window. A request
 *   costs O(`buckets`); the memory is three numbers a bucket, whatever the traffic.
 * - Bad options: a `RangeError` naming a `k` below 1 or not finite, a `window` not a finite number > 0, a
 *   `buckets` not a whole number from 1 to 1,000; a `TypeError` for a `clock`, `random` or `onEvent` of the wrong
 *   kind, or a `from` not made here.
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const throttle = AdaptiveThrottle.make({ k: 1, window: 1_000, buckets: 2, clock, random: Random.fixed(0.9) })
 *   throttle.request() // at 0, refused by the backend
 *   await clock.advance(500)
 *   throttle.request() // at 500, accepted
 *   throttle.accept()
 *   assert.strictEqual(throttle.dropProbability(), (2 - 1) / 3)
 *   assert.strictEqual(throttle.dropProbability(1_000), 0) // the bucket of 0 has left: (1 - 1) / 2
 *   assert.throws(() => AdaptiveThrottle.make({ k: 0.5 }), /options.k must be a finite number >= 1, received 0.5/)
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: AdaptiveThrottleOptions = {}): AdaptiveThrottle => {
  const where = 'AdaptiveThrottle.make'
  validate.object(where, 'options', options)
  const { k, window, buckets } = checkWindow(where, options)
  validate.services(where, 'options', { clock: options.clock, random: options.random })
  const onEvent =
    options.onEvent === undefined ? undefined : validate.callable(where, 'options.onEvent', options.onEvent)
  const clock = options.clock ?? LiveClock.live
  const random = options.random ?? LiveRandom.live
  const width = window / buckets
  // a ring: slot `i mod buckets` holds bucket `i` (its index in `index`), `-Infinity` for none yet
  const index = new Array<number>(buckets).fill(-Infinity)
  const requests = new Array<number>(buckets).fill(0)
  const accepts = new Array<number>(buckets).fill(0)
  let newest = -Infinity

  const slotOf = (i: number): number => ((i % buckets) + buckets) % buckets
  /** Adds counts to bucket `i` (never before the newest: a clock that steps back counts in the newest). */
  const add = (i: number, r: number, a: number): void => {
    const at = Math.max(i, newest)
    const slot = slotOf(at)
    if (index[slot] !== at) {
      if (index[slot] > at) return // `at` has left the window of a newer bucket
      ;[index[slot], requests[slot], accepts[slot]] = [at, 0, 0]
    }
    requests[slot] += r
    accepts[slot] += a
    newest = at
  }
  /** The counts in the window of `now`. */
  const totals = (now: number): readonly [number, number] => {
    const oldest = Math.floor(now / width) - buckets
    let r = 0
    let a = 0
    for (let slot = 0; slot < buckets; slot++) {
      if (index[slot] > oldest) {
        r += requests[slot]
        a += accepts[slot]
      }
    }
    return [r, a]
  }

  const carried = carriedFrom(where, options.from)
  if (carried !== undefined) {
    for (const { start, requests: r, accepts: a } of carried()) add(Math.floor(start / width), r, a)
  }

  const shed = shedder(where, k, random, onEvent)

  const throttle: AdaptiveThrottle = {
    k,
    get requests() {
      return totals(clock.now())[0]
    },
    get accepts() {
      return totals(clock.now())[1]
    },
    dropProbability: (now) => {
      const [r, a] = totals(now === undefined ? clock.now() : validate.finite(where, 'now', now))
      return probability(k, r, a)
    },
    request: () => {
      const now = clock.now()
      const [r, a] = totals(now)
      add(Math.floor(now / width), 1, 0)
      return shed(now, r, a)
    },
    accept: () => add(Math.floor(clock.now() / width), 0, 1),
    admits: () => {
      const now = clock.now()
      const [r, a] = totals(now)
      return shed(now, r, a) === undefined
    }
  }
  counters.set(throttle, (r, a) => add(Math.floor(clock.now() / width), r, a))
  windows.set(throttle, () => {
    const oldest = Math.floor(clock.now() / width) - buckets
    const live: Array<Counted> = []
    for (let slot = 0; slot < buckets; slot++) {
      if (index[slot] > oldest)
        live.push({ start: index[slot] * width, requests: requests[slot], accepts: accepts[slot] })
    }
    return live.sort((x, y) => x.start - y.start)
  })
  return throttle
}

/** The buckets each throttle of {@link make} has in its window, oldest first, for a throttle that replaces it. */
const windows = new WeakMap<AdaptiveThrottle, () => ReadonlyArray<Counted>>()

/** Counts requests and accepts in each throttle of {@link make}, now, drawing nothing. */
const counters = new WeakMap<AdaptiveThrottle, (requests: number, accepts: number) => void>()

/**
 * Counts `requests` and `accepts` now in `throttle`, a throttle of {@link make}, drawing nothing and telling nothing:
 * how a throttle shared through Redis keeps its local fallback counting this process's calls while Redis decides.
 *
 * @internal
 */
export const count = (throttle: AdaptiveThrottle, requests: number, accepts: number): void =>
  counters.get(throttle)?.(requests, accepts)

/**
 * The drop of a request, drawn from `random` against the probability of the counts `requests` and `accepts`: a
 * {@link Throttled}, told as a `LoadShed` at `now`, or `undefined` (it goes). One rule for every throttle, local
 * or shared.
 *
 * @internal
 */
export const shedder =
  (where: string, k: number, random: Random, onEvent: Observer | undefined) =>
  (now: number, requests: number, accepts: number): Throttled | undefined => {
    const p = probability(k, requests, accepts)
    if (validate.drawn(where, random.next()) >= p) return undefined
    observe(onEvent, {
      _tag: 'LoadShed',
      source: 'throttle',
      run: 0,
      at: now,
      cause: 'throttled',
      priority: 'normal',
      inFlight: requests,
      limit: k * accepts
    })
    return { _tag: 'Throttled', probability: p }
  }

function carriedFrom(where: string, from: AdaptiveThrottle | undefined): (() => ReadonlyArray<Counted>) | undefined {
  if (from === undefined) return undefined
  const carried = windows.get(from)
  if (carried === undefined) {
    throw new TypeError(`${where}: from must be a throttle made by AdaptiveThrottle.make, received ${showValue(from)}`)
  }
  return carried
}

/**
 * A throttle as a `Guard` of the runners (reason `'shed'`): a retry is dropped with the throttle's drop
 * probability, and the run ends at once instead of sleeping toward a backend that refuses. Retries amplify an
 * overload (the SRE book's "Deciding to Retry"): this sheds them first.
 *
 * **Details**
 *
 * - It counts nothing: the requests and accepts are counted by {@link protect} around the action, with the same
 *   throttle. With both, a retry the guard lets through draws again in `protect` (and is counted there): it goes
 *   with probability `(1 - p)²` where a first attempt goes with `1 - p`.
 * - First attempts are not drawn here. `allows` (a hedge no failure prompted) draws as a retry does.
 * - `options.refused(error)` (default {@link isThrottled}) says which failures are the throttle's own drop (the
 *   `Left` that `protect`'s `onShed` makes): a run such a failure ends stops with reason `'shed'`. Give it when
 *   `onShed` maps the drop to an error of your own.
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import { retrying } from 'fp-ts-retry'
 * import type { StopReason } from 'fp-ts-retry/Retry'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const throttle = AdaptiveThrottle.make({ clock, random: Random.fixed(0.5) })
 *   const reasons: Array<StopReason> = []
 *   const run = pipe(
 *     TE.left({ status: 429 }),
 *     AdaptiveThrottle.protect(throttle, (shed) => shed),
 *     retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(10))), {
 *       clock,
 *       guards: [AdaptiveThrottle.asGuard(throttle)],
 *       onDone: ({ reason }) => void reasons.push(reason)
 *     })
 *   )()
 *   await clock.runAll()
 *   await run
 *   // at the guard, p = 1/2 lets the first retry go (0.5 is not below it); 2/3 ends the run at the second
 *   assert.deepStrictEqual(clock.sleeps, [100])
 *   assert.deepStrictEqual(reasons, ['shed'])
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const asGuard = (
  throttle: AdaptiveThrottle,
  options: { readonly refused?: ((error: unknown) => boolean) | undefined } = {}
): Guard => {
  const where = 'AdaptiveThrottle.asGuard'
  checked(where, throttle)
  validate.object(where, 'options', options)
  const refused =
    options.refused === undefined ? isThrottled : validate.callable(where, 'options.refused', options.refused)
  return {
    reason: 'shed',
    readsTime: false,
    admit: (o) => !o.retrying || throttle.admits(),
    allows: () => throttle.admits(),
    refused
  }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Counts each call of an action as a request, and drops it with the throttle's drop probability:
 * `Left(onShed(throttled))` at once, without running it. A call that goes is counted as accepted unless it fails
 * with an error `options.rejected` says is the backend refusing it for overload.
 *
 * **Details**
 *
 * - `rejected` (default {@link isOverload}: a 429, a 503, or a throttling error of the AWS SDKs) is asked of a
 *   `Left` only. Other failures count as accepted: the backend took the request (a 400 is the caller's mistake, a
 *   500 a bug, neither an overload), and a throttle that counted them would drop the traffic of a client whose own
 *   requests are bad. Give `rejected: () => true` to count every failure against the backend (timeouts and network
 *   errors too: a backend too loaded to answer), as some implementations do.
 * - An action that rejects (a defect) is counted as a request that was not accepted, and the rejection goes on.
 * - Inside `retrying`, each attempt is a request: wrap the action, then retry. Keep a `Breaker.protect` inside it
 *   (docs/resilience-order.md): the breaker then counts only the attempts that reached the backend.
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const throttle = AdaptiveThrottle.make({ clock: TestClock.make(), random: Random.fixed(0.3) })
 *   const busy = pipe(TE.left({ status: 503 }), AdaptiveThrottle.protect(throttle, (shed) => `dropped at ${shed.probability}`))
 *   const bad = pipe(TE.left({ status: 400 }), AdaptiveThrottle.protect(throttle, () => 'dropped'))
 *   assert.deepStrictEqual(await bad(), { _tag: 'Left', left: { status: 400 } }) // accepted: the request was wrong
 *   assert.deepStrictEqual(await busy(), { _tag: 'Left', left: { status: 503 } }) // p = 0
 *   assert.deepStrictEqual(await busy(), { _tag: 'Left', left: { status: 503 } }) // p = 0
 *   assert.deepStrictEqual(await busy(), { _tag: 'Left', left: { status: 503 } }) // p = (3 - 2) / 4: 0.3 goes
 *   assert.deepStrictEqual(await busy(), { _tag: 'Left', left: 'dropped at 0.4' }) // p = (4 - 2) / 5
 *   assert.deepStrictEqual([throttle.requests, throttle.accepts], [5, 1])
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const protect = <E2>(
  throttle: AdaptiveThrottle,
  onShed: (throttled: Throttled) => E2,
  options: ProtectOptions = {}
): (<E1, A>(action: TaskEither<E1, A>) => TaskEither<E1 | E2, A>) => {
  const where = 'AdaptiveThrottle.protect'
  checked(where, throttle)
  validate.callable(where, 'onShed', onShed)
  validate.object(where, 'options', options)
  const rejected =
    options.rejected === undefined ? isOverload : validate.callable(where, 'options.rejected', options.rejected)
  return (action) => async () => {
    const asked = throttle.request()
    const dropped = isPromise(asked) ? await asked : asked
    if (dropped !== undefined) return { _tag: 'Left', left: onShed(dropped) }
    const result = await action()
    if (result._tag === 'Right' || !rejected(result.left)) {
      const told = throttle.accept()
      if (isPromise(told)) await told
    }
    return result
  }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Whether an error is a backend's refusal for overload: the default `rejected` of {@link protect}. An HTTP status
 * 429 or 503 (`status`, `statusCode` or `$metadata.httpStatusCode`: an `Http.StatusError`, a fetch `Response`, an
 * AWS SDK error), or a throttling error as the AWS SDKs tell one (`ThrottlingException`, `SlowDown`, ...).
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual([429, 503, 500, 400].map((status) => AdaptiveThrottle.isOverload({ status })), [true, true, false, false])
 * assert.strictEqual(AdaptiveThrottle.isOverload({ name: 'ThrottlingException' }), true)
 * assert.strictEqual(AdaptiveThrottle.isOverload(new Error('timeout')), false)
 *
 * @category utils
 * @since 1.0.0
 */
export const isOverload = (error: unknown): boolean => {
  if (aws.isThrottle(error)) return true
  if (error === null || typeof error !== 'object') return false
  const { status, statusCode, $metadata } = error as Readonly<Record<string, unknown>>
  return (
    status === 503 ||
    statusCode === 503 ||
    ($metadata !== null &&
      typeof $metadata === 'object' &&
      ($metadata as { httpStatusCode?: unknown }).httpStatusCode === 503)
  )
}

/**
 * Whether `error` is a {@link Throttled}: the default `refused` of {@link asGuard}.
 *
 * @example
 * import * as AdaptiveThrottle from 'fp-ts-retry/AdaptiveThrottle'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(AdaptiveThrottle.isThrottled({ _tag: 'Throttled', probability: 0.5 }), true)
 * assert.strictEqual(AdaptiveThrottle.isThrottled({ status: 503 }), false)
 *
 * @category utils
 * @since 1.0.0
 */
export const isThrottled = (error: unknown): error is Throttled =>
  error !== null && typeof error === 'object' && (error as { readonly _tag?: unknown })._tag === 'Throttled'

function checked(where: string, throttle: AdaptiveThrottle): AdaptiveThrottle {
  return validate.implementing(where, 'throttle', 'an AdaptiveThrottle', ['request', 'accept', 'admits'], throttle)
}
