import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import { decodeState, errorLines } from '../../src/durable/shared'
import { RetryStateCodec } from '../../src/RetryState'
import { advanceRun, driverFor, runPlanArbitrary, scheduleArbitrary } from '../support/schedules'
import { deepStrictEqual, ok, strictEqual } from '../util'

/** What `decodeState` answered before it checked with `is` first: the codec's decode, its errors as lines. */
const reference = (u: unknown): E.Either<ReadonlyArray<string>, unknown> =>
  pipe(RetryStateCodec.decode(u), E.mapLeft(errorLines))

/** The states a run stores, as a store hands them back: each snapshot of a generated run, through JSON. */
const storedStates = fc.tuple(scheduleArbitrary(), runPlanArbitrary(6)).map(([schedule, plan]) => {
  const driver = driverFor(schedule, plan)
  const stored = (): unknown => JSON.parse(JSON.stringify(driver.snapshot()))
  const states = [stored()]
  // one decision at a time, and the state stored after each
  while (advanceRun(driver, plan, 1).length > 0) states.push(stored())
  return states
})

describe('durable/shared', () => {
  describe('decodeState', () => {
    it('should decode every state a run stores to that very value, as the codec does', () => {
      fc.assert(
        fc.property(storedStates, (states) => {
          for (const state of states) {
            const decoded = decodeState(state)
            deepStrictEqual(decoded, reference(state))
            ok(E.isRight(decoded))
            strictEqual<unknown>(decoded.right, state)
          }
        }),
        { numRuns: 200 }
      )
    })

    it('should answer as the codec does for a stored state with any one field replaced by anything', () => {
      fc.assert(
        fc.property(
          storedStates,
          fc.nat(),
          fc.constantFrom(
            'schedule',
            'scheduleState',
            'iterNumber',
            'cumulativeDelay',
            'previousDelay',
            'startedAt',
            'dueAt',
            'random',
            'extra'
          ),
          fc.anything({ withBigInt: true, withNullPrototype: true, withSparseArray: true, withMap: true }),
          (states, i, field, garbage) => {
            const state = states[i % states.length] as Record<string, unknown>
            const tampered = { ...state, [field]: garbage }
            deepStrictEqual(decodeState(tampered), reference(tampered))
          }
        ),
        { numRuns: 500 }
      )
    })

    it('should answer as the codec does for any value at all', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.anything({ withBigInt: true, withNullPrototype: true, withSparseArray: true, withMap: true }),
            fc.jsonValue()
          ),
          (u) => deepStrictEqual(decodeState(u), reference(u))
        ),
        { numRuns: 500 }
      )
    })
  })
})
