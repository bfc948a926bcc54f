import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import { concatAll } from 'fp-ts/Monoid'
import * as O from 'fp-ts/Option'
import * as RetryTs from 'retry-ts'
import * as Random from '../src/Random'
import type { RetryStatus } from '../src/RetryStatus'
import * as RS from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import { deepStrictEqual, seedArbitrary, throwsRangeError } from './util'

const MAX = Number.MAX_SAFE_INTEGER

/** `n` draws of `Random.seeded(seed)`: the same draws a schedule run with that seed sees. */
const draws = (seed: number, n: number): ReadonlyArray<number> => {
  const random = Random.seeded(seed)
  return Array.from({ length: n }, () => random.next())
}

const last = <A>(as: ReadonlyArray<A>): A => as[as.length - 1]

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
      deepStrictEqual(Schedule.delays(three), [10, 20, 30])
    })

    it('should keep the initial state it is given', () => {
      deepStrictEqual(Schedule.make({ previous: 5 }, () => Schedule.done).initial, { previous: 5 })
    })

    it('should reject a step that is not a function', () => {
      throwsRangeError(
        () => Schedule.make(0, 'step' as unknown as () => Schedule.Decision<number>),
        /Schedule\.make: step .*received "step"/
      )
    })
  })

  describe('forever', () => {
    it('should retry with no delay until the limit', () => {
      deepStrictEqual(Schedule.delays(Schedule.forever, { limit: 3 }), [0, 0, 0])
    })
  })

  describe('stop', () => {
    it('should never retry', () => {
      deepStrictEqual(Schedule.delays(Schedule.stop), [])
    })
  })

  describe('constant', () => {
    it('should wait the same delay every time', () => {
      deepStrictEqual(Schedule.delays(Schedule.constant(50), { limit: 4 }), [50, 50, 50, 50])
    })

    it('should saturate a delay beyond Number.MAX_SAFE_INTEGER', () => {
      deepStrictEqual(Schedule.delays(Schedule.constant(1e300), { limit: 2 }), [MAX, MAX])
    })

    it('should reject a delay that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.constant(-1), /Schedule\.constant: delay .*received -1$/)
      throwsRangeError(() => Schedule.constant(NaN), /Schedule\.constant: delay .*received NaN$/)
      throwsRangeError(() => Schedule.constant(Infinity), /Schedule\.constant: delay .*received Infinity$/)
    })
  })

  describe('exponential', () => {
    it('should double from base by default', () => {
      deepStrictEqual(Schedule.delays(Schedule.exponential(100), { limit: 5 }), [100, 200, 400, 800, 1600])
    })

    it('should multiply by factor', () => {
      deepStrictEqual(Schedule.delays(Schedule.exponential(100, 3), { limit: 3 }), [100, 300, 900])
    })

    it('should wait base · factor^n before retry n + 1', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 5 }), (base, factor) => {
          const expected = Array.from({ length: 10 }, (_, n) => base * factor ** n)
          deepStrictEqual(Schedule.delays(Schedule.exponential(base, factor), { limit: 10 }), expected)
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER instead of reaching Infinity', () => {
      const ds = Schedule.delays(Schedule.exponential(100), { limit: 5001 })
      expect(ds).toHaveLength(5001)
      expect(Number.isFinite(last(ds))).toBe(true)
      deepStrictEqual(last(ds), MAX)
      expect(ds.every((d) => d <= MAX)).toBe(true)
    })

    it('should saturate a huge factor', () => {
      deepStrictEqual(Schedule.delays(Schedule.exponential(1, 1e300), { limit: 3 }), [1, MAX, MAX])
    })

    it('should reject a base that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.exponential(-1), /Schedule\.exponential: base .*received -1$/)
      throwsRangeError(() => Schedule.exponential(NaN), /Schedule\.exponential: base .*received NaN$/)
      throwsRangeError(() => Schedule.exponential(Infinity), /Schedule\.exponential: base .*received Infinity$/)
    })

    it('should reject a factor below 1, NaN or infinite', () => {
      throwsRangeError(() => Schedule.exponential(100, 0.5), /Schedule\.exponential: factor .*>= 1.*received 0\.5$/)
      throwsRangeError(() => Schedule.exponential(100, NaN), /Schedule\.exponential: factor .*received NaN$/)
      throwsRangeError(() => Schedule.exponential(100, Infinity), /Schedule\.exponential: factor .*received Infinity$/)
    })
  })

  describe('linear', () => {
    it('should wait step, 2·step, 3·step, ...', () => {
      deepStrictEqual(Schedule.delays(Schedule.linear(100), { limit: 4 }), [100, 200, 300, 400])
    })

    it('should wait (n + 1)·step before retry n + 1', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), (step) => {
          const expected = Array.from({ length: 20 }, (_, n) => (n + 1) * step)
          deepStrictEqual(Schedule.delays(Schedule.linear(step), { limit: 20 }), expected)
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER', () => {
      const step = 2 ** 51
      deepStrictEqual(Schedule.delays(Schedule.linear(step), { limit: 5 }), [step, 2 * step, 3 * step, MAX, MAX])
    })

    it('should stay finite at large counts', () => {
      const ds = Schedule.delays(Schedule.linear(1e12), { limit: 10000 })
      expect(Number.isFinite(last(ds))).toBe(true)
      deepStrictEqual(last(ds), MAX)
    })

    it('should reject a step that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.linear(-5), /Schedule\.linear: step .*received -5$/)
      throwsRangeError(() => Schedule.linear(NaN), /Schedule\.linear: step .*received NaN$/)
      throwsRangeError(() => Schedule.linear(Infinity), /Schedule\.linear: step .*received Infinity$/)
    })
  })

  describe('fibonacci', () => {
    it('should wait b, b, 2b, 3b, 5b, 8b, ...', () => {
      deepStrictEqual(Schedule.delays(Schedule.fibonacci(10), { limit: 7 }), [10, 10, 20, 30, 50, 80, 130])
    })

    it('should follow the Fibonacci sequence scaled by base', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), (base) => {
          const fib = [1, 1]
          while (fib.length < 25) fib.push(fib[fib.length - 1] + fib[fib.length - 2])
          deepStrictEqual(
            Schedule.delays(Schedule.fibonacci(base), { limit: 25 }),
            fib.map((f) => f * base)
          )
        })
      )
    })

    it('should saturate at Number.MAX_SAFE_INTEGER at large counts', () => {
      const ds = Schedule.delays(Schedule.fibonacci(1), { limit: 5001 })
      expect(Number.isFinite(last(ds))).toBe(true)
      deepStrictEqual(last(ds), MAX)
      expect(ds.every((d, i) => i === 0 || d >= ds[i - 1])).toBe(true)
    })

    it('should reject a base that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.fibonacci(-1), /Schedule\.fibonacci: base .*received -1$/)
      throwsRangeError(() => Schedule.fibonacci(NaN), /Schedule\.fibonacci: base .*received NaN$/)
      throwsRangeError(() => Schedule.fibonacci(Infinity), /Schedule\.fibonacci: base .*received Infinity$/)
    })
  })

  describe('fromDelays', () => {
    it('should wait the given delays in order, then stop', () => {
      deepStrictEqual(Schedule.delays(Schedule.fromDelays([10, 100, 1000])), [10, 100, 1000])
    })

    it('should never retry when the list is empty', () => {
      deepStrictEqual(Schedule.delays(Schedule.fromDelays([])), [])
    })

    it('should copy its array: mutating the input later changes nothing', () => {
      const input = [10, 20, 30]
      const s = Schedule.fromDelays(input)
      input[0] = 999
      input.push(40)
      deepStrictEqual(Schedule.delays(s), [10, 20, 30])
    })

    it('should reject a delay that is negative, NaN or infinite, naming its index', () => {
      throwsRangeError(() => Schedule.fromDelays([10, -1]), /Schedule\.fromDelays: delays\[1\] .*received -1$/)
      throwsRangeError(() => Schedule.fromDelays([NaN]), /Schedule\.fromDelays: delays\[0\] .*received NaN$/)
      throwsRangeError(() => Schedule.fromDelays([1, 2, Infinity]), /delays\[2\] .*received Infinity$/)
    })

    it('should reject a value that is not an array', () => {
      throwsRangeError(
        () => Schedule.fromDelays(100 as unknown as ReadonlyArray<number>),
        /Schedule\.fromDelays: delays .*received 100$/
      )
    })
  })

  describe('randomBetween', () => {
    it('should map a draw u to min + u·(max - min)', () => {
      const ds = Schedule.delays(Schedule.randomBetween(100, 200), { random: Random.fixed(0.25), limit: 2 })
      deepStrictEqual(ds, [125, 125])
    })

    it('should draw delays in [min, max)', () => {
      fc.assert(
        fc.property(
          seedArbitrary,
          fc.integer({ min: 0, max: 10000 }),
          fc.integer({ min: 1, max: 10000 }),
          (seed, min, width) => {
            const ds = Schedule.delays(Schedule.randomBetween(min, min + width), {
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
            Schedule.delays(Schedule.randomBetween(100, 200), { random: Random.seeded(seed), limit: 5 }),
            expected
          )
        })
      )
    })

    it('should stay within [min, max] even for the largest possible draw', () => {
      // Draws are multiples of 2^-53 in [0, 1): 1 - 2^-53 is the largest one. min + u · (max − min) can round up
      // to max itself, so the documented range is closed, like the AWS random_between.
      const top = Random.fixed(1 - 2 ** -53)
      const ds = Schedule.delays(Schedule.randomBetween(100, 200), { random: top, limit: 1 })
      deepStrictEqual(
        ds.filter((d) => !(d >= 100 && d <= 200)),
        []
      )
    })

    it('should wait exactly min when min equals max', () => {
      deepStrictEqual(Schedule.delays(Schedule.randomBetween(70, 70), { limit: 3 }), [70, 70, 70])
    })

    it('should saturate delays at Number.MAX_SAFE_INTEGER when max is beyond it', () => {
      const ds = Schedule.delays(Schedule.randomBetween(0, 1e20), { random: Random.fixed(0.5), limit: 2 })
      deepStrictEqual(ds, [MAX, MAX])
    })

    it('should reject min > max, negative, NaN or infinite bounds', () => {
      throwsRangeError(() => Schedule.randomBetween(200, 100), /Schedule\.randomBetween: max .*>= 200.*received 100$/)
      throwsRangeError(() => Schedule.randomBetween(-1, 100), /Schedule\.randomBetween: min .*received -1$/)
      throwsRangeError(() => Schedule.randomBetween(NaN, 100), /Schedule\.randomBetween: min .*received NaN$/)
      throwsRangeError(() => Schedule.randomBetween(0, Infinity), /Schedule\.randomBetween: max .*received Infinity$/)
      throwsRangeError(() => Schedule.randomBetween(0, NaN), /Schedule\.randomBetween: max .*received NaN$/)
    })
  })

  describe('decorrelatedJitter', () => {
    it('should give fractional delays: [20, 35, 57.5, 91.25] for base 10, cap 100 and draws of 0.5', () => {
      const ds = Schedule.delays(Schedule.decorrelatedJitter(10, 100), { random: Random.fixed(0.5), limit: 5 })
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
            const ds = Schedule.delays(Schedule.decorrelatedJitter(base, cap), {
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
            const ds = Schedule.delays(Schedule.decorrelatedJitter(base, cap), { random: Random.seeded(seed) })
            deepStrictEqual(
              ds.filter((d) => !(d >= base && d <= cap)),
              []
            )
          }
        )
      )
    })

    it('should saturate delays at Number.MAX_SAFE_INTEGER when cap is beyond it', () => {
      const ds = Schedule.delays(Schedule.decorrelatedJitter(1, 1e300), { random: Random.fixed(0.9), limit: 100 })
      expect(ds).toHaveLength(100)
      deepStrictEqual(last(ds), MAX)
    })

    it('should reject cap < base, negative, NaN or infinite arguments', () => {
      throwsRangeError(
        () => Schedule.decorrelatedJitter(100, 10),
        /Schedule\.decorrelatedJitter: cap .*>= 100.*received 10$/
      )
      throwsRangeError(() => Schedule.decorrelatedJitter(-1, 10), /Schedule\.decorrelatedJitter: base .*received -1$/)
      throwsRangeError(() => Schedule.decorrelatedJitter(NaN, 10), /Schedule\.decorrelatedJitter: base .*received NaN$/)
      throwsRangeError(
        () => Schedule.decorrelatedJitter(10, Infinity),
        /Schedule\.decorrelatedJitter: cap .*received Infinity$/
      )
      throwsRangeError(() => Schedule.decorrelatedJitter(10, NaN), /Schedule\.decorrelatedJitter: cap .*received NaN$/)
    })
  })

  describe('truncatedBinaryExponential', () => {
    it('should start at maxDelay / 2^maxDoublings, double maxDoublings times, then stay at maxDelay', () => {
      // "after 10 failures in a row stop growing" and "retry within 10 s of recovery"
      const s = Schedule.truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10000 })
      const ds = Schedule.delays(s, { limit: 13 })
      deepStrictEqual(ds[0], 19.53125)
      deepStrictEqual(ds, [19.53125, 39.0625, 78.125, 156.25, 312.5, 625, 1250, 2500, 5000, 10000, 10000, 10000, 10000])
    })

    it('should double exactly maxDoublings times for any maxDoublings and maxDelay', () => {
      fc.assert(
        fc.property(fc.nat(40), fc.integer({ min: 1, max: 1e9 }), (maxDoublings, maxDelay) => {
          const ds = Schedule.delays(Schedule.truncatedBinaryExponential({ maxDoublings, maxDelay }), {
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
      const ds = Schedule.delays(Schedule.truncatedBinaryExponential({ maxDoublings, maxDelay: 10000 }), {
        limit: maxDoublings + 2
      })
      deepStrictEqual(ds.slice(maxDoublings), [10000, 10000])
    })

    it('should reject a non-integer or negative maxDoublings and a bad maxDelay', () => {
      throwsRangeError(
        () => Schedule.truncatedBinaryExponential({ maxDoublings: 1.5, maxDelay: 1000 }),
        /Schedule\.truncatedBinaryExponential: maxDoublings .*received 1\.5$/
      )
      throwsRangeError(
        () => Schedule.truncatedBinaryExponential({ maxDoublings: -1, maxDelay: 1000 }),
        /maxDoublings .*received -1$/
      )
      throwsRangeError(
        () => Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: -1 }),
        /Schedule\.truncatedBinaryExponential: maxDelay .*received -1$/
      )
      throwsRangeError(
        () => Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: Infinity }),
        /maxDelay .*received Infinity$/
      )
    })
  })

  describe('fromPolicy', () => {
    it('should retry after d on some(d) and stop on none', () => {
      const policy = Schedule.fromPolicy((status) =>
        status.iterNumber < 3 ? O.some(100 * (status.iterNumber + 1)) : O.none
      )
      deepStrictEqual(Schedule.delays(policy), [100, 200, 300])
    })

    it('should show the policy iterNumber, elapsed, cumulativeDelay and previousDelay', () => {
      const seen: Array<RetryStatus> = []
      const policy = Schedule.fromPolicy((status) => {
        seen.push(status)
        return status.iterNumber < 3 ? O.some(100 * 2 ** status.iterNumber) : O.none
      })
      deepStrictEqual(Schedule.delays(policy, { attemptDuration: 10 }), [100, 200, 400])
      deepStrictEqual<ReadonlyArray<RetryStatus>>(seen, [
        { iterNumber: 0, elapsed: 10, cumulativeDelay: 0, previousDelay: O.none },
        { iterNumber: 1, elapsed: 120, cumulativeDelay: 100, previousDelay: O.some(100) },
        { iterNumber: 2, elapsed: 330, cumulativeDelay: 300, previousDelay: O.some(200) },
        { iterNumber: 3, elapsed: 740, cumulativeDelay: 700, previousDelay: O.some(400) }
      ])
    })

    it('should show the initial status on the first decision of an instant attempt', () => {
      const seen: Array<RetryStatus> = []
      Schedule.delays(
        Schedule.fromPolicy((status) => {
          seen.push(status)
          return O.none
        })
      )
      deepStrictEqual<ReadonlyArray<RetryStatus>>(seen, [RS.initial])
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
        deepStrictEqual(Schedule.delays(Schedule.fromPolicy(policy)), expected)
      }
      deepStrictEqual(Schedule.delays(Schedule.fromPolicy(policies[1])), [100, 200, 250, 250, 250])
    })

    it('should reject a policy that is not a function', () => {
      throwsRangeError(
        () => Schedule.fromPolicy(null as unknown as (status: RetryStatus) => O.Option<number>),
        /Schedule\.fromPolicy: policy .*received null$/
      )
    })
  })

  describe('recurs', () => {
    it('should make exactly n retries with no delay', () => {
      deepStrictEqual(Schedule.delays(Schedule.recurs(3)), [0, 0, 0])
    })

    it('should never retry for n = 0', () => {
      deepStrictEqual(Schedule.delays(Schedule.recurs(0)), [])
    })

    it('should make exactly n retries (n delays) for any n', () => {
      fc.assert(
        fc.property(fc.nat(300), (n) => {
          deepStrictEqual(Schedule.delays(Schedule.recurs(n), { limit: n + 10 }), Array<number>(n).fill(0))
        })
      )
    })

    it('should limit another schedule to n retries under intersect', () => {
      fc.assert(
        fc.property(fc.nat(50), fc.integer({ min: 0, max: 1000 }), (n, d) => {
          const s = pipe(Schedule.constant(d), Schedule.intersect(Schedule.recurs(n)))
          deepStrictEqual(Schedule.delays(s, { limit: n + 10 }), Array<number>(n).fill(d))
        })
      )
    })

    it('should reject a count that is not a whole number >= 0', () => {
      throwsRangeError(() => Schedule.recurs(1.5), /Schedule\.recurs: n .*received 1\.5$/)
      throwsRangeError(() => Schedule.recurs(-1), /Schedule\.recurs: n .*received -1$/)
      throwsRangeError(() => Schedule.recurs(NaN), /Schedule\.recurs: n .*received NaN$/)
      throwsRangeError(() => Schedule.recurs(Infinity), /Schedule\.recurs: n .*received Infinity$/)
    })
  })

  describe('capped', () => {
    it('should replace each delay by min(delay, max)', () => {
      const s = pipe(Schedule.exponential(100), Schedule.capped(300))
      deepStrictEqual(Schedule.delays(s, { limit: 5 }), [100, 200, 300, 300, 300])
    })

    it('should never turn a stop into a retry', () => {
      deepStrictEqual(Schedule.delays(pipe(Schedule.stop, Schedule.capped(100))), [])
      deepStrictEqual(Schedule.delays(pipe(Schedule.fromDelays([500, 50]), Schedule.capped(100))), [100, 50])
    })

    it('should reject a max that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.capped(-1), /Schedule\.capped: max .*received -1$/)
      throwsRangeError(() => Schedule.capped(NaN), /Schedule\.capped: max .*received NaN$/)
      throwsRangeError(() => Schedule.capped(Infinity), /Schedule\.capped: max .*received Infinity$/)
    })
  })

  describe('minDelay', () => {
    it('should replace each delay by max(delay, min)', () => {
      deepStrictEqual(Schedule.delays(pipe(Schedule.fromDelays([5, 50, 500]), Schedule.minDelay(100))), [100, 100, 500])
    })

    it('should raise a jittered delay close to 0', () => {
      const s = pipe(Schedule.constant(1000), Schedule.fullJitter, Schedule.minDelay(100))
      deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0), limit: 2 }), [100, 100])
    })

    it('should never turn a stop into a retry', () => {
      deepStrictEqual(Schedule.delays(pipe(Schedule.stop, Schedule.minDelay(100))), [])
      deepStrictEqual(Schedule.delays(pipe(Schedule.recurs(2), Schedule.minDelay(100))), [100, 100])
    })

    it('should saturate at Number.MAX_SAFE_INTEGER when min is beyond it', () => {
      deepStrictEqual(Schedule.delays(pipe(Schedule.constant(1), Schedule.minDelay(1e20)), { limit: 2 }), [MAX, MAX])
    })

    it('should reject a min that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.minDelay(-1), /Schedule\.minDelay: min .*received -1$/)
      throwsRangeError(() => Schedule.minDelay(NaN), /Schedule\.minDelay: min .*received NaN$/)
      throwsRangeError(() => Schedule.minDelay(Infinity), /Schedule\.minDelay: min .*received Infinity$/)
    })
  })

  describe('modifyDelay', () => {
    it('should replace each delay d by f(d)', () => {
      const s = pipe(
        Schedule.linear(100),
        Schedule.modifyDelay((d) => d + 5)
      )
      deepStrictEqual(Schedule.delays(s, { limit: 3 }), [105, 205, 305])
    })

    it('should make Schedule.delays throw a RangeError naming a NaN, negative or infinite result', () => {
      const modified = (value: number) =>
        pipe(
          Schedule.constant(100),
          Schedule.modifyDelay(() => value)
        )
      throwsRangeError(() => Schedule.delays(modified(NaN)), /NaN/)
      throwsRangeError(() => Schedule.delays(modified(-1)), /-1/)
      throwsRangeError(() => Schedule.delays(modified(Infinity)), /Infinity/)
    })

    it('should reject an f that is not a function', () => {
      throwsRangeError(
        () => Schedule.modifyDelay(5 as unknown as (d: number) => number),
        /Schedule\.modifyDelay: f .*received 5$/
      )
    })
  })

  describe('fullJitter', () => {
    it('should replace each delay d by d · u', () => {
      const s = pipe(Schedule.exponential(100), Schedule.fullJitter)
      deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0.5), limit: 3 }), [50, 100, 200])
      deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0), limit: 3 }), [0, 0, 0])
    })

    it('should draw u from the run Random', () => {
      fc.assert(
        fc.property(seedArbitrary, (seed) => {
          const s = pipe(Schedule.constant(1000), Schedule.fullJitter)
          deepStrictEqual(
            Schedule.delays(s, { random: Random.seeded(seed), limit: 10 }),
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
            deepStrictEqual(Schedule.delays(s, { random: Random.seeded(seed), limit: 20 }), expected)
          }
        )
      )
    })
  })

  describe('equalJitter', () => {
    it('should replace each delay d by d/2 + u · d/2', () => {
      const s = pipe(Schedule.constant(100), Schedule.equalJitter)
      deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0.5), limit: 2 }), [75, 75])
      deepStrictEqual(Schedule.delays(s, { random: Random.fixed(0), limit: 2 }), [50, 50])
    })

    it('should draw u from the run Random and stay in [d/2, d]', () => {
      fc.assert(
        fc.property(seedArbitrary, fc.integer({ min: 1, max: 100000 }), (seed, d) => {
          const s = pipe(Schedule.constant(d), Schedule.equalJitter)
          const ds = Schedule.delays(s, { random: Random.seeded(seed), limit: 10 })
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
      const ds = Schedule.delays(pipe(Schedule.constant(d), Schedule.equalJitter), {
        random: Random.fixed(0.9),
        limit: 1
      })
      deepStrictEqual(
        ds.filter((x) => x > d),
        []
      )
    })
  })

  describe('upTo', () => {
    it('should stop before sleeping past the deadline', () => {
      deepStrictEqual(Schedule.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000))), [100, 200, 400])
    })

    it('should count the time the attempts take', () => {
      const s = pipe(Schedule.exponential(100), Schedule.upTo(1000))
      // attempts end at 101, 302, 603: the next retry (400 ms) would end at 1003
      deepStrictEqual(Schedule.delays(s, { attemptDuration: 101 }), [100, 200])
      // attempts end at 300 and 700: the next retry (200 ms) would end at 900, the one after at 1800
      deepStrictEqual(
        Schedule.delays(pipe(Schedule.constant(200), Schedule.upTo(1000)), { attemptDuration: 300 }),
        [200, 200]
      )
    })

    it('should allow a retry that starts exactly at the deadline', () => {
      // elapsed + nextDelay > ms stops; = ms does not: 100 + 100, 300 + 200, 600 + 400 = 1000
      deepStrictEqual(
        Schedule.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000)), { attemptDuration: 100 }),
        [100, 200, 400]
      )
    })

    it('should reject a budget that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.upTo(-1), /Schedule\.upTo: ms .*received -1$/)
      throwsRangeError(() => Schedule.upTo(NaN), /Schedule\.upTo: ms .*received NaN$/)
      throwsRangeError(() => Schedule.upTo(Infinity), /Schedule\.upTo: ms .*received Infinity$/)
    })
  })

  describe('maxCumulativeDelay', () => {
    it('should stop when the total slept would exceed ms, ignoring attempt time', () => {
      const s = pipe(Schedule.constant(300), Schedule.maxCumulativeDelay(1000))
      deepStrictEqual(Schedule.delays(s, { attemptDuration: 500 }), [300, 300, 300])
      deepStrictEqual(
        Schedule.delays(pipe(Schedule.exponential(100), Schedule.maxCumulativeDelay(700))),
        [100, 200, 400]
      )
    })

    it('should reject a budget that is negative, NaN or infinite', () => {
      throwsRangeError(() => Schedule.maxCumulativeDelay(-5), /Schedule\.maxCumulativeDelay: ms .*received -5$/)
      throwsRangeError(() => Schedule.maxCumulativeDelay(NaN), /Schedule\.maxCumulativeDelay: ms .*received NaN$/)
      throwsRangeError(() => Schedule.maxCumulativeDelay(Infinity), /received Infinity$/)
    })
  })

  describe('whileInput', () => {
    const s = pipe(
      Schedule.constant(10),
      Schedule.whileInput((status: number) => status >= 500)
    )

    it('should retry while the predicate holds for the input', () => {
      deepStrictEqual(Schedule.delays(s, { input: 503, limit: 2 }), [10, 10])
    })

    it('should stop when the predicate fails', () => {
      deepStrictEqual(Schedule.delays(s, { input: 404 }), [])
    })

    it('should not step the inner schedule when the predicate fails', () => {
      let steps = 0
      const inner = Schedule.make(null, () => {
        steps++
        return Schedule.continueAfter(1, null)
      })
      Schedule.delays(
        pipe(
          inner,
          Schedule.whileInput((n: number) => n > 0)
        ),
        { input: 0 }
      )
      deepStrictEqual(steps, 0)
    })

    it('should reject a predicate that is not a function', () => {
      throwsRangeError(
        () => Schedule.whileInput(undefined as unknown as (n: number) => boolean),
        /Schedule\.whileInput: predicate .*received undefined$/
      )
    })
  })

  describe('untilInput', () => {
    const s = pipe(
      Schedule.constant(10),
      Schedule.untilInput((e: Error) => e.message === 'fatal')
    )

    it('should stop when the predicate holds for the input', () => {
      deepStrictEqual(Schedule.delays(s, { input: new Error('fatal') }), [])
    })

    it('should retry while the predicate fails', () => {
      deepStrictEqual(Schedule.delays(s, { input: new Error('timeout'), limit: 3 }), [10, 10, 10])
    })

    it('should reject a predicate that is not a function', () => {
      throwsRangeError(
        () => Schedule.untilInput('x' as unknown as (n: number) => boolean),
        /Schedule\.untilInput: predicate .*received "x"$/
      )
    })
  })

  describe('intersect', () => {
    it('should continue with the longer delay while both continue', () => {
      const s = pipe(Schedule.fromDelays([10, 50, 30]), Schedule.intersect(Schedule.fromDelays([20, 40, 30, 5])))
      deepStrictEqual(Schedule.delays(s), [20, 50, 30])
    })

    it('should stop as soon as either stops', () => {
      deepStrictEqual(
        Schedule.delays(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3)))),
        [100, 200, 400]
      )
      deepStrictEqual(Schedule.delays(pipe(Schedule.recurs(2), Schedule.intersect(Schedule.constant(7)))), [7, 7])
      deepStrictEqual(Schedule.delays(pipe(Schedule.stop, Schedule.intersect(Schedule.forever))), [])
    })

    it('should not step the second schedule once the first has stopped', () => {
      let steps = 0
      const counting = Schedule.make(null, () => {
        steps++
        return Schedule.continueAfter(1, null)
      })
      deepStrictEqual(Schedule.delays(pipe(Schedule.recurs(1), Schedule.intersect(counting))), [1])
      deepStrictEqual(steps, 1)
    })
  })

  describe('union', () => {
    it('should continue with the shorter delay while both continue', () => {
      const s = pipe(Schedule.fromDelays([10, 50, 30]), Schedule.union(Schedule.fromDelays([20, 40])))
      deepStrictEqual(Schedule.delays(s), [10, 40, 30])
    })

    it('should continue while either continues', () => {
      const s = pipe(
        Schedule.fromDelays([10, 10]),
        Schedule.union(pipe(Schedule.constant(1000), Schedule.intersect(Schedule.recurs(4))))
      )
      deepStrictEqual(Schedule.delays(s), [10, 10, 1000, 1000])
      deepStrictEqual(Schedule.delays(pipe(Schedule.stop, Schedule.union(Schedule.stop))), [])
    })

    it('should keep a side that stopped stopped', () => {
      // A policy that stops at its second decision only: it would retry again if it were asked again.
      const flaky = Schedule.fromPolicy((status) => (status.iterNumber === 1 ? O.none : O.some(5)))
      deepStrictEqual(Schedule.delays(pipe(flaky, Schedule.union(Schedule.fromDelays([100, 100, 100])))), [5, 100, 100])
      deepStrictEqual(Schedule.delays(pipe(Schedule.fromDelays([100, 100, 100]), Schedule.union(flaky))), [5, 100, 100])
    })
  })

  describe('andThen', () => {
    it('should run the first until it stops, then the second', () => {
      const s = pipe(Schedule.fromDelays([0, 0]), Schedule.andThen(Schedule.fromDelays([500, 1000])))
      deepStrictEqual(Schedule.delays(s), [0, 0, 500, 1000])
    })

    it('should start the second from its start, with its own count', () => {
      deepStrictEqual(
        Schedule.delays(pipe(Schedule.fromDelays([1, 2, 3]), Schedule.andThen(Schedule.recurs(2)))),
        [1, 2, 3, 0, 0]
      )
      const s = pipe(
        Schedule.recurs(2),
        Schedule.andThen(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(2))))
      )
      deepStrictEqual(Schedule.delays(s), [0, 0, 100, 200])
    })

    it('should let status-based limits of the second see the whole run', () => {
      const s = pipe(
        Schedule.fromDelays([400, 400]),
        Schedule.andThen(pipe(Schedule.constant(100), Schedule.upTo(1000)))
      )
      deepStrictEqual(Schedule.delays(s), [400, 400, 100, 100])
    })

    it('should be the second when the first is stop, and the first when the second is stop', () => {
      deepStrictEqual(Schedule.delays(pipe(Schedule.stop, Schedule.andThen(Schedule.fromDelays([1, 2])))), [1, 2])
      deepStrictEqual(Schedule.delays(pipe(Schedule.fromDelays([1, 2]), Schedule.andThen(Schedule.stop))), [1, 2])
    })
  })

  describe('getIntersectionMonoid', () => {
    it('should concat with intersect and have forever as empty', () => {
      const M = Schedule.getIntersectionMonoid<unknown>()
      const s = concatAll(M)([Schedule.exponential(100), Schedule.recurs(3), Schedule.constant(150)])
      deepStrictEqual(Schedule.delays(s), [150, 200, 400])
      expect(M.empty).toBe(Schedule.forever)
    })
  })

  describe('getUnionMonoid', () => {
    it('should concat with union and have stop as empty', () => {
      const M = Schedule.getUnionMonoid<unknown>()
      const s = concatAll(M)([Schedule.fromDelays([300, 300]), Schedule.fromDelays([100])])
      deepStrictEqual(Schedule.delays(s), [100, 300])
      expect(M.empty).toBe(Schedule.stop)
    })
  })

  describe('delays', () => {
    it('should produce at most 100 delays by default', () => {
      deepStrictEqual(Schedule.delays(Schedule.forever), Array<number>(100).fill(0))
    })

    it('should produce at most limit delays', () => {
      deepStrictEqual(Schedule.delays(Schedule.forever, { limit: 0 }), [])
      expect(Schedule.delays(Schedule.linear(1), { limit: 1000 })).toHaveLength(1000)
    })

    it('should draw from a fixed seeded Random by default', () => {
      const s = pipe(Schedule.exponential(100), Schedule.capped(10000), Schedule.fullJitter)
      const first = Schedule.delays(s, { limit: 10 })
      deepStrictEqual(Schedule.delays(s, { limit: 10 }), first)
      deepStrictEqual(Schedule.delays(s, { limit: 10, random: Random.seeded(0) }), first)
    })

    it('should give every step the input', () => {
      const inputs: Array<string> = []
      Schedule.delays(
        Schedule.make(null, (_: null, input: string) => {
          inputs.push(input)
          return Schedule.continueAfter(0, null)
        }),
        { input: 'boom', limit: 2 }
      )
      deepStrictEqual(inputs, ['boom', 'boom'])
    })

    it('should reject a limit that is not a whole number >= 0', () => {
      throwsRangeError(() => Schedule.delays(Schedule.forever, { limit: -1 }), /Schedule\.delays: limit .*received -1$/)
      throwsRangeError(
        () => Schedule.delays(Schedule.forever, { limit: 1.5 }),
        /Schedule\.delays: limit .*received 1\.5$/
      )
      throwsRangeError(
        () => Schedule.delays(Schedule.forever, { limit: NaN }),
        /Schedule\.delays: limit .*received NaN$/
      )
      throwsRangeError(() => Schedule.delays(Schedule.forever, { limit: Infinity }), /limit .*received Infinity$/)
    })

    it('should reject an attemptDuration that is negative, NaN or infinite', () => {
      throwsRangeError(
        () => Schedule.delays(Schedule.forever, { attemptDuration: -1 }),
        /Schedule\.delays: attemptDuration .*received -1$/
      )
      throwsRangeError(
        () => Schedule.delays(Schedule.forever, { attemptDuration: NaN }),
        /attemptDuration .*received NaN$/
      )
    })

    it('should reject a step that returns a negative, NaN or infinite delay, naming the value', () => {
      for (const bad of [-1, NaN, Infinity, -Infinity]) {
        throwsRangeError(
          () => Schedule.delays(Schedule.make(null, () => Schedule.continueAfter(bad, null))),
          new RegExp(`delay ${String(bad)}`)
        )
      }
    })
  })
})
