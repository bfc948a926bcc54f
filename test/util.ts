/**
 * Shared test helpers: the one assertion vocabulary of the tests (typed equality, thrown and rejected errors, the
 * sides of an `Either`), a table of the numbers no duration may be, a reference interpreter that records every step
 * of a schedule, fast-check arbitraries of generated schedules, and trackers of timers.
 */
import * as assert from 'assert'
import * as fc from 'fast-check'
import type { Either } from 'fp-ts/Either'
import * as O from 'fp-ts/Option'
import * as Random from '../src/Random'
import type { RetryStatus } from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'

// -------------------------------------------------------------------------------------
// assertions
// -------------------------------------------------------------------------------------

/** `assert.deepStrictEqual` with both sides of one type, so that comparing mismatched types fails to compile. */
export const deepStrictEqual = <A>(actual: A, expected: A): void => {
  assert.deepStrictEqual(actual, expected)
}

/** `assert.strictEqual` (`Object.is`) with both sides of one type. */
export const strictEqual = <A>(actual: A, expected: A): void => {
  assert.strictEqual(actual, expected)
}

/** Asserts that `condition` holds; `message` says what was expected. */
export function ok(condition: boolean, message?: string): asserts condition {
  assert.ok(condition, message)
}

/** The constructor of an error class, for {@link throwsError}. */
type ErrorClass<E extends Error> = abstract new (...args: never) => E

/** Asserts that `f` throws an instance of `errorClass` whose message matches `message`. */
export const throwsError = <E extends Error>(f: () => unknown, errorClass: ErrorClass<E>, message: RegExp): void => {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof errorClass, `expected a ${errorClass.name}, received ${String(e)}`)
    assert.match(e.message, message)
    return true
  })
}

/** Asserts that `f` throws a `RangeError` whose message matches `message`. */
export const throwsRangeError = (f: () => unknown, message: RegExp): void => throwsError(f, RangeError, message)

/** Asserts that `f` throws a `TypeError` whose message matches `message`. */
export const throwsTypeError = (f: () => unknown, message: RegExp): void => throwsError(f, TypeError, message)

/** The error a call produced, whether it threw synchronously or rejected. */
export const caught = async (f: () => unknown): Promise<unknown> => {
  try {
    await f()
  } catch (e) {
    return e
  }
  throw new Error('expected an error')
}

/** Asserts that `promise` rejects with exactly `expected` (the same value, not an equal one). */
export const rejectsWith = async (promise: Promise<unknown>, expected: unknown): Promise<void> => {
  strictEqual(await caught(() => promise), expected)
}

/** The `Left` of an `Either`, or a failed assertion. */
export const leftOf = <E, A>(result: Either<E, A>): E => {
  if (result._tag === 'Left') return result.left
  return assert.fail(`expected a Left, received a Right: ${String(result.right)}`)
}

/** The `Right` of an `Either`, or a failed assertion. */
export const rightOf = <E, A>(result: Either<E, A>): A => {
  if (result._tag === 'Right') return result.right
  return assert.fail(`expected a Right, received a Left: ${String(result.left)}`)
}

// -------------------------------------------------------------------------------------
// bad arguments
// -------------------------------------------------------------------------------------

/** The numbers no duration may be, as a test names them: negative, NaN or infinite. */
export const notDurations: ReadonlyArray<readonly [name: string, value: number]> = [
  ['-1', -1],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity]
]

/** One row of a table of bad arguments: what is called, how, and the `RangeError` message it must give. */
export type RangeErrorCase = readonly [call: string, f: () => unknown, message: RegExp]

/** One `it` per row: each call must throw a `RangeError` whose message names the bad argument. */
export const itThrowsRangeErrors = (cases: ReadonlyArray<RangeErrorCase>): void => {
  it.each(cases.map(([call, f, message]) => ({ call, f, message })))(
    '$call should be a RangeError naming it',
    ({ f, message }) => throwsRangeError(f, message)
  )
}

// -------------------------------------------------------------------------------------
// the event loop
// -------------------------------------------------------------------------------------

/** One turn of the event loop: every promise job queued so far has run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

// -------------------------------------------------------------------------------------
// reference interpreter
// -------------------------------------------------------------------------------------

/** One call of a schedule's `step`, with everything it was given and what it answered. */
export interface Step {
  readonly state: Schedule.Json
  readonly status: RetryStatus
  readonly now: number
  /** The state of the run's `Random` just before this step, to replay the same draws. */
  readonly randomState: ReadonlyArray<number>
  readonly decision: Schedule.Decision
}

/** Options of {@link trace}, as in `Schedule.delays`, with a seed instead of a `Random`. */
export interface TraceOptions<In> {
  readonly input: In
  readonly seed?: number
  readonly attemptDuration?: number
  readonly limit?: number
}

/**
 * Steps a schedule through a run of failures, as `Schedule.delays` does, but calls `step` directly and checks
 * nothing, so a test sees every raw decision (the last one is the `Done`, if the run stopped before `limit`).
 */
export const trace = <In>(schedule: Schedule.Schedule<In>, options: TraceOptions<In>): ReadonlyArray<Step> => {
  const random = Random.seeded(options.seed ?? 0)
  const attemptDuration = options.attemptDuration ?? 0
  const limit = options.limit ?? 100
  const steps: Array<Step> = []
  let state = schedule.initial
  let now = 0
  let iterNumber = 0
  let cumulativeDelay = 0
  let previousDelay: O.Option<number> = O.none
  let dueAt = 0
  while (iterNumber < limit) {
    now += attemptDuration
    const status: RetryStatus = { iterNumber, elapsed: now, cumulativeDelay, previousDelay }
    const randomState = random.getState()
    const decision = schedule.step(state, { input: options.input, status, now, dueAt, random })
    steps.push({ state, status, now, randomState, decision })
    if (decision._tag === 'Done') break
    state = decision.state
    iterNumber++
    cumulativeDelay += decision.delay
    previousDelay = O.some(decision.delay)
    now += decision.delay
    dueAt = now
  }
  return steps
}

/** The delays of the `Continue` decisions of a trace. */
export const traceDelays = (steps: ReadonlyArray<Step>): ReadonlyArray<number> =>
  steps.flatMap((s) => (s.decision._tag === 'Continue' ? [s.decision.delay] : []))

// -------------------------------------------------------------------------------------
// generated schedules
// -------------------------------------------------------------------------------------

/** A schedule as data, so that fast-check can print and shrink it; {@link toSchedule} builds it. */
export type ScheduleSpec =
  | { readonly _tag: 'forever' }
  | { readonly _tag: 'stop' }
  | { readonly _tag: 'constant'; readonly delay: number }
  | { readonly _tag: 'exponential'; readonly base: number; readonly factor: number }
  | { readonly _tag: 'linear'; readonly step: number }
  | { readonly _tag: 'fibonacci'; readonly base: number }
  | { readonly _tag: 'fromDelays'; readonly delays: ReadonlyArray<number> }
  | { readonly _tag: 'recurs'; readonly n: number }
  | { readonly _tag: 'randomBetween'; readonly min: number; readonly max: number }
  | { readonly _tag: 'decorrelatedJitter'; readonly base: number; readonly cap: number }
  | { readonly _tag: 'truncatedBinaryExponential'; readonly maxDoublings: number; readonly maxDelay: number }
  | { readonly _tag: 'capped'; readonly max: number; readonly self: ScheduleSpec }
  | { readonly _tag: 'minDelay'; readonly min: number; readonly self: ScheduleSpec }
  | { readonly _tag: 'fullJitter'; readonly self: ScheduleSpec }
  | { readonly _tag: 'equalJitter'; readonly self: ScheduleSpec }
  | { readonly _tag: 'upTo'; readonly ms: number; readonly self: ScheduleSpec }
  | { readonly _tag: 'maxCumulativeDelay'; readonly ms: number; readonly self: ScheduleSpec }
  | { readonly _tag: 'whileInput'; readonly below: number; readonly self: ScheduleSpec }
  | { readonly _tag: 'untilInput'; readonly below: number; readonly self: ScheduleSpec }
  | { readonly _tag: 'intersect'; readonly left: ScheduleSpec; readonly right: ScheduleSpec }
  | { readonly _tag: 'union'; readonly left: ScheduleSpec; readonly right: ScheduleSpec }
  | { readonly _tag: 'andThen'; readonly left: ScheduleSpec; readonly right: ScheduleSpec }

/** Builds the schedule a spec describes; `whileInput` and `untilInput` look at a numeric input. */
export const toSchedule = (spec: ScheduleSpec): Schedule.Schedule<number> => {
  switch (spec._tag) {
    case 'forever':
      return Schedule.forever
    case 'stop':
      return Schedule.stop
    case 'constant':
      return Schedule.constant(spec.delay)
    case 'exponential':
      return Schedule.exponential(spec.base, spec.factor)
    case 'linear':
      return Schedule.linear(spec.step)
    case 'fibonacci':
      return Schedule.fibonacci(spec.base)
    case 'fromDelays':
      return Schedule.fromDelays(spec.delays)
    case 'recurs':
      return Schedule.recurs(spec.n)
    case 'randomBetween':
      return Schedule.randomBetween(spec.min, spec.max)
    case 'decorrelatedJitter':
      return Schedule.decorrelatedJitter(spec.base, spec.cap)
    case 'truncatedBinaryExponential':
      return Schedule.truncatedBinaryExponential({ maxDoublings: spec.maxDoublings, maxDelay: spec.maxDelay })
    case 'capped':
      return Schedule.capped(spec.max)(toSchedule(spec.self))
    case 'minDelay':
      return Schedule.minDelay(spec.min)(toSchedule(spec.self))
    case 'fullJitter':
      return Schedule.fullJitter(toSchedule(spec.self))
    case 'equalJitter':
      return Schedule.equalJitter(toSchedule(spec.self))
    case 'upTo':
      return Schedule.upTo(spec.ms)(toSchedule(spec.self))
    case 'maxCumulativeDelay':
      return Schedule.maxCumulativeDelay(spec.ms)(toSchedule(spec.self))
    case 'whileInput':
      return Schedule.whileInput((n: number) => n < spec.below)(toSchedule(spec.self))
    case 'untilInput':
      return Schedule.untilInput((n: number) => n < spec.below)(toSchedule(spec.self))
    case 'intersect':
      return Schedule.intersect(toSchedule(spec.right))(toSchedule(spec.left))
    case 'union':
      return Schedule.union(toSchedule(spec.right))(toSchedule(spec.left))
    case 'andThen':
      return Schedule.andThen(toSchedule(spec.right))(toSchedule(spec.left))
  }
}

/** A spec as the TypeScript expression that builds it, for counterexamples that read like code. */
export const showSpec = (spec: ScheduleSpec): string => {
  switch (spec._tag) {
    case 'forever':
    case 'stop':
      return spec._tag
    case 'constant':
      return `constant(${spec.delay})`
    case 'exponential':
      return `exponential(${spec.base}, ${spec.factor})`
    case 'linear':
      return `linear(${spec.step})`
    case 'fibonacci':
      return `fibonacci(${spec.base})`
    case 'fromDelays':
      return `fromDelays([${spec.delays.join(', ')}])`
    case 'recurs':
      return `recurs(${spec.n})`
    case 'randomBetween':
      return `randomBetween(${spec.min}, ${spec.max})`
    case 'decorrelatedJitter':
      return `decorrelatedJitter(${spec.base}, ${spec.cap})`
    case 'truncatedBinaryExponential':
      return `truncatedBinaryExponential({ maxDoublings: ${spec.maxDoublings}, maxDelay: ${spec.maxDelay} })`
    case 'capped':
      return `capped(${spec.max})(${showSpec(spec.self)})`
    case 'minDelay':
      return `minDelay(${spec.min})(${showSpec(spec.self)})`
    case 'fullJitter':
    case 'equalJitter':
      return `${spec._tag}(${showSpec(spec.self)})`
    case 'upTo':
    case 'maxCumulativeDelay':
      return `${spec._tag}(${spec.ms})(${showSpec(spec.self)})`
    case 'whileInput':
    case 'untilInput':
      return `${spec._tag}((n) => n < ${spec.below})(${showSpec(spec.self)})`
    case 'intersect':
    case 'union':
    case 'andThen':
      return `${spec._tag}(${showSpec(spec.right)})(${showSpec(spec.left)})`
  }
}

/** Options of the schedule arbitraries. */
export interface ScheduleArbitraryOptions {
  /** The largest duration argument, in ms. Default 1000; `Number.MAX_VALUE` explores saturation. */
  readonly maxMs?: number
  /** Whether to generate `upTo` and `maxCumulativeDelay`, whose decisions depend on the run's status. Default true. */
  readonly statusLimits?: boolean
  /** How deep combinators nest. Default 3. */
  readonly maxDepth?: number
}

/** The smallest positive normal double: below it, halving a number is no longer exact. */
const MIN_NORMAL = 2 ** -1022

/**
 * A duration argument in `[0, maxMs]`: small whole numbers (readable counterexamples) or any double. Subnormal
 * doubles become 0: no one waits 1e-320 ms (`Schedule.test.ts` pins how `equalJitter` treats them).
 */
export const durationArbitrary = (maxMs = 1000): fc.Arbitrary<number> =>
  fc.oneof(
    fc.integer({ min: 0, max: Math.min(maxMs, 1000) }),
    fc.double({ min: 0, max: maxMs, noNaN: true, noDefaultInfinity: true }).map((x) => (x < MIN_NORMAL ? 0 : x))
  )

/** Two durations, the smaller first: for `min <= max` and `base <= cap`. */
const orderedPair = (maxMs: number): fc.Arbitrary<readonly [number, number]> =>
  fc
    .tuple(durationArbitrary(maxMs), durationArbitrary(maxMs))
    .map(([a, b]): readonly [number, number] => (a <= b ? [a, b] : [b, a]))

/** Generated schedule specs, from every constructor and combinator, nested up to `maxDepth`. */
export const scheduleSpecArbitrary = (options: ScheduleArbitraryOptions = {}): fc.Arbitrary<ScheduleSpec> => {
  const maxMs = options.maxMs ?? 1000
  const wide = maxMs > 1000
  const ms = durationArbitrary(maxMs)
  const factor = wide
    ? fc.oneof(fc.constant(2), fc.double({ min: 1, max: 1e300, noNaN: true }))
    : fc.oneof(fc.constant(2), fc.double({ min: 1, max: 4, noNaN: true }))
  const leaf: fc.Arbitrary<ScheduleSpec> = fc.oneof(
    fc.constant<ScheduleSpec>({ _tag: 'forever' }),
    fc.constant<ScheduleSpec>({ _tag: 'stop' }),
    ms.map((delay): ScheduleSpec => ({ _tag: 'constant', delay })),
    fc.tuple(ms, factor).map(([base, f]): ScheduleSpec => ({ _tag: 'exponential', base, factor: f })),
    ms.map((step): ScheduleSpec => ({ _tag: 'linear', step })),
    ms.map((base): ScheduleSpec => ({ _tag: 'fibonacci', base })),
    fc.array(ms, { maxLength: 6 }).map((delays): ScheduleSpec => ({ _tag: 'fromDelays', delays })),
    fc.nat(8).map((n): ScheduleSpec => ({ _tag: 'recurs', n })),
    orderedPair(maxMs).map(([min, max]): ScheduleSpec => ({ _tag: 'randomBetween', min, max })),
    orderedPair(maxMs).map(([base, cap]): ScheduleSpec => ({ _tag: 'decorrelatedJitter', base, cap })),
    fc
      .tuple(fc.nat(12), ms)
      .map(([maxDoublings, maxDelay]): ScheduleSpec => ({ _tag: 'truncatedBinaryExponential', maxDoublings, maxDelay }))
  )
  const below = fc.integer({ min: 0, max: 10 })
  const { schedule } = fc.letrec<{ schedule: ScheduleSpec }>((tie) => {
    const self = tie('schedule')
    const combinators: Array<fc.Arbitrary<ScheduleSpec>> = [
      fc.tuple(ms, self).map(([max, s]): ScheduleSpec => ({ _tag: 'capped', max, self: s })),
      fc.tuple(ms, self).map(([min, s]): ScheduleSpec => ({ _tag: 'minDelay', min, self: s })),
      self.map((s): ScheduleSpec => ({ _tag: 'fullJitter', self: s })),
      self.map((s): ScheduleSpec => ({ _tag: 'equalJitter', self: s })),
      fc.tuple(below, self).map(([b, s]): ScheduleSpec => ({ _tag: 'whileInput', below: b, self: s })),
      fc.tuple(below, self).map(([b, s]): ScheduleSpec => ({ _tag: 'untilInput', below: b, self: s })),
      fc.tuple(self, self).map(([left, right]): ScheduleSpec => ({ _tag: 'intersect', left, right })),
      fc.tuple(self, self).map(([left, right]): ScheduleSpec => ({ _tag: 'union', left, right })),
      fc.tuple(self, self).map(([left, right]): ScheduleSpec => ({ _tag: 'andThen', left, right }))
    ]
    if (options.statusLimits ?? true) {
      combinators.push(
        fc.tuple(ms, self).map(([m, s]): ScheduleSpec => ({ _tag: 'upTo', ms: m, self: s })),
        fc.tuple(ms, self).map(([m, s]): ScheduleSpec => ({ _tag: 'maxCumulativeDelay', ms: m, self: s }))
      )
    }
    // The leaf comes first: at maxDepth, fast-check picks the first arbitrary.
    return {
      schedule: fc.oneof(
        { maxDepth: options.maxDepth ?? 3, depthSize: 'small', withCrossShrink: true },
        leaf,
        ...combinators
      )
    }
  })
  return schedule
}

/** Generated schedules, printed as the expression that builds them. */
export const scheduleArbitrary = (options: ScheduleArbitraryOptions = {}): fc.Arbitrary<Schedule.Schedule<number>> =>
  scheduleSpecArbitrary(options).map((spec) =>
    Object.assign(toSchedule(spec), { [fc.toStringMethod]: () => showSpec(spec) })
  )

/** A seed for `Random.seeded`: a whole number from 0 to 2^32 - 1. */
export const seedArbitrary: fc.Arbitrary<number> = fc.integer({ min: 0, max: 0xffffffff })

/** The numeric input that generated `whileInput` / `untilInput` schedules look at. */
export const inputArbitrary: fc.Arbitrary<number> = fc.integer({ min: 0, max: 10 })

/** How long each attempt takes, in ms: often 0, sometimes whole, sometimes fractional. */
export const attemptDurationArbitrary: fc.Arbitrary<number> = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 200 }),
  fc.double({ min: 0, max: 200, noNaN: true })
)

/** Everything a run of `Schedule.delays` depends on besides the schedule. */
export interface RunContext {
  readonly seed: number
  readonly input: number
  readonly attemptDuration: number
}

/** Generated run contexts. */
export const runContextArbitrary: fc.Arbitrary<RunContext> = fc.record({
  seed: seedArbitrary,
  input: inputArbitrary,
  attemptDuration: attemptDurationArbitrary
})

/** `Schedule.delays` in a run context, with a fresh `Random.seeded(seed)` each call. */
export const delaysIn = (schedule: Schedule.Schedule<number>, context: RunContext, limit = 30): ReadonlyArray<number> =>
  Schedule.delays(schedule, {
    random: Random.seeded(context.seed),
    input: context.input,
    attemptDuration: context.attemptDuration,
    limit
  })

/**
 * Tracks the timers armed through the global `setTimeout` from here on: `live()` counts those that have neither
 * fired nor been cleared. Only this test's code is seen, not the test runner's own timers.
 */
export const trackTimers = (): { readonly armed: () => number; readonly live: () => number } => {
  const live = new Set<unknown>()
  let armed = 0
  const realSetTimeout = globalThis.setTimeout
  const realClearTimeout = globalThis.clearTimeout
  jest.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
    armed++
    const id = realSetTimeout(() => {
      live.delete(id)
      f()
    }, ms)
    live.add(id)
    return id
  }) as typeof setTimeout)
  jest.spyOn(globalThis, 'clearTimeout').mockImplementation(((id: ReturnType<typeof setTimeout>) => {
    live.delete(id)
    realClearTimeout(id)
  }) as typeof clearTimeout)
  return { armed: () => armed, live: () => live.size }
}
