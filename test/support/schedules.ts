/**
 * Helpers of the Schedule and Driver tests: a reference interpreter that calls a schedule's pure `step` with the
 * record it takes, the same run made through a `Driver`, and generated schedules from every constructor and
 * combinator, each with the `readsTime` it should have. Assertions come from `test/util.ts`.
 */
import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import * as Driver from '../../src/Driver'
import * as validate from '../../src/internal/validate'
import * as Random from '../../src/Random'
import type { RetryStatus } from '../../src/RetryStatus'
import * as Schedule from '../../src/Schedule'
import { seedArbitrary } from '../util'

// -------------------------------------------------------------------------------------
// values
// -------------------------------------------------------------------------------------

/** Every number in a JSON value, depth first, to look for `-0` in a state. */
export const numbersIn = (value: unknown): ReadonlyArray<number> =>
  typeof value === 'number'
    ? [value]
    : Array.isArray(value)
    ? value.flatMap(numbersIn)
    : value !== null && typeof value === 'object'
    ? Object.values(value).flatMap(numbersIn)
    : []

// -------------------------------------------------------------------------------------
// runs
// -------------------------------------------------------------------------------------

/**
 * What a run depends on besides the schedule: the seed of its `Random`, the inputs of its failures (cycled), how
 * long each attempt takes and when it starts. Times are simulated as `Driver.delays` does.
 */
export interface RunPlan {
  readonly seed: number
  readonly inputs: ReadonlyArray<number>
  readonly attemptDuration: number
  readonly start: number
  readonly limit: number
}

/** One decision of a run: the delay (or -1 to stop) and the schedule's state after it (`null` after a stop). */
export interface Decided {
  readonly delay: number
  readonly state: Schedule.Json
}

/** One call of a schedule's `step`, with the state and record it was given and what it answered. */
export interface Step {
  readonly state: Schedule.Json
  readonly context: Omit<Schedule.StepContext<number>, 'random'>
  /** The state of the run's `Random` just before this step, to replay the same draws. */
  readonly randomState: ReadonlyArray<number>
  readonly decision: Schedule.Decision
}

const inputAt = (plan: RunPlan, i: number): number => plan.inputs[i % plan.inputs.length]

/**
 * The reference interpreter: steps a schedule through a run by calling its pure `step` with a `StepContext`,
 * keeping the status by hand and checking nothing, so that a test sees every raw decision (the last one is the
 * `Done`, when the run stopped before `limit`).
 */
export const trace = (schedule: Schedule.Schedule<number>, plan: RunPlan): ReadonlyArray<Step> => {
  const random = Random.seeded(plan.seed)
  const steps: Array<Step> = []
  let state = schedule.initial
  let now = plan.start
  let iterNumber = 0
  let cumulativeDelay = 0
  let previousDelay: O.Option<number> = O.none
  // when the attempt about to fail was due: the run's start, then each decision's time plus its delay
  let dueAt = plan.start
  while (iterNumber < plan.limit) {
    now += plan.attemptDuration
    const status: RetryStatus = { iterNumber, elapsed: now - plan.start, cumulativeDelay, previousDelay }
    const context = { input: inputAt(plan, iterNumber), status, now, dueAt }
    const randomState = random.getState()
    const decision = schedule.step(state, { ...context, random })
    steps.push({ state, context, randomState, decision })
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

/**
 * What a stepper reads to replay `step`: its context, as a `Cursor`, drawing from a fresh `Random` at the position
 * the run's was in just before it.
 */
export const replayCursor = (step: Step): Schedule.Cursor<number> => {
  const context: Schedule.StepContext<number> = { ...step.context, random: Random.fromState(step.randomState) }
  return {
    ...context,
    iterNumber: context.status.iterNumber,
    elapsed: context.status.elapsed,
    cumulativeDelay: context.status.cumulativeDelay,
    report: () => undefined,
    context: () => context
  }
}

/** The decisions of a trace, as a `Driver` reports them: the delay or -1, and the state after each. */
export const traceDecisions = (steps: ReadonlyArray<Step>): ReadonlyArray<Decided> =>
  steps.map((s) =>
    s.decision._tag === 'Continue' ? { delay: s.decision.delay, state: s.decision.state } : { delay: -1, state: null }
  )

/** The delays of the `Continue` decisions of a trace. */
export const traceDelays = (steps: ReadonlyArray<Step>): ReadonlyArray<number> =>
  steps.flatMap((s) => (s.decision._tag === 'Continue' ? [s.decision.delay] : []))

/** The time of the next decision of a run planned by `plan`, after `driver`'s latest one. */
const nextNow = (driver: Driver.Driver<number>, plan: RunPlan): number => driver.dueAt + plan.attemptDuration

/**
 * Advances `driver` through the rest of the run planned by `plan`, as {@link trace} does (each attempt starts
 * when it is due and takes `attemptDuration`), until it stops or `plan.limit` retries were made; `steps` bounds
 * the decisions made in this call.
 */
export const advanceRun = (driver: Driver.Driver<number>, plan: RunPlan, steps = Infinity): ReadonlyArray<Decided> => {
  const out: Array<Decided> = []
  while (out.length < steps && driver.iterNumber < plan.limit && !driver.done) {
    const delay = driver.advance(inputAt(plan, driver.iterNumber), nextNow(driver, plan))
    out.push({ delay, state: delay < 0 ? null : driver.snapshot().scheduleState })
  }
  return out
}

/** A fresh `Driver` for the run planned by `plan`, drawing from `Random.seeded(plan.seed)`. */
export const driverFor = (schedule: Schedule.Schedule<number>, plan: RunPlan): Driver.Driver<number> =>
  Driver.make(schedule, { start: plan.start, random: Random.seeded(plan.seed) })

/** A plan's inputs: the numeric input that generated predicates and hints look at. */
export const inputArbitrary: fc.Arbitrary<number> = fc.integer({ min: 0, max: 10 })

/** How long each attempt takes, in ms: often 0, sometimes whole, sometimes fractional. */
const attemptDurationArbitrary: fc.Arbitrary<number> = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 200 }),
  fc.double({ min: 0, max: 200, noNaN: true })
)

/** Generated run plans: any seed, a few inputs, attempts of 0 to 200 ms, a start anywhere in the epoch. */
export const runPlanArbitrary = (limit = 25): fc.Arbitrary<RunPlan> =>
  fc.record({
    seed: seedArbitrary,
    inputs: fc.array(inputArbitrary, { minLength: 1, maxLength: 4 }),
    attemptDuration: attemptDurationArbitrary,
    start: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2e12 })),
    limit: fc.constant(limit)
  })

/** The run `Driver.delays` makes: one seed, one input for every failure, attempts of one length, from time 0. */
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

/** A run context as a plan, for the reference interpreter and a `Driver`. */
export const planOf = (context: RunContext, limit = 30): RunPlan => ({
  seed: context.seed,
  inputs: [context.input],
  attemptDuration: context.attemptDuration,
  start: 0,
  limit
})

/** `Driver.delays` in a run context, with a fresh `Random.seeded(seed)` each call. */
export const delaysIn = (schedule: Schedule.Schedule<number>, context: RunContext, limit = 30): ReadonlyArray<number> =>
  Driver.delays(schedule, {
    random: Random.seeded(context.seed),
    input: context.input,
    attemptDuration: context.attemptDuration,
    limit
  })

// -------------------------------------------------------------------------------------
// generated schedules
// -------------------------------------------------------------------------------------

/**
 * A generated schedule: the value, the expression that builds it (what fast-check prints), and whether it should
 * read the time, by the rule stated once here: `make` says so in its options, `fromPolicy`, `fixed`, `windowed`,
 * `upTo` and `resetAfter` always do, `withHint` when its options say so, every other constructor never, and every
 * other combinator when one of the schedules it combines does.
 */
export interface Generated {
  readonly schedule: Schedule.Schedule<number>
  readonly code: string
  readonly readsTime: boolean
}

/** What generated schedules may look at, besides their own state, their input and their draws. */
export type Reads =
  /** Everything: the time, the status (`upTo`, `fixed`, `resetAfter`, `fromPolicy`, `make` reading `now`, ...). */
  | 'time'
  /** The status but not the time (`maxCumulativeDelay`, a `make` reading `iterNumber`): `readsTime` is false. */
  | 'status'
  /** Nothing: such a schedule composes exactly as its parts alone do. */
  | 'nothing'

/** Options of {@link generatedArbitrary}. */
export interface GeneratedOptions {
  readonly reads?: Reads
  /** The largest duration argument, in ms. Default 1000; `Number.MAX_VALUE` explores saturation. */
  readonly maxMs?: number
  /** How deep combinators nest. Default 3. */
  readonly maxDepth?: number
}

const leaf = (schedule: Schedule.Schedule<number>, code: string, readsTime = false): Generated => ({
  schedule,
  code,
  readsTime
})

const unary = (
  self: Generated,
  f: (s: Schedule.Schedule<number>) => Schedule.Schedule<number>,
  code: string,
  readsTime = false
): Generated => ({
  schedule: f(self.schedule),
  code: `pipe(${self.code}, ${code})`,
  readsTime: readsTime || self.readsTime
})

/** The smallest positive normal double: below it, no one waits (`Schedule.test.ts` pins subnormal delays). */
const MIN_NORMAL = 2 ** -1022

/** A duration argument in `[0, maxMs]`: small whole numbers (readable counterexamples) or any double. */
export const durationArbitrary = (maxMs = 1000): fc.Arbitrary<number> =>
  fc.oneof(
    fc.integer({ min: 0, max: Math.min(maxMs, 1000) }),
    fc.double({ min: 0, max: maxMs, noNaN: true, noDefaultInfinity: true }).map((x) => (x < MIN_NORMAL ? 0 : x))
  )

/** A hint as the input asks for it: some inputs ask for nothing, some for a bad hint that must be ignored. */
const hintOf =
  (scale: number) =>
  (n: number): number | undefined =>
    n === 1 ? undefined : n === 2 ? NaN : n === 3 ? -5 : n === 4 ? Infinity : n * scale

/**
 * Generated schedules from every constructor and combinator, nested up to `maxDepth`, printed as the expression
 * that builds them. Custom steps (`make`, `fromPolicy`, `withHint`'s hint) are fixed functions of their context.
 */
export const generatedArbitrary = (options: GeneratedOptions = {}): fc.Arbitrary<Generated> => {
  const reads = options.reads ?? 'time'
  const maxMs = options.maxMs ?? 1000
  const wide = maxMs > 1000
  const ms = durationArbitrary(maxMs)
  const positive = ms.map((x) => (x === 0 ? 1 : x))
  const ordered = fc.tuple(ms, ms).map(([a, b]): readonly [number, number] => (a <= b ? [a, b] : [b, a]))
  const factor = fc.oneof(fc.constant(2), fc.double({ min: 1, max: wide ? 1e300 : 4, noNaN: true }))
  const below = fc.integer({ min: 0, max: 10 })
  const leaves: Array<fc.Arbitrary<Generated>> = [
    fc.constant(leaf(Schedule.forever, 'forever')),
    fc.constant(leaf(Schedule.stop, 'stop')),
    ms.map((d) => leaf(Schedule.constant(d), `constant(${d})`)),
    fc.tuple(ms, factor).map(([b, f]) => leaf(Schedule.exponential(b, f), `exponential(${b}, ${f})`)),
    ms.map((s) => leaf(Schedule.linear(s), `linear(${s})`)),
    ms.map((b) => leaf(Schedule.fibonacci(b), `fibonacci(${b})`)),
    fc.array(ms, { maxLength: 6 }).map((ds) => leaf(Schedule.fromDelays(ds), `fromDelays([${ds.join(', ')}])`)),
    fc.nat(8).map((n) => leaf(Schedule.recurs(n), `recurs(${n})`)),
    ordered.map(([lo, hi]) => leaf(Schedule.randomBetween(lo, hi), `randomBetween(${lo}, ${hi})`)),
    ordered.map(([b, c]) => leaf(Schedule.decorrelatedJitter(b, c), `decorrelatedJitter(${b}, ${c})`)),
    fc
      .tuple(ms, fc.option(ms, { nil: undefined }))
      .map(([m, max]) =>
        leaf(Schedule.decorrelatedJitterV2(m, max), `decorrelatedJitterV2(${m}${max === undefined ? '' : `, ${max}`})`)
      ),
    fc
      .tuple(fc.nat(12), ms)
      .map(([n, max]) =>
        leaf(
          Schedule.truncatedBinaryExponential({ maxDoublings: n, maxDelay: max }),
          `truncatedBinaryExponential({ maxDoublings: ${n}, maxDelay: ${max} })`
        )
      )
  ]
  if (reads !== 'nothing') {
    leaves.push(
      fc.nat(6).map((n) =>
        leaf(
          Schedule.make(
            0,
            (k: number, c: Schedule.StepContext<number>) =>
              c.status.iterNumber < n ? Schedule.continueAfter(10 * c.input + k, k + 1) : Schedule.done,
            { description: `upToIter(${n})`, readsTime: false, isState: (k) => validate.isCount(k) }
          ),
          `make(0, upToIter(${n}), { readsTime: false })`
        )
      )
    )
  }
  if (reads === 'time') {
    leaves.push(
      ms.map((limit) =>
        leaf(
          Schedule.make(
            [0],
            ([k]: ReadonlyArray<number>, c: Schedule.StepContext<number>) =>
              c.status.elapsed > limit ? Schedule.done : Schedule.continueAfter((c.now % 7) + k, [k + 1]),
            {
              description: `clockwise(${limit})`,
              isState: (state) => Array.isArray(state) && state.length === 1 && validate.isCount(state[0])
            }
          ),
          `make([0], clockwise(${limit}))`,
          true
        )
      ),
      fc.nat(6).map((n) =>
        leaf(
          Schedule.fromPolicy((s) => (s.iterNumber < n ? O.some(s.iterNumber + (s.elapsed % 5)) : O.none)),
          `fromPolicy(first${n})`,
          true
        )
      ),
      positive.map((p) => leaf(Schedule.fixed(p), `fixed(${p})`, true)),
      positive.map((w) => leaf(Schedule.windowed(w), `windowed(${w})`, true))
    )
  }
  const { schedule } = fc.letrec<{ schedule: Generated }>((tie) => {
    const self = tie('schedule')
    const combinators: Array<fc.Arbitrary<Generated>> = [
      fc.tuple(ms, self).map(([m, s]) => unary(s, Schedule.capped(m), `capped(${m})`)),
      fc.tuple(ms, self).map(([m, s]) => unary(s, Schedule.minDelay(m), `minDelay(${m})`)),
      fc.tuple(fc.nat(100), self).map(([k, s]) =>
        unary(
          s,
          Schedule.modifyDelay((d) => d / 2 + k),
          `modifyDelay((d) => d / 2 + ${k})`
        )
      ),
      self.map((s) => unary(s, Schedule.fullJitter, 'fullJitter')),
      self.map((s) => unary(s, Schedule.equalJitter, 'equalJitter')),
      fc
        .tuple(ordered, self)
        .map(([[lo, hi], s]) => unary(s, Schedule.jittered(lo / 500, hi / 500), `jittered(${lo / 500}, ${hi / 500})`)),
      fc.tuple(below, self).map(([b, s]) =>
        unary(
          s,
          Schedule.whileInput((n: number) => n < b),
          `whileInput((n) => n < ${b})`
        )
      ),
      fc.tuple(below, self).map(([b, s]) =>
        unary(
          s,
          Schedule.untilInput((n: number) => n < b),
          `untilInput((n) => n < ${b})`
        )
      ),
      fc.tuple(below, self).map(([b, s]) =>
        unary(
          s,
          Schedule.retryFreeWhen((n: number) => n > b),
          `retryFreeWhen((n) => n > ${b})`
        )
      ),
      // withHint after a time limit is a TypeError by design: then the generated schedule is its inner one.
      fc
        .tuple(ms, ms, self)
        .map(([scale, max, s]) =>
          s.schedule.timeLimits.length > 0
            ? s
            : unary(s, Schedule.withHint(hintOf(scale), { max }), `withHint(hint(${scale}), { max: ${max} })`)
        ),
      fc.tuple(self, self).map(([l, r]) => binary(l, r, 'intersect')),
      fc.tuple(self, self).map(([l, r]) => binary(l, r, 'union')),
      fc.tuple(self, self).map(([l, r]) => binary(l, r, 'andThen'))
    ]
    if (reads !== 'nothing') {
      combinators.push(
        fc.tuple(ms, self).map(([m, s]) => unary(s, Schedule.maxCumulativeDelay(m), `maxCumulativeDelay(${m})`))
      )
    }
    if (reads === 'time') {
      combinators.push(
        fc.tuple(ms, self).map(([m, s]) => unary(s, Schedule.upTo(m), `upTo(${m})`, true)),
        fc.tuple(ms, self).map(([m, s]) => unary(s, Schedule.resetAfter(m), `resetAfter(${m})`, true)),
        fc.tuple(ms, self).map(([max, s]) =>
          s.schedule.timeLimits.length > 0
            ? s
            : unary(
                s,
                Schedule.withHint((n: number, now: number) => (n > 5 ? now % 1000 : undefined), {
                  max,
                  readsTime: true
                }),
                `withHint(untilNextSecond, { max: ${max}, readsTime: true })`,
                true
              )
        )
      )
    }
    // The leaves come first: at maxDepth, fast-check picks the first arbitrary.
    return {
      schedule: fc.oneof(
        { maxDepth: options.maxDepth ?? 3, depthSize: 'small', withCrossShrink: true },
        fc.oneof(...leaves),
        ...combinators
      )
    }
  })
  return schedule.map((g) => Object.assign({}, g, { [fc.toStringMethod]: () => g.code }))
}

const binary = (left: Generated, right: Generated, name: 'intersect' | 'union' | 'andThen'): Generated => ({
  schedule: pipe(left.schedule, Schedule[name](right.schedule)),
  code: `pipe(${left.code}, ${name}(${right.code}))`,
  readsTime: left.readsTime || right.readsTime
})

/** Generated schedules alone, printed as the expression that builds them. */
export const scheduleArbitrary = (options: GeneratedOptions = {}): fc.Arbitrary<Schedule.Schedule<number>> =>
  generatedArbitrary(options).map((g) => ({ ...g.schedule, [fc.toStringMethod]: () => g.code }))
