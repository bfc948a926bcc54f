/**
 * A `Schedule` is an immutable value that decides, after each failure, whether to retry and how long to wait.
 *
 * Build one from a constructor (`exponential`, `constant`, `decorrelatedJitter`, ...), refine it with
 * data-last combinators in a `pipe` (`capped`, `fullJitter`, `upTo`, ...), combine schedules with `intersect`,
 * `union` and `andThen`, and hand it to `retrying`. `delays` shows what a schedule would do, without running
 * anything.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const policy = pipe(
 *   Schedule.exponential(100), // 100, 200, 400, ...
 *   Schedule.capped(1000), //     ... never more than 1 s
 *   Schedule.intersect(Schedule.recurs(5)) // 5 retries, 6 attempts
 * )
 * assert.deepStrictEqual(Schedule.delays(policy), [100, 200, 400, 800, 1000])
 *
 * @since 0.1.0
 */
import type { Monoid } from 'fp-ts/Monoid'
import type { Option } from 'fp-ts/Option'
import type { Predicate } from 'fp-ts/Predicate'
import { Progress } from './internal/Progress'
import { isTimeless, markTimeless } from './internal/timeless'
import * as validate from './internal/validate'
import * as Random from './Random'
import type { RetryStatus } from './RetryStatus'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Plain JSON data: what a schedule's state is made of, so that an in-flight retry can be stored and resumed.
 *
 * @example
 * import type { Json } from 'fp-ts-retry/Schedule'
 *
 * const state: Json = [0, { previous: 57.5 }]
 *
 * @category model
 * @since 0.1.0
 */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/**
 * A schedule's answer: retry after `delay` ms and continue from `state`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.continueAfter(100, 1), { _tag: 'Continue', delay: 100, state: 1 })
 *
 * @category model
 * @since 0.1.0
 */
export interface Continue<S = Json> {
  readonly _tag: 'Continue'
  readonly delay: number
  readonly state: S
}

/**
 * A schedule's answer: stop retrying.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.done, { _tag: 'Done' })
 *
 * @category model
 * @since 0.1.0
 */
export interface Done {
  readonly _tag: 'Done'
}

/**
 * What a schedule's step answers: `Continue` (retry after a delay, with a next state) or `Done`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const d: Schedule.Decision = Schedule.done
 * assert.strictEqual(d._tag, 'Done')
 *
 * @category model
 * @since 0.1.0
 */
export type Decision<S = Json> = Continue<S> | Done

/**
 * A retry policy as a value. `In` is what the schedule looks at: for `retrying`, the error just seen.
 *
 * **Details**
 *
 * - `description` says how the schedule was built; `initial` is the state before the first retry; `step` is called after each failure with the schedule's own
 *   state, the input, the {@link RetryStatus} (retries so far, elapsed time, cumulative delay), the current time
 *   in ms and a {@link Random.Random}, and answers a {@link Decision}.
 * - A schedule is pure: it never reads the clock or `Math.random` itself, and its state is plain {@link Json},
 *   so one value can drive any number of concurrent runs and a run can be stored and resumed.
 * - `Schedule` is contravariant in `In`: a `Schedule<unknown>` (every constructor) retries any error.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // every other retry waits 1 s, the others 10 ms; the state counts the retries
 * const alternating: Schedule.Schedule<unknown> = Schedule.make(0, (n: number) =>
 *   Schedule.continueAfter(n % 2 === 0 ? 10 : 1000, n + 1)
 * )
 * assert.deepStrictEqual(Schedule.delays(alternating, { limit: 4 }), [10, 1000, 10, 1000])
 *
 * @category model
 * @since 0.1.0
 */
export interface Schedule<in In> {
  /** How the schedule was built, such as `capped(1000)(exponential(100, 2))`: shown in logs, and stored with a
   * persisted run so that resuming it with a different schedule is detected. */
  readonly description: string
  readonly initial: Json
  readonly step: (state: Json, input: In, status: RetryStatus, now: number, random: Random.Random) => Decision
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The `Done` decision.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.make(null, () => Schedule.done)), [])
 *
 * @category constructors
 * @since 0.1.0
 */
export const done: Done = { _tag: 'Done' }

/**
 * The `Continue` decision: retry after `delay` ms, then continue from `state`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(Schedule.continueAfter(250, null).delay, 250)
 *
 * @category constructors
 * @since 0.1.0
 */
export const continueAfter = <S extends Json>(delay: number, state: S): Continue<S> => ({
  _tag: 'Continue',
  delay,
  state
})

/**
 * A schedule from an initial state and a step function: the building block of every other constructor.
 *
 * **Details**
 *
 * - The state type `S` must be plain JSON data; the step must not mutate it.
 * - `description` (default `"custom"`) names the schedule in logs and in persisted runs: give two different
 *   custom schedules different descriptions, so that resuming a stored run with the wrong one is detected.
 * - The delays it returns are checked by the interpreters: a negative, NaN or infinite delay is a `RangeError`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * // 10, 20, 30 ms, then stop
 * const three = Schedule.make(1, (n: number) => (n <= 3 ? Schedule.continueAfter(10 * n, n + 1) : Schedule.done))
 * assert.deepStrictEqual(Schedule.delays(three), [10, 20, 30])
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <S extends Json, In = unknown>(
  initial: S,
  step: (state: S, input: In, status: RetryStatus, now: number, random: Random.Random) => Decision<S>,
  description = 'custom'
): Schedule<In> => {
  validate.callable('Schedule.make', 'step', step)
  // The one place where the state's type is forgotten: every schedule is only ever stepped with its own states.
  return { description, initial, step: step as unknown as Schedule<In>['step'] }
}

// `make` for the constructors whose step never reads the time (`now`, `status.elapsed`): the runner need not
// read the clock for them (see internal/timeless).
const makeTimeless = <S extends Json, In = unknown>(
  initial: S,
  step: (state: S, input: In, status: RetryStatus, now: number, random: Random.Random) => Decision<S>,
  description: string
): Schedule<In> => markTimeless(make(initial, step, description))

// `make` for the combinators, marking the result timeless when `ignoresTime`: when it does not read the time
// itself and neither does any schedule it combines.
const makeMarked = <S extends Json, In>(
  ignoresTime: boolean,
  initial: S,
  step: (state: S, input: In, status: RetryStatus, now: number, random: Random.Random) => Decision<S>,
  description: string
): Schedule<In> => markTimeless(make(initial, step, description), ignoresTime)

/**
 * Retries forever with no delay.
 *
 * **Details**
 *
 * The identity of {@link getIntersectionMonoid}. A zero delay does not go through a timer; the runner still
 * yields to the event loop now and then, so an abort can be delivered. Use it with a limit (`recurs`, `upTo`).
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.forever, { limit: 3 }), [0, 0, 0])
 *
 * @category constructors
 * @since 0.1.0
 */
export const forever: Schedule<unknown> = constantDecision(0, 'forever')

/**
 * Never retries: one attempt.
 *
 * **Details**
 *
 * The identity of {@link getUnionMonoid} and of {@link andThen}.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.stop), [])
 *
 * @category constructors
 * @since 0.1.0
 */
export const stop: Schedule<unknown> = makeTimeless(null, () => done, 'stop')

function constantDecision(delay: number, description: string): Schedule<unknown> {
  // Allocated once: a constant schedule costs nothing per step.
  const decision = continueAfter(delay, null)
  return makeTimeless(null, () => decision, description)
}

/**
 * Retries forever, waiting `delay` ms each time.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.constant(50), { limit: 3 }), [50, 50, 50])
 *
 * @category constructors
 * @since 0.1.0
 */
export const constant = (delay: number): Schedule<unknown> =>
  constantDecision(validate.saturate(validate.duration('Schedule.constant', 'delay', delay)), `constant(${delay})`)

/**
 * Retries forever, waiting `base`, `base·factor`, `base·factor²`, ... ms.
 *
 * **Details**
 *
 * - `factor` defaults to 2 and must be at least 1; `base` must be finite and `>= 0`.
 * - Growth saturates at `Number.MAX_SAFE_INTEGER` ms instead of reaching `Infinity`: cap it with {@link capped}.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.exponential(100), { limit: 4 }), [100, 200, 400, 800])
 * assert.deepStrictEqual(Schedule.delays(Schedule.exponential(100, 3), { limit: 3 }), [100, 300, 900])
 *
 * @category constructors
 * @since 0.1.0
 */
export const exponential = (base: number, factor = 2): Schedule<unknown> => {
  validate.duration('Schedule.exponential', 'base', base)
  validate.atLeast('Schedule.exponential', 'factor', 1, factor)
  // The state is the next delay: one multiplication a step, no Math.pow.
  return makeTimeless(
    validate.saturate(base),
    (delay: number) => continueAfter(delay, validate.saturate(delay * factor)),
    `exponential(${base}, ${factor})`
  )
}

/**
 * Retries forever, waiting `step`, `2·step`, `3·step`, ... ms.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.linear(100), { limit: 4 }), [100, 200, 300, 400])
 *
 * @category constructors
 * @since 0.1.0
 */
export const linear = (step: number): Schedule<unknown> => {
  validate.duration('Schedule.linear', 'step', step)
  return makeTimeless(
    validate.saturate(step),
    (delay: number) => continueAfter(delay, validate.saturate(delay + step)),
    `linear(${step})`
  )
}

/**
 * Retries forever, waiting `base`, `base`, `2·base`, `3·base`, `5·base`, ... ms (the Fibonacci sequence).
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.fibonacci(10), { limit: 6 }), [10, 10, 20, 30, 50, 80])
 *
 * @category constructors
 * @since 0.1.0
 */
export const fibonacci = (base: number): Schedule<unknown> => {
  validate.duration('Schedule.fibonacci', 'base', base)
  const b = validate.saturate(base)
  return makeTimeless<readonly [number, number]>(
    [b, b],
    ([current, next]) => continueAfter(current, [next, validate.saturate(current + next)]),
    `fibonacci(${base})`
  )
}

/**
 * Retries forever with the AWS "decorrelated jitter": each delay is `min(cap, random_between(base, previous · 3))`.
 *
 * **Details**
 *
 * - `previous` starts at `base` and is then the schedule's own previous (already capped) delay, as in the code
 *   of Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015).
 * - Requires `0 <= base <= cap`, both finite. Delays are exact, not rounded: `57.5` is a possible delay.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * // a draw of 0.5 lands half way between base and 3 · previous
 * const ds = Schedule.delays(Schedule.decorrelatedJitter(10, 100), { random: Random.fixed(0.5), limit: 4 })
 * assert.deepStrictEqual(ds, [20, 35, 57.5, 91.25])
 *
 * @category constructors
 * @since 0.1.0
 */
export const decorrelatedJitter = (base: number, cap: number): Schedule<unknown> => {
  validate.duration('Schedule.decorrelatedJitter', 'base', base)
  validate.atLeast('Schedule.decorrelatedJitter', 'cap', base, cap)
  return makeTimeless(base, (previous: number, _, __, ___, random) => {
    const delay = validate.saturate(Math.min(cap, base + random.next() * (previous * 3 - base)))
    return continueAfter(delay, delay)
  }, `decorrelatedJitter(${base}, ${cap})`)
}

/**
 * Retries forever with Polly's "decorrelated jitter V2": retry `k` (from 0) comes at a median of about
 * `medianFirstRetryDelay · 2^k` ms after the first failure, with smooth jitter and no clusters.
 *
 * **Details**
 *
 * - Retry `k` draws `t = k + u` and waits `f(t) − f(t_prev)` scaled by `medianFirstRetryDelay / 1.4`, where
 *   `f(t) = 2^t · tanh(√(4t))` and `f(t_prev)` is the previous retry's value (0 at first). The waits telescope:
 *   the first `k + 1` add up to `f(k + u) · medianFirstRetryDelay / 1.4`, so the retries are spread evenly in
 *   time while the delays grow exponentially.
 * - Each delay lies between 0 and about `medianFirstRetryDelay · 2^(k+1)`; with `maxDelay`, no delay exceeds
 *   it (Polly v8's `MaxDelay`). Delays are exact, not rounded to .NET ticks.
 * - Past about 1024 retries the formula overflows: every delay is then `maxDelay` (or the largest delay).
 * - The state is `[k, f(t_prev)]`, plain numbers. Requires `medianFirstRetryDelay` and `maxDelay` finite and `>= 0`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * // draws pinned at 0.5: the retries come at about 90, 200, 400, 800, 1600 ms
 * const ds = Schedule.delays(Schedule.decorrelatedJitterV2(100), { random: Random.fixed(0.5), limit: 5 })
 * assert.deepStrictEqual(ds.map(Math.round), [90, 109, 204, 405, 808])
 * const capped = Schedule.delays(Schedule.decorrelatedJitterV2(100, 300), { random: Random.fixed(0.5), limit: 5 })
 * assert.deepStrictEqual(capped.map(Math.round), [90, 109, 204, 300, 300])
 *
 * @category constructors
 * @since 0.1.0
 */
export const decorrelatedJitterV2 = (medianFirstRetryDelay: number, maxDelay?: number): Schedule<unknown> => {
  const median = validate.duration('Schedule.decorrelatedJitterV2', 'medianFirstRetryDelay', medianFirstRetryDelay)
  const max = validate.saturate(
    maxDelay === undefined ? validate.MAX_DELAY : validate.duration('Schedule.decorrelatedJitterV2', 'maxDelay', maxDelay)
  )
  // Polly.Core RetryHelper.DecorrelatedJitterBackoffV2 (formula by George Polevoy, Polly issue 530): pFactor 4, scale 1/1.4.
  const scale = median / 1.4
  return makeTimeless<readonly [number, number]>(
    [0, 0],
    ([k, previous], _, __, ___, random) => {
      const t = k + random.next()
      const next = 2 ** t * Math.tanh(Math.sqrt(4 * t))
      // Overflowed: so will every later step; the state stays as it is, plain finite numbers.
      if (next === Infinity) return continueAfter(median === 0 ? 0 : max, [k, previous])
      const delay = validate.saturate((next - previous) * scale)
      return continueAfter(delay > max ? max : delay, [k + 1, next])
    },
    maxDelay === undefined ? `decorrelatedJitterV2(${median})` : `decorrelatedJitterV2(${median}, ${maxDelay})`
  )
}

/**
 * Retries forever, waiting a uniformly random delay between `min` and `max` ms each time.
 *
 * **Details**
 *
 * `min + u · (max − min)` with `u` in `[0, 1)`; floating-point rounding can make the result equal `max`, as the
 * AWS `random_between`, so treat the range as closed.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.randomBetween(100, 200), { random: Random.fixed(0.25), limit: 2 }), [125, 125])
 *
 * @category constructors
 * @since 0.1.0
 */
export const randomBetween = (min: number, max: number): Schedule<unknown> => {
  validate.duration('Schedule.randomBetween', 'min', min)
  validate.atLeast('Schedule.randomBetween', 'max', min, max)
  return makeTimeless(
    null,
    (_, __, ___, ____, random) => continueAfter(validate.saturate(min + random.next() * (max - min)), null),
    `randomBetween(${min}, ${max})`
  )
}

/**
 * Exactly `n` retries with no delay: `n + 1` attempts in all.
 *
 * **Details**
 *
 * `recurs(0)` is one attempt and no retry. Intersect it with a delay schedule to limit the number of retries:
 * `pipe(exponential(100), intersect(recurs(5)))`. `n` must be a whole number `>= 0`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.recurs(3)), [0, 0, 0])
 * assert.deepStrictEqual(Schedule.delays(Schedule.recurs(0)), [])
 *
 * @category constructors
 * @since 0.1.0
 */
export const recurs = (n: number): Schedule<unknown> => {
  validate.count('Schedule.recurs', 'n', n)
  return makeTimeless(0, (made: number) => (made < n ? continueAfter(0, made + 1) : done), `recurs(${n})`)
}

/**
 * Waits the given delays in order, one retry each, then stops.
 *
 * **Details**
 *
 * The list is copied: changing the array afterwards does not change the schedule. Each delay must be finite and
 * `>= 0`; the error names its index.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(Schedule.fromDelays([10, 100, 1000])), [10, 100, 1000])
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromDelays = (delays: ReadonlyArray<number>): Schedule<unknown> => {
  if (!Array.isArray(delays)) {
    throw new RangeError(`Schedule.fromDelays: delays must be an array of numbers, received ${String(delays)}`)
  }
  const list = delays.map((d, i) => validate.saturate(validate.duration('Schedule.fromDelays', `delays[${i}]`, d)))
  return makeTimeless(
    0,
    (i: number) => (i < list.length ? continueAfter(list[i], i + 1) : done),
    `fromDelays([${list.join(', ')}])`
  )
}

/**
 * Truncated binary exponential backoff, built from its two requirements: the delay doubles at most
 * `maxDoublings` times and then stays at `maxDelay`.
 *
 * **Details**
 *
 * - The first delay is `maxDelay / 2^maxDoublings`; retry `maxDoublings + 1` and every later one waits `maxDelay`.
 * - Add {@link fullJitter} for the classic form that draws between 0 and the current delay.
 * - Example: "after 10 failures in a row the problem is not transient, stop growing" and "retry within 10 s of
 *   recovery" give `maxDoublings: 9, maxDelay: 10_000`: a first delay of 19.53 ms.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const s = Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: 8000 })
 * assert.deepStrictEqual(Schedule.delays(s, { limit: 6 }), [1000, 2000, 4000, 8000, 8000, 8000])
 *
 * @category constructors
 * @since 0.1.0
 */
export const truncatedBinaryExponential = (options: {
  readonly maxDoublings: number
  readonly maxDelay: number
}): Schedule<unknown> => {
  const maxDoublings = validate.count('Schedule.truncatedBinaryExponential', 'maxDoublings', options.maxDoublings)
  const maxDelay = validate.saturate(
    validate.duration('Schedule.truncatedBinaryExponential', 'maxDelay', options.maxDelay)
  )
  // Counting down from maxDelay by exact powers of two lands the last doubling on maxDelay itself, and stays
  // right when 2^maxDoublings overflows (the early delays are then 0 until they become representable).
  return makeTimeless(
    0,
    (n: number) =>
      n < maxDoublings ? continueAfter(maxDelay * 2 ** (n - maxDoublings), n + 1) : continueAfter(maxDelay, n),
    `truncatedBinaryExponential({ maxDoublings: ${maxDoublings}, maxDelay: ${maxDelay} })`
  )
}

/**
 * Lifts a retry-ts style policy, `(status) => Option<delay>`, into a schedule.
 *
 * **Details**
 *
 * The policy sees the run's {@link RetryStatus}; `none` stops, `some(d)` retries after `d` ms.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as O from 'fp-ts/Option'
 * import * as assert from 'assert'
 *
 * const policy = Schedule.fromPolicy((status) => (status.iterNumber < 3 ? O.some(100 * (status.iterNumber + 1)) : O.none))
 * assert.deepStrictEqual(Schedule.delays(policy), [100, 200, 300])
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromPolicy = (policy: (status: RetryStatus) => Option<number>): Schedule<unknown> => {
  validate.callable('Schedule.fromPolicy', 'policy', policy)
  return make(
    null,
    (_, __, status) => {
      const delay = policy(status)
      return delay._tag === 'None' ? done : continueAfter(delay.value, null)
    },
    'fromPolicy(<policy>)'
  )
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/** Rewrites the delay of each `Continue`, keeping the decision when the delay is unchanged. */
const mapDelay =
  <In>(name: string, f: (delay: number, random: Random.Random) => number) =>
  (self: Schedule<In>): Schedule<In> =>
    makeMarked(
      isTimeless(self),
      self.initial,
      (state, input: In, status, now, random) => {
        const decision = self.step(state, input, status, now, random)
        if (decision._tag === 'Done') return decision
        const delay = f(decision.delay, random)
        return delay === decision.delay ? decision : continueAfter(delay, decision.state)
      },
      `${name}(${self.description})`
    )

/** Turns a `Continue` into `Done` when `stopIf` holds for its delay; `readsTime` when `stopIf` reads `elapsed`. */
const stopWhen =
  <In>(name: string, readsTime: boolean, stopIf: (delay: number, status: RetryStatus) => boolean) =>
  (self: Schedule<In>): Schedule<In> =>
    makeMarked(
      !readsTime && isTimeless(self),
      self.initial,
      (state, input: In, status, now, random) => {
        const decision = self.step(state, input, status, now, random)
        return decision._tag === 'Continue' && stopIf(decision.delay, status) ? done : decision
      },
      `${name}(${self.description})`
    )

/**
 * Caps every delay at `max` ms: `min(delay, max)`.
 *
 * **Details**
 *
 * Never turns a stop into a retry. Idempotent: capping twice at the same value is capping once.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(pipe(Schedule.exponential(100), Schedule.capped(300)), { limit: 4 }), [100, 200, 300, 300])
 *
 * @category combinators
 * @since 0.1.0
 */
export const capped = (max: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  validate.duration('Schedule.capped', 'max', max)
  return mapDelay(`capped(${max})`, (delay) => (delay > max ? max : delay))
}

/**
 * Raises every delay to at least `min` ms: `max(delay, min)`.
 *
 * **Details**
 *
 * Never turns a stop into a retry. Useful after a jitter that may draw a delay close to 0.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(1000), Schedule.fullJitter, Schedule.minDelay(100))
 * assert.deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0), limit: 2 }), [100, 100])
 *
 * @category combinators
 * @since 0.1.0
 */
export const minDelay = (min: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  const floor = validate.saturate(validate.duration('Schedule.minDelay', 'min', min))
  return mapDelay(`minDelay(${min})`, (delay) => (delay < floor ? floor : delay))
}

/**
 * Replaces every delay `d` by `f(d)`.
 *
 * **Details**
 *
 * The interpreters check the result: a negative, NaN or infinite delay is a `RangeError`, never a silent clamp.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.linear(100), Schedule.modifyDelay((d) => d + 5))
 * assert.deepStrictEqual(Schedule.delays(s, { limit: 3 }), [105, 205, 305])
 *
 * @category combinators
 * @since 0.1.0
 */
export const modifyDelay = (f: (delay: number) => number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  validate.callable('Schedule.modifyDelay', 'f', f)
  return mapDelay('modifyDelay(<f>)', (delay) => f(delay))
}

/**
 * "Full jitter": each delay `d` becomes `d · u`, with `u` drawn from the run's `Random` in `[0, 1)`.
 *
 * **Details**
 *
 * `pipe(exponential(base), capped(cap), fullJitter)` is exactly the AWS full jitter
 * `random_between(0, min(cap, base · 2^n))`. Jitter after a cap never exceeds the cap.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.fullJitter)
 * assert.deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0.5), limit: 3 }), [50, 100, 200])
 *
 * @category combinators
 * @since 0.1.0
 */
export const fullJitter: <In>(self: Schedule<In>) => Schedule<In> = mapDelay('fullJitter', (delay, random) => delay * random.next())

/**
 * "Equal jitter": each delay `d` becomes `d/2 + u · d/2`, with `u` drawn from the run's `Random` in `[0, 1)`.
 *
 * **Details**
 *
 * Keeps at least half of each delay, so a retry never comes back immediately; never exceeds `d`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(100), Schedule.equalJitter)
 * assert.deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0.5), limit: 2 }), [75, 75])
 *
 * @category combinators
 * @since 0.1.0
 */
export const equalJitter: <In>(self: Schedule<In>) => Schedule<In> = mapDelay('equalJitter', (delay, random) => {
  const half = delay / 2
  const jittered = half + random.next() * half
  // Halving a subnormal delay rounds up, so the sum can pass it by a hair.
  return jittered > delay ? delay : jittered
})

/**
 * Limits the run's elapsed time to `ms`: stops rather than start a retry that would begin after the budget.
 *
 * **Details**
 *
 * Stops when `status.elapsed + nextDelay > ms`, so it never sleeps past its deadline (Effect's `upTo` does).
 * Elapsed time includes the time the attempts took, read from the run's clock.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Schedule.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000))), [100, 200, 400])
 *
 * @category combinators
 * @since 0.1.0
 */
export const upTo = (ms: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  validate.duration('Schedule.upTo', 'ms', ms)
  return stopWhen(`upTo(${ms})`, true, (delay, status) => status.elapsed + delay > ms)
}

/**
 * Limits the total time slept to `ms`: stops when `status.cumulativeDelay + nextDelay > ms`.
 *
 * **Details**
 *
 * Unlike {@link upTo}, the time the attempts themselves take does not count (retry-ts's
 * `limitRetriesByCumulativeDelay`).
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(300), Schedule.maxCumulativeDelay(1000))
 * assert.deepStrictEqual(Schedule.delays(s, { attemptDuration: 500 }), [300, 300, 300])
 *
 * @category combinators
 * @since 0.1.0
 */
export const maxCumulativeDelay = (ms: number): (<In>(self: Schedule<In>) => Schedule<In>) => {
  validate.duration('Schedule.maxCumulativeDelay', 'ms', ms)
  return stopWhen(`maxCumulativeDelay(${ms})`, false, (delay, status) => status.cumulativeDelay + delay > ms)
}

/**
 * Retries only while `predicate(input)` holds (for `retrying`, the input is the error).
 *
 * **Details**
 *
 * When the predicate fails the schedule stops without stepping the inner schedule. The result's input type is
 * the intersection of both, so a predicate on `HttpError` makes a `Schedule<HttpError>`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(10), Schedule.whileInput((status: number) => status >= 500))
 * assert.deepStrictEqual(Schedule.delays(s, { input: 503, limit: 2 }), [10, 10])
 * assert.deepStrictEqual(Schedule.delays(s, { input: 404 }), [])
 *
 * @category combinators
 * @since 0.1.0
 */
export const whileInput = <I>(predicate: Predicate<I>): (<In>(self: Schedule<In>) => Schedule<In & I>) => {
  validate.callable('Schedule.whileInput', 'predicate', predicate)
  return retryWhile('whileInput', predicate)
}

const retryWhile =
  <I>(name: string, predicate: Predicate<I>) =>
  <In>(self: Schedule<In>): Schedule<In & I> =>
    makeMarked(
      isTimeless(self),
      self.initial,
      (state, input: In & I, status, now, random) => (predicate(input) ? self.step(state, input, status, now, random) : done),
      `${name}(<predicate>)(${self.description})`
    )

/**
 * Retries until `predicate(input)` holds: the opposite of {@link whileInput}.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.constant(10), Schedule.untilInput((e: Error) => e.message === 'fatal'))
 * assert.deepStrictEqual(Schedule.delays(s, { input: new Error('fatal') }), [])
 *
 * @category combinators
 * @since 0.1.0
 */
export const untilInput = <I>(predicate: Predicate<I>): (<In>(self: Schedule<In>) => Schedule<In & I>) => {
  validate.callable('Schedule.untilInput', 'predicate', predicate)
  return retryWhile('untilInput', (input: I) => !predicate(input))
}

/**
 * Both schedules must continue; the longer delay wins. The usual way to bound a schedule: `intersect(recurs(5))`.
 *
 * **Details**
 *
 * | `self`   | `that`   | result                          |
 * | -------- | -------- | ------------------------------- |
 * | continue `d1` | continue `d2` | continue `max(d1, d2)` |
 * | continue | done     | done                            |
 * | done     | any      | done (`that` is not stepped)    |
 *
 * Associative, with {@link forever} as identity: see {@link getIntersectionMonoid}.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3)))
 * assert.deepStrictEqual(Schedule.delays(s), [100, 200, 400])
 *
 * @category combinators
 * @since 0.1.0
 */
export const intersect =
  <In2>(that: Schedule<In2>) =>
  <In1>(self: Schedule<In1>): Schedule<In1 & In2> =>
    makeMarked<readonly [Json, Json], In1 & In2>(
      isTimeless(self) && isTimeless(that),
      [self.initial, that.initial],
      ([s1, s2], input, status, now, random) => {
        const d1 = self.step(s1, input, status, now, random)
        if (d1._tag === 'Done') return done
        const d2 = that.step(s2, input, status, now, random)
        if (d2._tag === 'Done') return done
        return continueAfter(d1.delay >= d2.delay ? d1.delay : d2.delay, [d1.state, d2.state])
      },
      `intersect(${that.description})(${self.description})`
    )

// Which sides of a union are still running, as bits: a side that has stopped is not stepped again.
const LEFT = 1
const RIGHT = 2

/**
 * Either schedule may continue; the shorter delay of those continuing wins.
 *
 * **Details**
 *
 * | `self`   | `that`   | result                        |
 * | -------- | -------- | ----------------------------- |
 * | continue `d1` | continue `d2` | continue `min(d1, d2)` |
 * | continue `d1` | done | continue `d1`                 |
 * | done     | continue `d2` | continue `d2`            |
 * | done     | done     | done                          |
 *
 * A side that has stopped stays stopped. Associative, with {@link stop} as identity: see {@link getUnionMonoid}.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * // quick retries first, then slow ones
 * const s = pipe(
 *   Schedule.fromDelays([10, 10]),
 *   Schedule.union(pipe(Schedule.constant(1000), Schedule.intersect(Schedule.recurs(4))))
 * )
 * assert.deepStrictEqual(Schedule.delays(s), [10, 10, 1000, 1000])
 *
 * @category combinators
 * @since 0.1.0
 */
export const union =
  <In2>(that: Schedule<In2>) =>
  <In1>(self: Schedule<In1>): Schedule<In1 & In2> =>
    makeMarked<readonly [Json, Json, number], In1 & In2>(
      isTimeless(self) && isTimeless(that),
      [self.initial, that.initial, LEFT | RIGHT],
      ([s1, s2, running], input, status, now, random) => {
        const d1 = running & LEFT ? self.step(s1, input, status, now, random) : done
        const d2 = running & RIGHT ? that.step(s2, input, status, now, random) : done
        if (d1._tag === 'Done') {
          return d2._tag === 'Done' ? done : continueAfter(d2.delay, [s1, d2.state, RIGHT])
        }
        if (d2._tag === 'Done') return continueAfter(d1.delay, [d1.state, s2, LEFT])
        return continueAfter(d1.delay <= d2.delay ? d1.delay : d2.delay, [d1.state, d2.state, LEFT | RIGHT])
      },
      `union(${that.description})(${self.description})`
    )

/**
 * Runs `self` until it stops, then `that` from its start.
 *
 * **Details**
 *
 * `that` takes over on the very failure that `self` stopped at, so no retry is lost between the two. Each
 * schedule counts its own retries (a `recurs(2)` second phase makes two more); status-based limits such as
 * {@link upTo} see the whole run's status. Associative, with {@link stop} as identity on both sides.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.fromDelays([0, 0]), Schedule.andThen(Schedule.fromDelays([500, 1000])))
 * assert.deepStrictEqual(Schedule.delays(s), [0, 0, 500, 1000])
 *
 * @category combinators
 * @since 0.1.0
 */
export const andThen =
  <In2>(that: Schedule<In2>) =>
  <In1>(self: Schedule<In1>): Schedule<In1 & In2> =>
    makeMarked<readonly [0 | 1, Json], In1 & In2>(
      isTimeless(self) && isTimeless(that),
      [0, self.initial],
      ([phase, state], input, status, now, random) => {
        if (phase === 0) {
          const first = self.step(state, input, status, now, random)
          if (first._tag === 'Continue') return continueAfter(first.delay, [0, first.state])
          state = that.initial
        }
        const second = that.step(state, input, status, now, random)
        return second._tag === 'Continue' ? continueAfter(second.delay, [1, second.state]) : done
      },
      `andThen(${that.description})(${self.description})`
    )

// -------------------------------------------------------------------------------------
// instances
// -------------------------------------------------------------------------------------

/**
 * The monoid of {@link intersect}: both must continue, the longer delay wins, `empty` is {@link forever}
 * (retry-ts's `Monoid`).
 *
 * **Details**
 *
 * Laws: `concat(concat(a, b), c) ≡ concat(a, concat(b, c))` and `concat(empty, a) ≡ a ≡ concat(a, empty)`, where
 * `≡` means "makes the same decisions for every input, status and random draw".
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { concatAll } from 'fp-ts/Monoid'
 * import * as assert from 'assert'
 *
 * const M = Schedule.getIntersectionMonoid<unknown>()
 * const s = concatAll(M)([Schedule.exponential(100), Schedule.recurs(3), Schedule.constant(150)])
 * assert.deepStrictEqual(Schedule.delays(s), [150, 200, 400])
 *
 * @category instances
 * @since 0.1.0
 */
export const getIntersectionMonoid = <In>(): Monoid<Schedule<In>> => ({
  concat: (x, y) => intersect(y)(x),
  empty: forever
})

/**
 * The monoid of {@link union}: either may continue, the shorter delay of those continuing wins, `empty` is
 * {@link stop}.
 *
 * **Details**
 *
 * Laws: `concat(concat(a, b), c) ≡ concat(a, concat(b, c))` and `concat(empty, a) ≡ a ≡ concat(a, empty)`.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { concatAll } from 'fp-ts/Monoid'
 * import * as assert from 'assert'
 *
 * const M = Schedule.getUnionMonoid<unknown>()
 * const s = concatAll(M)([Schedule.fromDelays([300, 300]), Schedule.fromDelays([100])])
 * assert.deepStrictEqual(Schedule.delays(s), [100, 300])
 *
 * @category instances
 * @since 0.1.0
 */
export const getUnionMonoid = <In>(): Monoid<Schedule<In>> => ({
  concat: (x, y) => union(y)(x),
  empty: stop
})

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * Options of {@link delays}.
 *
 * @example
 * import type { DelaysOptions } from 'fp-ts-retry/Schedule'
 *
 * const options: DelaysOptions<Error> = { limit: 10, input: new Error('timeout'), attemptDuration: 20 }
 *
 * @category interpreters
 * @since 0.1.0
 */
export interface DelaysOptions<In> {
  /** The most delays to produce, for schedules that never stop. Default 100. */
  readonly limit?: number
  /** Where jitter draws from. Default: a fresh `Random.seeded(0)`, so the result is the same on every call. */
  readonly random?: Random.Random
  /** The input every step sees (for `retrying`, the error). Default `undefined`. */
  readonly input?: In
  /** How long each attempt takes, in ms, for `upTo`-style limits. Default 0. */
  readonly attemptDuration?: number
}

// Seeded on first use: most schedules draw nothing, and building a generator costs more than stepping them.
const defaultRandom = (): Random.Random => {
  let random: Random.Random | undefined
  return { next: () => (random ??= Random.seeded(0)).next() }
}

/**
 * The delays a schedule would sleep through a run of failures, until it stops or `limit` is reached.
 *
 * **Details**
 *
 * Pure and synchronous: time is simulated (starting at 0, advancing by `attemptDuration` per attempt and by each
 * delay), nothing sleeps. The runner makes the same decisions with the same inputs, clock readings and draws.
 *
 * @example
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const s = pipe(Schedule.exponential(100), Schedule.upTo(1000))
 * assert.deepStrictEqual(Schedule.delays(s), [100, 200, 400])
 * // with 150 ms attempts, the third retry would start at 750 + 400 > 1000 ms: stop
 * assert.deepStrictEqual(Schedule.delays(s, { attemptDuration: 150 }), [100, 200])
 *
 * @category interpreters
 * @since 0.1.0
 */
export const delays = <In>(schedule: Schedule<In>, options: DelaysOptions<In> = {}): ReadonlyArray<number> => {
  const limit = validate.count('Schedule.delays', 'limit', options.limit ?? 100)
  const attemptDuration = validate.duration('Schedule.delays', 'attemptDuration', options.attemptDuration ?? 0)
  const random = options.random ?? defaultRandom()
  const input = options.input as In
  const progress = new Progress(schedule, 0)
  const out: Array<number> = []
  let now = 0
  while (out.length < limit) {
    now += attemptDuration
    const decision = progress.decide(input, now, random)
    if (decision._tag === 'Done') break
    out.push(decision.delay)
    now += decision.delay
  }
  return out
}
