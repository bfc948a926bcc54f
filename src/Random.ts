/**
 * A source of uniform random numbers in `[0, 1)`, handed to schedules by the runner.
 *
 * Schedules never call `Math.random` themselves: jitter draws from the `Random` the runner is given, so a test
 * can pass `Random.seeded(42)` or `Random.fixed(0.5)` and get the same delays on every run.
 *
 * @since 0.1.0
 */
import type * as model from './internal/model'
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import { xoroshiro128plus, xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A source of uniform draws: each call to `next` returns a number in `[0, 1)`.
 *
 * @example
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * const u = Random.live.next()
 * assert.ok(u >= 0 && u < 1)
 *
 * @category model
 * @since 0.1.0
 */
export type Random = model.Random

/**
 * A deterministic `Random` whose position in its sequence can be saved with `getState` and restored with
 * {@link fromState}.
 *
 * @example
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * const r = Random.seeded(7)
 * r.next()
 * const saved = r.getState()
 * const a = r.next()
 * assert.strictEqual(Random.fromState(saved).next(), a)
 *
 * @category model
 * @since 0.1.0
 */
export interface SeededRandom extends Random {
  /** The generator's internal state, as plain numbers (JSON-safe). */
  readonly getState: () => ReadonlyArray<number>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The platform's `Math.random`: what the runner uses when no `random` is given.
 *
 * @example
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * assert.ok(Random.live.next() < 1)
 *
 * @category constructors
 * @since 0.1.0
 */
export const live: Random = { next: Math.random }

type Generator = ReturnType<typeof xoroshiro128plus>

const fromGenerator = (rng: Generator): SeededRandom => ({
  next: () => uniformFloat64(rng),
  getState: () => rng.getState()
})

/**
 * A deterministic generator (xoroshiro128+ from `pure-rand`): the same seed gives the same sequence.
 *
 * **Details**
 *
 * - Each call returns a new, independent generator: two `seeded(1)` values do not share a position.
 * - Draws are multiples of 2^-53 in `[0, 1)`.
 * - The seed must be a whole number from 0 to 2^32 − 1 (the generator's seed is 32 bits); anything else is a
 *   `RangeError`.
 *
 * @example
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * const a = Random.seeded(42)
 * const b = Random.seeded(42)
 * assert.strictEqual(a.next(), b.next())
 *
 * @category constructors
 * @since 0.1.0
 */
export const seeded = (seed: number): SeededRandom => {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`Random.seeded: seed must be a whole number from 0 to 4294967295, received ${String(seed)}`)
  }
  const rng = xoroshiro128plus(seed | 0)
  // A small seed leaves most of the initial state zero, and the first draws near 1; the generator's own jump
  // (2^64 steps ahead) moves it well away from that.
  rng.jump()
  return fromGenerator(rng)
}

/**
 * Restores a generator saved with `getState`, so that a resumed run draws the same numbers it would have drawn.
 *
 * **Details**
 *
 * A state that is not one `getState` produces (four signed 32-bit integers, not all zero: the all-zero state
 * would draw 0 forever) is a `RangeError`.
 *
 * @example
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * const r = Random.seeded(1)
 * const copy = Random.fromState(r.getState())
 * assert.strictEqual(copy.next(), r.next())
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromState = (state: ReadonlyArray<number>): SeededRandom =>
  fromGenerator(xoroshiro128plusFromState(validate.generatorState('Random.fromState', 'state', state)))

/**
 * Always draws `u`: for tests and for pinning jitter to one end of its range.
 *
 * **Details**
 *
 * `u` must be in `[0, 1)`, like every draw; `fixed(1)` is a `RangeError` (use `0.999...` for "almost the top").
 *
 * @example
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(Random.fixed(0.5).next(), 0.5)
 *
 * @category constructors
 * @since 0.1.0
 */
export const fixed = (u: number): Random => {
  validate.unitInterval('Random.fixed', 'u', u)
  const draw = u + 0 // -0 becomes 0
  return { next: () => draw }
}
