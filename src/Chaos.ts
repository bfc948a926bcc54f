/**
 * Deterministic chaos: combinators that inject a fault, a latency, an outcome or a behaviour into a share of the
 * calls of a `TaskEither` (Polly v8's chaos strategies), to check that the layers around it (timeouts, breakers,
 * retries, fallbacks) do what they promise, in a test or a controlled experiment.
 *
 * Each call draws one number from the given `Random` and is injected when it is below `injectionRate`: with
 * `Random.seeded(n)` and a `TestClock`, an experiment is the same on every run, and a property test over seeds
 * checks a promise under many of them (docs/testing.md, "Chaos: a promise under injected faults").
 *
 * Put chaos innermost, around the call to the dependency and inside the timeout, where a real fault would come
 * from: an injected latency then counts against the attempt's time, and an injected fault is a failure the breaker
 * counts and the schedule retries.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import * as Chaos from 'fp-ts-retry/Chaos'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   // a third of the calls fail with an injected 503: the retries hide them from the caller
 *   const answers = async (seed: number) => {
 *     const { result, clock } = await TestClock.run((clock) =>
 *       pipe(
 *         TE.right('ok'),
 *         Chaos.fault('503', { injectionRate: 1 / 3, random: Random.seeded(seed), clock }),
 *         retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(5))), { clock })
 *       )
 *     )
 *     return { result, sleeps: clock.sleeps }
 *   }
 *   const run = await answers(42)
 *   assert.deepStrictEqual(run.result, { _tag: 'Right', right: 'ok' })
 *   assert.deepStrictEqual(await answers(42), run) // the same seed, the same experiment
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { ChaosInjected, Observer } from './Event'
import { observe } from './internal/observe'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Random } from './Random'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Options of every chaos combinator.
 *
 * **Details**
 *
 * - `injectionRate`: the share of the calls injected, a number from 0 (none) to 1 (every one) (`RangeError`
 *   otherwise).
 * - `random` (required): the draws. A chaos experiment is as reproducible as its draws, so it names them: give
 *   `Random.seeded(n)` in a test (the same calls injected on every run), `Random.live` in a live experiment.
 *   Each call draws exactly one number, when `enabled`; a call is injected when its draw is below `injectionRate`.
 * - `enabled` (default: always): asked at each call, before the draw; `false` lets the call through untouched and
 *   draws nothing, so that an experiment can be switched on and off at run time (a feature flag). It must answer a
 *   boolean: anything else, or a throw, rejects the call.
 * - `clock` (default `Clock.live`): what `latency` sleeps on (a sleep of kind `'chaos'`), and what dates the events.
 * - `onEvent`: told `ChaosInjected` (its `kind`, and the `latency` for `latency`) at each injection, before the
 *   call goes on. An `onEvent` that throws is reported as a warning and changes nothing (the one rule, in the
 *   `Event` module).
 *
 * @example
 * import type { ChaosOptions } from 'fp-ts-retry/Chaos'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 *
 * let experiment = true
 * const options: ChaosOptions = { injectionRate: 0.1, random: Random.seeded(7), clock: TestClock.make(), enabled: () => experiment }
 *
 * @category model
 * @since 1.0.0
 */
export interface ChaosOptions {
  readonly injectionRate: number
  readonly random: Random
  readonly enabled?: (() => boolean) | undefined
  readonly clock?: Clock | undefined
  readonly onEvent?: Observer | undefined
}

/**
 * What a chaos combinator injects: its `kind` in a `ChaosInjected` event.
 *
 * @example
 * import type { Kind } from 'fp-ts-retry/Chaos'
 *
 * const kind: Kind = 'latency'
 *
 * @category model
 * @since 1.0.0
 */
export type Kind = ChaosInjected['kind']

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** The options, checked once: whether a call is injected (one draw, when enabled), and how to tell it. */
interface Injector {
  readonly clock: Clock
  readonly injects: () => boolean
  readonly tell: (kind: Kind, latency: number) => void
}

const isRate = (value: unknown): boolean => typeof value === 'number' && value >= 0 && value <= 1

const injector = (where: string, options: ChaosOptions): Injector => {
  validate.object(where, 'options', options)
  const { injectionRate, random, enabled, onEvent } = options
  validate.that(where, 'options.injectionRate', 'a number from 0 to 1', isRate, injectionRate)
  validate.implementing(where, 'options.random', 'a Random (required)', ['next'], random)
  validate.services(where, 'options', { clock: options.clock })
  if (enabled !== undefined) validate.callable(where, 'options.enabled', enabled)
  if (onEvent !== undefined) validate.callable(where, 'options.onEvent', onEvent)
  const clock = options.clock ?? LiveClock.live
  const injects = (): boolean => {
    if (enabled !== undefined) {
      const on: unknown = enabled()
      if (typeof on !== 'boolean')
        throw new TypeError(`${where}: options.enabled() must answer a boolean, received ${showValue(on)}`)
      if (!on) return false
    }
    return validate.drawn(where, random.next()) < injectionRate
  }
  const tell = (kind: Kind, latency: number): void => {
    if (onEvent === undefined) return
    const at = clock.now()
    observe(
      onEvent,
      kind === 'latency'
        ? { _tag: 'ChaosInjected', source: 'chaos', run: 0, at, kind, latency }
        : { _tag: 'ChaosInjected', source: 'chaos', run: 0, at, kind }
    )
  }
  return { clock, injects, tell }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Answers `Left(error)` instead of running the action, for a share of the calls (`options.injectionRate`): the
 * dependency failed, and was not called.
 *
 * **Details**
 *
 * - An injected call never runs the action; the others run it as it is. Each injection answers a `Left` of its
 *   own, holding `error` itself.
 * - The options are checked when the combinator is made (see {@link ChaosOptions}).
 *
 * @example
 * import * as Chaos from 'fp-ts-retry/Chaos'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const always = pipe(TE.right(1), Chaos.fault('injected', { injectionRate: 1, random: Random.seeded(1) }))
 *   assert.deepStrictEqual(await always(), { _tag: 'Left', left: 'injected' })
 *   const never = pipe(TE.right(1), Chaos.fault('injected', { injectionRate: 0, random: Random.seeded(1) }))
 *   assert.deepStrictEqual(await never(), { _tag: 'Right', right: 1 })
 *   assert.throws(() => Chaos.fault('injected', { injectionRate: 1.5, random: Random.seeded(1) }), RangeError)
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const fault = <E2>(
  error: E2,
  options: ChaosOptions
): (<E, A>(action: TaskEither<E, A>) => TaskEither<E | E2, A>) => {
  const chaos = injector('Chaos.fault', options)
  return (action) => async () => {
    if (!chaos.injects()) return action()
    chaos.tell('fault', 0)
    return { _tag: 'Left', left: error }
  }
}

/**
 * Sleeps `ms` on `options.clock` before running the action, for a share of the calls: the dependency is slow.
 *
 * **Details**
 *
 * - The sleep is of kind `'chaos'`: a `TestClock` lists it in `sleepsOf('chaos')`, not in `sleeps` (the delays a
 *   retry test checks). `0` is told but sleeps not at all.
 * - It cannot be cut short: an attempt a timeout gave up on sleeps on, then runs the action, whose answer nobody
 *   reads (as a real slow dependency would).
 * - `ms` must be a finite number >= 0 (`RangeError` naming it, for `NaN`, a negative or an infinite number).
 *
 * @example
 * import * as Chaos from 'fp-ts-retry/Chaos'
 * import type { Event } from 'fp-ts-retry/Event'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const events: Array<Event> = []
 *   const slow = Chaos.latency(2_000, { injectionRate: 1, random: Random.seeded(3), clock, onEvent: (e) => void events.push(e) })
 *   const call = pipe(TE.right('ok'), slow)()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await call, { _tag: 'Right', right: 'ok' })
 *   assert.deepStrictEqual([clock.now(), clock.sleepsOf('chaos'), clock.sleeps], [2_000, [2_000], []])
 *   assert.deepStrictEqual(events, [{ _tag: 'ChaosInjected', source: 'chaos', run: 0, at: 0, kind: 'latency', latency: 2_000 }])
 *   assert.throws(() => Chaos.latency(-1, { injectionRate: 1, random: Random.seeded(3) }), RangeError)
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const latency = (ms: number, options: ChaosOptions): (<E, A>(action: TaskEither<E, A>) => TaskEither<E, A>) => {
  const where = 'Chaos.latency'
  const wait = validate.duration(where, 'ms', ms)
  const chaos = injector(where, options)
  const { clock } = chaos
  return (action) => async () => {
    if (chaos.injects()) {
      chaos.tell('latency', wait)
      if (wait > 0) await clock.sleep(wait, undefined, 'chaos')
    }
    return action()
  }
}

/**
 * Answers `result` instead of running the action, for a share of the calls: a `Left` as a fault does, or a
 * `Right` the dependency did not send (a stale or a wrong value, to check what a caller does with it).
 *
 * **Details**
 *
 * - An injected call never runs the action. `result` must be an `Either` (`TypeError` otherwise); the call's
 *   types widen to hold it.
 *
 * @example
 * import * as Chaos from 'fp-ts-retry/Chaos'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as E from 'fp-ts/Either'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const call: TE.TaskEither<string, number | null> = pipe(
 *     TE.right(42),
 *     Chaos.outcome(E.right(null), { injectionRate: 1, random: Random.seeded(5) })
 *   )
 *   assert.deepStrictEqual(await call(), { _tag: 'Right', right: null })
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const outcome = <E2, B>(
  result: Either<E2, B>,
  options: ChaosOptions
): (<E, A>(action: TaskEither<E, A>) => TaskEither<E | E2, A | B>) => {
  const where = 'Chaos.outcome'
  const tag = (result as { readonly _tag?: unknown } | null)?._tag
  if (tag !== 'Left' && tag !== 'Right')
    throw new TypeError(`${where}: result must be an Either, received ${showValue(result)}`)
  const chaos = injector(where, options)
  return <E, A>(action: TaskEither<E, A>): TaskEither<E | E2, A | B> =>
    async () => {
      if (!chaos.injects()) return action()
      chaos.tell('outcome', 0)
      return result
    }
}

/**
 * Runs `effect` before the action, for a share of the calls: a side effect of the experiment's own (fill a disk,
 * drop a connection, stop a replica, count the injections), awaited when it answers a promise.
 *
 * **Details**
 *
 * - The action runs once `effect` has returned (or its promise resolved). An `effect` that throws or rejects
 *   rejects the call, and the action is not run: it is a hook the call waits on.
 * - `effect` must be a function (`TypeError`).
 *
 * @example
 * import * as Chaos from 'fp-ts-retry/Chaos'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   let dropped = 0
 *   const call = pipe(TE.right('ok'), Chaos.behaviour(() => void dropped++, { injectionRate: 0.5, random: Random.seeded(9) }))
 *   for (let i = 0; i < 100; i++) assert.deepStrictEqual(await call(), { _tag: 'Right', right: 'ok' })
 *   assert.ok(dropped > 30 && dropped < 70, `${dropped}`)
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const behaviour = (
  effect: () => void | Promise<void>,
  options: ChaosOptions
): (<E, A>(action: TaskEither<E, A>) => TaskEither<E, A>) => {
  const where = 'Chaos.behaviour'
  validate.callable(where, 'effect', effect)
  const chaos = injector(where, options)
  return (action) => async () => {
    if (chaos.injects()) {
      chaos.tell('behaviour', 0)
      await effect()
    }
    return action()
  }
}
