import * as fc from 'fast-check'
import * as RateLimiter from '../src/RateLimiter'
import * as TestClock from '../src/TestClock'
import { strictEqual, throwsTypeError } from './util'

const takes = (limiter: RateLimiter.RateLimiter, n: number): number => {
  let taken = 0
  for (let i = 0; i < n; i++) if (limiter.take() === true) taken++
  return taken
}

describe('RateLimiter.gcra options.from', () => {
  it('keeps the tokens the old bucket has, at most the new burst', async () => {
    const clock = TestClock.make()
    const old = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 10, clock })
    strictEqual(takes(old, 7), 7) // 3 left
    const bigger = RateLimiter.gcra({ rate: 10, per: 1_000, burst: 100, clock, from: old })
    strictEqual(takes(bigger, 100), 3) // the 3 it had, not a full bucket of 100
    await clock.advance(1_000)
    strictEqual(takes(bigger, 100), 10) // then at its own rate
    const full = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 10, clock })
    const smaller = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 2, clock, from: full })
    strictEqual(takes(smaller, 10), 2) // 10 there, 2 the most it holds
  })

  it('stays behind the reservations still waiting', () => {
    const clock = TestClock.make()
    const old = RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock })
    strictEqual((old.reserve() as RateLimiter.Reservation).wait, 0)
    strictEqual((old.reserve() as RateLimiter.Reservation).wait, 1_000) // waiting: -1 token
    const next = RateLimiter.gcra({ rate: 2, per: 1_000, burst: 1, clock, from: old })
    strictEqual(next.take(), false)
    strictEqual((next.reserve() as RateLimiter.Reservation).wait, 1_000) // after the waiting one, at the new pace
  })

  it('with the same options, a replaced bucket grants what the old one would have (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ wait: fc.constantFrom(0, 100, 250, 1_000), n: fc.integer({ min: 0, max: 4 }) }), {
          maxLength: 20
        }),
        fc.array(fc.record({ wait: fc.constantFrom(0, 100, 250, 1_000), n: fc.integer({ min: 0, max: 4 }) }), {
          maxLength: 20
        }),
        async (before, after) => {
          const [a, b] = [TestClock.make(), TestClock.make()]
          const options = { rate: 4, per: 1_000, burst: 3 }
          const alone = RateLimiter.gcra({ ...options, clock: a })
          let replaced = RateLimiter.gcra({ ...options, clock: b })
          for (const s of before) {
            await Promise.all([a.advance(s.wait), b.advance(s.wait)])
            strictEqual(takes(replaced, s.n), takes(alone, s.n))
          }
          replaced = RateLimiter.gcra({ ...options, clock: b, from: replaced })
          for (const s of after) {
            await Promise.all([a.advance(s.wait), b.advance(s.wait)])
            strictEqual(takes(replaced, s.n), takes(alone, s.n))
          }
        }
      ),
      { numRuns: 300 }
    )
  })

  it('refuses anything but a limiter of gcra', () => {
    throwsTypeError(
      () =>
        RateLimiter.gcra({
          rate: 1,
          per: 1,
          burst: 1,
          from: { take: () => true, reserve: () => ({ wait: 0, cancel: () => undefined }) }
        }),
      /RateLimiter.gcra: from must be a limiter made by RateLimiter.gcra/
    )
  })
})
