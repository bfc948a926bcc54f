import * as fc from 'fast-check'
import * as fs from 'fs'
import * as path from 'path'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as Arbitrary from '../src/Arbitrary'
import * as Random from '../src/Random'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, strictEqual, throwsRangeError } from './util'

describe('Arbitrary', () => {
  describe('schedule', () => {
    it('should make schedules that every interpreter agrees on, bounded by their recurs', () => {
      fc.assert(
        fc.property(Arbitrary.schedule({ maxRetries: 6 }), Arbitrary.seed, (schedule, seed) => {
          const delays = Driver.delays(schedule, { random: Random.seeded(seed) })
          ok(delays.length <= 6, schedule.description)
          ok(
            delays.every((d) => Number.isFinite(d) && d >= 0),
            schedule.description
          )
          deepStrictEqual(Arbitrary.simulate(schedule, Array(10).fill(E.left('x')), { seed }).delays, delays)
        })
      )
    })

    it('upTo, listed in its docs, was never built: every constructor and combinator its docs list should appear over many samples', () => {
      // the names its JSDoc lists, in backticks, between "Schedules built from" and "each bounded by"
      const source = fs.readFileSync(path.join(__dirname, '../src/Arbitrary.ts'), 'utf8')
      const listed = /Schedules built from([\s\S]*?)each bounded by/.exec(source)?.[1] ?? ''
      const names = [...listed.matchAll(/`(\w+)`/g)].map(([, name]) => name)
      ok(names.length >= 17, `the docs list ${names.join(', ')}`)
      const descriptions = fc.sample(Arbitrary.schedule(), { numRuns: 3_000, seed: 21 }).map((s) => s.description)
      const missing = [...names, 'recurs'].filter(
        (name) => !descriptions.some((d) => new RegExp(`(^|[^\\w])${name}\\(`).test(d))
      )
      deepStrictEqual(missing, [])
    })

    it('should check its options', () => {
      throwsRangeError(
        () => Arbitrary.schedule({ depth: -1 }),
        /^Arbitrary\.schedule: options\.depth must be a whole number >= 0, received -1$/
      )
      throwsRangeError(
        () => Arbitrary.schedule({ maxDelay: 0 }),
        /^Arbitrary\.schedule: options\.maxDelay must be a whole number >= 1, received 0$/
      )
    })
  })

  describe('simulate', () => {
    it('should decide as the runner does, over the same outcomes, on a TestClock', async () => {
      await fc.assert(
        fc.asyncProperty(
          Arbitrary.schedule({ maxDelay: 1_000, maxRetries: 5 }),
          Arbitrary.outcomes(fc.constantFrom('a', 'b'), { value: fc.constant(1), maxLength: 8 }),
          Arbitrary.seed,
          async (schedule, outcomes, seed) => {
            const simulated = Arbitrary.simulate(schedule, outcomes, { seed })
            let calls = 0
            const action: TE.TaskEither<string, number> = () =>
              Promise.resolve(outcomes[calls++] ?? E.left('beyond the outcomes'))
            const { result, clock } = await TestClock.run((clock) =>
              pipe(action, retrying(schedule, { clock, random: Random.seeded(seed) }))
            )
            // a zero delay goes through no clock: the runner retries at once
            const slept = simulated.delays.filter((delay) => delay > 0)
            if (simulated.reason === 'failed') {
              // the outcomes ran out while the schedule went on: the runner went further
              deepStrictEqual(clock.sleeps.slice(0, slept.length), slept)
              return
            }
            deepStrictEqual([clock.sleeps, calls], [slept, simulated.attempts])
            deepStrictEqual(result, outcomes[simulated.attempts - 1])
          }
        ),
        { numRuns: 60 }
      )
    })

    it('should let a user state a policy’s promise in a few lines: never more than 30 s, never a 400', () => {
      const policy = pipe(
        Schedule.exponential(100),
        Schedule.capped(5_000),
        Schedule.fullJitter,
        Schedule.whileInput((status: number) => status >= 500),
        Schedule.maxCumulativeDelay(30_000)
      )
      fc.assert(
        fc.property(
          Arbitrary.outcomes(fc.constantFrom(400, 500, 503), { maxLength: 40 }),
          Arbitrary.seed,
          (outcomes, seed) => {
            const run = Arbitrary.simulate(policy, outcomes, { seed })
            return run.totalDelay <= 30_000 && run.retried.every((status) => status !== 400)
          }
        )
      )
    })

    it('should find the policy that breaks such a promise', () => {
      const careless = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(20)))
      const broken = fc.check(
        fc.property(Arbitrary.outcomes(fc.constantFrom(400, 503), { maxLength: 40 }), (outcomes) => {
          const run = Arbitrary.simulate(careless, outcomes)
          return run.totalDelay <= 30_000 && run.retried.every((status) => status !== 400)
        })
      )
      strictEqual(broken.failed, true)
    })

    it('should stop at the first success, when the schedule stops, or when the outcomes run out', () => {
      const twice = Schedule.fromDelays([10, 20])
      deepStrictEqual(Arbitrary.simulate(twice, [E.left(1), E.right('ok')]), {
        delays: [10],
        retried: [1],
        attempts: 2,
        totalDelay: 10,
        reason: 'succeeded'
      })
      deepStrictEqual(Arbitrary.simulate(twice, [E.left(1), E.left(2), E.left(3), E.left(4)]).reason, 'schedule')
      deepStrictEqual(Arbitrary.simulate(twice, [E.left(1)]), {
        delays: [10],
        retried: [1],
        attempts: 1,
        totalDelay: 10,
        reason: 'failed'
      })
    })
  })
})

function ok(value: boolean, message: string): void {
  if (!value) throw new Error(message)
}
