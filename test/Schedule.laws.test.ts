import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import type { Monoid } from 'fp-ts/Monoid'
import * as Random from '../src/Random'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import {
  type RunContext,
  advanceRun,
  delaysIn,
  driverFor,
  durationArbitrary,
  inputArbitrary,
  planOf,
  replayCursor,
  runContextArbitrary,
  scheduleArbitrary,
  trace,
  traceDecisions,
  traceDelays
} from './support/schedules'
import { deepStrictEqual, ok } from './util'

const MAX = Number.MAX_SAFE_INTEGER

// Kept moderate so that the whole file runs in a few seconds.
const numRuns = 200

/** Schedules from every constructor and combinator. */
const schedule = scheduleArbitrary()
/** Schedules whose decisions depend on nothing but their own state, input and draws: they compose as they run alone. */
const statusFree = scheduleArbitrary({ reads: 'nothing' })
/** Schedules with arguments up to Number.MAX_VALUE, to explore saturation. */
const wide = scheduleArbitrary({ maxMs: Number.MAX_VALUE })
const ms = durationArbitrary()
/** A draw for `Random.fixed`. */
const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })

/** The same delays from both schedules, for every generated run context. */
const equivalent = (x: Schedule.Schedule<number>, y: Schedule.Schedule<number>, context: RunContext): void => {
  deepStrictEqual(delaysIn(x, context), delaysIn(y, context))
}

const monoidLaws = (name: string, M: Monoid<Schedule.Schedule<number>>): void => {
  describe(name, () => {
    it('should be associative', () => {
      fc.assert(
        fc.property(schedule, schedule, schedule, runContextArbitrary, (a, b, c, context) =>
          equivalent(M.concat(M.concat(a, b), c), M.concat(a, M.concat(b, c)), context)
        ),
        { numRuns }
      )
    })

    it('should have empty as left identity', () => {
      fc.assert(
        fc.property(schedule, runContextArbitrary, (a, context) => equivalent(M.concat(M.empty, a), a, context)),
        { numRuns }
      )
    })

    it('should have empty as right identity', () => {
      fc.assert(
        fc.property(schedule, runContextArbitrary, (a, context) => equivalent(M.concat(a, M.empty), a, context)),
        { numRuns }
      )
    })
  })
}

/** The delays of a status-free schedule with every draw equal to `u`: what it does alone, step by step. */
const alone = (s: Schedule.Schedule<number>, u: number, input: number, limit: number): ReadonlyArray<number> =>
  Driver.delays(s, { random: Random.fixed(u), input, limit })

describe('Schedule', () => {
  describe('laws', () => {
    monoidLaws('getIntersectionMonoid', Schedule.getIntersectionMonoid<number>())
    monoidLaws('getUnionMonoid', Schedule.getUnionMonoid<number>())

    describe('andThen', () => {
      const then = (x: Schedule.Schedule<number>, y: Schedule.Schedule<number>) => Schedule.andThen(y)(x)

      it('should be associative', () => {
        fc.assert(
          fc.property(schedule, schedule, schedule, runContextArbitrary, (a, b, c, context) =>
            equivalent(then(then(a, b), c), then(a, then(b, c)), context)
          ),
          { numRuns }
        )
      })

      it('should have stop as left identity', () => {
        fc.assert(
          fc.property(schedule, runContextArbitrary, (a, context) => equivalent(then(Schedule.stop, a), a, context)),
          { numRuns }
        )
      })

      it('should have stop as right identity', () => {
        fc.assert(
          fc.property(schedule, runContextArbitrary, (a, context) => equivalent(then(a, Schedule.stop), a, context)),
          { numRuns }
        )
      })
    })
  })

  describe('composition', () => {
    const limit = 30

    it('intersect should continue while both continue, with the longer delay', () => {
      fc.assert(
        fc.property(statusFree, statusFree, draw, inputArbitrary, (a, b, u, input) => {
          const da = alone(a, u, input, limit)
          const db = alone(b, u, input, limit)
          const expected = da.slice(0, Math.min(da.length, db.length)).map((d, i) => Math.max(d, db[i]))
          deepStrictEqual(alone(Schedule.intersect(b)(a), u, input, limit), expected)
        }),
        { numRuns }
      )
    })

    it('union should continue while either continues, with the shorter delay of those continuing', () => {
      fc.assert(
        fc.property(statusFree, statusFree, draw, inputArbitrary, (a, b, u, input) => {
          const da = alone(a, u, input, limit)
          const db = alone(b, u, input, limit)
          const expected = Array.from({ length: Math.max(da.length, db.length) }, (_, i) =>
            i >= da.length ? db[i] : i >= db.length ? da[i] : Math.min(da[i], db[i])
          )
          deepStrictEqual(alone(Schedule.union(b)(a), u, input, limit), expected)
        }),
        { numRuns }
      )
    })

    it('andThen should run the first until it stops, then the second from its start', () => {
      fc.assert(
        fc.property(statusFree, statusFree, draw, inputArbitrary, (a, b, u, input) => {
          const expected = [...alone(a, u, input, limit), ...alone(b, u, input, limit)].slice(0, limit)
          deepStrictEqual(alone(Schedule.andThen(b)(a), u, input, limit), expected)
        }),
        { numRuns }
      )
    })
  })

  describe('capped', () => {
    it('should replace each delay by min(delay, max) and never turn a stop into a retry', () => {
      fc.assert(
        fc.property(statusFree, ms, runContextArbitrary, (s, max, context) => {
          deepStrictEqual(
            delaysIn(Schedule.capped(max)(s), context),
            delaysIn(s, context).map((d) => Math.min(d, max))
          )
        }),
        { numRuns }
      )
    })

    it('should be idempotent', () => {
      fc.assert(
        fc.property(schedule, ms, runContextArbitrary, (s, max, context) =>
          equivalent(pipe(s, Schedule.capped(max), Schedule.capped(max)), Schedule.capped(max)(s), context)
        ),
        { numRuns }
      )
    })
  })

  describe('fullJitter', () => {
    it('should never exceed the cap after capped', () => {
      fc.assert(
        fc.property(schedule, ms, runContextArbitrary, (s, cap, context) => {
          const ds = delaysIn(pipe(s, Schedule.capped(cap), Schedule.fullJitter), context)
          deepStrictEqual(
            ds.filter((d) => !(d >= 0 && d <= cap)),
            []
          )
        }),
        { numRuns }
      )
    })
  })

  describe('equalJitter', () => {
    it('should never exceed the cap after capped', () => {
      fc.assert(
        fc.property(schedule, ms, runContextArbitrary, (s, cap, context) => {
          const ds = delaysIn(pipe(s, Schedule.capped(cap), Schedule.equalJitter), context)
          deepStrictEqual(
            ds.filter((d) => !(d >= 0 && d <= cap)),
            []
          )
        }),
        { numRuns }
      )
    })
  })

  describe('upTo', () => {
    it('should never produce a delay that would end after the budget', () => {
      fc.assert(
        fc.property(schedule, ms, runContextArbitrary, (s, budget, context) => {
          const ds = delaysIn(Schedule.upTo(budget)(s), context)
          // the time at which each retry would start: every attempt before it, and every delay up to it
          let end = 0
          const late: Array<number> = []
          for (const d of ds) {
            end += context.attemptDuration
            end += d
            if (end > budget) late.push(end)
          }
          deepStrictEqual(late, [])
        }),
        { numRuns }
      )
    })

    it('should stop only when the next retry would end after the budget', () => {
      fc.assert(
        fc.property(statusFree, ms, runContextArbitrary, (s, budget, context) => {
          const expected: Array<number> = []
          let now = 0
          for (const d of delaysIn(s, context)) {
            now += context.attemptDuration
            if (now + d > budget) break
            expected.push(d)
            now += d
          }
          deepStrictEqual(delaysIn(Schedule.upTo(budget)(s), context), expected)
        }),
        { numRuns }
      )
    })
  })

  describe('maxCumulativeDelay', () => {
    it('should never let the sum of delays exceed ms', () => {
      fc.assert(
        fc.property(schedule, ms, runContextArbitrary, (s, budget, context) => {
          const ds = delaysIn(Schedule.maxCumulativeDelay(budget)(s), context)
          const sum = ds.reduce((acc, d) => acc + d, 0)
          expect(sum).toBeLessThanOrEqual(budget)
        }),
        { numRuns }
      )
    })

    it('should stop only when the next delay would take the sum past ms', () => {
      fc.assert(
        fc.property(statusFree, ms, runContextArbitrary, (s, budget, context) => {
          const expected: Array<number> = []
          let sum = 0
          for (const d of delaysIn(s, context)) {
            if (sum + d > budget) break
            expected.push(d)
            sum += d
          }
          deepStrictEqual(delaysIn(Schedule.maxCumulativeDelay(budget)(s), context), expected)
        }),
        { numRuns }
      )
    })
  })

  describe('bounds', () => {
    /** Every raw delay a schedule answers, outside [0, MAX_SAFE_INTEGER] (so negative, NaN, infinite or huge). */
    const outOfRange = (s: Schedule.Schedule<number>, context: RunContext): ReadonlyArray<number> =>
      traceDelays(trace(s, planOf(context, 50)))
        .filter((d) => !(d >= 0 && d <= MAX))
        .slice(0, 3)

    it('should never produce a negative, NaN or infinite delay', () => {
      fc.assert(
        fc.property(schedule, runContextArbitrary, (s, context) => {
          deepStrictEqual(outOfRange(s, context), [])
        }),
        { numRuns }
      )
    })

    it('should saturate every delay at Number.MAX_SAFE_INTEGER, whatever the arguments', () => {
      fc.assert(
        fc.property(wide, runContextArbitrary, (s, context) => {
          deepStrictEqual(outOfRange(s, context), [])
          // and the interpreter accepts every delay
          delaysIn(s, context, 50)
        }),
        { numRuns }
      )
    })
  })

  describe('purity', () => {
    it('should make the same decisions when stepped twice from its initial state', () => {
      fc.assert(
        fc.property(schedule, runContextArbitrary, (s, context) => {
          deepStrictEqual(trace(s, planOf(context)), trace(s, planOf(context)))
          deepStrictEqual(delaysIn(s, context), delaysIn(s, context))
        }),
        { numRuns }
      )
    })

    it('should make the decisions Driver.delays and a Driver report', () => {
      fc.assert(
        fc.property(schedule, runContextArbitrary, (s, context) => {
          const steps = trace(s, planOf(context))
          deepStrictEqual(traceDelays(steps), delaysIn(s, context))
          deepStrictEqual(traceDecisions(steps), advanceRun(driverFor(s, planOf(context)), planOf(context)))
        }),
        { numRuns }
      )
    })

    it('should keep its state as plain JSON, and resume from a JSON round trip', () => {
      fc.assert(
        fc.property(schedule, runContextArbitrary, (s, context) => {
          const steps = trace(s, planOf(context))
          deepStrictEqual(JSON.parse(JSON.stringify(s.initial)), s.initial)
          for (const step of steps) {
            const json = JSON.stringify(step.state)
            const restored = JSON.parse(json) as Schedule.Json
            deepStrictEqual(restored, step.state)
            const replayed = s.step(restored, { ...step.context, random: Random.fromState(step.randomState) })
            deepStrictEqual(replayed, step.decision)
            // stepping does not mutate the state it is given
            deepStrictEqual(restored, JSON.parse(json) as Schedule.Json)
            if (step.decision._tag === 'Continue') {
              deepStrictEqual(JSON.parse(JSON.stringify(step.decision.state)), step.decision.state)
            }
            // the stepper started from the same JSON state decides the same, and moves to the same state
            const stepper = s.stepper(JSON.parse(json) as Schedule.Json)
            const delay = stepper.next(replayCursor(step))
            if (step.decision._tag === 'Continue') {
              deepStrictEqual([delay, stepper.state()], [step.decision.delay, step.decision.state])
            } else {
              ok(delay < 0, `the stepper answered ${delay} where step answered Done`)
            }
          }
        }),
        { numRuns }
      )
    })
  })
})
