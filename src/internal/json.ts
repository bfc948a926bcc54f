/**
 * The io-ts codec of a plain JSON value (a schedule's state), checked without recursion, so that a stored state
 * nested thousands of levels deep is a decoding failure instead of a stack overflow.
 *
 * @internal
 */
import * as t from 'io-ts'
import type { Json } from './model'
import { showValue } from './show'

/**
 * The deepest nesting of arrays and objects {@link JsonCodec} accepts: `[]` is 1 level, `[[]]` 2.
 *
 * Why 512: a schedule's state nests one level per combinator, so a real one is a handful of levels deep and
 * even a composition of hundreds of schedules fits. Yet the codec's output goes on to recursive code that has
 * a stack to run out of (measured on Node 20 with its default stack: `assert.deepStrictEqual` overflows between
 * 1,000 and 3,000 levels, `JSON.stringify` between 3,000 and 5,000, the previous recursive io-ts codec between
 * 2,000 and 3,000), and that code may already be deep in the stack when it is called. 512 keeps every value
 * that passes well clear of those limits.
 */
export const MAX_JSON_DEPTH = 512

/** A value found not to be plain JSON: where it is (keys from the root) and why. */
interface Problem {
  /** The values along the path: `values[i]` is at `keys.slice(0, i)`, the last one is the bad value. */
  readonly values: ReadonlyArray<unknown>
  readonly keys: ReadonlyArray<string>
  readonly message: string
}

/** An array or object waiting to be checked, with the way back to the root for a report. */
interface Frame {
  readonly value: object
  /** 1 for the root container, one more per level of nesting. */
  readonly depth: number
  readonly parent: Frame | undefined
  readonly key: string
}

/** The problem of `value`, the child `key` of `parent` (or the root, when `parent` is undefined). */
const problemAt = (parent: Frame | undefined, key: string, value: unknown, message: string): Problem => {
  const keys: Array<string> = []
  const values: Array<unknown> = [value]
  for (let frame = parent, k = key; frame !== undefined; k = frame.key, frame = frame.parent) {
    keys.push(k)
    values.push(frame.value)
  }
  return { keys: keys.reverse(), values: values.reverse(), message }
}

/** The problem of a queued container itself. */
const problemOf = (frame: Frame, message: string): Problem => problemAt(frame.parent, frame.key, frame.value, message)

/** Never throws: describing a thrown value must not throw in turn (a revoked proxy, a throwing toString). */
const describeThrown = (e: unknown): string => {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  } catch {
    return 'an exception that cannot be shown'
  }
}

/** Why a value that is neither an array nor an object is not JSON, or `undefined` when it is. */
const scalarProblem = (value: unknown): string | undefined => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) ? undefined : `${showValue(value)} is not a finite number`
    case 'object':
      return undefined // null: arrays and objects are checked by the caller
    case 'undefined':
      return 'undefined is not JSON'
    default:
      return `a ${typeof value} is not JSON`
  }
}

const isIndex = (key: string | symbol, length: number): boolean => {
  if (typeof key !== 'string') return false
  const n = Number(key)
  return Number.isInteger(n) && n >= 0 && n < length && String(n) === key
}

/**
 * Checks `root` depth-first with an explicit stack (no recursion, so no depth can overflow the call stack), and
 * gives the first problem found. Only own enumerable data properties count, since they are what `JSON.stringify`
 * writes: a getter, a symbol key or a hidden property would not survive a round trip. Reading the value can
 * throw (a getter, a revoked proxy, a proxy's trap): that is a problem like any other.
 */
const check = (root: unknown): Problem | undefined => {
  if (typeof root !== 'object' || root === null) {
    const message = scalarProblem(root)
    return message === undefined ? undefined : problemAt(undefined, '', root, message)
  }
  const stack: Array<Frame> = [{ value: root, depth: 1, parent: undefined, key: '' }]
  // The deepest level each container has been queued at: a value shared by several parents (a DAG) is walked
  // again only when it turns up deeper, so that `v = [v, v]` repeated n times costs n steps, not 2^n. A cycle
  // turns up deeper and deeper until it is refused for its depth.
  const queuedAt = new Map<object, number>()
  queuedAt.set(root, 1)

  // Checks one child of `frame`; a container is queued, not walked, so the call stack stays flat.
  const visit = (frame: Frame, key: string, value: unknown): Problem | undefined => {
    if (typeof value !== 'object' || value === null) {
      const message = scalarProblem(value)
      return message === undefined ? undefined : problemAt(frame, key, value, message)
    }
    const depth = frame.depth + 1
    if (depth > MAX_JSON_DEPTH) {
      let circular = false
      for (let f: Frame | undefined = frame; f !== undefined && !circular; f = f.parent) circular = f.value === value
      const message = circular ? 'a circular reference' : `nested deeper than ${MAX_JSON_DEPTH} levels`
      return problemAt(frame, key, value, message)
    }
    const seen = queuedAt.get(value)
    if (seen === undefined || seen < depth) {
      queuedAt.set(value, depth)
      stack.push({ value, depth, parent: frame, key })
    }
    return undefined
  }

  let frame: Frame | undefined
  let key: string | undefined
  try {
    while ((frame = stack.pop()) !== undefined) {
      key = undefined
      const value = frame.value
      const proto: unknown = Object.getPrototypeOf(value)
      const keys = Reflect.ownKeys(value)
      if (Array.isArray(value)) {
        // Some realm's Array.prototype (itself an array): a subclass's prototype is not one.
        if (!Array.isArray(proto)) return problemOf(frame, 'an instance of a subclass of Array')
        const length = value.length
        for (let i = 0; i < length; i++) {
          key = String(i)
          const descriptor = Reflect.getOwnPropertyDescriptor(value, i)
          if (descriptor === undefined) return problemAt(frame, key, undefined, 'a hole in a sparse array')
          if (!('value' in descriptor)) return problemAt(frame, key, undefined, 'a getter, not a value')
          const problem = visit(frame, key, descriptor.value)
          if (problem !== undefined) return problem
        }
        key = undefined
        // The indices and `length`: anything else is a property JSON.stringify would drop.
        if (keys.length !== length + 1) {
          const extra = keys.find((k) => k !== 'length' && !isIndex(k, length))
          return problemOf(frame, `an array with a property ${String(extra)}`)
        }
      } else {
        // A plain object from any realm: its prototype is null or some realm's Object.prototype.
        if (proto !== null && Object.getPrototypeOf(proto) !== null) {
          return problemOf(frame, 'an instance of a class, not a plain object')
        }
        for (const k of keys) {
          if (typeof k === 'symbol') return problemOf(frame, `an object with a symbol key ${String(k)}`)
          key = k
          const descriptor = Reflect.getOwnPropertyDescriptor(value, k)
          if (descriptor === undefined) continue // a proxy that lists a key it does not have: JSON skips it too
          if (!('value' in descriptor)) return problemAt(frame, k, undefined, 'a getter, not a value')
          if (descriptor.enumerable !== true) return problemAt(frame, k, descriptor.value, 'a non-enumerable property')
          const problem = visit(frame, k, descriptor.value)
          if (problem !== undefined) return problem
        }
      }
    }
  } catch (e) {
    // Thrown while reading `frame.value` (or its child `key`): a revoked proxy, a proxy trap that throws.
    const at = frame as Frame
    const message = `reading it threw ${describeThrown(e)}`
    return key === undefined ? problemOf(at, message) : problemAt(at, key, undefined, message)
  }
  return undefined
}

const is = (u: unknown): u is Json => check(u) === undefined

/**
 * A plain JSON value: `null`, a boolean, a finite number, a string, or a plain array or object of JSON values.
 *
 * **Details**
 *
 * - `is` and `validate` walk the value with an explicit stack, never with recursion, and never throw.
 * - Refused, with the path to the first one found: nesting deeper than {@link MAX_JSON_DEPTH}, `NaN` and
 *   infinities, `undefined`, functions, symbols, bigints, instances of classes (a `Date`, a `Map`, a subclass of
 *   `Array`), holes in sparse arrays, getters, symbol keys, non-enumerable properties, extra properties on an
 *   array, a circular reference, and any value whose reading throws (a revoked proxy, a throwing getter).
 * - A value shared by several parents is fine (JSON.stringify writes it once per parent).
 * - `encode` is the identity: a value that passes is already JSON.
 */
export const JsonCodec: t.Type<Json, Json, unknown> = new t.Type<Json, Json, unknown>(
  'Json',
  is,
  (u, c) => {
    const problem = check(u)
    if (problem === undefined) return t.success(u as Json)
    const context: Array<t.ContextEntry> = [...c]
    problem.keys.forEach((key, i) => context.push({ key, type: JsonCodec, actual: problem.values[i + 1] }))
    return t.failure(problem.values[problem.values.length - 1], context, problem.message)
  },
  t.identity
)
