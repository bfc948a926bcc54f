import * as fc from 'fast-check'
import * as RateLimiter from '../src/RateLimiter'
import * as TestClock from '../src/TestClock'
import { strictEqual, throwsTypeError } from './util'

const takes = (limiter: RateLimiter.RateLimiter, n: number): number => {
  let taken = 0
  for (let i = 0; i < n; i++) if (limiter.take() === true) taken++
  return taken
}

const waitOf = (limiter: RateLimiter.RateLimiter): number => (limiter.reserve() as RateLimiter.Reservation).wait

describe('RateLimiter.fixedWindow options.from', () => {
  it("counts the old current window's grants: no new burst", async () => {
    const clock = TestClock.make()
    await clock.advance(200)
    const old = RateLimiter.fixedWindow({ limit: 5, window: 1_000, clock })
    strictEqual(takes(old, 4), 4)
    const bigger = RateLimiter.fixedWindow({ limit: 6, window: 1_000, clock, from: old })
    strictEqual(takes(bigger, 10), 2) // 6 - 4, not a fresh 6
    await clock.advance(800) // the next window
    strictEqual(takes(bigger, 10), 6)
  })

  it('re-aligns the count on new windows, and keeps the reservations waiting ahead', async () => {
    const clock = TestClock.make()
    await clock.advance(1_500)
    const old = RateLimiter.fixedWindow({ limit: 2, window: 1_000, clock })
    strictEqual(takes(old, 2), 2)
    strictEqual(waitOf(old), 500) // reserved in [2000, 3000)
    // 3 taken, counted in the new window of now, [0, 3000) on 3 s windows
    const wider = RateLimiter.fixedWindow({ limit: 4, window: 3_000, clock, from: old })
    strictEqual(takes(wider, 10), 1)
    const smaller = RateLimiter.fixedWindow({ limit: 1, window: 1_000, clock, from: old })
    strictEqual(smaller.take(), false)
    strictEqual(waitOf(smaller), 2_500) // behind the 3, one a window from now's: [4000, 5000)
  })

  it('with the same options, a replaced limiter grants what the old one would have (property)', async () => {
    const steps = fc.array(
      fc.record({
        wait: fc.constantFrom(0, 100, 250, 1_000),
        n: fc.integer({ min: 0, max: 4 }),
        reserve: fc.boolean()
      }),
      { maxLength: 20 }
    )
    for (const kind of ['fixedWindow', 'slidingWindow'] as const) {
      await fc.assert(
        fc.asyncProperty(steps, steps, async (before, after) => {
          const [a, b] = [TestClock.make(), TestClock.make()]
          const options = { limit: 3, window: 1_000 }
          const alone = RateLimiter[kind]({ ...options, clock: a })
          let replaced = RateLimiter[kind]({ ...options, clock: b })
          const step = async (s: { wait: number; n: number; reserve: boolean }) => {
            await Promise.all([a.advance(s.wait), b.advance(s.wait)])
            strictEqual(takes(replaced, s.n), takes(alone, s.n))
            if (s.reserve) strictEqual(waitOf(replaced), waitOf(alone))
          }
          for (const s of before) await step(s)
          replaced = RateLimiter[kind]({ ...options, clock: b, from: replaced })
          for (const s of after) await step(s)
        }),
        { numRuns: 300 }
      )
    }
  })

  it('refuses a limiter of another kind, naming it', () => {
    const gcra = RateLimiter.gcra({ rate: 1, per: 1, burst: 1 })
    throwsTypeError(
      () => RateLimiter.fixedWindow({ limit: 1, window: 1, from: gcra }),
      /RateLimiter.fixedWindow: from must be a limiter made by RateLimiter.fixedWindow, received/
    )
    throwsTypeError(
      () => RateLimiter.slidingWindow({ limit: 1, window: 1, from: RateLimiter.fixedWindow({ limit: 1, window: 1 }) }),
      /RateLimiter.slidingWindow: from must be a limiter made by RateLimiter.slidingWindow, received/
    )
  })
})

describe('RateLimiter.slidingWindow options.from', () => {
  it('keeps the grant times still inside the new window, at most the new limit newest', async () => {
    const clock = TestClock.make()
    const old = RateLimiter.slidingWindow({ limit: 4, window: 1_000, clock })
    strictEqual(old.take(), true) // at 0
    await clock.advance(600)
    strictEqual(takes(old, 3), 3) // at 600
    const narrower = RateLimiter.slidingWindow({ limit: 5, window: 500, clock, from: old })
    strictEqual(takes(narrower, 10), 2) // the 3 of 600 count, the one of 0 is out of (100, 600]
    const fewer = RateLimiter.slidingWindow({ limit: 2, window: 1_000, clock, from: old })
    strictEqual(fewer.take(), false)
    strictEqual(waitOf(fewer), 1_000) // the 2 newest of 600 leave at 1600
  })
})
