import * as assert from 'assert'
import * as fc from 'fast-check'
import * as validate from '../../src/internal/validate'
import { deepStrictEqual, throwsRangeError } from '../util'

const revoked = (): unknown => {
  const r = Proxy.revocable([], {})
  r.revoke()
  return r.proxy
}

/** A test title for a value, whatever it is (jest's own formatting throws on a revoked Proxy). */
const label = (u: unknown): string => {
  try {
    if (Array.isArray(u) && u.length > 8) return `an array of length ${u.length}`
    if (typeof u === 'bigint') return `${u}n`
    if (typeof u === 'number') return Object.is(u, -0) ? '-0' : String(u)
    return JSON.stringify(u) ?? String(u)
  } catch {
    return 'a revoked Proxy'
  }
}

/** Each rule: its predicate, its throwing check (as a function of the value), values it accepts and values it rejects. */
const rules: ReadonlyArray<{
  readonly name: string
  readonly is: (u: unknown) => boolean
  readonly check: (u: unknown) => unknown
  readonly expected: string
  readonly good: ReadonlyArray<unknown>
  readonly bad: ReadonlyArray<unknown>
}> = [
  {
    name: 'duration',
    is: validate.isDuration,
    check: (u) => validate.duration('f', 'ms', u as number),
    expected: 'a finite number >= 0',
    good: [0, -0, 0.5, 1, 2 ** 53, Number.MAX_VALUE],
    bad: [-1, -Number.MIN_VALUE, NaN, Infinity, -Infinity, '1', null, undefined, [1], BigInt(1)]
  },
  {
    name: 'count',
    is: validate.isCount,
    check: (u) => validate.count('f', 'n', u as number),
    expected: 'a whole number >= 0',
    good: [0, -0, 1, 2 ** 53 - 1],
    bad: [-1, 0.5, 2 ** 53, NaN, Infinity, '3', null, true]
  },
  {
    name: 'finite',
    is: validate.isFiniteNumber,
    check: (u) => validate.finite('f', 'now', u as number),
    expected: 'a finite number',
    good: [0, -1, 1.5, -Number.MAX_VALUE],
    bad: [NaN, Infinity, -Infinity, '0', null]
  },
  {
    name: 'atLeast(1)',
    is: validate.isAtLeast(1),
    check: (u) => validate.atLeast('f', 'factor', 1, u as number),
    expected: 'a finite number >= 1',
    good: [1, 1.5, 1e300],
    bad: [0.999, 0, -1, NaN, Infinity, '2']
  },
  {
    name: 'sizeAtMost(MAX_WINDOW_SIZE)',
    is: validate.isSizeAtMost(validate.MAX_WINDOW_SIZE),
    check: (u) => validate.sizeAtMost('f', 'size', validate.MAX_WINDOW_SIZE, u),
    expected: 'a whole number in [1, 536870912]',
    good: [1, 100, 2 ** 29],
    bad: [0, -0, -1, 1.5, 2 ** 29 + 1, 2 ** 32 + 1, NaN, Infinity, '3', null]
  },
  {
    name: 'unitInterval',
    is: validate.isUnitInterval,
    check: (u) => validate.unitInterval('f', 'u', u as number),
    expected: 'a number in [0, 1)',
    good: [0, 0.5, 1 - 2 ** -53],
    bad: [1, -0.1, NaN, Infinity, '0.5']
  },
  {
    name: 'generatorState',
    is: validate.isGeneratorState,
    check: (u) => validate.generatorState('f', 'state', u as ReadonlyArray<number>),
    expected: '4 signed 32-bit integers, not all zero',
    good: [
      [1, 2, 3, 4],
      [-(2 ** 31), 2 ** 31 - 1, 0, 0],
      [0, 0, 0, 1]
    ],
    bad: [
      [0, 0, 0, 0],
      [1, 2, 3],
      [1, 2, 3, 4, 5],
      [1, 2, 3, 2 ** 31],
      [1, 2, 3, 0.5],
      'abcd',
      null,
      revoked(),
      new Array(2 ** 32 - 1)
    ]
  }
]

describe('internal/validate', () => {
  describe.each(rules)('$name', ({ is, check, expected, good, bad }) => {
    it.each(good.map((u) => [label(u), u]))('should accept %s, in the predicate and the check alike', (_, u) => {
      assert.strictEqual(is(u), true)
      assert.doesNotThrow(() => check(u))
    })

    it.each(bad.map((u) => [label(u), u]))(
      'should reject %s, in the predicate and the check alike, naming where and what',
      (_, u) => {
        assert.strictEqual(is(u), false)
        throwsRangeError(
          () => check(u),
          new RegExp(`^f: \\w+ must be ${expected.replace(/[[\]()]/g, '\\$&')}, received `)
        )
      }
    )

    it('the predicate should never throw, whatever it is given', () => {
      fc.assert(
        fc.property(fc.anything({ withBigInt: true, withSparseArray: true, withTypedArray: true }), (u) => {
          assert.strictEqual(typeof is(u), 'boolean')
        })
      )
    })
  })

  it('duration should read -0 as 0, so that a value reads the same after a JSON round trip', () => {
    assert.ok(Object.is(validate.duration('f', 'ms', -0), 0))
  })

  it('generatorState should return a copy of the numbers it checked', () => {
    const state = [1, 2, 3, 4]
    const checked = validate.generatorState('f', 'state', state)
    deepStrictEqual(checked, state)
    assert.notStrictEqual(checked, state)
  })
})
