/**
 * fast-check arbitraries for users' property tests: schedules built from every constructor and combinator, the
 * outcomes of a run's attempts, and {@link simulate}, a run of a schedule over such outcomes through the one
 * interpreter (`Driver`), with no clock and no waiting. A policy's promise ("never waits more than 30 s in all,
 * never retries a 400") becomes a property in a few lines.
 *
 * `fast-check` is an optional peer dependency: only this module loads it.
 *
 * @example
 * import * as Arbitrary from 'fp-ts-retry/Arbitrary'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as fc from 'fast-check'
 * import { pipe } from 'fp-ts/function'
 *
 * const policy = pipe(
 *   Schedule.exponential(100),
 *   Schedule.capped(5_000),
 *   Schedule.fullJitter,
 *   Schedule.whileInput((status: number) => status >= 500),
 *   Schedule.maxCumulativeDelay(30_000)
 * )
 * fc.assert(
 *   fc.property(Arbitrary.outcomes(fc.constantFrom(400, 500, 503)), Arbitrary.seed, (outcomes, seed) => {
 *     const run = Arbitrary.simulate(policy, outcomes, { seed })
 *     return run.totalDelay <= 30_000 && run.retried.every((status) => status !== 400)
 *   })
 * )
 *
 * @since 1.0.0
 */
import * as fc from 'fast-check'
import type { Either } from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as Driver from './Driver'
import * as validate from './internal/validate'
import * as Random from './Random'
import type { StopReason } from './Retry'
import * as Schedule from './Schedule'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Options of {@link schedule}.
 *
 * **Details**
 *
 * - `maxDelay` (default 60,000): the largest base delay, in ms, a generated constructor is given.
 * - `depth` (default 3): how deeply combinators nest.
 * - `maxRetries` (default 10): every generated schedule is bounded by a `recurs` of at most this many retries,
 *   so a property over it ends.
 *
 * @example
 * import type { ScheduleOptions } from 'fp-ts-retry/Arbitrary'
 *
 * const small: ScheduleOptions = { maxDelay: 1_000, depth: 2, maxRetries: 5 }
 *
 * @category model
 * @since 1.0.0
 */
export interface ScheduleOptions {
  readonly maxDelay?: number | undefined
  readonly depth?: number | undefined
  readonly maxRetries?: number | undefined
}

/**
 * Schedules built from the library's constructors (`constant`, `exponential`, `linear`, `fibonacci`,
 * `fromDelays`, `decorrelatedJitter`, `randomBetween`) and combinators (`capped`, `minDelay`, the jitters
 * `fullJitter`, `equalJitter` and `jittered`, `upTo`, `maxCumulativeDelay`, `intersect`, `union`, `andThen`),
 * each bounded by a `recurs`. Shrinks toward small, shallow schedules; a failing case prints its `description`.
 *
 * **Details**
 *
 * - Every name listed above is generated (a test samples them all): a schedule's `description` says which it is
 *   built of.
 * - `upTo` reads the time: run such a schedule through a `Driver` (`Driver.delays`, {@link simulate}), which
 *   hands it the elapsed time, as the runners do.
 *
 * @example
 * import * as Arbitrary from 'fp-ts-retry/Arbitrary'
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as fc from 'fast-check'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * // whatever a schedule is built of, each delay is a finite number >= 0, and capped keeps each one within its cap
 * fc.assert(
 *   fc.property(Arbitrary.schedule(), fc.integer({ min: 0, max: 60_000 }), Arbitrary.seed, (schedule, cap, seed) => {
 *     const delays = Driver.delays(schedule, { random: Random.seeded(seed) })
 *     assert.ok(delays.every((d) => Number.isFinite(d) && d >= 0), schedule.description)
 *     const capped = Driver.delays(pipe(schedule, Schedule.capped(cap)), { random: Random.seeded(seed) })
 *     assert.ok(capped.every((d) => d >= 0 && d <= cap), schedule.description)
 *   })
 * )
 *
 * @category constructors
 * @since 1.0.0
 */
export const schedule = (options: ScheduleOptions = {}): fc.Arbitrary<Schedule.Schedule<unknown>> => {
  const where = 'Arbitrary.schedule'
  validate.object(where, 'options', options)
  const maxDelay = validate.positiveCount(where, 'options.maxDelay', options.maxDelay ?? 60_000)
  const depth = validate.count(where, 'options.depth', options.depth ?? 3)
  const maxRetries = validate.count(where, 'options.maxRetries', options.maxRetries ?? 10)
  const ms = fc.integer({ min: 0, max: maxDelay })
  const positive = fc.integer({ min: 1, max: maxDelay })
  const base: fc.Arbitrary<Schedule.Schedule<unknown>> = fc.oneof(
    ms.map(Schedule.constant),
    fc.tuple(positive, fc.constantFrom(1.5, 2, 3)).map(([b, f]) => Schedule.exponential(b, f)),
    ms.map(Schedule.linear),
    positive.map(Schedule.fibonacci),
    fc.array(ms, { maxLength: 5 }).map(Schedule.fromDelays),
    fc.tuple(positive, positive).map(([a, b]) => Schedule.decorrelatedJitter(Math.min(a, b), Math.max(a, b))),
    fc.tuple(ms, ms).map(([a, b]) => Schedule.randomBetween(Math.min(a, b), Math.max(a, b)))
  )
  type Tree = fc.Arbitrary<Schedule.Schedule<unknown>>
  const { tree } = fc.letrec<{ tree: Schedule.Schedule<unknown> }>((tie) => {
    const sub = tie('tree') as Tree
    return {
      tree: fc.oneof(
        { depthSize: 'small', maxDepth: depth, withCrossShrink: true },
        base,
        fc.tuple(sub, ms).map(([s, max]) => pipe(s, Schedule.capped(max))),
        fc.tuple(sub, ms).map(([s, min]) => pipe(s, Schedule.minDelay(min))),
        sub.map(Schedule.fullJitter),
        sub.map(Schedule.equalJitter),
        sub.map(Schedule.jittered()),
        fc.tuple(sub, ms).map(([s, limit]) => pipe(s, Schedule.upTo(limit))),
        fc.tuple(sub, ms).map(([s, limit]) => pipe(s, Schedule.maxCumulativeDelay(limit))),
        fc.tuple(sub, sub).map(([a, b]) => pipe(a, Schedule.intersect(b))),
        fc.tuple(sub, sub).map(([a, b]) => pipe(a, Schedule.union(b))),
        fc.tuple(sub, sub).map(([a, b]) => pipe(a, Schedule.andThen(b)))
      )
    }
  })
  return fc
    .tuple(tree, fc.integer({ min: 0, max: maxRetries }))
    .map(([s, n]) => pipe(s, Schedule.intersect(Schedule.recurs(n))))
}

/**
 * The outcomes of a run's attempts, in order: failures with errors drawn from `error`, possibly ending with a
 * success (`value`, default `undefined`). At most `maxLength` (default 20).
 *
 * @example
 * import * as Arbitrary from 'fp-ts-retry/Arbitrary'
 * import * as fc from 'fast-check'
 * import * as assert from 'assert'
 *
 * const [sample] = fc.sample(Arbitrary.outcomes(fc.constantFrom('ECONNRESET', 'ETIMEDOUT')), { numRuns: 1, seed: 1 })
 * assert.ok(sample.slice(0, -1).every((o) => o._tag === 'Left'))
 *
 * @category constructors
 * @since 1.0.0
 */
export const outcomes = <E, A = undefined>(
  error: fc.Arbitrary<E>,
  options: { readonly value?: fc.Arbitrary<A> | undefined; readonly maxLength?: number | undefined } = {}
): fc.Arbitrary<ReadonlyArray<Either<E, A>>> => {
  const maxLength = options.maxLength ?? 20
  const value = options.value ?? (fc.constant(undefined) as unknown as fc.Arbitrary<A>)
  const left = error.map((e): Either<E, A> => ({ _tag: 'Left', left: e }))
  const right = value.map((a): Either<E, A> => ({ _tag: 'Right', right: a }))
  return fc
    .tuple(fc.array(left, { maxLength }), fc.option(right, { nil: undefined }))
    .map(([lefts, last]) => (last === undefined || lefts.length === maxLength ? lefts : [...lefts, last]))
}

/**
 * A seed for {@link simulate}'s draws (and `Random.seeded`): a whole number from 0 to 2^32 - 1.
 *
 * @example
 * import * as Arbitrary from 'fp-ts-retry/Arbitrary'
 * import * as fc from 'fast-check'
 * import * as assert from 'assert'
 *
 * assert.ok(fc.sample(Arbitrary.seed, 10).every(Number.isInteger))
 *
 * @category constructors
 * @since 1.0.0
 */
export const seed: fc.Arbitrary<number> = fc.integer({ min: 0, max: 0xffffffff })

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * What {@link simulate} found: the delays slept, the errors that were retried, how many attempts were made, the
 * sum of the delays, and why the run ended.
 *
 * @example
 * import type { Simulation } from 'fp-ts-retry/Arbitrary'
 *
 * const tooPatient = (run: Simulation<unknown>): boolean => run.totalDelay > 30_000
 *
 * @category model
 * @since 1.0.0
 */
export interface Simulation<E> {
  readonly delays: ReadonlyArray<number>
  readonly retried: ReadonlyArray<E>
  readonly attempts: number
  readonly totalDelay: number
  readonly reason: Extract<StopReason, 'succeeded' | 'failed' | 'schedule'>
}

/**
 * Runs `schedule` as `retrying` would over `outcomes`, through a `Driver`, with simulated time: each attempt
 * takes `attemptDuration` ms (default 0), draws come from `Random.seeded(seed)` (default seed 0). The run stops at
 * the first success (`'succeeded'`), when the schedule stops (`'schedule'`), or when the outcomes run out while
 * the schedule would go on (`'failed'`: a property over a finite sequence says nothing of the attempts after).
 *
 * @example
 * import * as Arbitrary from 'fp-ts-retry/Arbitrary'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const run = Arbitrary.simulate(Schedule.fromDelays([100, 200]), [{ _tag: 'Left', left: 503 }, { _tag: 'Left', left: 503 }, { _tag: 'Right', right: 'ok' }])
 * assert.deepStrictEqual(run, { delays: [100, 200], retried: [503, 503], attempts: 3, totalDelay: 300, reason: 'succeeded' })
 *
 * @category interpreters
 * @since 1.0.0
 */
export const simulate = <In, E extends In, A>(
  schedule: Schedule.Schedule<In>,
  outcomes: ReadonlyArray<Either<E, A>>,
  options: { readonly seed?: number | undefined; readonly attemptDuration?: number | undefined } = {}
): Simulation<E> => {
  const where = 'Arbitrary.simulate'
  validate.schedule(where, 'schedule', schedule)
  const attemptDuration = validate.duration(where, 'options.attemptDuration', options.attemptDuration ?? 0)
  const driver = Driver.make(schedule, { start: 0, random: Random.seeded(options.seed ?? 0) })
  const delays: Array<number> = []
  const retried: Array<E> = []
  let now = 0
  let totalDelay = 0
  for (const outcome of outcomes) {
    now += attemptDuration
    const attempts = delays.length + 1
    if (outcome._tag === 'Right') return { delays, retried, attempts, totalDelay, reason: 'succeeded' }
    const delay = driver.advance(outcome.left, now)
    if (delay < 0) return { delays, retried, attempts, totalDelay, reason: 'schedule' }
    delays.push(delay)
    retried.push(outcome.left)
    totalDelay += delay
    now += delay
  }
  return { delays, retried, attempts: delays.length, totalDelay, reason: 'failed' }
}
