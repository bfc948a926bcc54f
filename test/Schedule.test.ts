import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import { concatAll } from 'fp-ts/Monoid'
import * as O from 'fp-ts/Option'
import * as RetryTs from 'retry-ts'
import * as Driver from '../src/Driver'
import * as Random from '../src/Random'
import type { RetryStatus } from '../src/RetryStatus'
import * as RS from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import {
  durationArbitrary,
  generatedArbitrary,
  inputArbitrary,
  numbersIn,
  scheduleArbitrary
} from './support/schedules'
import {
  deepStrictEqual,
  escapeRegExp,
  itThrowsRangeErrors,
  notDurations,
  ok,
  seedArbitrary,
  strictEqual,
  throwsRangeError,
  throwsTypeError,
  type RangeErrorCase
} from './util'

const MAX = Number.MAX_SAFE_INTEGER

/** `n` draws of `Random.seeded(seed)`: the same draws a schedule run with that seed sees. */
const draws = (seed: number, n: number): ReadonlyArray<number> => {
  const random = Random.seeded(seed)
  return Array.from({ length: n }, () => random.next())
}

const last = <A>(as: ReadonlyArray<A>): A => as[as.length - 1]

/** What no delay made by user code may be: the numbers no duration may be, and a string. */
const notDelays: ReadonlyArray<readonly [name: string, value: number]> = [
  ...notDurations,
  ['"5"', '5' as unknown as number]
]

describe('Schedule', () => {
  describe('done', () => {
    it('should be the Done decision', () => {
      deepStrictEqual<Schedule.Decision>(Schedule.done, { _tag: 'Done' })
    })
  })

  describe('continueAfter', () => {
    it('should build a Continue decision with its delay and state', () => {
      deepStrictEqual<Schedule.Decision>(Schedule.continueAfter(100, [1, 'a']), {
        _tag: 'Continue',
        delay: 100,
        state: [1, 'a']
      })
    })
  })

  describe('make', () => {
    it('should step from its initial state through the states it returns', () => {
      const three = Schedule.make(1, (n: number) => (n <= 3 ? Schedule.continueAfter(10 * n, n + 1) : Schedule.done))
      deepStrictEqual(Driver.delays(three), [10, 20, 30])
    })

    it('should keep the initial state it is given', () => {
      deepStrictEqual(Schedule.make({ previous: 5 }, () => Schedule.done).initial, { previous: 5 })
    })

    it('should give the step one StepContext record: the input, the status, the time and the random', () => {
      const seen: Array<Schedule.StepContext<string>> = []
      const random = Random.fixed(0.5)
      const s = Schedule.make(0, (n: number, context: Schedule.StepContext<string>) => {
        seen.push(context)
        return n < 2 ? Schedule.continueAfter(100, n + 1) : Schedule.done
      })
      deepStrictEqual(Driver.delays(s, { input: 'boom', attemptDuration: 10, random }), [100, 100])
      deepStrictEqual(seen, [
        {
          input: 'boom',
          status: { iterNumber: 0, elapsed: 10, cumulativeDelay: 0, previousDelay: O.none },
          now: 10,
          dueAt: 0,
          random
        },
        {
          input: 'boom',
          status: { iterNumber: 1, elapsed: 120, cumulativeDelay: 100, previousDelay: O.some(100) },
          now: 120,
          dueAt: 110,
          random
        },
        {
          input: 'boom',
          status: { iterNumber: 2, elapsed: 230, cumulativeDelay: 200, previousDelay: O.some(100) },
          now: 230,
          dueAt: 220,
          random
        }
      ])
      ok(seen.every((context) => context.random === random))
    })

    it('should be named custom by default, or by options.description', () => {
      deepStrictEqual(Schedule.make(null, () => Schedule.done).description, 'custom')
      deepStrictEqual(Schedule.make(null, () => Schedule.done, { description: 'mine' }).description, 'mine')
    })

    it('should read the time by default, and then hold a time limit it cannot name', () => {
      const s = Schedule.make(null, () => Schedule.done)
      deepStrictEqual([s.readsTime, s.timeLimits], [true, [{ _tag: 'Unknown' }]])
      const timeless = Schedule.make(null, () => Schedule.done, { readsTime: false })
      deepStrictEqual([timeless.readsTime, timeless.timeLimits], [false, []])
    })

    it.each(notDelays)(
      'should reject a step that returns the delay %s with a RangeError naming the schedule',
      (name, bad) => {
        const s = Schedule.make(null, () => Schedule.continueAfter(bad, null), { description: 'bad' })
        throwsRangeError(
          () => Driver.delays(s),
          new RegExp(`^Schedule\\.make: the step of bad returned the delay ${escapeRegExp(name)}; a delay must be`)
        )
      }
    )

    it.each<readonly [string, unknown]>([
      ['"5"', '5'],
      ['null', null],
      ['5', 5],
      ['[]', []],
      ['{"_tag":"Stop","delay":5,"state":null}', { _tag: 'Stop', delay: 5, state: null }]
    ])('should reject a step that returns %s, not a Decision, with a TypeError naming the schedule', (name, answer) => {
      const s = Schedule.make(null, () => answer as Schedule.Decision<null>, { description: 'odd' })
      throwsTypeError(
        () => Driver.delays(s),
        new RegExp(`^Schedule\\.make: the step of odd returned ${escapeRegExp(name)}; it must return a Decision$`)
      )
    })
  })

  describe('forever', () => {
    it('should retry with no delay until the limit', () => {
      deepStrictEqual(Driver.delays(Schedule.forever, { limit: 3 }), [0, 0, 0])
    })
  })

  describe('stop', () => {
    it('should never retry', () => {
      deepStrictEqual(Driver.delays(Schedule.stop), [])
    })
  })

  describe('constant', () => {
    it('should wait the same delay every time', () => {
      deepStrictEqual(Driver.delays(Schedule.constant(50), { limit: 4 }), [50, 50, 50, 50])
    })

    it('should saturate a delay beyond Number.MAX_SAFE_INTEGER', () => {
      deepStrictEqual(Driver.delays(Schedule.constant(1e300), { limit: 2 }), [MAX, MAX])
    })
  })

  describe('exponential', () => {
    it('should double from base by default', () => {
      deepStrictEqual(Driver.delays(Schedule.exponential(100), { limit: 5 }), [100, 200, 400, 800, 1600])
    })

    it('should multiply by factor', () => {
      deepStrictEqual(Driver.delays(Schedule.exponential(100, 3), { limit: 3 }), [100, 300, 900])
    })

    it('should wait base · factor^n before retry n + 1', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 5 }), (base, factor) => {
          const expected = Array.from({ length: 10 }, (_, n) => base * factor ** n)
          deepStrictEqual(Driver.delays(Schedule.exponential(base, factor), { limit: 10 }), expected)
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER instead of reaching Infinity', () => {
      const ds = Driver.delays(Schedule.exponential(100), { limit: 5001 })
      expect(ds).toHaveLength(5001)
      expect(Number.isFinite(last(ds))).toBe(true)
      deepStrictEqual(last(ds), MAX)
      expect(ds.every((d) => d <= MAX)).toBe(true)
    })

    it('should saturate a huge factor', () => {
      deepStrictEqual(Driver.delays(Schedule.exponential(1, 1e300), { limit: 3 }), [1, MAX, MAX])
    })
  })

  describe('linear', () => {
    it('should wait step, 2·step, 3·step, ...', () => {
      deepStrictEqual(Driver.delays(Schedule.linear(100), { limit: 4 }), [100, 200, 300, 400])
    })

    it('should wait (n + 1)·step before retry n + 1', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), (step) => {
          const expected = Array.from({ length: 20 }, (_, n) => (n + 1) * step)
          deepStrictEqual(Driver.delays(Schedule.linear(step), { limit: 20 }), expected)
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER', () => {
      const step = 2 ** 51
      deepStrictEqual(Driver.delays(Schedule.linear(step), { limit: 5 }), [step, 2 * step, 3 * step, MAX, MAX])
    })

    it('should stay finite at large counts', () => {
      const ds = Driver.delays(Schedule.linear(1e12), { limit: 10000 })
      expect(Number.isFinite(last(ds))).toBe(true)
      deepStrictEqual(last(ds), MAX)
    })
  })

  describe('fibonacci', () => {
    it('should wait b, b, 2b, 3b, 5b, 8b, ...', () => {
      deepStrictEqual(Driver.delays(Schedule.fibonacci(10), { limit: 7 }), [10, 10, 20, 30, 50, 80, 130])
    })

    it('should follow the Fibonacci sequence scaled by base', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), (base) => {
          const fib = [1, 1]
          while (fib.length < 25) fib.push(fib[fib.length - 1] + fib[fib.length - 2])
          deepStrictEqual(
            Driver.delays(Schedule.fibonacci(base), { limit: 25 }),
            fib.map((f) => f * base)
          )
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER at large counts', () => {
      const ds = Driver.delays(Schedule.fibonacci(1), { limit: 5001 })
      expect(Number.isFinite(last(ds))).toBe(true)
      deepStrictEqual(last(ds), MAX)
      expect(ds.every((d, i) => i === 0 || d >= ds[i - 1])).toBe(true)
    })
  })

  describe('fromDelays', () => {
    it('should wait the given delays in order, then stop', () => {
      deepStrictEqual(Driver.delays(Schedule.fromDelays([10, 100, 1000])), [10, 100, 1000])
    })

    it('should never retry when the list is empty', () => {
      deepStrictEqual(Driver.delays(Schedule.fromDelays([])), [])
    })

    it('should copy its array: mutating the input later changes nothing', () => {
      const input = [10, 20, 30]
      const s = Schedule.fromDelays(input)
      input[0] = 999
      input.push(40)
      deepStrictEqual(Driver.delays(s), [10, 20, 30])
    })
  })

  describe('randomBetween', () => {
    it('should map a draw u to min + u·(max - min)', () => {
      const ds = Driver.delays(Schedule.randomBetween(100, 200), { random: Random.fixed(0.25), limit: 2 })
      deepStrictEqual(ds, [125, 125])
    })

    it('should draw delays in [min, max)', () => {
      fc.assert(
        fc.property(
          seedArbitrary,
          fc.integer({ min: 0, max: 10000 }),
          fc.integer({ min: 1, max: 10000 }),
          (seed, min, width) => {
            const ds = Driver.delays(Schedule.randomBetween(min, min + width), {
              random: Random.seeded(seed),
              limit: 20
            })
            deepStrictEqual(ds.length, 20)
            deepStrictEqual(
              ds.filter((d) => !(d >= min && d < min + width)),
              []
            )
          }
        )
      )
    })

    it('should use one draw per retry from the run Random', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          const expected = draws(seed, 5).map((u) => 100 + u * 100)
          deepStrictEqual(
            Driver.delays(Schedule.randomBetween(100, 200), { random: Random.seeded(seed), limit: 5 }),
            expected
          )
        })
      )
    })

    it('should stay within [min, max] even for the largest possible draw', () => {
      // Draws are multiples of 2^-53 in [0, 1): 1 - 2^-53 is the largest one. min + u · (max − min) can round up
      // to max itself, so the documented range is closed, like the AWS random_between.
      const top = Random.fixed(1 - 2 ** -53)
      const ds = Driver.delays(Schedule.randomBetween(100, 200), { random: top, limit: 1 })
      deepStrictEqual(
        ds.filter((d) => !(d >= 100 && d <= 200)),
        []
      )
    })

    it('should wait exactly min when min equals max', () => {
      deepStrictEqual(Driver.delays(Schedule.randomBetween(70, 70), { limit: 3 }), [70, 70, 70])
    })

    it('should read a max beyond Number.MAX_SAFE_INTEGER as Number.MAX_SAFE_INTEGER', () => {
      const s = Schedule.randomBetween(0, 1e20)
      deepStrictEqual(s.description, `randomBetween(0, ${MAX})`)
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 2 }), [MAX / 2, MAX / 2])
      const top = Driver.delays(s, { random: Random.fixed(1 - 2 ** -53), limit: 1 })
      // within rounding of the top of the range, never past it
      deepStrictEqual(
        top.filter((d) => !(d >= MAX - 2 && d <= MAX)),
        []
      )
    })
  })

  describe('decorrelatedJitter', () => {
    it('should give fractional delays: [20, 35, 57.5, 91.25] for base 10, cap 100 and draws of 0.5', () => {
      const ds = Driver.delays(Schedule.decorrelatedJitter(10, 100), { random: Random.fixed(0.5), limit: 5 })
      deepStrictEqual(ds, [20, 35, 57.5, 91.25, 100])
    })

    it('should follow the AWS formula min(cap, random_between(base, previous · 3)) with previous its own output', () => {
      // Reference: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog (2015).
      const reference = (base: number, cap: number, us: ReadonlyArray<number>): ReadonlyArray<number> => {
        let sleep = base
        return us.map((u) => {
          const between = base + u * (sleep * 3 - base)
          sleep = Math.min(cap, between)
          return sleep
        })
      }
      fc.assert(
        fc.property(
          seedArbitrary,
          fc.integer({ min: 0, max: 1000 }),
          fc.integer({ min: 0, max: 100000 }),
          (seed, base, extra) => {
            const cap = base + extra
            const ds = Driver.delays(Schedule.decorrelatedJitter(base, cap), {
              random: Random.seeded(seed),
              limit: 30
            })
            deepStrictEqual(ds, reference(base, cap, draws(seed, 30)))
          }
        )
      )
    })

    it('should stay in [base, cap]', () => {
      fc.assert(
        fc.property(
          seedArbitrary,
          fc.integer({ min: 0, max: 1000 }),
          fc.integer({ min: 0, max: 5000 }),
          (seed, base, extra) => {
            const cap = base + extra
            const ds = Driver.delays(Schedule.decorrelatedJitter(base, cap), { random: Random.seeded(seed) })
            deepStrictEqual(
              ds.filter((d) => !(d >= base && d <= cap)),
              []
            )
          }
        )
      )
    })

    it('should saturate delays at Number.MAX_SAFE_INTEGER when cap is beyond it', () => {
      const ds = Driver.delays(Schedule.decorrelatedJitter(1, 1e300), { random: Random.fixed(0.9), limit: 100 })
      expect(ds).toHaveLength(100)
      deepStrictEqual(last(ds), MAX)
    })
  })

  describe('truncatedBinaryExponential', () => {
    it('should start at maxDelay / 2^maxDoublings, double maxDoublings times, then stay at maxDelay', () => {
      // "after 10 failures in a row stop growing" and "retry within 10 s of recovery"
      const s = Schedule.truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10000 })
      const ds = Driver.delays(s, { limit: 13 })
      deepStrictEqual(ds[0], 19.53125)
      deepStrictEqual(ds, [19.53125, 39.0625, 78.125, 156.25, 312.5, 625, 1250, 2500, 5000, 10000, 10000, 10000, 10000])
    })

    it('should double exactly maxDoublings times for any maxDoublings and maxDelay', () => {
      fc.assert(
        fc.property(fc.nat(40), fc.integer({ min: 1, max: 1e9 }), (maxDoublings, maxDelay) => {
          const ds = Driver.delays(Schedule.truncatedBinaryExponential({ maxDoublings, maxDelay }), {
            limit: maxDoublings + 3
          })
          const expected = Array.from({ length: maxDoublings + 3 }, (_, n) =>
            n >= maxDoublings ? maxDelay : maxDelay / 2 ** (maxDoublings - n)
          )
          deepStrictEqual(ds, expected)
        })
      )
    })

    it('should still reach maxDelay after maxDoublings retries when 2^maxDoublings overflows', () => {
      const maxDoublings = 1100
      const ds = Driver.delays(Schedule.truncatedBinaryExponential({ maxDoublings, maxDelay: 10000 }), {
        limit: maxDoublings + 2
      })
      deepStrictEqual(ds.slice(maxDoublings), [10000, 10000])
    })
  })

  describe('fromPolicy', () => {
    it('should retry after d on some(d) and stop on none', () => {
      const policy = Schedule.fromPolicy((status) =>
        status.iterNumber < 3 ? O.some(100 * (status.iterNumber + 1)) : O.none
      )
      deepStrictEqual(Driver.delays(policy), [100, 200, 300])
    })

    it('should show the policy iterNumber, elapsed, cumulativeDelay and previousDelay', () => {
      const seen: Array<RetryStatus> = []
      const policy = Schedule.fromPolicy((status) => {
        seen.push(status)
        return status.iterNumber < 3 ? O.some(100 * 2 ** status.iterNumber) : O.none
      })
      deepStrictEqual(Driver.delays(policy, { attemptDuration: 10 }), [100, 200, 400])
      deepStrictEqual<ReadonlyArray<RetryStatus>>(seen, [
        { iterNumber: 0, elapsed: 10, cumulativeDelay: 0, previousDelay: O.none },
        { iterNumber: 1, elapsed: 120, cumulativeDelay: 100, previousDelay: O.some(100) },
        { iterNumber: 2, elapsed: 330, cumulativeDelay: 300, previousDelay: O.some(200) },
        { iterNumber: 3, elapsed: 740, cumulativeDelay: 700, previousDelay: O.some(400) }
      ])
    })

    it('should show the initial status on the first decision of an instant attempt', () => {
      const seen: Array<RetryStatus> = []
      Driver.delays(
        Schedule.fromPolicy((status) => {
          seen.push(status)
          return O.none
        })
      )
      deepStrictEqual<ReadonlyArray<RetryStatus>>(seen, [RS.initial])
    })

    it.each(notDelays)(
      'should reject a policy that answers some(%s) with a RangeError naming the policy',
      (name, bad) => {
        throwsRangeError(
          () => Driver.delays(Schedule.fromPolicy(() => O.some(bad))),
          new RegExp(`^Schedule\\.fromPolicy: the policy returned the delay ${escapeRegExp(name)};`)
        )
      }
    )

    it.each<readonly [string, unknown]>([
      ['5', 5],
      ['{"_tag":"Just","value":5}', { _tag: 'Just', value: 5 }]
    ])('should reject a policy that answers %s, not an Option, with a TypeError', (name, answer) => {
      throwsTypeError(
        () => Driver.delays(Schedule.fromPolicy(() => answer as O.Option<number>)),
        new RegExp(
          `^Schedule\\.fromPolicy: the policy returned ${escapeRegExp(name)}; it must return an Option of a delay$`
        )
      )
    })

    it('should make the same decisions as retry-ts for a retry-ts policy', () => {
      // retry-ts's own dry run: apply the policy, then move the status on with applyPolicy.
      const retryTsDelays = (policy: RetryTs.RetryPolicy): ReadonlyArray<number> => {
        const out: Array<number> = []
        let status = RetryTs.defaultRetryStatus
        for (let d = policy(status); O.isSome(d) && out.length < 100; d = policy(status)) {
          out.push(d.value)
          status = RetryTs.applyPolicy(policy, status)
        }
        return out
      }
      const policies: ReadonlyArray<RetryTs.RetryPolicy> = [
        RetryTs.Monoid.concat(RetryTs.exponentialBackoff(100), RetryTs.limitRetries(5)),
        RetryTs.capDelay(250, RetryTs.Monoid.concat(RetryTs.exponentialBackoff(100), RetryTs.limitRetries(5))),
        RetryTs.limitRetriesByDelay(1000, RetryTs.exponentialBackoff(50)),
        RetryTs.Monoid.concat(RetryTs.constantDelay(30), RetryTs.limitRetries(2))
      ]
      for (const policy of policies) {
        const expected = retryTsDelays(policy)
        expect(expected.length).toBeGreaterThan(0)
        deepStrictEqual(Driver.delays(Schedule.fromPolicy(policy)), expected)
      }
      deepStrictEqual(Driver.delays(Schedule.fromPolicy(policies[1])), [100, 200, 250, 250, 250])
    })
  })

  describe('recurs', () => {
    it('should make exactly n retries with no delay', () => {
      deepStrictEqual(Driver.delays(Schedule.recurs(3)), [0, 0, 0])
    })

    it('should never retry for n = 0', () => {
      deepStrictEqual(Driver.delays(Schedule.recurs(0)), [])
    })

    it('should make exactly n retries (n delays) for any n', () => {
      fc.assert(
        fc.property(fc.nat(300), (n) => {
          deepStrictEqual(Driver.delays(Schedule.recurs(n), { limit: n + 10 }), Array<number>(n).fill(0))
        })
      )
    })

    it('should limit another schedule to n retries under intersect', () => {
      fc.assert(
        fc.property(fc.nat(50), fc.integer({ min: 0, max: 1000 }), (n, d) => {
          const s = pipe(Schedule.constant(d), Schedule.intersect(Schedule.recurs(n)))
          deepStrictEqual(Driver.delays(s, { limit: n + 10 }), Array<number>(n).fill(d))
        })
      )
    })
  })

  describe('fixed', () => {
    it('should start an attempt every ms, whatever the attempts take', () => {
      deepStrictEqual(Driver.delays(Schedule.fixed(1000), { limit: 3, attemptDuration: 300 }), [700, 700, 700])
      deepStrictEqual(Driver.delays(Schedule.fixed(1000), { limit: 2, attemptDuration: 1500 }), [0, 0])
    })

    it('should not drift, and let missed slots go rather than pile up', () => {
      const driver = Driver.make(Schedule.fixed(1000), { start: 0 })
      // attempts of 300, 500, 1500 and 100 ms, each starting when it is due
      deepStrictEqual(
        [driver.advance(undefined, 300), driver.advance(undefined, 1500), driver.advance(undefined, 3500)],
        [700, 500, 0]
      )
      deepStrictEqual(driver.advance(undefined, 3600), 900)
    })

    it('should read the time', () => {
      deepStrictEqual(Schedule.fixed(1000).readsTime, true)
    })
  })

  describe('windowed', () => {
    it('should wait until the next boundary of ms-long windows counted from the start', () => {
      deepStrictEqual(Driver.delays(Schedule.windowed(1000), { limit: 2, attemptDuration: 300 }), [700, 700])
      deepStrictEqual(Driver.delays(Schedule.windowed(1000), { limit: 2, attemptDuration: 1500 }), [500, 500])
    })

    it('should wait a whole window when an attempt ends exactly on a boundary', () => {
      deepStrictEqual(Driver.delays(Schedule.windowed(1000), { limit: 2, attemptDuration: 1000 }), [1000, 1000])
    })

    it('should read the time', () => {
      deepStrictEqual(Schedule.windowed(1000).readsTime, true)
    })
  })

  describe('capped', () => {
    it('should replace each delay by min(delay, max)', () => {
      const s = pipe(Schedule.exponential(100), Schedule.capped(300))
      deepStrictEqual(Driver.delays(s, { limit: 5 }), [100, 200, 300, 300, 300])
    })

    it('should never turn a stop into a retry', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.stop, Schedule.capped(100))), [])
      deepStrictEqual(Driver.delays(pipe(Schedule.fromDelays([500, 50]), Schedule.capped(100))), [100, 50])
    })
  })

  describe('minDelay', () => {
    it('should replace each delay by max(delay, min)', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.fromDelays([5, 50, 500]), Schedule.minDelay(100))), [100, 100, 500])
    })

    it('should raise a jittered delay close to 0', () => {
      const s = pipe(Schedule.constant(1000), Schedule.fullJitter, Schedule.minDelay(100))
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 2 }), [100, 100])
    })

    it('should never turn a stop into a retry', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.stop, Schedule.minDelay(100))), [])
      deepStrictEqual(Driver.delays(pipe(Schedule.recurs(2), Schedule.minDelay(100))), [100, 100])
    })

    it('should saturate at Number.MAX_SAFE_INTEGER when min is beyond it', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.constant(1), Schedule.minDelay(1e20)), { limit: 2 }), [MAX, MAX])
    })
  })

  describe('modifyDelay', () => {
    it('should replace each delay d by f(d)', () => {
      const s = pipe(
        Schedule.linear(100),
        Schedule.modifyDelay((d) => d + 5)
      )
      deepStrictEqual(Driver.delays(s, { limit: 3 }), [105, 205, 305])
    })

    it.each(notDelays)('should throw a RangeError naming Schedule.modifyDelay when f returns %s', (name, value) => {
      const s = pipe(
        Schedule.constant(100),
        Schedule.modifyDelay(() => value)
      )
      throwsRangeError(
        () => Driver.delays(s),
        new RegExp(`^Schedule\\.modifyDelay: f returned the delay ${escapeRegExp(name)};`)
      )
    })

    it('should turn a -0 from f into 0', () => {
      const ds = Driver.delays(
        pipe(
          Schedule.constant(100),
          Schedule.modifyDelay(() => -0)
        ),
        { limit: 1 }
      )
      ok(Object.is(ds[0], 0))
    })
  })

  describe('fullJitter', () => {
    it('should replace each delay d by d · u', () => {
      const s = pipe(Schedule.exponential(100), Schedule.fullJitter)
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 3 }), [50, 100, 200])
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 3 }), [0, 0, 0])
    })

    it('should draw u from the run Random', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          const s = pipe(Schedule.constant(1000), Schedule.fullJitter)
          deepStrictEqual(
            Driver.delays(s, { random: Random.seeded(seed), limit: 10 }),
            draws(seed, 10).map((u) => 1000 * u)
          )
        })
      )
    })

    it('should be exactly the AWS full jitter random_between(0, min(cap, base · 2^n))', () => {
      // Reference: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog (2015).
      fc.assert(
        fc.property(
          seedArbitrary,
          fc.integer({ min: 1, max: 1000 }),
          fc.integer({ min: 0, max: 100000 }),
          (seed, base, cap) => {
            const s = pipe(Schedule.exponential(base), Schedule.capped(cap), Schedule.fullJitter)
            const hand = Random.seeded(seed)
            const expected = Array.from({ length: 20 }, (_, n) => 0 + hand.next() * (Math.min(cap, base * 2 ** n) - 0))
            deepStrictEqual(Driver.delays(s, { random: Random.seeded(seed), limit: 20 }), expected)
          }
        )
      )
    })
  })

  describe('equalJitter', () => {
    it('should replace each delay d by d/2 + u · d/2', () => {
      const s = pipe(Schedule.constant(100), Schedule.equalJitter)
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 2 }), [75, 75])
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 2 }), [50, 50])
    })

    it('should draw u from the run Random and stay in [d/2, d]', () => {
      fc.assert(
        fc.property(seedArbitrary, fc.integer({ min: 1, max: 100000 }), (seed, d) => {
          const s = pipe(Schedule.constant(d), Schedule.equalJitter)
          const ds = Driver.delays(s, { random: Random.seeded(seed), limit: 10 })
          deepStrictEqual(
            ds,
            draws(seed, 10).map((u) => d / 2 + u * (d / 2))
          )
          deepStrictEqual(
            ds.filter((x) => !(x >= d / 2 && x <= d)),
            []
          )
        })
      )
    })
    it('should never exceed d, even for a subnormal d', () => {
      // d / 2 rounds up when d is subnormal: 1.5e-323 / 2 is 1e-323, and 1e-323 + 0.9 · 1e-323 is 2e-323
      const d = 1.5e-323
      const ds = Driver.delays(pipe(Schedule.constant(d), Schedule.equalJitter), {
        random: Random.fixed(0.9),
        limit: 1
      })
      deepStrictEqual(
        ds.filter((x) => x > d),
        []
      )
    })
  })

  describe('jittered', () => {
    it('should scale each delay by a factor drawn in [min, max), 0.8 to 1.2 by default', () => {
      const s = pipe(Schedule.exponential(100), Schedule.jittered())
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0.5), limit: 3 }), [100, 200, 400])
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 3 }), [80, 160, 320])
    })

    it('should draw the factor from the run Random', () => {
      fc.assert(
        fc.property(seedArbitrary, fc.integer({ min: 0, max: 100000 }), (seed, d) => {
          const s = pipe(Schedule.constant(d), Schedule.jittered(0.5, 1.5))
          deepStrictEqual(
            Driver.delays(s, { random: Random.seeded(seed), limit: 10 }),
            draws(seed, 10).map((u) => d * (0.5 + u * 1))
          )
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.constant(MAX), Schedule.jittered(2, 3)), { limit: 2 }), [MAX, MAX])
    })

    it('should never turn a stop into a retry', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.stop, Schedule.jittered())), [])
    })
  })

  describe('withHint', () => {
    interface RateLimited {
      readonly retryInMs?: unknown
    }
    const hinted = (max: number) =>
      pipe(
        Schedule.exponential(100),
        Schedule.withHint((e: RateLimited) => e.retryInMs as number | undefined, { max }),
        Schedule.intersect(Schedule.recurs(3))
      )

    it('should wait the longer of the schedule delay and the hint clamped at max', () => {
      deepStrictEqual(Driver.delays(hinted(1000), { input: { retryInMs: 250 } }), [250, 250, 400])
      deepStrictEqual(Driver.delays(hinted(1000), { input: { retryInMs: 60_000 } }), [1000, 1000, 1000])
      deepStrictEqual(Driver.delays(hinted(1000), { input: {} }), [100, 200, 400])
    })

    it('should be max(delay, min(hint, max)) for any delay, hint and max', () => {
      fc.assert(
        fc.property(durationArbitrary(1e6), durationArbitrary(1e6), durationArbitrary(1e6), (d, hint, max) => {
          const s = pipe(
            Schedule.constant(d),
            Schedule.withHint(() => hint, { max })
          )
          deepStrictEqual(Driver.delays(s, { limit: 2 }), [
            Math.max(d, Math.min(hint, max)),
            Math.max(d, Math.min(hint, max))
          ])
        })
      )
    })

    it.each<readonly [string, unknown]>([
      ['-1', -1],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
      ['"5"', '5'],
      ['null', null],
      ['an object', { ms: 5 }]
    ])('should ignore a hint of %s, and wait the schedule delay', (_, hint) => {
      deepStrictEqual(Driver.delays(hinted(1000), { input: { retryInMs: hint } }), [100, 200, 400])
    })

    it('should still step the schedule, so that its counts and stops hold', () => {
      const s = pipe(
        Schedule.fromDelays([10, 20]),
        Schedule.withHint(() => 500, { max: 1000 })
      )
      deepStrictEqual(Driver.delays(s), [500, 500])
    })

    it('should give hintOf the input and the time', () => {
      const seen: Array<readonly [string, number]> = []
      const s = pipe(
        Schedule.constant(10),
        Schedule.withHint(
          (e: string, now: number) => {
            seen.push([e, now])
            return 1000 - (now % 1000)
          },
          { max: 1000, readsTime: true }
        )
      )
      deepStrictEqual(Driver.delays(s, { input: 'busy', attemptDuration: 300, limit: 2 }), [700, 700])
      deepStrictEqual(seen, [
        ['busy', 300],
        ['busy', 1300]
      ])
      deepStrictEqual(s.readsTime, true)
    })

    it('should count the hinted delay toward a time limit applied after it', () => {
      const s = pipe(
        Schedule.exponential(100),
        Schedule.withHint(() => 600, { max: 1000 }),
        Schedule.upTo(1000)
      )
      deepStrictEqual(Driver.delays(s), [600])
    })

    it('should describe itself with its max and the schedule', () => {
      deepStrictEqual(hinted(1000).description, 'intersect(recurs(3))(withHint(<hint>, 1000)(exponential(100, 2)))')
    })
  })

  describe('retryFreeWhen', () => {
    const s = pipe(
      Schedule.exponential(100),
      Schedule.intersect(Schedule.recurs(2)),
      Schedule.retryFreeWhen((e: string) => e === 'reset')
    )

    it('should retry a matching failure without using up the schedule', () => {
      deepStrictEqual(Driver.delays(s, { input: 'reset', limit: 4 }), [100, 100, 100, 100])
      deepStrictEqual(Driver.delays(s, { input: 'timeout' }), [100, 200])
    })

    it('should ask the schedule from where it stands, and move it on only for the other failures', () => {
      const driver = Driver.make(s)
      const inputs = ['reset', 'timeout', 'reset', 'timeout', 'timeout']
      deepStrictEqual(
        inputs.map((e) => driver.advance(e, driver.dueAt)),
        [100, 100, 200, 200, -1]
      )
    })

    it('should still draw from the run Random for a free retry', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          const free = pipe(
            Schedule.constant(1000),
            Schedule.fullJitter,
            Schedule.retryFreeWhen(() => true)
          )
          deepStrictEqual(
            Driver.delays(free, { random: Random.seeded(seed), limit: 5 }),
            draws(seed, 5).map((u) => 1000 * u)
          )
        })
      )
    })

    it('should stop when the schedule stops, free or not', () => {
      deepStrictEqual(
        Driver.delays(
          pipe(
            Schedule.stop,
            Schedule.retryFreeWhen(() => true)
          )
        ),
        []
      )
    })
  })

  describe('resetAfter', () => {
    it('should start the schedule over after an attempt that ran at least ms', () => {
      const reconnect = pipe(Schedule.exponential(100), Schedule.resetAfter(60_000))
      deepStrictEqual(Driver.delays(reconnect, { limit: 3 }), [100, 200, 400])
      deepStrictEqual(Driver.delays(reconnect, { limit: 3, attemptDuration: 60_000 }), [100, 100, 100])
    })

    it('should time each attempt from when it was due to when its failure is seen', () => {
      const driver = Driver.make(pipe(Schedule.exponential(100), Schedule.resetAfter(1000)), { start: 0 })
      deepStrictEqual(driver.advance(undefined, 10), 100) // due at 110
      deepStrictEqual(driver.advance(undefined, 120), 200) // ran 10 ms; due at 320
      deepStrictEqual(driver.advance(undefined, 1319), 400) // ran 999 ms
      deepStrictEqual(driver.advance(undefined, 1719 + 1000), 100) // ran 1000 ms: over again
    })

    it('should leave the run status counting, so that a limit outside still holds', () => {
      const s = pipe(Schedule.exponential(100), Schedule.resetAfter(0), Schedule.intersect(Schedule.recurs(3)))
      deepStrictEqual(Driver.delays(s), [100, 100, 100])
    })
  })

  describe('upTo', () => {
    it('should stop before sleeping past the deadline', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000))), [100, 200, 400])
    })

    it('should count the time the attempts take', () => {
      const s = pipe(Schedule.exponential(100), Schedule.upTo(1000))
      // attempts end at 101, 302, 603: the next retry (400 ms) would end at 1003
      deepStrictEqual(Driver.delays(s, { attemptDuration: 101 }), [100, 200])
      // attempts end at 300 and 700: the next retry (200 ms) would end at 900, the one after at 1800
      deepStrictEqual(
        Driver.delays(pipe(Schedule.constant(200), Schedule.upTo(1000)), { attemptDuration: 300 }),
        [200, 200]
      )
    })

    it('should allow a retry that starts exactly at the deadline', () => {
      // elapsed + nextDelay > ms stops; = ms does not: 100 + 100, 300 + 200, 600 + 400 = 1000
      deepStrictEqual(
        Driver.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000)), { attemptDuration: 100 }),
        [100, 200, 400]
      )
    })
  })

  describe('maxCumulativeDelay', () => {
    it('should stop when the total slept would exceed ms, ignoring attempt time', () => {
      const s = pipe(Schedule.constant(300), Schedule.maxCumulativeDelay(1000))
      deepStrictEqual(Driver.delays(s, { attemptDuration: 500 }), [300, 300, 300])
      deepStrictEqual(Driver.delays(pipe(Schedule.exponential(100), Schedule.maxCumulativeDelay(700))), [100, 200, 400])
    })
  })

  describe('whileInput', () => {
    const s = pipe(
      Schedule.constant(10),
      Schedule.whileInput((status: number) => status >= 500)
    )

    it('should retry while the predicate holds for the input', () => {
      deepStrictEqual(Driver.delays(s, { input: 503, limit: 2 }), [10, 10])
    })

    it('should stop when the predicate fails', () => {
      deepStrictEqual(Driver.delays(s, { input: 404 }), [])
    })

    it('should not step the inner schedule when the predicate fails', () => {
      let steps = 0
      const inner = Schedule.make(null, () => {
        steps++
        return Schedule.continueAfter(1, null)
      })
      Driver.delays(
        pipe(
          inner,
          Schedule.whileInput((n: number) => n > 0)
        ),
        { input: 0 }
      )
      deepStrictEqual(steps, 0)
    })
  })

  describe('untilInput', () => {
    const s = pipe(
      Schedule.constant(10),
      Schedule.untilInput((e: Error) => e.message === 'fatal')
    )

    it('should stop when the predicate holds for the input', () => {
      deepStrictEqual(Driver.delays(s, { input: new Error('fatal') }), [])
    })

    it('should retry while the predicate fails', () => {
      deepStrictEqual(Driver.delays(s, { input: new Error('timeout'), limit: 3 }), [10, 10, 10])
    })
  })

  describe('intersect', () => {
    it('should continue with the longer delay while both continue', () => {
      const s = pipe(Schedule.fromDelays([10, 50, 30]), Schedule.intersect(Schedule.fromDelays([20, 40, 30, 5])))
      deepStrictEqual(Driver.delays(s), [20, 50, 30])
    })

    it('should stop as soon as either stops', () => {
      deepStrictEqual(
        Driver.delays(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3)))),
        [100, 200, 400]
      )
      deepStrictEqual(Driver.delays(pipe(Schedule.recurs(2), Schedule.intersect(Schedule.constant(7)))), [7, 7])
      deepStrictEqual(Driver.delays(pipe(Schedule.stop, Schedule.intersect(Schedule.forever))), [])
    })

    it('should not step the second schedule once the first has stopped', () => {
      let steps = 0
      const counting = Schedule.make(null, () => {
        steps++
        return Schedule.continueAfter(1, null)
      })
      deepStrictEqual(Driver.delays(pipe(Schedule.recurs(1), Schedule.intersect(counting))), [1])
      deepStrictEqual(steps, 1)
    })
  })

  describe('union', () => {
    it('should continue with the shorter delay while both continue', () => {
      const s = pipe(Schedule.fromDelays([10, 50, 30]), Schedule.union(Schedule.fromDelays([20, 40])))
      deepStrictEqual(Driver.delays(s), [10, 40, 30])
    })

    it('should continue while either continues', () => {
      const s = pipe(
        Schedule.fromDelays([10, 10]),
        Schedule.union(pipe(Schedule.constant(1000), Schedule.intersect(Schedule.recurs(4))))
      )
      deepStrictEqual(Driver.delays(s), [10, 10, 1000, 1000])
      deepStrictEqual(Driver.delays(pipe(Schedule.stop, Schedule.union(Schedule.stop))), [])
    })

    it('should keep a side that stopped stopped', () => {
      // A policy that stops at its second decision only: it would retry again if it were asked again.
      const flaky = Schedule.fromPolicy((status) => (status.iterNumber === 1 ? O.none : O.some(5)))
      deepStrictEqual(Driver.delays(pipe(flaky, Schedule.union(Schedule.fromDelays([100, 100, 100])))), [5, 100, 100])
      deepStrictEqual(Driver.delays(pipe(Schedule.fromDelays([100, 100, 100]), Schedule.union(flaky))), [5, 100, 100])
    })
  })

  describe('andThen', () => {
    it('should run the first until it stops, then the second', () => {
      const s = pipe(Schedule.fromDelays([0, 0]), Schedule.andThen(Schedule.fromDelays([500, 1000])))
      deepStrictEqual(Driver.delays(s), [0, 0, 500, 1000])
    })

    it('should start the second from its start, with its own count', () => {
      deepStrictEqual(
        Driver.delays(pipe(Schedule.fromDelays([1, 2, 3]), Schedule.andThen(Schedule.recurs(2)))),
        [1, 2, 3, 0, 0]
      )
      const s = pipe(
        Schedule.recurs(2),
        Schedule.andThen(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(2))))
      )
      deepStrictEqual(Driver.delays(s), [0, 0, 100, 200])
    })

    it('should let status-based limits of the second see the whole run', () => {
      const s = pipe(
        Schedule.fromDelays([400, 400]),
        Schedule.andThen(pipe(Schedule.constant(100), Schedule.upTo(1000)))
      )
      deepStrictEqual(Driver.delays(s), [400, 400, 100, 100])
    })

    it('should be the second when the first is stop, and the first when the second is stop', () => {
      deepStrictEqual(Driver.delays(pipe(Schedule.stop, Schedule.andThen(Schedule.fromDelays([1, 2])))), [1, 2])
      deepStrictEqual(Driver.delays(pipe(Schedule.fromDelays([1, 2]), Schedule.andThen(Schedule.stop))), [1, 2])
    })
  })

  describe('getIntersectionMonoid', () => {
    it('should concat with intersect and have forever as empty', () => {
      const M = Schedule.getIntersectionMonoid<unknown>()
      const s = concatAll(M)([Schedule.exponential(100), Schedule.recurs(3), Schedule.constant(150)])
      deepStrictEqual(Driver.delays(s), [150, 200, 400])
      expect(M.empty).toBe(Schedule.forever)
    })
  })

  describe('getUnionMonoid', () => {
    it('should concat with union and have stop as empty', () => {
      const M = Schedule.getUnionMonoid<unknown>()
      const s = concatAll(M)([Schedule.fromDelays([300, 300]), Schedule.fromDelays([100])])
      deepStrictEqual(Driver.delays(s), [100, 300])
      expect(M.empty).toBe(Schedule.stop)
    })
  })

  describe('delays', () => {
    it('should produce at most 100 delays by default', () => {
      deepStrictEqual(Driver.delays(Schedule.forever), Array<number>(100).fill(0))
    })

    it('should produce at most limit delays', () => {
      deepStrictEqual(Driver.delays(Schedule.forever, { limit: 0 }), [])
      expect(Driver.delays(Schedule.linear(1), { limit: 1000 })).toHaveLength(1000)
    })

    it('should draw from a fixed seeded Random by default', () => {
      const s = pipe(Schedule.exponential(100), Schedule.capped(10000), Schedule.fullJitter)
      const first = Driver.delays(s, { limit: 10 })
      deepStrictEqual(Driver.delays(s, { limit: 10 }), first)
      deepStrictEqual(Driver.delays(s, { limit: 10, random: Random.seeded(0) }), first)
    })

    it('should give every step the input', () => {
      const inputs: Array<string> = []
      Driver.delays(
        Schedule.make(null, (_: null, { input }: Schedule.StepContext<string>) => {
          inputs.push(input)
          return Schedule.continueAfter(0, null)
        }),
        { input: 'boom', limit: 2 }
      )
      deepStrictEqual(inputs, ['boom', 'boom'])
    })
  })

  describe('bad arguments', () => {
    /** Every duration argument: the function that takes it, its name in messages, and a call with a value for it. */
    const durations: ReadonlyArray<readonly [fn: string, arg: string, call: (x: number) => unknown]> = [
      ['constant', 'delay', (x) => Schedule.constant(x)],
      ['exponential', 'base', (x) => Schedule.exponential(x)],
      ['linear', 'step', (x) => Schedule.linear(x)],
      ['fibonacci', 'base', (x) => Schedule.fibonacci(x)],
      ['fromDelays', 'delays[1]', (x) => Schedule.fromDelays([10, x])],
      ['randomBetween', 'min', (x) => Schedule.randomBetween(x, 100)],
      ['randomBetween', 'max', (x) => Schedule.randomBetween(0, x)],
      ['decorrelatedJitter', 'base', (x) => Schedule.decorrelatedJitter(x, 10)],
      ['decorrelatedJitter', 'cap', (x) => Schedule.decorrelatedJitter(0, x)],
      ['decorrelatedJitterV2', 'medianFirstRetryDelay', (x) => Schedule.decorrelatedJitterV2(x)],
      ['decorrelatedJitterV2', 'maxDelay', (x) => Schedule.decorrelatedJitterV2(10, x)],
      [
        'truncatedBinaryExponential',
        'maxDelay',
        (x) => Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: x })
      ],
      ['fixed', 'ms', (x) => Schedule.fixed(x)],
      ['windowed', 'ms', (x) => Schedule.windowed(x)],
      ['capped', 'max', (x) => Schedule.capped(x)],
      ['minDelay', 'min', (x) => Schedule.minDelay(x)],
      ['jittered', 'min', (x) => Schedule.jittered(x, 2)],
      ['jittered', 'max', (x) => Schedule.jittered(0, x)],
      ['withHint', 'options.max', (x) => Schedule.withHint(() => undefined, { max: x })],
      ['resetAfter', 'ms', (x) => Schedule.resetAfter(x)],
      ['upTo', 'ms', (x) => Schedule.upTo(x)],
      ['maxCumulativeDelay', 'ms', (x) => Schedule.maxCumulativeDelay(x)],
      ['Driver.delays', 'attemptDuration', (x) => Driver.delays(Schedule.forever, { attemptDuration: x })]
    ]
    /** Every count argument, likewise. */
    const counts: ReadonlyArray<readonly [fn: string, arg: string, call: (x: number) => unknown]> = [
      ['recurs', 'n', (x) => Schedule.recurs(x)],
      [
        'truncatedBinaryExponential',
        'maxDoublings',
        (x) => Schedule.truncatedBinaryExponential({ maxDoublings: x, maxDelay: 1000 })
      ],
      ['Driver.delays', 'limit', (x) => Driver.delays(Schedule.forever, { limit: x })]
    ]
    /** Every function argument, likewise. */
    const functions: ReadonlyArray<readonly [fn: string, arg: string, call: (f: never) => unknown]> = [
      ['make', 'step', (f) => Schedule.make(0, f)],
      ['fromPolicy', 'policy', (f) => Schedule.fromPolicy(f)],
      ['modifyDelay', 'f', (f) => Schedule.modifyDelay(f)],
      ['withHint', 'hintOf', (f) => Schedule.withHint(f, { max: 1000 })],
      ['whileInput', 'predicate', (f) => Schedule.whileInput(f)],
      ['untilInput', 'predicate', (f) => Schedule.untilInput(f)],
      ['retryFreeWhen', 'predicate', (f) => Schedule.retryFreeWhen(f)]
    ]
    const naming = (fn: string, arg: string, value: string) =>
      new RegExp(
        `^${fn.includes('.') ? '' : 'Schedule\\.'}${escapeRegExp(`${fn}: ${arg}`)} must be .*, received ${escapeRegExp(
          value
        )}$`
      )

    itThrowsRangeErrors([
      ...durations.flatMap(([fn, arg, call]) =>
        notDurations.map(
          ([name, x]): RangeErrorCase => [`${fn} with ${arg} = ${name}`, () => call(x), naming(fn, arg, name)]
        )
      ),
      ...counts.flatMap(([fn, arg, call]) =>
        [['1.5', 1.5] as const, ...notDurations].map(
          ([name, x]): RangeErrorCase => [`${fn} with ${arg} = ${name}`, () => call(x), naming(fn, arg, name)]
        )
      ),
      ...notDurations.map(
        ([name, x]): RangeErrorCase => [
          `exponential with factor = ${name}`,
          () => Schedule.exponential(100, x),
          naming('exponential', 'factor', name)
        ]
      ),
      [
        'exponential(100, 0.5)',
        () => Schedule.exponential(100, 0.5),
        /^Schedule\.exponential: factor must be a finite number >= 1, received 0\.5$/
      ],
      [
        'randomBetween(200, 100)',
        () => Schedule.randomBetween(200, 100),
        /^Schedule\.randomBetween: max must be a finite number >= 200, received 100$/
      ],
      [
        'decorrelatedJitter(100, 10)',
        () => Schedule.decorrelatedJitter(100, 10),
        /^Schedule\.decorrelatedJitter: cap must be a finite number >= 100, received 10$/
      ],
      [
        'jittered(1, 0.5)',
        () => Schedule.jittered(1, 0.5),
        /^Schedule\.jittered: max must be a finite number >= 1, received 0\.5$/
      ],
      ['windowed(0)', () => Schedule.windowed(0), /^Schedule\.windowed: ms must be a finite number > 0, received 0$/]
    ])

    /** Values that are not schedules, as a test names them, and as the message shows them. */
    const notSchedules: ReadonlyArray<readonly [name: string, value: Schedule.Schedule<unknown>, shown: string]> = [
      ['null', null as unknown as Schedule.Schedule<unknown>, 'null'],
      ['5', 5 as unknown as Schedule.Schedule<unknown>, '5'],
      ['{}', {} as unknown as Schedule.Schedule<unknown>, '{}'],
      // regression: a stepper alone passed the check, then failed inside as "that.timeLimits is not iterable"
      ['a stepper alone', { stepper: Schedule.forever.stepper } as unknown as Schedule.Schedule<unknown>, '{}']
    ]
    /** Every argument that must be a schedule: the function that takes it, its name, and a call with a value for it. */
    const schedules: ReadonlyArray<
      readonly [fn: string, arg: string, call: (s: Schedule.Schedule<unknown>) => unknown]
    > = [
      ['intersect', 'that', (s) => Schedule.intersect(s)],
      ['union', 'that', (s) => Schedule.union(s)],
      ['andThen', 'that', (s) => Schedule.andThen(s)],
      ['intersect', 'self', (s) => Schedule.intersect(Schedule.forever)(s)],
      ['union', 'self', (s) => Schedule.union(Schedule.forever)(s)],
      ['andThen', 'self', (s) => Schedule.andThen(Schedule.forever)(s)],
      ['capped', 'self', (s) => Schedule.capped(10)(s)],
      ['minDelay', 'self', (s) => Schedule.minDelay(10)(s)],
      ['modifyDelay', 'self', (s) => Schedule.modifyDelay((d) => d)(s)],
      ['fullJitter', 'self', (s) => Schedule.fullJitter(s)],
      ['equalJitter', 'self', (s) => Schedule.equalJitter(s)],
      ['jittered', 'self', (s) => Schedule.jittered()(s)],
      ['withHint', 'self', (s) => Schedule.withHint(() => undefined, { max: 10 })(s)],
      ['retryFreeWhen', 'self', (s) => Schedule.retryFreeWhen(() => false)(s)],
      ['resetAfter', 'self', (s) => Schedule.resetAfter(10)(s)],
      ['upTo', 'self', (s) => Schedule.upTo(10)(s)],
      ['maxCumulativeDelay', 'self', (s) => Schedule.maxCumulativeDelay(10)(s)],
      ['whileInput', 'self', (s) => Schedule.whileInput(() => true)(s)],
      ['untilInput', 'self', (s) => Schedule.untilInput(() => true)(s)],
      ['Driver.delays', 'schedule', (s) => Driver.delays(s)]
    ]
    const step = () => Schedule.done
    it.each<readonly [call: string, f: () => unknown, message: RegExp]>([
      // one rule for errors: a value of the wrong kind is a TypeError (regression: a non-function was a RangeError)
      ...functions.flatMap(([fn, arg, call]) =>
        [
          ['"f"', 'f'],
          ['null', null]
        ].map(
          ([name, f]) =>
            [`${fn} with ${arg} = ${name}`, () => call(f as never), naming(fn, arg, name as string)] as const
        )
      ),
      // regression: make's bad description was a TypeError, whileInput's and untilInput's a RangeError
      ...(['whileInput', 'untilInput'] as const).map(
        (fn) =>
          [
            `${fn} with description = 5`,
            () => Schedule[fn](() => true, { description: 5 as unknown as string }),
            new RegExp(`^Schedule\\.${fn}: options\\.description must be a string, received 5$`)
          ] as const
      ),
      ...schedules.flatMap(([fn, arg, call]) =>
        // an interpreter reads only the stepper (and checks only it): the combinators read every field
        (fn === 'Driver.delays' ? notSchedules.filter(([name]) => name !== 'a stepper alone') : notSchedules).map(
          ([name, value, shown]) =>
            [
              `${fn} with ${arg} = ${name}`,
              () => call(value),
              new RegExp(
                `^${fn.includes('.') ? '' : 'Schedule\\.'}${fn}: ${arg} must be a Schedule, received ${escapeRegExp(
                  shown
                )}$`
              )
            ] as const
        )
      ),
      [
        'fromDelays(100)',
        () => Schedule.fromDelays(100 as unknown as ReadonlyArray<number>),
        /^Schedule\.fromDelays: delays must be an array of numbers, received 100$/
      ],
      [
        'fromDelays("10")',
        () => Schedule.fromDelays('10' as unknown as ReadonlyArray<number>),
        /^Schedule\.fromDelays: delays must be an array of numbers, received "10"$/
      ],
      [
        'make with options = null',
        () => Schedule.make(0, step, null as unknown as Schedule.MakeOptions),
        /^Schedule\.make: options must be an object, received null$/
      ],
      [
        'make with description = 5',
        () => Schedule.make(0, step, { description: 5 as unknown as string }),
        /^Schedule\.make: options\.description must be a string, received 5$/
      ],
      // regression: null was taken for the default ("custom", true, the default random)
      [
        'make with description = null',
        () => Schedule.make(0, step, { description: null as unknown as string }),
        /^Schedule\.make: options\.description must be a string, received null$/
      ],
      [
        'make with readsTime = null',
        () => Schedule.make(0, step, { readsTime: null as unknown as boolean }),
        /^Schedule\.make: options\.readsTime must be a boolean, received null$/
      ],
      [
        'withHint with readsTime = null',
        () => Schedule.withHint(() => undefined, { max: 1, readsTime: null as unknown as boolean }),
        /^Schedule\.withHint: options\.readsTime must be a boolean, received null$/
      ],
      [
        'delays with options = null',
        () => Driver.delays(Schedule.forever, null as unknown as Driver.DelaysOptions<unknown>),
        /^Driver\.delays: options must be an object, received null$/
      ],
      [
        'delays with random = 5',
        () => Driver.delays(Schedule.fullJitter(Schedule.constant(10)), { random: 5 as unknown as Random.Random }),
        /^Driver\.delays: options\.random must be a Random, received 5$/
      ],
      [
        'make with readsTime = "yes"',
        () => Schedule.make(0, step, { readsTime: 'yes' as unknown as boolean }),
        /^Schedule\.make: options\.readsTime must be a boolean, received "yes"$/
      ],
      [
        'withHint with options = null',
        () => Schedule.withHint(() => undefined, null as unknown as Schedule.HintOptions),
        /^Schedule\.withHint: options must be an object, received null$/
      ],
      [
        'withHint with readsTime = 1',
        () => Schedule.withHint(() => undefined, { max: 1, readsTime: 1 as unknown as boolean }),
        /^Schedule\.withHint: options\.readsTime must be a boolean, received 1$/
      ],
      [
        'truncatedBinaryExponential(null)',
        () => Schedule.truncatedBinaryExponential(null as unknown as { maxDoublings: number; maxDelay: number }),
        /^Schedule\.truncatedBinaryExponential: options must be an object, received null$/
      ]
    ])('%s should be a TypeError naming it', (_, f, message) => {
      throwsTypeError(f, message)
    })
  })

  describe('make: timeLimits and isState', () => {
    /** The composing guide's own combinator, written as the guide now shows it: the inner limits passed on. */
    const slowerWhen =
      <I>(overloaded: (input: I) => boolean) =>
      <In>(self: Schedule.Schedule<In>): Schedule.Schedule<In & I> =>
        Schedule.make(
          self.initial,
          (state, context: Schedule.StepContext<In & I>) => {
            const decision = self.step(state, context)
            return decision._tag === 'Continue' && overloaded(context.input)
              ? Schedule.continueAfter(decision.delay * 2, decision.state)
              : decision
          },
          {
            description: `slowerWhen(${self.description})`,
            readsTime: self.readsTime,
            timeLimits: self.timeLimits,
            isState: self.isState
          }
        )

    it('regression (issue 18, defect 12): a combinator made over a limit keeps it, so withHint after it is refused', () => {
      const limited = pipe(
        Schedule.constant(300),
        Schedule.maxCumulativeDelay(1000),
        slowerWhen((e: { readonly ms: number }) => e.ms > 0)
      )
      deepStrictEqual(limited.timeLimits, [{ _tag: 'CumulativeDelay', ms: 1000 }])
      strictEqual(limited.readsTime, false)
      // it slept 5,000 ms against the 1,000 ms limit: the hint came after the limit, which make had dropped
      throwsTypeError(
        () => Schedule.withHint((e: { readonly ms: number }) => e.ms, { max: 60_000 })(limited),
        /^Schedule\.withHint: the schedule holds a time limit .*received slowerWhen\(maxCumulativeDelay\(1000\)\(constant\(300\)\)\)$/
      )
      // the right order: the hint first, then the limit, which holds
      const ordered = pipe(
        Schedule.constant(300),
        Schedule.withHint((e: { readonly ms: number }) => e.ms, { max: 60_000 }),
        slowerWhen((e: { readonly ms: number }) => e.ms > 0),
        Schedule.maxCumulativeDelay(1000)
      )
      deepStrictEqual(Driver.delays(ordered, { input: { ms: 5000 } }), [])
      deepStrictEqual(Driver.delays(ordered, { input: { ms: 200 } }), [600])
    })

    it('should keep the limits it is given, copied, and read its default from readsTime', () => {
      const limits: Array<Schedule.TimeLimit> = [{ _tag: 'Elapsed', ms: 5 }]
      const s = Schedule.make(0, () => Schedule.done, { timeLimits: limits })
      limits.push({ _tag: 'Unknown' })
      deepStrictEqual(s.timeLimits, [{ _tag: 'Elapsed', ms: 5 }])
      deepStrictEqual(Schedule.make(0, () => Schedule.done).timeLimits, [{ _tag: 'Unknown' }])
      deepStrictEqual(Schedule.make(0, () => Schedule.done, { readsTime: false }).timeLimits, [])
    })

    it('should check its inner state with the isState it is given', () => {
      const s = pipe(
        Schedule.recurs(3),
        slowerWhen(() => false)
      )
      deepStrictEqual([s.isState(2), s.isState(4), s.isState('abc')], [true, false, false])
    })

    it.each<readonly [string, Schedule.MakeOptions, RegExp]>([
      [
        'timeLimits = "x"',
        { timeLimits: 'x' as never },
        /^Schedule\.make: options\.timeLimits must be an array of TimeLimit, received "x"$/
      ],
      [
        'a limit of -1 ms',
        { timeLimits: [{ _tag: 'Elapsed', ms: -1 }] },
        /^Schedule\.make: options\.timeLimits must be an array of TimeLimit, received \[\{"_tag":"Elapsed","ms":-1\}\]$/
      ],
      ['isState = 5', { isState: 5 as never }, /^Schedule\.make: options\.isState must be a function, received 5$/]
    ])('should refuse %s with a TypeError naming it', (_, options, message) => {
      throwsTypeError(() => Schedule.make(0, () => Schedule.done, options), message)
    })
  })

  describe('readsTime', () => {
    const clockwise = Schedule.make(0, (n: number, { now }: Schedule.StepContext<unknown>) =>
      Schedule.continueAfter(now % 10, n + 1)
    )
    const timeless = Schedule.constant(10)

    it.each<readonly [string, Schedule.Schedule<never>, boolean]>([
      ['forever', Schedule.forever, false],
      ['stop', Schedule.stop, false],
      ['constant', Schedule.constant(10), false],
      ['exponential', Schedule.exponential(10), false],
      ['linear', Schedule.linear(10), false],
      ['fibonacci', Schedule.fibonacci(10), false],
      ['decorrelatedJitter', Schedule.decorrelatedJitter(10, 100), false],
      ['decorrelatedJitterV2', Schedule.decorrelatedJitterV2(10), false],
      ['randomBetween', Schedule.randomBetween(10, 20), false],
      ['recurs', Schedule.recurs(3), false],
      ['fromDelays', Schedule.fromDelays([1, 2]), false],
      ['truncatedBinaryExponential', Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: 800 }), false],
      ['make', Schedule.make(0, () => Schedule.done), true],
      ['make with readsTime: true', Schedule.make(0, () => Schedule.done, { readsTime: true }), true],
      ['make with readsTime: false', Schedule.make(0, () => Schedule.done, { readsTime: false }), false],
      ['fromPolicy', Schedule.fromPolicy(() => O.none), true],
      ['fixed', Schedule.fixed(100), true],
      ['windowed', Schedule.windowed(100), true]
    ])('%s should set it to %p', (_, s, expected) => {
      deepStrictEqual(s.readsTime, expected)
    })

    /** Every combinator of one schedule, and whether it reads the time itself. */
    const unaries: ReadonlyArray<
      readonly [string, (s: Schedule.Schedule<unknown>) => Schedule.Schedule<never>, boolean]
    > = [
      ['capped', Schedule.capped(5), false],
      ['minDelay', Schedule.minDelay(5), false],
      ['modifyDelay', Schedule.modifyDelay((d) => d), false],
      ['fullJitter', Schedule.fullJitter, false],
      ['equalJitter', Schedule.equalJitter, false],
      ['jittered', Schedule.jittered(), false],
      ['withHint', Schedule.withHint(() => undefined, { max: 5 }), false],
      ['withHint with readsTime: true', Schedule.withHint(() => undefined, { max: 5, readsTime: true }), true],
      ['retryFreeWhen', Schedule.retryFreeWhen(() => false), false],
      ['whileInput', Schedule.whileInput(() => true), false],
      ['untilInput', Schedule.untilInput(() => false), false],
      ['maxCumulativeDelay', Schedule.maxCumulativeDelay(100), false],
      ['upTo', Schedule.upTo(100), true],
      ['resetAfter', Schedule.resetAfter(100), true]
    ]
    it.each(unaries.flatMap(([name, f, own]) => [false, true].map((child) => [name, child, own || child, f] as const)))(
      '%s of a schedule whose readsTime is %p should set it to %p',
      (name, child, expected, f) => {
        // withHint refuses a schedule holding a time limit, which a make that reads the time does: give it a fixed one.
        const self = child ? (name.startsWith('withHint') ? Schedule.fixed(10) : clockwise) : timeless
        deepStrictEqual(f(self).readsTime, expected)
      }
    )

    it.each(
      (['intersect', 'union', 'andThen'] as const).flatMap((name) =>
        [
          [false, false],
          [false, true],
          [true, false],
          [true, true]
        ].map(([left, right]) => [name, left, right, left || right] as const)
      )
    )('%s of schedules reading the time %p and %p should set it to %p', (name, left, right, expected) => {
      const s = pipe(left ? clockwise : timeless, Schedule[name](right ? clockwise : timeless))
      deepStrictEqual(s.readsTime, expected)
    })

    it('should be true exactly when a schedule is built with something that reads the time', () => {
      fc.assert(
        fc.property(generatedArbitrary(), (g) => {
          deepStrictEqual(g.schedule.readsTime, g.readsTime)
        }),
        { numRuns: 300 }
      )
    })

    it('a schedule whose readsTime is false should make the same decisions whatever the time', () => {
      // Two runs with the same inputs and draws, at unrelated times (not even increasing): the time is all they differ in.
      const times = fc.array(fc.double({ min: -1e12, max: 1e12, noNaN: true }), { minLength: 25, maxLength: 25 })
      fc.assert(
        fc.property(
          scheduleArbitrary({ reads: 'status' }),
          fc.array(inputArbitrary, { minLength: 25, maxLength: 25 }),
          seedArbitrary,
          times,
          times,
          (s, inputs, seed, t1, t2) => {
            deepStrictEqual(s.readsTime, false)
            const run = (ts: ReadonlyArray<number>) => {
              const driver = Driver.make(s, { start: ts[0], random: Random.seeded(seed) })
              return inputs.map((input, i) => driver.advance(input, ts[i]))
            }
            deepStrictEqual(run(t1), run(t2))
          }
        ),
        { numRuns: 300 }
      )
    })
  })

  describe('timeLimits', () => {
    const custom = Schedule.make(0, () => Schedule.done)
    it.each<readonly [string, Schedule.Schedule<never>, ReadonlyArray<Schedule.TimeLimit>]>([
      ['a constructor', Schedule.exponential(100), []],
      ['upTo', pipe(Schedule.exponential(100), Schedule.upTo(5000)), [{ _tag: 'Elapsed', ms: 5000 }]],
      [
        'maxCumulativeDelay',
        pipe(Schedule.exponential(100), Schedule.maxCumulativeDelay(700)),
        [{ _tag: 'CumulativeDelay', ms: 700 }]
      ],
      ['make', custom, [{ _tag: 'Unknown' }]],
      ['make with readsTime: false', Schedule.make(0, () => Schedule.done, { readsTime: false }), []],
      ['fromPolicy', Schedule.fromPolicy(() => O.none), [{ _tag: 'Unknown' }]],
      ['fixed and windowed', pipe(Schedule.fixed(100), Schedule.union(Schedule.windowed(100))), []],
      [
        'upTo of maxCumulativeDelay, inner first',
        pipe(Schedule.exponential(100), Schedule.maxCumulativeDelay(700), Schedule.upTo(5000)),
        [
          { _tag: 'CumulativeDelay', ms: 700 },
          { _tag: 'Elapsed', ms: 5000 }
        ]
      ],
      [
        'combinators of one schedule keep its limits',
        pipe(
          Schedule.exponential(100),
          Schedule.upTo(5000),
          Schedule.capped(100),
          Schedule.minDelay(1),
          Schedule.modifyDelay((d) => d),
          Schedule.fullJitter,
          Schedule.equalJitter,
          Schedule.jittered(),
          Schedule.retryFreeWhen(() => false),
          Schedule.resetAfter(10),
          Schedule.whileInput(() => true),
          Schedule.untilInput(() => false)
        ),
        [{ _tag: 'Elapsed', ms: 5000 }]
      ],
      [
        "intersect: self's limits, then that's (both bound the whole)",
        pipe(
          Schedule.constant(10),
          Schedule.upTo(5000),
          Schedule.intersect(pipe(custom, Schedule.maxCumulativeDelay(700)))
        ),
        [{ _tag: 'Elapsed', ms: 5000 }, { _tag: 'Unknown' }, { _tag: 'CumulativeDelay', ms: 700 }]
      ],
      ...(['union', 'andThen'] as const).map(
        (name): readonly [string, Schedule.Schedule<never>, ReadonlyArray<Schedule.TimeLimit>] => [
          `${name}: one Unknown limit, since one side may go on past the other's limit`,
          pipe(
            Schedule.constant(10),
            Schedule.upTo(5000),
            Schedule[name](pipe(custom, Schedule.maxCumulativeDelay(700)))
          ),
          [{ _tag: 'Unknown' }]
        ]
      ),
      ['union without limits: none', pipe(Schedule.constant(10), Schedule.union(Schedule.recurs(2))), []]
    ])('%s', (_, s, expected) => {
      deepStrictEqual(s.timeLimits, expected)
    })
  })

  describe('regressions', () => {
    it('regression: resetAfter guessed when an attempt started from its own delay, so a longer delay chosen around it looked like a long attempt and reset it', () => {
      const s = pipe(
        Schedule.exponential(100),
        Schedule.resetAfter(1000),
        Schedule.intersect(Schedule.fromDelays([1500, 0, 0]))
      )
      deepStrictEqual(Driver.delays(s), [1500, 200, 400])
    })

    it('regression: fixed counted its period from its own delay, not from when the attempt was due', () => {
      const s = pipe(Schedule.fixed(1000), Schedule.intersect(Schedule.fromDelays([1500, 0])))
      // the second attempt was due at 1800 (300 + 1500) and failed at 2100: the next is due at 2800
      deepStrictEqual(Driver.delays(s, { attemptDuration: 300 }), [1500, 700])
    })

    // (a) bad delays are rejected where they are made, never clamped nor lost
    it('regression: a modifyDelay that makes a negative delay was clamped to 0; it throws a RangeError naming modifyDelay', () => {
      const s = pipe(
        Schedule.constant(100),
        Schedule.modifyDelay((d) => d - 1000),
        Schedule.intersect(Schedule.recurs(5))
      )
      throwsRangeError(() => Driver.delays(s), /^Schedule\.modifyDelay: f returned the delay -900;/)
    })

    it.each<readonly [string, (s: Schedule.Schedule<unknown>) => Schedule.Schedule<unknown>]>([
      ['union', Schedule.union(Schedule.recurs(5))],
      ['union, on the other side', (s) => pipe(Schedule.recurs(5), Schedule.union(s))],
      ['capped', Schedule.capped(50)],
      ['minDelay', Schedule.minDelay(50)],
      ['intersect', Schedule.intersect(Schedule.recurs(5))]
    ])(
      'regression: a NaN from modifyDelay under %s was lost; it throws a RangeError naming modifyDelay',
      (_, around) => {
        const s = around(
          pipe(
            Schedule.constant(100),
            Schedule.modifyDelay(() => NaN)
          )
        )
        throwsRangeError(() => Driver.delays(s), /^Schedule\.modifyDelay: f returned the delay NaN;/)
      }
    )

    it("regression: a make step answering the string '5' or null slipped through; it is rejected naming the schedule", () => {
      throwsTypeError(
        () =>
          Driver.delays(Schedule.make(null, () => '5' as unknown as Schedule.Decision<null>, { description: 'five' })),
        /^Schedule\.make: the step of five returned "5"/
      )
      throwsTypeError(
        () =>
          Driver.delays(Schedule.make(null, () => null as unknown as Schedule.Decision<null>, { description: 'five' })),
        /^Schedule\.make: the step of five returned null/
      )
      throwsRangeError(
        () =>
          Driver.delays(
            Schedule.make(null, () => Schedule.continueAfter('5' as unknown as number, null), { description: 'five' })
          ),
        /^Schedule\.make: the step of five returned the delay "5"/
      )
      throwsRangeError(
        () =>
          Driver.delays(
            Schedule.make(null, () => Schedule.continueAfter(null as unknown as number, null), { description: 'five' })
          ),
        /^Schedule\.make: the step of five returned the delay null/
      )
    })

    it('regression: upTo stopped silently on an infinite delay from a step; the step is rejected before upTo sees it', () => {
      const endless = Schedule.make(null, () => Schedule.continueAfter(Infinity, null), { description: 'endless' })
      const s = pipe(endless, Schedule.upTo(1000))
      const context = { input: undefined, status: RS.initial, now: 0, dueAt: 0, random: Random.fixed(0) }
      throwsRangeError(
        () => s.step(s.initial, context),
        /^Schedule\.make: the step of endless returned the delay Infinity;/
      )
      throwsRangeError(() => Driver.delays(s), /^Schedule\.make: the step of endless returned the delay Infinity;/)
    })

    // (b) huge arguments
    it('regression: decorrelatedJitter(6e307, 1e308) with a draw of 0 gave NaN delays; they are finite', () => {
      const ds = Driver.delays(Schedule.decorrelatedJitter(6e307, 1e308), { random: Random.fixed(0), limit: 5 })
      deepStrictEqual(ds, [MAX, MAX, MAX, MAX, MAX])
    })

    it('regression: fixed(1e308) answered a delay just past the largest one, which the Driver rejected', () => {
      const ds = Driver.delays(Schedule.fixed(1e308), { limit: 6 })
      // the period saturates at MAX; times that large are rounded to a few ms, so each delay is about MAX, never past it
      deepStrictEqual(ds.length, 6)
      deepStrictEqual(
        ds.filter((d) => !(d >= MAX - 64 && d <= MAX)),
        []
      )
    })

    it('regression: decorrelatedJitter with a cap beyond the largest delay never reached it; it follows the AWS formula', () => {
      const ds = Driver.delays(Schedule.decorrelatedJitter(1, 1e300), { random: Random.fixed(0.9), limit: 100 })
      deepStrictEqual(ds.slice(-3), [MAX, MAX, MAX])
    })

    /** Every constructor and combinator, from two numbers: whatever arguments it accepts must give finite delays. */
    const builders: ReadonlyArray<readonly [string, (a: number, b: number) => Schedule.Schedule<unknown>]> = [
      ['constant', (a) => Schedule.constant(a)],
      ['exponential', (a, b) => Schedule.exponential(a, b)],
      ['linear', (a) => Schedule.linear(a)],
      ['fibonacci', (a) => Schedule.fibonacci(a)],
      ['decorrelatedJitter', (a, b) => Schedule.decorrelatedJitter(a, b)],
      ['decorrelatedJitterV2', (a, b) => Schedule.decorrelatedJitterV2(a, b)],
      ['randomBetween', (a, b) => Schedule.randomBetween(a, b)],
      ['recurs', (a) => Schedule.recurs(a)],
      ['fromDelays', (a, b) => Schedule.fromDelays([a, b])],
      ['truncatedBinaryExponential', (a, b) => Schedule.truncatedBinaryExponential({ maxDoublings: a, maxDelay: b })],
      ['fixed', (a) => Schedule.fixed(a)],
      ['windowed', (a) => Schedule.windowed(a)],
      ['capped', (a) => pipe(Schedule.exponential(1e15), Schedule.capped(a))],
      ['minDelay', (a) => pipe(Schedule.constant(1), Schedule.minDelay(a))],
      ['jittered', (a, b) => pipe(Schedule.exponential(1e15), Schedule.jittered(a, b))],
      [
        'withHint',
        (a, b) =>
          pipe(
            Schedule.exponential(1),
            Schedule.withHint(() => b, { max: a })
          )
      ],
      ['resetAfter', (a) => pipe(Schedule.exponential(1e15), Schedule.resetAfter(a))],
      ['upTo', (a) => pipe(Schedule.exponential(1e15), Schedule.upTo(a))],
      ['maxCumulativeDelay', (a) => pipe(Schedule.exponential(1e15), Schedule.maxCumulativeDelay(a))]
    ]
    const anyNumber = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(-0, 5e-324, 2 ** 53, 2 ** 53 + 2, 6e307, 1e308, Number.MAX_VALUE)
    )
    it.each(builders)('%s: whatever arguments it accepts build a schedule whose delays are finite', (_, build) => {
      fc.assert(
        fc.property(
          anyNumber,
          anyNumber,
          fc.constantFrom(0, 0.5, 1 - 2 ** -53),
          fc.constantFrom(0, 7, 1e15),
          (a, b, u, attemptDuration) => {
            let s: Schedule.Schedule<unknown>
            try {
              s = build(a, b)
            } catch (e) {
              // refused: with one of the errors of a bad argument
              ok(e instanceof RangeError || e instanceof TypeError, String(e))
              return
            }
            const ds = Driver.delays(s, { random: Random.fixed(u), limit: 60, attemptDuration })
            deepStrictEqual(
              ds.filter((d) => !(d >= 0 && d <= MAX) || Object.is(d, -0)),
              []
            )
          }
        ),
        { numRuns: 300 }
      )
    })

    // (c) -0
    it('regression: exponential(-0) waited -0 ms; it waits 0', () => {
      const ds = Driver.delays(Schedule.exponential(-0), { limit: 3 })
      deepStrictEqual(ds, [0, 0, 0])
      ok(ds.every((d) => Object.is(d, 0)))
    })

    it.each<readonly [string, Schedule.Schedule<unknown>]>([
      ['constant(-0)', Schedule.constant(-0)],
      ['exponential(-0)', Schedule.exponential(-0)],
      ['linear(-0)', Schedule.linear(-0)],
      ['fibonacci(-0)', Schedule.fibonacci(-0)],
      ['fromDelays([-0, -0])', Schedule.fromDelays([-0, -0])],
      ['randomBetween(-0, -0)', Schedule.randomBetween(-0, -0)],
      ['decorrelatedJitter(-0, -0)', Schedule.decorrelatedJitter(-0, -0)],
      ['decorrelatedJitter(0, -0)', Schedule.decorrelatedJitter(0, -0)],
      ['decorrelatedJitterV2(-0, -0)', Schedule.decorrelatedJitterV2(-0, -0)],
      ['truncatedBinaryExponential(-0, -0)', Schedule.truncatedBinaryExponential({ maxDoublings: -0, maxDelay: -0 })],
      ['recurs(-0)', Schedule.recurs(-0)],
      ['fixed(-0)', Schedule.fixed(-0)],
      ['capped(-0)', pipe(Schedule.constant(5), Schedule.capped(-0))],
      ['minDelay(-0)', pipe(Schedule.constant(-0), Schedule.minDelay(-0))],
      ['jittered(-0, -0)', pipe(Schedule.constant(5), Schedule.jittered(-0, -0))],
      ['fullJitter', pipe(Schedule.constant(-0), Schedule.fullJitter)],
      ['equalJitter', pipe(Schedule.constant(-0), Schedule.equalJitter)],
      [
        'modifyDelay(() => -0)',
        pipe(
          Schedule.constant(5),
          Schedule.modifyDelay(() => -0)
        )
      ],
      [
        'withHint(() => -0, { max: -0 })',
        pipe(
          Schedule.constant(-0),
          Schedule.withHint(() => -0, { max: -0 })
        )
      ],
      ['resetAfter(-0)', pipe(Schedule.exponential(-0), Schedule.resetAfter(-0))],
      ['upTo(-0)', pipe(Schedule.constant(-0), Schedule.upTo(-0))],
      ['maxCumulativeDelay(-0)', pipe(Schedule.constant(-0), Schedule.maxCumulativeDelay(-0))],
      ['make answering -0', Schedule.make(0, (n: number) => Schedule.continueAfter(-0, n + 1))],
      ['fromPolicy answering some(-0)', Schedule.fromPolicy(() => O.some(-0))]
    ])('regression: %s holds no -0 in its delays or states', (_, s) => {
      const driver = Driver.make(s, { start: -0, random: Random.fixed(0) })
      const seen: Array<unknown> = [s.initial, driver.snapshot()]
      for (let i = 0; i < 3; i++) {
        seen.push(driver.advance(undefined, -0), driver.snapshot())
        const context = { input: undefined, status: driver.statusAt(-0), now: -0, dueAt: -0, random: Random.fixed(0) }
        seen.push(s.step(driver.snapshot().scheduleState, context))
      }
      deepStrictEqual(
        numbersIn(seen).filter((n) => Object.is(n, -0)),
        []
      )
    })

    // (d) bad arguments are refused where they are written
    it('regression: fromDelays([, 5]) skipped the hole; it throws a RangeError naming delays[0]', () => {
      throwsRangeError(
        () => Schedule.fromDelays([, 5] as unknown as ReadonlyArray<number>),
        /^Schedule\.fromDelays: delays\[0\] must be a finite number >= 0, received undefined$/
      )
    })

    it('regression: andThen(5) and intersect(null) failed only when stepped; they throw a TypeError at build time', () => {
      throwsTypeError(
        () => Schedule.andThen(5 as unknown as Schedule.Schedule<unknown>),
        /^Schedule\.andThen: that must be a Schedule, received 5$/
      )
      throwsTypeError(
        () => Schedule.intersect(null as unknown as Schedule.Schedule<unknown>),
        /^Schedule\.intersect: that must be a Schedule, received null$/
      )
    })

    // (e) withHint
    it.each<readonly [string, Schedule.Schedule<unknown>]>([
      ['upTo', pipe(Schedule.exponential(100), Schedule.upTo(5000))],
      ['maxCumulativeDelay', pipe(Schedule.exponential(100), Schedule.maxCumulativeDelay(5000))],
      ['a make that reads the time', Schedule.make(0, () => Schedule.done)],
      ['fromPolicy', Schedule.fromPolicy(() => O.none)],
      [
        'a schedule intersected with upTo',
        pipe(Schedule.exponential(100), Schedule.intersect(pipe(Schedule.forever, Schedule.upTo(10))))
      ],
      ['a capped upTo', pipe(Schedule.exponential(100), Schedule.upTo(5000), Schedule.capped(1000))]
    ])('regression: withHint after %s would let a hint oversleep the limit; it throws a TypeError', (_, self) => {
      throwsTypeError(
        () => Schedule.withHint(() => 100, { max: 1000 })(self),
        /^Schedule\.withHint: the schedule holds a time limit \(Schedule\.upTo, .*put withHint before it/
      )
    })
  })
})

describe('Schedule: the draws of a Random given by the user', () => {
  /** A `Random` of the user's that answers `u` at every draw. */
  const answering = (u: unknown): Random.Random => ({ next: () => u as number })

  const drawing: ReadonlyArray<readonly [string, Schedule.Schedule<unknown>]> = [
    ['fullJitter', Schedule.fullJitter(Schedule.constant(100))],
    ['equalJitter', Schedule.equalJitter(Schedule.constant(100))],
    ['jittered', Schedule.jittered()(Schedule.constant(100))],
    ['randomBetween', Schedule.randomBetween(10, 20)],
    ['decorrelatedJitter', Schedule.decorrelatedJitter(10, 1000)],
    ['decorrelatedJitterV2', Schedule.decorrelatedJitterV2(100)]
  ]
  const bad: ReadonlyArray<readonly [string, unknown]> = [
    ['-0.5', -0.5],
    ['1', 1],
    ['5', 5],
    ['NaN', NaN],
    ['"0.5"', '0.5']
  ]

  // Regression: a negative draw made a negative delay, which the driver reads as a stop, and a draw past 1 a
  // delay past the schedule's bound.
  describe.each(drawing)('%s', (name, schedule) => {
    it.each(bad)('a draw of %s should be a RangeError naming the schedule and the draw', (shown, u) => {
      throwsRangeError(
        () => Driver.delays(schedule, { random: answering(u), limit: 3 }),
        new RegExp(
          `^Schedule\\.${name}: random\\.next\\(\\) returned ${escapeRegExp(
            shown
          )}; a draw must be a number in \\[0, 1\\)$`
        )
      )
    })

    it('a draw of -0 should make no -0 delay', () => {
      for (const d of Driver.delays(schedule, { random: answering(-0), limit: 3 })) ok(!Object.is(d, -0), `${d}`)
    })
  })

  it('Random.fixed(-0) should draw 0, not -0', () => {
    strictEqual(Random.fixed(-0).next(), 0)
  })
})
