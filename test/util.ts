/**
 * Shared test helpers: the one assertion vocabulary of the tests (typed equality, thrown and rejected errors, the
 * sides of an `Either`), a table of the numbers no duration may be, seeds, and trackers of timers. The reference
 * interpreter of schedules and their generators are in `test/support/schedules.ts`.
 */
import * as assert from 'assert'
import * as fc from 'fast-check'
import type { Either } from 'fp-ts/Either'
import { left, right } from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as v8 from 'v8'
import * as vm from 'vm'

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

/** Escapes a string for use inside a `RegExp`, for messages that quote a value. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

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

/** One `it` per row: each call must throw a `TypeError` (a value of the wrong kind) whose message names it. */
export const itThrowsTypeErrors = (cases: ReadonlyArray<RangeErrorCase>): void => {
  it.each(cases.map(([call, f, message]) => ({ call, f, message })))(
    '$call should be a TypeError naming it',
    ({ f, message }) => throwsTypeError(f, message)
  )
}

// -------------------------------------------------------------------------------------
// the event loop
// -------------------------------------------------------------------------------------

/** One turn of the event loop: every promise job queued so far has run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

// -------------------------------------------------------------------------------------
// generated values
// -------------------------------------------------------------------------------------

/** A seed for `Random.seeded`: a whole number from 0 to 2^32 - 1. */
export const seedArbitrary: fc.Arbitrary<number> = fc.integer({ min: 0, max: 0xffffffff })

// -------------------------------------------------------------------------------------
// timers
// -------------------------------------------------------------------------------------

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

/** Every sleep a test clock was asked for, as `'<kind> <ms>'`, in order: the backoffs among the timeouts. */
export const timersOf = (clock: {
  readonly timers: ReadonlyArray<{ readonly kind: string; readonly ms: number }>
}): ReadonlyArray<string> => clock.timers.map(({ kind, ms }) => `${kind} ${ms}`)

/** An action that fails `failures` times (`error 1`, `error 2`, ...) and then succeeds with `ok <attempt>`. */
export const flaky = (
  failures: number
): { readonly action: TaskEither<string, string>; readonly calls: () => number } => {
  let calls = 0
  return {
    action: () => {
      calls++
      return Promise.resolve(calls <= failures ? left(`error ${calls}`) : right(`ok ${calls}`))
    },
    calls: () => calls
  }
}

/** An action that always fails (`error 1`, `error 2`, ...). */
export const failing = (): ReturnType<typeof flaky> => flaky(Infinity)

/**
 * A full garbage collection, when the engine allows one: without it, `heapUsed` also counts garbage that is
 * merely not collected yet, and a bound on heap growth can only be loose.
 */
export const exposeGc = (): (() => void) | undefined => {
  try {
    v8.setFlagsFromString('--expose-gc')
    const gc: unknown = vm.runInNewContext('gc')
    return typeof gc === 'function' ? () => gc() : undefined
  } catch {
    return undefined
  }
}
