import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import { isTimeless } from '../../src/internal/timeless'
import * as Schedule from '../../src/Schedule'
import {
  deepStrictEqual,
  delaysIn,
  runContextArbitrary,
  scheduleSpecArbitrary,
  toSchedule,
  type ScheduleSpec
} from '../util'

/** Whether a generated schedule contains `upTo`, the one generated combinator that reads the time. */
const readsTime = (spec: ScheduleSpec): boolean => {
  switch (spec._tag) {
    case 'upTo':
      return true
    case 'capped':
    case 'minDelay':
    case 'fullJitter':
    case 'equalJitter':
    case 'maxCumulativeDelay':
    case 'whileInput':
    case 'untilInput':
      return readsTime(spec.self)
    case 'intersect':
    case 'union':
    case 'andThen':
      return readsTime(spec.left) || readsTime(spec.right)
    default:
      return false
  }
}

describe('internal/timeless', () => {
  it('should mark every delay constructor, and never make, fromPolicy or upTo', () => {
    const marked = [
      Schedule.forever,
      Schedule.stop,
      Schedule.constant(10),
      Schedule.exponential(10),
      Schedule.linear(10),
      Schedule.fibonacci(10),
      Schedule.decorrelatedJitter(10, 100),
      Schedule.decorrelatedJitterV2(10),
      Schedule.randomBetween(10, 20),
      Schedule.recurs(3),
      Schedule.fromDelays([1, 2]),
      Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: 800 })
    ]
    deepStrictEqual(
      marked.map((s) => [s.description, isTimeless(s)]),
      marked.map((s) => [s.description, true])
    )
    deepStrictEqual(isTimeless(Schedule.make(0, () => Schedule.done)), false)
    deepStrictEqual(isTimeless(Schedule.fromPolicy(() => O.none)), false)
    deepStrictEqual(isTimeless(pipe(Schedule.forever, Schedule.upTo(100))), false)
  })

  it('should mark a combinator when every schedule it combines is marked', () => {
    const custom = Schedule.make(0, () => Schedule.done)
    const timed = pipe(Schedule.constant(5), Schedule.upTo(100))
    deepStrictEqual(isTimeless(pipe(Schedule.exponential(10), Schedule.capped(100), Schedule.fullJitter)), true)
    deepStrictEqual(isTimeless(pipe(Schedule.exponential(10), Schedule.maxCumulativeDelay(100))), true)
    deepStrictEqual(isTimeless(pipe(Schedule.recurs(3), Schedule.whileInput((n: number) => n > 0))), true)
    deepStrictEqual(isTimeless(pipe(Schedule.recurs(3), Schedule.modifyDelay((d) => d + 1))), true)
    for (const combine of [Schedule.intersect, Schedule.union, Schedule.andThen]) {
      deepStrictEqual(isTimeless(pipe(Schedule.recurs(3), combine(Schedule.constant(5)))), true)
      deepStrictEqual(isTimeless(pipe(Schedule.recurs(3), combine(timed))), false)
      deepStrictEqual(isTimeless(pipe(custom, combine(Schedule.recurs(3)))), false)
    }
    deepStrictEqual(isTimeless(pipe(custom, Schedule.capped(10))), false)
  })

  it('should mark exactly the generated schedules without upTo', () => {
    fc.assert(
      fc.property(scheduleSpecArbitrary(), (spec) => deepStrictEqual(isTimeless(toSchedule(spec)), !readsTime(spec))),
      { numRuns: 300 }
    )
  })

  it('a schedule marked timeless should make the same decisions whatever the time it is given', () => {
    // attemptDuration moves `now` and `status.elapsed` and nothing else.
    fc.assert(
      fc.property(scheduleSpecArbitrary(), runContextArbitrary, (spec, context) => {
        const schedule = toSchedule(spec)
        fc.pre(isTimeless(schedule))
        deepStrictEqual(delaysIn(schedule, context), delaysIn(schedule, { ...context, attemptDuration: 0 }))
      }),
      { numRuns: 300 }
    )
  })
})
