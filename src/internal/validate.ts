/**
 * Argument checks shared by every constructor: each throws a `RangeError` that names the function, the
 * argument and the value received, so a bad configuration fails where it is written.
 *
 * @internal
 */

/** The largest delay, in ms, any schedule produces: arithmetic saturates here instead of reaching Infinity. */
export const MAX_DELAY = Number.MAX_SAFE_INTEGER

const show = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : Object.is(value, -0) ? '-0' : String(value)

const fail = (where: string, name: string, expected: string, value: unknown): never => {
  throw new RangeError(`${where}: ${name} must be ${expected}, received ${show(value)}`)
}

/** A finite number `>= 0` (a duration in ms). */
export const duration = (where: string, name: string, value: number): number =>
  typeof value === 'number' && value >= 0 && value !== Infinity
    ? value + 0 // -0 becomes 0: a state must read the same after a JSON round trip
    : fail(where, name, 'a finite number >= 0', value)

/** A whole number `>= 0` (a count). */
export const count = (where: string, name: string, value: number): number =>
  Number.isSafeInteger(value) && value >= 0 ? value : fail(where, name, 'a whole number >= 0', value)

/** Any finite number (a point in time). */
export const finite = (where: string, name: string, value: number): number =>
  Number.isFinite(value) ? value : fail(where, name, 'a finite number', value)

/** A finite number `>= min`. */
export const atLeast = (where: string, name: string, min: number, value: number): number =>
  typeof value === 'number' && value >= min && value !== Infinity
    ? value
    : fail(where, name, `a finite number >= ${min}`, value)

/** A number in `[0, 1)`, the range of a uniform draw. */
export const unitInterval = (where: string, name: string, value: number): number =>
  typeof value === 'number' && value >= 0 && value < 1 ? value : fail(where, name, 'a number in [0, 1)', value)

/** A function, for arguments that JavaScript callers may get wrong. */
export const callable = <F>(where: string, name: string, value: F): F =>
  typeof value === 'function' ? value : fail(where, name, 'a function', value)

/** Caps a non-negative result at {@link MAX_DELAY}, so that growth saturates instead of overflowing. */
export const saturate = (ms: number): number => (ms > MAX_DELAY ? MAX_DELAY : ms)
