/**
 * The rules for the values every module checks (a duration, a count, a generator state, ...), stated once.
 *
 * Each rule is a predicate (`isDuration`, `isCount`, `isGeneratorState`, ...) that never throws, whatever it is
 * given: the codecs build their io-ts refinements on them, and the throwing checks below use them too, naming the
 * function, the argument and the value received (through `showValue`), so that a bad argument fails where it is
 * written. One rule for the class: a check of a number (`duration`, `count`, `generatorState`, ...) throws a
 * `RangeError`, whatever it received; a check of a kind of value (`callable`, `object`, `string`, `boolean`, a
 * service) throws a `TypeError`.
 *
 * @internal
 */
import { showValue } from './show'

/** The largest delay, in ms, any schedule produces: arithmetic saturates here instead of reaching Infinity. */
export const MAX_DELAY = Number.MAX_SAFE_INTEGER

// -------------------------------------------------------------------------------------
// predicates
// -------------------------------------------------------------------------------------

/** A finite number `>= 0`: a duration in ms. `-0` is one (`duration` reads it as `0`). */
export const isDuration = (value: unknown): value is number =>
  typeof value === 'number' && value >= 0 && value !== Infinity

/** A whole number `>= 0` that is exactly representable (a safe integer): a count. */
export const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

/** Any finite number: a point in time. */
export const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

/** A finite number `>= min`. */
export const isAtLeast =
  (min: number) =>
  (value: unknown): value is number =>
    typeof value === 'number' && value >= min && value !== Infinity

/** The most a token bucket may hold: counted in thousandths (gRPC's unit), its tokens stay exact integers. */
export const MAX_TOKENS = 1e12

/** A number of tokens in `[0.001, MAX_TOKENS]`, as the whole thousandths a bucket counts in. */
export const thousandths = (where: string, name: string, value: number): number =>
  Math.round(
    that(where, name, `a number in [0.001, ${MAX_TOKENS}]`, (v) => isAtLeast(0.001)(v) && v <= MAX_TOKENS, value) * 1000
  )

/** A whole number in `[1, max]`: a size that cannot be 0, bounded by what it allocates. */
export const isSizeAtMost =
  (max: number) =>
  (value: unknown): value is number =>
    isCount(value) && value >= 1 && value <= max

/**
 * The most outcomes a count-based window keeps (`Breaker.count`'s `size`): 2^29 = 536,870,912. Such a window costs
 * `size` bytes in its process (a ring allocated when the breaker is made) and a string of `size` bytes in a fleet's
 * Redis hash (`RedisBreaker`), and 512 MB is the longest string Redis holds; it is also within the longest typed
 * array V8 makes on every platform Node runs on (2^30 - 1 on 32-bit ones), whose own error names no argument.
 */
export const MAX_WINDOW_SIZE = 2 ** 29

/**
 * The most buckets an adaptive throttle's window has (`AdaptiveThrottle`'s `buckets`): each costs three numbers in
 * its process and two fields of a hash in a fleet's Redis, read by every call.
 */
export const MAX_BUCKETS = 1_000

/** A number in `[0, 1)`, the range of a uniform draw. */
export const isUnitInterval = (value: unknown): value is number => typeof value === 'number' && value >= 0 && value < 1

/**
 * What a `Random` drew, checked where it is used: a generator of the user's that answers outside `[0, 1)` is a
 * `RangeError` naming who drew (a negative draw would make a negative delay, which reads as a stop). `-0` becomes `0`.
 */
export const drawn = (where: string, u: unknown): number => {
  if (isUnitInterval(u)) return u + 0
  throw new RangeError(`${where}: random.next() returned ${showValue(u)}; a draw must be a number in [0, 1)`)
}

/** A whole number from `-2^31` to `2^31 - 1`. */
export const isInt32 = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff

/** The four numbers of a generator state, each read once, or `undefined`; never throws. */
const readGeneratorState = (value: unknown): readonly [number, number, number, number] | undefined => {
  try {
    if (!Array.isArray(value) || value.length !== 4) return undefined
    const [a, b, c, d] = value as ReadonlyArray<unknown>
    return isInt32(a) && isInt32(b) && isInt32(c) && isInt32(d) && (a !== 0 || b !== 0 || c !== 0 || d !== 0)
      ? [a, b, c, d]
      : undefined
  } catch {
    return undefined
  }
}

/**
 * A state of the seeded generator (xoroshiro128+), as `Random`'s `getState` gives it: four signed 32-bit
 * integers, not all zero (the all-zero state is a fixed point that would draw 0 forever). Never throws, not
 * even on a revoked Proxy or an array with a throwing getter.
 */
export const isGeneratorState = (value: unknown): value is ReadonlyArray<number> =>
  readGeneratorState(value) !== undefined

// -------------------------------------------------------------------------------------
// throwing checks
// -------------------------------------------------------------------------------------

/** A number out of its range (or not a number at all, where a number is due): a `RangeError`. */
const fail = (where: string, name: string, expected: string, value: unknown): never => {
  throw new RangeError(`${where}: ${name} must be ${expected}, received ${showValue(value)}`)
}

/** A value of the wrong kind: a `TypeError`. */
const wrongType = (where: string, name: string, expected: string, value: unknown): never => {
  throw new TypeError(`${where}: ${name} must be ${expected}, received ${showValue(value)}`)
}

/**
 * A value of ours or a service given as an object (a `Schedule`, a `Clock`, a `Breaker`, ...), for arguments that
 * JavaScript callers may get wrong: an object whose `methods` are functions, else a `TypeError` naming `what`.
 */
export const implementing = <S>(
  where: string,
  name: string,
  what: string,
  methods: ReadonlyArray<string>,
  value: S
): S => {
  const o = value as Record<string, unknown> | null
  if (o !== null && typeof o === 'object' && methods.every((m) => typeof o[m] === 'function')) return value
  return wrongType(where, name, what, value)
}

/**
 * The services a run is given (in its options, or in its environment, where the clock and random are required),
 * checked where they are given: a `TypeError` naming the bad one, not a failure deep in a run.
 */
export const services = (
  where: string,
  name: string,
  given: {
    readonly clock?: unknown
    readonly random?: unknown
    readonly budget?: unknown
    readonly breaker?: unknown
    readonly signal?: unknown
  },
  required = false
): void => {
  const { clock, random, budget, breaker, signal } = given
  if (required || clock !== undefined) implementing(where, `${name}.clock`, 'a Clock', ['now', 'sleep'], clock)
  if (required || random !== undefined) implementing(where, `${name}.random`, 'a Random', ['next'], random)
  if (budget !== undefined) implementing(where, `${name}.budget`, 'a RetryBudget', ['onSuccess', 'onFailure'], budget)
  if (breaker !== undefined) implementing(where, `${name}.breaker`, 'a Breaker', ['enter', 'admitsIn'], breaker)
  if (signal !== undefined)
    implementing(where, `${name}.signal`, 'an AbortSignal', ['addEventListener', 'removeEventListener'], signal)
}

/** The fields of a `Schedule` the interpreters and combinators read. */
interface ScheduleShape {
  readonly stepper?: unknown
  readonly readsTime?: unknown
  readonly timeLimits?: unknown
  readonly description?: unknown
  readonly isState?: unknown
}

/**
 * A schedule to step, for the interpreters (`Driver.make`, `Driver.restore`, `Driver.delays`), which read only its
 * `stepper` (and its `description`, which a snapshot copies): checked by name, as this runs at every run.
 */
export const stepping = <S>(where: string, name: string, value: S): S =>
  value !== null && typeof value === 'object' && typeof (value as ScheduleShape).stepper === 'function'
    ? value
    : implementing(where, name, 'a Schedule', ['stepper'], value)

/**
 * A `Schedule`: its `stepper`, `readsTime`, `timeLimits`, `description` and `isState`, as every constructor makes them, for
 * the combinators and the runners, which read them all (once, when they are built).
 */
export const schedule = <S>(where: string, name: string, value: S): S => {
  // read by name: this runs each time a combinator or a runner is built, and a load by a computed key is slow
  const s = value as ScheduleShape | null
  if (
    s !== null &&
    typeof s === 'object' &&
    typeof s.stepper === 'function' &&
    typeof s.readsTime === 'boolean' &&
    Array.isArray(s.timeLimits) &&
    typeof s.description === 'string' &&
    typeof s.isState === 'function'
  )
    return value
  return wrongType(where, name, 'a Schedule', value)
}

/** An options object (not `null`, not a primitive), for arguments that JavaScript callers may get wrong: a `TypeError`. */
export const object = <O>(where: string, name: string, value: O): O => {
  return value !== null && typeof value === 'object' ? value : wrongType(where, name, 'an object', value)
}

/** A string, such as a description: a `TypeError`. */
export const string = (where: string, name: string, value: unknown): string =>
  typeof value === 'string' ? value : wrongType(where, name, 'a string', value)

/** A boolean flag: a `TypeError`. */
export const boolean = (where: string, name: string, value: unknown): boolean =>
  typeof value === 'boolean' ? value : wrongType(where, name, 'a boolean', value)

/** Any other rule of a number: `value` when `holds(value)`, else a `RangeError` saying it must be `expected`. */
export const that = <A>(where: string, name: string, expected: string, holds: (value: A) => boolean, value: A): A =>
  holds(value) ? value : fail(where, name, expected, value)

/**
 * An option's value, or `fallback` when it is missing: only `undefined` is missing, so that a `null` reaches the
 * option's check and is named there (`?? fallback` would take it for the default).
 */
export const orDefault = <A>(value: A | undefined, fallback: A): A => (value === undefined ? fallback : value)

/** A finite number `>= 0` (a duration in ms); `-0` becomes `0`, so that a state reads the same after a JSON round trip. */
export const duration = (where: string, name: string, value: number): number =>
  isDuration(value) ? value + 0 : fail(where, name, 'a finite number >= 0', value)

/** A whole number `>= 0` (a count); `-0` becomes `0`. */
export const count = (where: string, name: string, value: number): number =>
  isCount(value) ? value + 0 : fail(where, name, 'a whole number >= 0', value)

/** A whole number `>= 1`: a size or a limit that cannot be 0. */
export const positiveCount = (where: string, name: string, value: unknown): number =>
  isCount(value) && value >= 1 ? value : fail(where, name, 'a whole number >= 1', value)

/** A whole number in `[1, max]` (see {@link isSizeAtMost}). */
export const sizeAtMost = (where: string, name: string, max: number, value: unknown): number =>
  isSizeAtMost(max)(value) ? value : fail(where, name, `a whole number in [1, ${max}]`, value)

/** A finite number `> 0`: a rate, a period, a time bound that cannot be 0. */
export const positive = (where: string, name: string, value: unknown): number =>
  isDuration(value) && value > 0 ? value : fail(where, name, 'a finite number > 0', value)

/** Any finite number (a point in time); `-0` becomes `0`. */
export const finite = (where: string, name: string, value: number): number =>
  isFiniteNumber(value) ? value + 0 : fail(where, name, 'a finite number', value)

/** A finite number `>= min`. */
export const atLeast = (where: string, name: string, min: number, value: number): number =>
  isAtLeast(min)(value) ? value : fail(where, name, `a finite number >= ${min}`, value)

/** A number in `[0, 1)`, the range of a uniform draw. */
export const unitInterval = (where: string, name: string, value: number): number =>
  isUnitInterval(value) ? value : fail(where, name, 'a number in [0, 1)', value)

/**
 * A generator state (see {@link isGeneratorState}), as a fresh array of the numbers that were checked: an array
 * whose getters answer differently at each read cannot slip another state past the check.
 */
export const generatorState = (where: string, name: string, value: ReadonlyArray<number>): ReadonlyArray<number> =>
  readGeneratorState(value) ?? fail(where, name, '4 signed 32-bit integers, not all zero', value)

/** A function, for arguments that JavaScript callers may get wrong: a `TypeError`. */
export const callable = <F>(where: string, name: string, value: F): F =>
  typeof value === 'function' ? value : wrongType(where, name, 'a function', value)

/** Caps a non-negative result at {@link MAX_DELAY}, so that growth saturates instead of overflowing. */
export const saturate = (ms: number): number => (ms > MAX_DELAY ? MAX_DELAY : ms)
