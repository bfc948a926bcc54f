/**
 * A fallback, as a combinator: when a call fails, answer from another `TaskEither`, chosen by the failure's error
 * and by why the run that returned it stopped (a breaker, a budget, a rate limit, its schedule exhausted, ...).
 * Unlike a bare `TE.orElse`, it sees the run's stop reason, and tells an event (`FallbackUsed`) that logs and
 * `fp-ts-retry/OpenTelemetry` count.
 *
 * Put it outermost: around the retry (and the bulkhead), so that it answers for the whole call, once the retries
 * are spent or refused (see docs/resilience-order.md).
 *
 * **Details**
 *
 * - The stop reason is the run's, told by its `onDone`: a run made with {@link telling} hands `tell` to the
 *   options of its runner (`retrying(policy, tell({ clock, breaker }))`), and {@link fallback} directly around it
 *   reads the reason. The run is made anew for each call, so two calls in flight at once never mix their reasons.
 *   Around any other action, `reason` is `undefined` and the fallback is chosen by the error.
 * - A timeout is an error, not a stop reason: the `Left` of `Timeout.timeout`'s or the runner's `onTimeout` (a run
 *   whose last attempt timed out stops with reason `'schedule'`). A breaker's refusal is both: the error of
 *   `Breaker.protect`'s `onOpen` (`Http`'s `CircuitOpenError`), and the reason `'breaker'` of a run whose runner,
 *   told of the breaker, ends it rather than retry into the open circuit. A full bulkhead around the retry refuses
 *   before any run: its error (`onRejected`'s, a `Bulkhead.BulkheadRejected` by default) is all there is.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const breaker = Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.constant(60_000), clock })
 *   const policy = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3)))
 *   // the dependency is down; while the circuit is open, answer from the cache
 *   const getUser = pipe(
 *     Fallback.telling((tell) =>
 *       pipe(TE.left('503'), Breaker.protect(breaker, () => 'circuit open'), retrying(policy, tell({ clock, breaker })))
 *     ),
 *     Fallback.fallback(Fallback.stoppedBy('breaker'), () => TE.right('cached user'))
 *   )
 *   const first = getUser()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await first, { _tag: 'Right', right: 'cached user' }) // 2 failures opened the circuit
 *   assert.deepStrictEqual(clock.sleeps, [100]) // no sleep toward the open circuit
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
import type * as model from './internal/model'
import { observe } from './internal/observe'
import { showValue } from './internal/show'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a run ended (the runners' `StopReason`): a fallback is chosen by it.
 *
 * @example
 * import type { StopReason } from 'fp-ts-retry/Fallback'
 *
 * const reason: StopReason = 'budget'
 *
 * @category model
 * @since 1.0.0
 */
export type StopReason = model.StopReason

/**
 * A failed call, as a fallback sees it: the `error` (the action's `Left`), and the `reason` the run that returned
 * it stopped for, when it is known (a run made with {@link telling}; `undefined` for any other action).
 *
 * @example
 * import type { Stopped } from 'fp-ts-retry/Fallback'
 *
 * const stopped: Stopped<string> = { error: '503', reason: 'schedule' }
 *
 * @category model
 * @since 1.0.0
 */
export interface Stopped<E> {
  readonly error: E
  readonly reason: StopReason | undefined
}

/**
 * What {@link telling} hands its `build`: wrap the runner's options with it, and the run tells the fallback around
 * it why it stopped. It answers the options as they are given, with an `onDone` that records the reason and then
 * calls the options' own `onDone`, if any; their types are unchanged, so the runner's hooks are still typed from
 * the pipe.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 *
 * const run = Fallback.telling((tell: Fallback.Tell) => pipe(TE.left('503'), retrying(Schedule.recurs(2), tell({}))))
 *
 * @category model
 * @since 1.0.0
 */
export interface Tell {
  <O extends object>(options: O): O
}

/**
 * A `TaskEither` that is also its own recipe: `build`, called for each call with a fresh {@link Tell}, makes the
 * run. {@link fallback} directly around it calls `build` itself, and so learns the run's stop reason; run as it is,
 * it is the run, its reason told to nobody.
 *
 * @example
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const run: Fallback.Telling<string, number> = Fallback.telling(() => TE.right(1))
 *   assert.deepStrictEqual(await run(), { _tag: 'Right', right: 1 })
 *   assert.strictEqual(typeof run.build, 'function')
 * }
 * main()
 *
 * @category model
 * @since 1.0.0
 */
export interface Telling<E, A> extends TaskEither<E, A> {
  readonly build: (tell: Tell) => TaskEither<E, A>
}

/**
 * Options of {@link fallback}: `clock` (default `Clock.live`) dates the events; `onEvent` is told `FallbackUsed`
 * each time the fallback answers a call.
 *
 * @example
 * import type { FallbackOptions } from 'fp-ts-retry/Fallback'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 *
 * const lines: Array<string> = []
 * const options: FallbackOptions = { clock: TestClock.make(), onEvent: (event) => void lines.push(JSON.stringify(event)) }
 *
 * @category model
 * @since 1.0.0
 */
export interface FallbackOptions {
  readonly clock?: Clock | undefined
  readonly onEvent?: Observer | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** A `Tell` that records the reason of the run whose options it wraps in `slot`. */
const tellInto =
  (slot: { reason: StopReason | undefined }): Tell =>
  <O extends object>(options: O): O => {
    const where = 'Fallback.telling: tell'
    validate.object(where, 'options', options)
    const own = (options as { readonly onDone?: unknown }).onDone
    if (own !== undefined) validate.callable(where, 'options.onDone', own)
    const onDone = (ended: { readonly reason: StopReason }): unknown => {
      slot.reason = ended.reason
      return (own as ((ended: unknown) => unknown) | undefined)?.(ended)
    }
    return { ...options, onDone }
  }

/** Makes the run of a {@link Telling} for one call, its reason recorded in `slot`. */
const runOf = <E, A>(
  build: (tell: Tell) => TaskEither<E, A>,
  slot: { reason: StopReason | undefined }
): TaskEither<E, A> => validate.callable('Fallback.telling', 'build(tell)', build(tellInto(slot)))

/**
 * A run that tells a {@link fallback} around it why it stopped: `build(tell)` makes the run, its runner's options
 * wrapped with `tell` (`retrying(policy, tell({ clock, breaker }))`).
 *
 * **Details**
 *
 * - `build` is called on each call of the task, with a `tell` of that call's own: two calls in flight at once never
 *   mix their reasons, and the runner is set up on each call (its options are checked then: a bad option rejects
 *   the call).
 * - Any runner whose `onDone` is told a record with a `reason` will do: `retrying` and its kin, `repeating`,
 *   `hedging`, `Http.retryingFetch`. When `build` wraps the options of more than one run, the reason is that of the
 *   last to end; when it wraps none, it is `undefined`.
 * - Only a {@link fallback} directly around it reads the reason: put nothing between the two (a `TE.map` goes
 *   inside `build`, or after the fallback).
 * - `build` must be a function (`TypeError`), and so must what it answers, when the task runs.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const reasons: Array<string> = []
 *   const run = Fallback.telling((tell) =>
 *     pipe(TE.left('503'), retrying(Schedule.recurs(2), tell({ onDone: ({ reason }) => void reasons.push(reason) })))
 *   )
 *   const answer = await pipe(run, Fallback.fallback(({ reason }) => reason === 'schedule', ({ error }) => TE.right(`after ${error}`)))()
 *   assert.deepStrictEqual(answer, { _tag: 'Right', right: 'after 503' })
 *   assert.deepStrictEqual(reasons, ['schedule']) // the run's own onDone is still told
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const telling = <E, A>(build: (tell: Tell) => TaskEither<E, A>): Telling<E, A> => {
  validate.callable('Fallback.telling', 'build', build)
  const task: TaskEither<E, A> = () => runOf(build, { reason: undefined })()
  return Object.assign(task, { build })
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/** The stop reasons a run that fails (ends with a `Left`) may give: not `'succeeded'`, not `'defect'` (a rejection). */
const FAILED_REASONS: ReadonlySet<string> = new Set(
  Object.keys({
    failed: true,
    schedule: true,
    aborted: true,
    budget: true,
    breaker: true,
    rateLimit: true,
    bulkhead: true,
    shed: true
  } satisfies Record<Exclude<StopReason, 'succeeded' | 'defect'>, true>)
)

/**
 * A `when` that chooses every failure: with a fallback that cannot fail (`TaskEither<never, B>`), the call cannot
 * either, and its error type is `never`.
 *
 * **Gotchas**
 *
 * - A run the caller aborted (reason `'aborted'`) is answered from the fallback too: the caller who aborted may no
 *   longer listen. Choose by {@link stoppedBy} to leave it out.
 *
 * @example
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const call: TE.TaskEither<never, string> = pipe(TE.left('503'), Fallback.fallback(Fallback.always, () => TE.right('default')))
 *   assert.deepStrictEqual(await call(), { _tag: 'Right', right: 'default' })
 * }
 * main()
 *
 * @category utils
 * @since 1.0.0
 */
export const always = <E>(_stopped: Stopped<E>): _stopped is Stopped<E> => true

/**
 * A `when` that chooses the failures of a run that stopped for one of `reasons`: `'breaker'`, `'budget'`,
 * `'rateLimit'`, `'bulkhead'`, `'shed'` (a guard refused the retry), `'schedule'` (the schedule is spent, its time limit
 * included), `'failed'` (a failure not to run again: `repeating`'s), `'aborted'`.
 *
 * **Details**
 *
 * - A failure whose reason is unknown (an action not made with {@link telling}) is never chosen.
 * - At least one reason, each one of those above, else a `TypeError` naming it (`'succeeded'` and `'defect'` never
 *   end a run with a `Left`: the first is a `Right`, the second a rejection).
 *
 * @example
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import * as assert from 'assert'
 *
 * const refused = Fallback.stoppedBy('breaker', 'budget', 'rateLimit')
 * assert.strictEqual(refused({ error: '503', reason: 'budget' }), true)
 * assert.strictEqual(refused({ error: '503', reason: 'schedule' }), false)
 * assert.strictEqual(refused({ error: '503', reason: undefined }), false)
 * assert.throws(() => Fallback.stoppedBy('timeout' as never), TypeError)
 *
 * @category utils
 * @since 1.0.0
 */
export const stoppedBy = (
  ...reasons: ReadonlyArray<Exclude<StopReason, 'succeeded' | 'defect'>>
): (<E>(stopped: Stopped<E>) => boolean) => {
  const where = 'Fallback.stoppedBy'
  if (reasons.length === 0) throw new TypeError(`${where}: give at least one stop reason, received none`)
  reasons.forEach((reason, i) => {
    if (!FAILED_REASONS.has(reason as string))
      throw new TypeError(
        `${where}: reasons[${i}] must be one of ${[...FAILED_REASONS].join(', ')}, received ${showValue(reason)}`
      )
  })
  const chosen: ReadonlySet<string> = new Set(reasons)
  return (stopped) => stopped.reason !== undefined && chosen.has(stopped.reason)
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Answers a failed call from `to`, when `when` chooses its failure: `when` and `to` see the failure as a
 * {@link Stopped} record, its `error` and, for a run made with {@link telling}, the `reason` it stopped for.
 *
 * **Details**
 *
 * - A success, and a failure `when` does not choose, are answered as they are. A chosen failure is answered by the
 *   task `to(stopped)` makes, whatever it answers: a fallback is not retried (put a retry inside it for that).
 * - Types: the call's error is the fallback's, and the action's errors `when` does not choose. With a refinement
 *   (`always`, or `(s): s is Stopped<Timeout> => ...`), the errors it chooses leave the type: `Fallback.always` with
 *   a fallback that cannot fail (`TE.right(...)`, a `TaskEither<never, B>`) makes a call whose error type is
 *   `never`. Given in a `pipe`, `when` and `to` are typed by the action, as `TE.orElse` is.
 * - A rejection (a defect) is not a failure: it is not answered from the fallback. `when` or `to` that throws, or a
 *   fallback that rejects, rejects the call (they are hooks the call waits on, see the `Event` module).
 * - `options.onEvent` is told `FallbackUsed` (the `reason` when known, the `error`, and whether the fallback
 *   `succeeded`) once the fallback has answered, or rejected; nothing when it is not used. An `onEvent` that throws
 *   is reported as a warning and changes nothing.
 * - `when` and `to` must be functions, `options` an object with a `Clock` and a function for `onEvent`, if given
 *   (`TypeError`).
 *
 * @example
 * import * as Fallback from 'fp-ts-retry/Fallback'
 * import type { Event } from 'fp-ts-retry/Event'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as Timeout from 'fp-ts-retry/Timeout'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const events: Array<Event> = []
 *   const hangs: TE.TaskEither<'503', string> = () => new Promise(() => undefined)
 *   // a timeout is an error: choose by it
 *   const call = pipe(
 *     hangs,
 *     Timeout.timeout(1_000, () => 'timeout' as const, { clock }),
 *     Fallback.fallback(({ error }) => error === 'timeout', () => TE.right('stale'), { clock, onEvent: (e) => void events.push(e) })
 *   )
 *   const answer = call()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await answer, { _tag: 'Right', right: 'stale' })
 *   assert.deepStrictEqual(events, [{ _tag: 'FallbackUsed', source: 'fallback', run: 0, at: 1_000, error: 'timeout', succeeded: true }])
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const fallback: {
  <E, E1 extends E, E2, B>(
    when: (stopped: Stopped<E>) => stopped is Stopped<E1>,
    to: (stopped: Stopped<E1>) => TaskEither<E2, B>,
    options?: FallbackOptions
  ): <A>(action: TaskEither<E, A>) => TaskEither<Exclude<E, E1> | E2, A | B>
  <E, E2, B>(
    when: (stopped: Stopped<E>) => boolean,
    to: (stopped: Stopped<E>) => TaskEither<E2, B>,
    options?: FallbackOptions
  ): <A>(action: TaskEither<E, A>) => TaskEither<E | E2, A | B>
} = <E, E2, B>(
  when: (stopped: Stopped<E>) => boolean,
  to: (stopped: Stopped<E>) => TaskEither<E2, B>,
  options: FallbackOptions = {}
) => {
  const where = 'Fallback.fallback'
  validate.callable(where, 'when', when)
  validate.callable(where, 'to', to)
  validate.object(where, 'options', options)
  validate.services(where, 'options', { clock: options.clock })
  const { onEvent } = options
  if (onEvent !== undefined) validate.callable(where, 'options.onEvent', onEvent)
  const clock = options.clock ?? LiveClock.live
  return <A>(action: TaskEither<E, A>): TaskEither<E | E2, A | B> => {
    validate.callable(where, 'action', action)
    // a run made with `telling` is made here, for each call, so that its reason is this call's
    const recipe = (action as Partial<Telling<E, A>>).build
    return async () => {
      const slot: { reason: StopReason | undefined } = { reason: undefined }
      const result = await (typeof recipe === 'function' ? runOf(recipe, slot) : action)()
      if (result._tag === 'Right') return result
      const stopped: Stopped<E> = { error: result.left, reason: slot.reason }
      if (!when(stopped)) return result
      const tell = (succeeded: boolean): void => {
        if (onEvent === undefined) return
        const at = clock.now()
        const { error, reason } = stopped
        observe(
          onEvent,
          reason === undefined
            ? { _tag: 'FallbackUsed', source: 'fallback', run: 0, at, error, succeeded }
            : { _tag: 'FallbackUsed', source: 'fallback', run: 0, at, reason, error, succeeded }
        )
      }
      let answer: Either<E2, B>
      try {
        answer = await validate.callable(where, 'to(stopped)', to(stopped))()
      } catch (defect) {
        tell(false)
        throw defect
      }
      tell(answer._tag === 'Right')
      return answer
    }
  }
}
