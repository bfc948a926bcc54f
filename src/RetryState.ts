/**
 * Retries that survive a restart: the state of an in-flight run as plain JSON, one step at a time.
 *
 * A `RetryState` holds everything needed to go on with a run: the schedule's own state, the retry status, when
 * the next attempt is due and the position of a seeded `Random`. Store it after each failure (for instance with
 * an atomic write), and a worker, in this process or another, can resume the run when it is due, with
 * `RetryState.next` (one step, no sleeping) or the runner's `resume` option.
 *
 * @since 0.1.0
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as t from 'io-ts'
import * as Driver from './Driver'
import { JsonCodec } from './internal/json'
import type * as model from './internal/model'
import type { RetryStatus, Schedule } from './internal/model'
import * as validate from './internal/validate'
import type { Random } from './Random'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The stored form of an in-flight run.
 *
 * **Details**
 *
 * - `schedule`: the `description` of the schedule that made it; resuming with another schedule is refused.
 * - `scheduleState`: the schedule's own state after its latest decision. The codec checks that it is JSON;
 *   whether it is a state of the schedule is checked on restore (`Driver.InvalidState`).
 * - `iterNumber`, `cumulativeDelay`, `previousDelay` (`null` before the first retry): the retry status.
 * - `startedAt`: when the first attempt started, by the run's clock (epoch ms for `Clock.live`), so `elapsed`
 *   and `upTo` budgets count the time the process was down.
 * - `dueAt`: when the next attempt is due.
 * - `random`: the position of the run's `SeededRandom` after the latest decision, or `null`, so a resumed run
 *   draws the same jitter an uninterrupted one would.
 *
 * @example
 * import * as RetryState from 'fp-ts-retry/RetryState'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const state = RetryState.start(Schedule.exponential(100), 5000)
 * assert.deepStrictEqual(state, {
 *   schedule: 'exponential(100, 2)',
 *   scheduleState: 100,
 *   iterNumber: 0,
 *   cumulativeDelay: 0,
 *   previousDelay: null,
 *   startedAt: 5000,
 *   dueAt: 5000,
 *   random: null
 * })
 *
 * @category model
 * @since 0.1.0
 */
export type RetryState = model.RetryState

/**
 * The answer of {@link next}: the run is over (`Done`), or the next attempt is `Scheduled` at `state.dueAt`.
 *
 * @example
 * import type { Step } from 'fp-ts-retry/RetryState'
 *
 * const describe = (step: Step): string => (step._tag === 'Done' ? 'give up' : `retry at ${step.state.dueAt}`)
 *
 * @category model
 * @since 0.1.0
 */
export type Step =
  | { readonly _tag: 'Done'; readonly status: RetryStatus }
  | { readonly _tag: 'Scheduled'; readonly state: RetryState; readonly delay: number; readonly status: RetryStatus }

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

const NonNegative = t.refinement(t.number, validate.isDuration, 'NonNegative')
const Count = t.refinement(t.number, validate.isCount, 'Count')
const Finite = t.refinement(t.number, validate.isFiniteNumber, 'Finite')
// What Random.fromState accepts: the one rule for a generator state, in internal/validate.
const RandomState = new t.Type<ReadonlyArray<number>, ReadonlyArray<number>, unknown>(
  'RandomState',
  validate.isGeneratorState,
  (u, c) => (validate.isGeneratorState(u) ? t.success(u) : t.failure(u, c)),
  t.identity
)

/**
 * The io-ts codec of {@link RetryState}, to and from JSON. Decoding never throws.
 *
 * @example
 * import * as RetryState from 'fp-ts-retry/RetryState'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const state = RetryState.start(Schedule.recurs(3), 0)
 * const json = JSON.stringify(RetryState.RetryStateCodec.encode(state))
 * assert.deepStrictEqual(RetryState.RetryStateCodec.decode(JSON.parse(json)), { _tag: 'Right', right: state })
 *
 * @category codecs
 * @since 0.1.0
 */
export const RetryStateCodec: t.Type<RetryState, RetryState, unknown> = t.readonly(
  t.type({
    schedule: t.string,
    scheduleState: JsonCodec,
    iterNumber: Count,
    cumulativeDelay: NonNegative,
    previousDelay: t.union([NonNegative, t.null]),
    startedAt: Finite,
    dueAt: Finite,
    random: t.union([RandomState, t.null])
  }),
  'RetryState'
)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The state of a run whose first attempt started at `startedAt` and that has not retried yet.
 *
 * @example
 * import * as RetryState from 'fp-ts-retry/RetryState'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(RetryState.start(Schedule.recurs(3), 1000).iterNumber, 0)
 *
 * @category constructors
 * @since 0.1.0
 */
export const start = <In>(schedule: Schedule<In>, startedAt: number): RetryState =>
  Driver.make(schedule, { start: validate.finite('RetryState.start', 'startedAt', startedAt) }).snapshot()

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * One step of a durable run, without sleeping: given the stored state and the failure of the attempt that was
 * due (`input`, seen at `now`), either `Done` (the schedule stops: give up) or `Scheduled` with the next state
 * to store and its `dueAt`.
 *
 * **Details**
 *
 * - Pass the same schedule (rebuilt from the same config) each time; another one is a `Driver.ScheduleMismatch`,
 *   and a `scheduleState` that schedule never makes a `Driver.InvalidState`.
 * - Pass a `Random` restored with `Random.fromState(state.random)` (or any `Random` when `state.random` is
 *   `null`); a `SeededRandom`'s position is stored in the next state.
 * - For the first failure, start from {@link start} with the time the first attempt started.
 *
 * @example
 * import * as RetryState from 'fp-ts-retry/RetryState'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * const schedule = Schedule.fromDelays([1000, 5000])
 * // the first attempt started at t = 0 and failed at t = 20
 * const first = RetryState.next(schedule, RetryState.start(schedule, 0), 'timeout', 20, Random.live)
 * assert.ok(first._tag === 'Right' && first.right._tag === 'Scheduled')
 * if (first._tag === 'Right' && first.right._tag === 'Scheduled') {
 *   assert.strictEqual(first.right.state.dueAt, 1020)
 *   // ... stored, and later, in another process, the second attempt fails at t = 1050
 *   const second = RetryState.next(schedule, first.right.state, 'timeout', 1050, Random.live)
 *   assert.ok(second._tag === 'Right' && second.right._tag === 'Scheduled' && second.right.state.dueAt === 6050)
 * }
 *
 * @category interpreters
 * @since 0.1.0
 */
export const next = <In>(
  schedule: Schedule<In>,
  state: RetryState,
  input: In,
  now: number,
  random: Random
): E.Either<Driver.ScheduleMismatch | Driver.InvalidState, Step> => {
  validate.finite('RetryState.next', 'now', now)
  return pipe(
    Driver.restore(schedule, state, random),
    E.map((driver): Step => {
      const delay = driver.advance(input, now)
      return delay < 0
        ? { _tag: 'Done', status: driver.status }
        : { _tag: 'Scheduled', state: driver.snapshot(), delay, status: driver.status }
    })
  )
}
