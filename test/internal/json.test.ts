import * as assert from 'assert'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import * as t from 'io-ts'
import { PathReporter } from 'io-ts/PathReporter'
import * as vm from 'vm'
import { JsonCodec, MAX_JSON_DEPTH } from '../../src/internal/json'
import type { Json } from '../../src/Schedule'
import { deepStrictEqual } from '../util'

/** `depth` arrays, one inside the other: `nestedArrays(2)` is `[[]]`. */
const nestedArrays = (depth: number): Json => {
  let value: Json = []
  for (let i = 1; i < depth; i++) value = [value]
  return value
}

/** `depth` objects, one inside the other under the key `a`: `nestedObjects(2)` is `{ a: {} }`. */
const nestedObjects = (depth: number): Json => {
  let value: Json = {}
  for (let i = 1; i < depth; i++) value = { a: value }
  return value
}

/** What `validate` reports: the path of keys below the root, the value found there and the message. */
const failure = (
  u: unknown
): { readonly path: ReadonlyArray<string>; readonly value: unknown; readonly message: string | undefined } => {
  const result = JsonCodec.decode(u)
  assert.ok(E.isLeft(result), 'expected a failure')
  if (E.isRight(result)) throw new Error('unreachable')
  deepStrictEqual(result.left.length, 1)
  const [error] = result.left
  // context[0] is the root, given by decode; each next entry is one step down, with the value found there
  error.context.slice(1).forEach((entry) => assert.strictEqual(entry.type, JsonCodec))
  return { path: error.context.slice(1).map((entry) => entry.key), value: error.value, message: error.message }
}

/** Asserts that `is` refuses `u` and that `validate` reports `message` at `path`, without throwing. */
const refuses = (u: unknown, path: ReadonlyArray<string>, message: RegExp): void => {
  deepStrictEqual(JsonCodec.is(u), false)
  const found = failure(u)
  deepStrictEqual(found.path, path)
  assert.match(found.message ?? '', message)
}

describe('internal/json', () => {
  describe('JsonCodec', () => {
    it('should accept any JSON value, as it is, and encode it as it is', () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          deepStrictEqual(JsonCodec.is(value), true)
          const decoded = JsonCodec.decode(value)
          assert.ok(E.isRight(decoded) && decoded.right === value)
          assert.strictEqual(JsonCodec.encode(value as Json), value)
        })
      )
    })

    it('should accept what JSON.parse gives back for any JSON text', () => {
      fc.assert(
        fc.property(fc.json(), (text) => {
          deepStrictEqual(JsonCodec.is(JSON.parse(text)), true)
        })
      )
    })

    it('should accept plain arrays and objects of another realm, and objects without a prototype', () => {
      const other = vm.runInNewContext('({ list: [1, { a: null }], empty: {} })') as unknown
      deepStrictEqual(JsonCodec.is(other), true)
      deepStrictEqual(JsonCodec.is(Object.assign(Object.create(null) as object, { a: [1] })), true)
    })

    it('should accept a value shared by several parents, without walking it once per path (2^200 paths here)', () => {
      let shared: Json = [1]
      for (let i = 0; i < 200; i++) shared = [shared, shared]
      deepStrictEqual(JsonCodec.is(shared), true)
    })

    // Regression: a stored state whose scheduleState was nested ~3,000 arrays deep (a 4.8 kB file) crashed
    // FileStore.load and RetryStateCodec.decode with "Maximum call stack size exceeded".
    it('should refuse 3,000 nested arrays or objects, without a stack overflow (stored state nested 3,000 deep)', () => {
      for (const value of [
        nestedArrays(3_000),
        nestedObjects(3_000),
        JSON.parse(`${'['.repeat(3_000)}${']'.repeat(3_000)}`) as unknown
      ]) {
        deepStrictEqual(JsonCodec.is(value), false)
        const found = failure(value)
        deepStrictEqual(found.path.length, MAX_JSON_DEPTH)
        deepStrictEqual(found.message, `nested deeper than ${MAX_JSON_DEPTH} levels`)
      }
      // far deeper than any stack: still a failure, not a crash
      deepStrictEqual(JsonCodec.is(nestedArrays(1_000_000)), false)
    })

    it('should accept exactly MAX_JSON_DEPTH levels of nesting and refuse one more', () => {
      deepStrictEqual(MAX_JSON_DEPTH, 512)
      deepStrictEqual(JsonCodec.is(nestedArrays(MAX_JSON_DEPTH)), true)
      deepStrictEqual(JsonCodec.is(nestedObjects(MAX_JSON_DEPTH)), true)
      deepStrictEqual(JsonCodec.is(nestedArrays(MAX_JSON_DEPTH + 1)), false)
      refuses(
        nestedObjects(MAX_JSON_DEPTH + 1),
        Array.from({ length: MAX_JSON_DEPTH }, () => 'a'),
        /^nested deeper than 512 levels$/
      )
      // a scalar below the deepest container adds no level
      deepStrictEqual(JsonCodec.is({ a: nestedArrays(MAX_JSON_DEPTH - 1) }), true)
    })

    it('should refuse a circular reference, naming it', () => {
      const cycle: Array<unknown> = [1]
      cycle.push({ back: cycle })
      deepStrictEqual(JsonCodec.is(cycle), false)
      deepStrictEqual(failure(cycle).message, 'a circular reference')
    })

    it('should refuse each value that is not JSON, reporting its path and the value found', () => {
      class Point {
        constructor(readonly x: number) {}
      }
      class List extends Array<number> {}
      const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
        ['NaN', NaN, /^NaN is not a finite number$/],
        ['Infinity', Infinity, /^Infinity is not a finite number$/],
        ['-Infinity', -Infinity, /^-Infinity is not a finite number$/],
        ['undefined', undefined, /^undefined is not JSON$/],
        ['a function', () => 1, /^a function is not JSON$/],
        ['a symbol', Symbol('s'), /^a symbol is not JSON$/],
        ['a bigint', 1n, /^a bigint is not JSON$/],
        ['a Date', new Date(0), /^an instance of a class, not a plain object$/],
        ['a Map', new Map(), /^an instance of a class, not a plain object$/],
        ['an instance of a class', new Point(1), /^an instance of a class, not a plain object$/],
        ['a boxed number', Object(1), /^an instance of a class, not a plain object$/],
        ['a subclass of Array', List.from([1]), /^an instance of a subclass of Array$/],
        ['a typed array', new Uint8Array(2), /^an instance of a class, not a plain object$/]
      ]
      for (const [name, bad, message] of cases) {
        // at the root, and deep inside arrays and objects
        refuses(bad, [], message)
        const found = failure({ state: [0, { previous: bad }] })
        deepStrictEqual([name, found.path], [name, ['state', '1', 'previous']])
        assert.ok(Object.is(found.value, bad), name)
        assert.match(found.message ?? '', message)
      }
    })

    it('should give, in the context, the value found at each step of the path', () => {
      const inner = { previous: NaN }
      const outer = [0, inner]
      const root = { state: outer }
      const result = t.type({ scheduleState: JsonCodec }).decode({ scheduleState: root })
      assert.ok(E.isLeft(result))
      if (E.isRight(result)) return
      const [error] = result.left
      deepStrictEqual(
        error.context.map((entry) => entry.key),
        ['', 'scheduleState', 'state', '1', 'previous']
      )
      deepStrictEqual(
        error.context.slice(1).map((entry) => entry.actual),
        [root, outer, inner, NaN]
      )
      deepStrictEqual(PathReporter.report(result), ['NaN is not a finite number'])
    })

    it('should refuse a hole in a sparse array', () => {
      refuses([1, , 3], ['1'], /^a hole in a sparse array$/)
      refuses({ a: new Array(5) }, ['a', '0'], /^a hole in a sparse array$/)
    })

    it('should refuse what JSON.stringify would drop: symbol keys, non-enumerable properties, extra array properties', () => {
      refuses({ a: { [Symbol('k')]: 1 } }, ['a'], /^an object with a symbol key Symbol\(k\)$/)
      refuses(
        Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }),
        ['hidden'],
        /^a non-enumerable property$/
      )
      refuses({ list: Object.assign([1, 2], { extra: true }) }, ['list'], /^an array with a property extra$/)
    })

    it('should refuse a getter without calling it, so that a throwing getter is a failure, not an exception', () => {
      let calls = 0
      const getter = Object.defineProperty({}, 'boom', {
        enumerable: true,
        get: () => {
          calls++
          throw new Error('getter called')
        }
      })
      refuses({ a: [getter] }, ['a', '0', 'boom'], /^a getter, not a value$/)
      const arrayGetter = Object.defineProperty([0], 0, { get: () => 1 })
      refuses(arrayGetter, ['0'], /^a getter, not a value$/)
      deepStrictEqual(calls, 0)
    })

    it('should refuse a revoked Proxy, at the root or inside, without throwing', () => {
      const { proxy, revoke } = Proxy.revocable({ a: 1 }, {})
      revoke()
      refuses(proxy, [], /^reading it threw TypeError: /)
      refuses({ a: [1, proxy] }, ['a', '1'], /^reading it threw TypeError: /)
    })

    it('should refuse a Proxy whose traps throw, without throwing, whatever they throw', () => {
      const throwing = (thrown: unknown) => () => {
        throw thrown
      }
      const unprintable = {
        toString: () => {
          throw new Error('no')
        }
      }
      refuses(new Proxy({}, { ownKeys: throwing(new Error('ownKeys')) }), [], /^reading it threw Error: ownKeys$/)
      refuses(new Proxy({}, { getPrototypeOf: throwing('a string') }), [], /^reading it threw a string$/)
      refuses(
        { a: new Proxy({ b: 1 }, { getOwnPropertyDescriptor: throwing(unprintable) }) },
        ['a', 'b'],
        /^reading it threw an exception that cannot be shown$/
      )
    })

    it('should accept a Proxy of plain JSON whose traps behave', () => {
      deepStrictEqual(JsonCodec.is(new Proxy({ a: [1, 'x'] }, {})), true)
    })

    it('should never throw, whatever the value', () => {
      fc.assert(
        fc.property(
          fc.anything({
            withBigInt: true,
            withBoxedValues: true,
            withMap: true,
            withSet: true,
            withObjectString: true,
            withNullPrototype: true,
            withTypedArray: true,
            withSparseArray: true
          }),
          (value) => {
            const is = JsonCodec.is(value)
            const decoded = JsonCodec.decode(value)
            deepStrictEqual(E.isRight(decoded), is)
          }
        )
      )
    })
  })
})
