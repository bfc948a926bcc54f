import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as Budget from '../src/Budget'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, throwsRangeError } from './util'

/** A whole number of thousandths, as gRPC counts tokens: 0.001 to `max`. */
const thousandths = (max: number): fc.Arbitrary<number> => fc.integer({ min: 1, max: max * 1000 }).map((n) => n / 1000)

/** Runs `action` with `retrying(schedule, { budget })` on a TestClock; returns the result, the attempts and the reason. */
const run = async <E, A>(
  schedule: Schedule.Schedule<unknown>,
  budget: Budget.RetryBudget,
  action: (clock: TestClock.TestClock) => TaskEither<E, A>
): Promise<{ readonly result: E.Either<E, A>; readonly attempts: number; readonly reason: StopReason | undefined }> => {
  const clock = TestClock.make()
  let attempts = 0
  let reason: StopReason | undefined
  const counted: TaskEither<E, A> = () => {
    attempts++
    return action(clock)()
  }
  const running = pipe(counted, retrying(schedule, { clock, budget, onDone: (_, __, r) => (reason = r) }))()
  await clock.runAll()
  const result = await running
  return { result, attempts, reason }
}

describe('Budget', () => {
  describe('tokenBucket', () => {
    it('should start full and allow retries while tokens > maxTokens / 2, refusing exactly at half', () => {
      const bucket = Budget.tokenBucket({ maxTokens: 10, tokenRatio: 0.1 })
      expect(bucket.tokens).toBe(10)
      const allowed: Array<boolean> = []
      for (let i = 0; i < 7; i++) {
        bucket.record(false, 1, 0)
        allowed.push(bucket.allowRetry(0))
      }
      // 9, 8, 7, 6 tokens: allowed; 5 (exactly half), 4, 3: refused
      deepStrictEqual(allowed, [true, true, true, true, false, false, false])
      expect(bucket.tokens).toBe(3)
    })

    it('should give back tokenRatio per success, exactly, in thousandths as gRPC does', () => {
      const bucket = Budget.tokenBucket({ maxTokens: 10, tokenRatio: 0.1 })
      for (let i = 0; i < 5; i++) bucket.record(false, 1, 0)
      expect(bucket.allowRetry(0)).toBe(false)
      for (let i = 0; i < 10; i++) bucket.record(true, 1, 0) // 0.1 ten times: exactly 1
      expect(bucket.tokens).toBe(6)
      expect(bucket.allowRetry(0)).toBe(true)
      for (let i = 0; i < 100; i++) bucket.record(true, 1, 0)
      expect(bucket.tokens).toBe(10)
    })

    it('should keep its tokens in [0, maxTokens] and follow gRPC’s rule, whatever the outcomes', () => {
      fc.assert(
        fc.property(thousandths(100), thousandths(2), fc.array(fc.boolean(), { maxLength: 300 }), (maxTokens, tokenRatio, outcomes) => {
          const bucket = Budget.tokenBucket({ maxTokens, tokenRatio })
          // The reference: gRFC A6 in whole thousandths.
          let model = Math.round(maxTokens * 1000)
          for (const succeeded of outcomes) {
            bucket.record(succeeded, 0, 0)
            model = succeeded ? Math.min(maxTokens * 1000, model + Math.round(tokenRatio * 1000)) : Math.max(0, model - 1000)
            expect(bucket.tokens).toBeGreaterThanOrEqual(0)
            expect(bucket.tokens).toBeLessThanOrEqual(maxTokens)
            expect(Math.round(bucket.tokens * 1000)).toBe(Math.round(model))
            expect(bucket.allowRetry(0)).toBe(bucket.tokens > maxTokens / 2)
          }
        })
      )
    })

    it('should allow ceil(maxTokens / 2) - 1 retries in all through an outage, then none', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 200 }), (maxTokens) => {
          const bucket = Budget.tokenBucket({ maxTokens, tokenRatio: 0.1 })
          let retries = 0
          for (let i = 0; i < 3 * maxTokens; i++) {
            bucket.record(false, 0, 0)
            if (bucket.allowRetry(0)) retries++
          }
          expect(retries).toBe(Math.ceil(maxTokens / 2) - 1)
        })
      )
    })

    it('should be shared: the failures of one run throttle the retries of another', async () => {
      const bucket = Budget.tokenBucket({ maxTokens: 6, tokenRatio: 0.1 })
      const policy = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(5)))
      const first = await run(policy, bucket, () => () => Promise.resolve(E.left('down')))
      // 5 tokens (retry), 4 (retry), 3 = half: refused
      deepStrictEqual([first.attempts, first.reason], [3, 'budget'])
      const second = await run(policy, bucket, () => () => Promise.resolve(E.left('down')))
      deepStrictEqual([second.attempts, second.reason], [1, 'budget'])
    })

    it("should end a run with the last error and onDone's reason 'budget'", async () => {
      const bucket = Budget.tokenBucket({ maxTokens: 4, tokenRatio: 1 })
      let n = 0
      const { result, attempts, reason } = await run(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(10))), bucket, () => () =>
        Promise.resolve(E.left(`failure ${++n}`))
      )
      deepStrictEqual(result, E.left('failure 2'))
      deepStrictEqual([attempts, reason], [2, 'budget'])
    })

    it('should reject maxTokens and tokenRatio below 0.001, NaN or infinite, naming them', () => {
      for (const bad of [0, -1, 0.0001, NaN, Infinity]) {
        throwsRangeError(() => Budget.tokenBucket({ maxTokens: bad, tokenRatio: 0.1 }), /Budget\.tokenBucket: maxTokens must be a finite number >= 0\.001, received/)
        throwsRangeError(() => Budget.tokenBucket({ maxTokens: 10, tokenRatio: bad }), /Budget\.tokenBucket: tokenRatio must be a finite number >= 0\.001, received/)
      }
      throwsRangeError(() => Budget.tokenBucket(null as unknown as Budget.TokenBucketOptions), /options must be an object, received null/)
    })
  })

  describe('adaptive', () => {
    const options: Budget.AdaptiveOptions = { window: 1000, minSuccessRate: 0.5, minSamples: 10 }

    it('should allow retries with fewer than minSamples attempts in the window', () => {
      const guard = Budget.adaptive(options)
      for (let i = 0; i < 9; i++) guard.record(false, 1, i)
      expect(guard.allowRetry(9)).toBe(true)
      guard.record(false, 1, 9)
      expect(guard.allowRetry(9)).toBe(false)
    })

    it('should refuse below the success rate, and allow exactly at it', () => {
      const at = Budget.adaptive(options)
      const below = Budget.adaptive(options)
      for (let i = 0; i < 10; i++) {
        at.record(i < 5, 1, i) // 5 of 10
        below.record(i < 4, 1, i) // 4 of 10
      }
      expect(at.allowRetry(10)).toBe(true)
      expect(below.allowRetry(10)).toBe(false)
    })

    it('should forget attempts that ended window ms ago or more', () => {
      const guard = Budget.adaptive(options)
      for (let i = 0; i < 10; i++) guard.record(false, 1, 100)
      for (let i = 0; i < 10; i++) guard.record(true, 1, 600)
      expect(guard.allowRetry(1099)).toBe(true) // 10 of 20
      for (let i = 0; i < 3; i++) guard.record(false, 1, 1099)
      expect(guard.allowRetry(1099)).toBe(false) // 10 of 23
      expect(guard.allowRetry(1100)).toBe(true) // the ten at 100 are out: 10 of 13
      expect(guard.allowRetry(1600)).toBe(true) // only 3 left: too few
    })

    it('should refuse when the latency percentile is above the limit, and allow exactly at it', () => {
      const guard = Budget.adaptive({ ...options, minSuccessRate: 0, maxLatencyPercentile: { percentile: 90, ms: 200 } })
      for (let i = 0; i < 9; i++) guard.record(true, 100, 0)
      guard.record(true, 5000, 0)
      expect(guard.allowRetry(0)).toBe(true) // p90 of 10 is the 9th smallest: 100
      guard.record(true, 200, 0)
      expect(guard.allowRetry(0)).toBe(true) // p90 of 11 is the 10th: 200, not above 200
      guard.record(true, 201, 0)
      expect(guard.allowRetry(0)).toBe(false) // p90 of 12 is the 11th: 201
    })

    it('should decide as the success rate and the nearest-rank percentile say, for any window of attempts', () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ ok: fc.boolean(), latency: fc.integer({ min: 0, max: 1000 }), at: fc.integer({ min: 0, max: 5000 }) }), { maxLength: 60 }),
          fc.integer({ min: 1, max: 20 }),
          fc.integer({ min: 0, max: 100 }).map((n) => n / 100),
          fc.integer({ min: 1, max: 100 }),
          fc.integer({ min: 0, max: 1000 }),
          fc.integer({ min: 1, max: 3000 }),
          (attempts, minSamples, minSuccessRate, percentile, ms, window) => {
            const sorted = [...attempts].sort((a, b) => a.at - b.at)
            const guard = Budget.adaptive({ window, minSuccessRate, minSamples, maxLatencyPercentile: { percentile, ms } })
            for (const a of sorted) guard.record(a.ok, a.latency, a.at)
            const now = 5000
            const inWindow = sorted.filter((a) => a.at > now - window)
            const n = inWindow.length
            const successes = inWindow.filter((a) => a.ok).length
            // The percentile is at most ms exactly when at least ceil(p·n/100) latencies are at most ms.
            const fastEnough = inWindow.filter((a) => a.latency <= ms).length >= Math.ceil((percentile * n) / 100)
            const expected = n < minSamples || (successes / n >= minSuccessRate && fastEnough)
            expect(guard.allowRetry(now)).toBe(expected)
          }
        )
      )
    })

    it('should keep deciding correctly after compacting a long history', () => {
      const guard = Budget.adaptive({ window: 100, minSuccessRate: 0.5, minSamples: 1 })
      for (let t = 0; t < 5000; t++) guard.record(t % 4 === 0, 1, t) // 25% success
      expect(guard.allowRetry(4999)).toBe(false)
      for (let t = 5000; t < 5100; t++) guard.record(true, 1, t)
      expect(guard.allowRetry(5099)).toBe(true)
    })

    it("should end a run with the last error and reason 'budget' once the attempts are too slow", async () => {
      const guard = Budget.adaptive({ window: 60_000, minSuccessRate: 0, minSamples: 2, maxLatencyPercentile: { percentile: 50, ms: 100 } })
      let n = 0
      // each attempt takes 200 ms of the test clock
      const { result, attempts, reason } = await run(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(10))), guard, (clock) => () =>
        clock.sleep(200).then(() => E.left(`slow ${++n}`))
      )
      deepStrictEqual(result, E.left('slow 2'))
      deepStrictEqual([attempts, reason], [2, 'budget'])
    })

    it('should reject each bad option, naming it', () => {
      const bad = (patch: Partial<Record<keyof Budget.AdaptiveOptions, unknown>>, message: RegExp): void =>
        throwsRangeError(() => Budget.adaptive({ ...options, ...patch } as Budget.AdaptiveOptions), message)
      for (const window of [0, -1, NaN, Infinity]) bad({ window }, /Budget\.adaptive: window must be a finite number > 0, received/)
      for (const minSuccessRate of [-0.1, 1.1, NaN]) bad({ minSuccessRate }, /minSuccessRate must be a number in \[0, 1\], received/)
      for (const minSamples of [0, 1.5, NaN]) bad({ minSamples }, /minSamples must be a whole number >= 1, received/)
      for (const percentile of [0, 101, NaN]) bad({ maxLatencyPercentile: { percentile, ms: 10 } }, /maxLatencyPercentile\.percentile must be a number in \(0, 100\], received/)
      bad({ maxLatencyPercentile: { percentile: 99, ms: -1 } }, /maxLatencyPercentile\.ms must be a finite number >= 0, received -1/)
    })
  })
})
