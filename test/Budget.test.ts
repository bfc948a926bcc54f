import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as Budget from '../src/Budget'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import {
  deepStrictEqual,
  itThrowsRangeErrors,
  notDurations,
  ok,
  strictEqual,
  throwsRangeError,
  throwsTypeError,
  type RangeErrorCase
} from './util'

/** A whole number of thousandths, as gRPC counts tokens: 0.001 to `max`. */
const thousandths = (max: number): fc.Arbitrary<number> => fc.integer({ min: 1, max: max * 1000 }).map((n) => n / 1000)

/** What the runner tells a budget of a first attempt, `latency` ms long and ended at `now`, the schedule wants to retry. */
const failed = (latency: number, now: number): Budget.BudgetAttempt => ({
  latency,
  now,
  retries: 0,
  error: 'down',
  retrying: true
})

/** What the runner tells a budget of a first attempt, `latency` ms long and ended at `now`, that succeeded. */
const succeeded = (latency: number, now: number): Budget.BudgetAttempt => ({
  latency,
  now,
  retries: 0,
  error: undefined,
  retrying: false
})

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
  const running = pipe(counted, retrying(schedule, { clock, budget, onDone: ({ reason: r }) => (reason = r) }))()
  await clock.runAll()
  const result = await running
  return { result, attempts, reason }
}

const alwaysDown = (): TaskEither<string, never> => () => Promise.resolve(E.left('down'))

describe('Budget', () => {
  describe('retryThrottle', () => {
    it('should start full and allow a retry while the failure leaves more than maxTokens / 2, refusing exactly at half', () => {
      const bucket = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
      strictEqual(bucket.tokens, 10)
      const allowed = Array.from({ length: 7 }, () => bucket.onFailure(failed(1, 0)))
      // 9, 8, 7, 6 tokens: allowed; 5 (exactly half), 4, 3: refused
      deepStrictEqual(allowed, [true, true, true, true, false, false, false])
      strictEqual(bucket.tokens, 3)
    })

    it('should give back tokenRatio per success, exactly, in thousandths as gRPC does', () => {
      const bucket = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
      for (let i = 0; i < 4; i++) bucket.onFailure(failed(1, 0))
      strictEqual(bucket.onFailure(failed(1, 0)), false) // 5 tokens
      for (let i = 0; i < 10; i++) bucket.onSuccess(succeeded(1, 0)) // 0.1 ten times: exactly 1
      strictEqual(bucket.tokens, 6)
      strictEqual(bucket.onFailure(failed(1, 0)), false) // 5 again
      for (let i = 0; i < 20; i++) bucket.onSuccess(succeeded(1, 0))
      strictEqual(bucket.tokens, 7)
      strictEqual(bucket.onFailure(failed(1, 0)), true) // 6 > 5
      for (let i = 0; i < 100; i++) bucket.onSuccess(succeeded(1, 0))
      strictEqual(bucket.tokens, 10)
    })

    it('should keep its tokens in [0, maxTokens] and follow gRPC’s rule, whatever the outcomes', () => {
      fc.assert(
        fc.property(
          thousandths(100),
          thousandths(2),
          fc.array(fc.boolean(), { maxLength: 300 }),
          (maxTokens, tokenRatio, outcomes) => {
            const bucket = Budget.retryThrottle({ maxTokens, tokenRatio })
            // The reference: gRFC A6 in whole thousandths.
            const max = Math.round(maxTokens * 1000)
            let model = max
            for (const success of outcomes) {
              if (success) {
                bucket.onSuccess(succeeded(0, 0))
                model = Math.min(max, model + Math.round(tokenRatio * 1000))
              } else {
                const allowed = bucket.onFailure(failed(0, 0))
                model = Math.max(0, model - 1000)
                strictEqual(allowed, model * 2 > max)
              }
              ok(bucket.tokens >= 0 && bucket.tokens <= maxTokens, `${bucket.tokens} tokens of ${maxTokens}`)
              strictEqual(Math.round(bucket.tokens * 1000), model)
            }
          }
        )
      )
    })

    it('should allow ceil(maxTokens / 2) - 1 retries in all through an outage, then none', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 200 }), (maxTokens) => {
          const bucket = Budget.retryThrottle({ maxTokens, tokenRatio: 0.1 })
          let retries = 0
          for (let i = 0; i < 3 * maxTokens; i++) if (bucket.onFailure(failed(0, 0))) retries++
          strictEqual(retries, Math.ceil(maxTokens / 2) - 1)
        })
      )
    })

    it('should be shared: the failures of one run throttle the retries of another', async () => {
      const bucket = Budget.retryThrottle({ maxTokens: 6, tokenRatio: 0.1 })
      const policy = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(5)))
      const first = await run(policy, bucket, alwaysDown)
      // 5 tokens (retry), 4 (retry), 3 = half: refused
      deepStrictEqual([first.attempts, first.reason], [3, 'budget'])
      const second = await run(policy, bucket, alwaysDown)
      deepStrictEqual([second.attempts, second.reason], [1, 'budget'])
    })

    it("should end a run with the last error and onDone's reason 'budget'", async () => {
      const bucket = Budget.retryThrottle({ maxTokens: 4, tokenRatio: 1 })
      let n = 0
      const { result, attempts, reason } = await run(
        pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(10))),
        bucket,
        () => () => Promise.resolve(E.left(`failure ${++n}`))
      )
      deepStrictEqual(result, E.left('failure 2'))
      deepStrictEqual([attempts, reason], [2, 'budget'])
    })
  })

  describe('adaptive', () => {
    const options: Budget.AdaptiveOptions = { window: 1000, minSuccessRate: 0.5, minSamples: 10 }

    it('should allow retries with fewer than minSamples attempts in the window, the failure itself included', () => {
      const guard = Budget.adaptive(options)
      const answers = Array.from({ length: 10 }, (_, i) => guard.onFailure(failed(1, i)))
      deepStrictEqual(answers, [...Array.from({ length: 9 }, () => true), false])
    })

    it('should refuse below the success rate, and allow exactly at it', () => {
      const at = Budget.adaptive(options)
      const below = Budget.adaptive(options)
      for (let i = 0; i < 5; i++) at.onSuccess(succeeded(1, i))
      for (let i = 0; i < 4; i++) below.onSuccess(succeeded(1, i))
      for (let i = 0; i < 4; i++) at.onFailure(failed(1, 5 + i))
      for (let i = 0; i < 5; i++) below.onFailure(failed(1, 5 + i))
      strictEqual(at.onFailure(failed(1, 9)), true) // 5 of 10
      strictEqual(below.onFailure(failed(1, 9)), false) // 4 of 10
    })

    it('should forget attempts that ended window ms ago or more', () => {
      const guard = Budget.adaptive(options)
      for (let i = 0; i < 10; i++) guard.onFailure(failed(1, 100))
      for (let i = 0; i < 12; i++) guard.onSuccess(succeeded(1, 600))
      deepStrictEqual(
        [
          guard.onFailure(failed(1, 1099)), // 12 of 23
          guard.onFailure(failed(1, 1099)), // 12 of 24: exactly half
          guard.onFailure(failed(1, 1099)), // 12 of 25
          guard.onFailure(failed(1, 1100)), // the ten at 100 are out: 12 of 16
          guard.onFailure(failed(1, 1600)) // the twelve at 600 are out: 5 samples, too few
        ],
        [true, true, false, true, true]
      )
    })

    it('should refuse when the latency percentile is above the limit, and allow exactly at it', () => {
      const guard = Budget.adaptive({
        ...options,
        minSuccessRate: 0,
        maxLatencyPercentile: { percentile: 90, ms: 200 }
      })
      for (let i = 0; i < 8; i++) guard.onSuccess(succeeded(100, 0))
      guard.onSuccess(succeeded(5000, 0))
      strictEqual(guard.onFailure(failed(100, 0)), true) // p90 of 10 is the 9th smallest: 100
      strictEqual(guard.onFailure(failed(200, 0)), true) // p90 of 11 is the 10th: 200, not above 200
      strictEqual(guard.onFailure(failed(201, 0)), false) // p90 of 12 is the 11th: 201
    })

    it('should answer each failure as the success rate and the nearest-rank percentile of its window say', () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              ok: fc.boolean(),
              latency: fc.integer({ min: 0, max: 1000 }),
              at: fc.integer({ min: 0, max: 5000 })
            }),
            { maxLength: 60 }
          ),
          fc.integer({ min: 1, max: 20 }),
          fc.integer({ min: 0, max: 100 }).map((n) => n / 100),
          fc.integer({ min: 1, max: 100 }),
          fc.integer({ min: 0, max: 1000 }),
          fc.integer({ min: 1, max: 3000 }),
          (attempts, minSamples, minSuccessRate, percentile, ms, window) => {
            const sorted = [...attempts].sort((a, b) => a.at - b.at)
            const guard = Budget.adaptive({
              window,
              minSuccessRate,
              minSamples,
              maxLatencyPercentile: { percentile, ms }
            })
            sorted.forEach((a, i) => {
              if (a.ok) return guard.onSuccess(succeeded(a.latency, a.at))
              // the window at this failure, the failure included
              const inWindow = sorted.slice(0, i + 1).filter((b) => b.at > a.at - window)
              const n = inWindow.length
              const successes = inWindow.filter((b) => b.ok).length
              // The percentile is at most ms exactly when at least ceil(p·n/100) latencies are at most ms.
              const fastEnough = inWindow.filter((b) => b.latency <= ms).length >= Math.ceil((percentile * n) / 100)
              const expected = n < minSamples || (successes / n >= minSuccessRate && fastEnough)
              deepStrictEqual([i, guard.onFailure(failed(a.latency, a.at))], [i, expected])
            })
          }
        )
      )
    })

    // Issue 18, defect 4: the window was re-sorted at every failure (2.5 ms per attempt at 20,000 per window); it is
    // now kept in order. One budget per limit `ms` in [0, MAX] pins the exact percentile: the smallest `ms` that
    // allows it.
    it('should judge by exactly the nearest-rank percentile of the window, as sorting the window gives it', () => {
      const MAX = 12
      fc.assert(
        fc.property(
          fc.array(fc.record({ latency: fc.integer({ min: 0, max: MAX }), gap: fc.integer({ min: 0, max: 3 }) }), {
            minLength: 1,
            maxLength: 3_000
          }),
          fc.integer({ min: 1, max: 100 }),
          fc.integer({ min: 1, max: 400 }),
          (attempts, percentile, window) => {
            const budgets = Array.from({ length: MAX + 1 }, (_, ms) =>
              Budget.adaptive({ window, minSuccessRate: 0, minSamples: 1, maxLatencyPercentile: { percentile, ms } })
            )
            const seen: Array<{ readonly latency: number; readonly at: number }> = []
            let now = 0
            attempts.forEach(({ latency, gap }, i) => {
              now += gap
              seen.push({ latency, at: now })
              const sorted = seen
                .filter((s) => s.at > now - window)
                .map((s) => s.latency)
                .sort((a, b) => a - b)
              const expected = sorted[Math.max(1, Math.ceil((percentile * sorted.length) / 100)) - 1]
              // successes and failures alike enter the window; only a failure (or `allows`) asks for the percentile
              const answers = budgets.map((budget) =>
                i % 3 === 0
                  ? (budget.onSuccess(succeeded(latency, now)), budget.allows?.(now))
                  : budget.onFailure(failed(latency, now))
              )
              deepStrictEqual([i, answers.indexOf(true)], [i, expected])
            })
          }
        ),
        { numRuns: 30 }
      )
    })

    it('should keep deciding correctly after compacting a long history', () => {
      const guard = Budget.adaptive({ window: 100, minSuccessRate: 0.5, minSamples: 1 })
      for (let t = 0; t < 4999; t++) {
        if (t % 4 === 0) guard.onSuccess(succeeded(1, t))
        else guard.onFailure(failed(1, t))
      }
      strictEqual(guard.onFailure(failed(1, 4999)), false) // 25% success
      for (let t = 5000; t < 5100; t++) guard.onSuccess(succeeded(1, t))
      strictEqual(guard.onFailure(failed(1, 5099)), true) // 99 successes and this failure
    })

    it("should end a run with the last error and reason 'budget' once the attempts are too slow", async () => {
      const guard = Budget.adaptive({
        window: 60_000,
        minSuccessRate: 0,
        minSamples: 2,
        maxLatencyPercentile: { percentile: 50, ms: 100 }
      })
      let n = 0
      // each attempt takes 200 ms of the test clock
      const { result, attempts, reason } = await run(
        pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(10))),
        guard,
        (clock) => () => clock.sleep(200).then(() => E.left(`slow ${++n}`))
      )
      deepStrictEqual(result, E.left('slow 2'))
      deepStrictEqual([attempts, reason], [2, 'budget'])
    })
  })

  describe('retryQuota', () => {
    const timeout: Budget.BudgetAttempt = { ...failed(1, 0), error: { _tag: 'TimeoutError' } }

    it('should start with 500 tokens and take 5 per retry, 10 per retry of a timeout (the AWS SDK v3 defaults)', () => {
      const quota = Budget.retryQuota()
      strictEqual(quota.tokens, 500)
      strictEqual(quota.onFailure(failed(1, 0)), true)
      strictEqual(quota.tokens, 495)
      strictEqual(quota.onFailure(timeout), true)
      strictEqual(quota.tokens, 485)
    })

    it('should take nothing for a failure the schedule will not retry', () => {
      const quota = Budget.retryQuota({ tokens: 20 })
      strictEqual(quota.onFailure({ ...failed(1, 0), retrying: false }), false)
      strictEqual(quota.tokens, 20)
    })

    it('should refuse a retry that costs more than is left, taking nothing', () => {
      const quota = Budget.retryQuota({ tokens: 12 })
      strictEqual(quota.onFailure(failed(1, 0)), true) // 7 left
      strictEqual(quota.onFailure(timeout), false) // 10 > 7
      strictEqual(quota.tokens, 7)
      strictEqual(quota.onFailure(failed(1, 0)), true) // 2 left
      strictEqual(quota.onFailure(failed(1, 0)), false)
      strictEqual(quota.tokens, 2)
    })

    it('should allow 100 retries in a row from full (50 of timeouts), then none', () => {
      for (const [failure, expected] of [
        [failed(1, 0), 100],
        [timeout, 50]
      ] as const) {
        const quota = Budget.retryQuota()
        let retries = 0
        for (let i = 0; i < 200; i++) if (quota.onFailure(failure)) retries++
        strictEqual(retries, expected)
      }
    })

    it("should give back a success's last retry cost, or noRetryIncrement after no retry, never past its size", () => {
      const quota = Budget.retryQuota({ tokens: 30 })
      quota.onFailure(timeout) // 20
      quota.onSuccess({ latency: 1, now: 0, retries: 1, error: { _tag: 'TimeoutError' }, retrying: false })
      strictEqual(quota.tokens, 30)
      quota.onFailure(failed(1, 0)) // 25
      quota.onSuccess(succeeded(1, 0))
      strictEqual(quota.tokens, 26)
      for (let i = 0; i < 10; i++) quota.onSuccess(succeeded(1, 0))
      strictEqual(quota.tokens, 30)
    })

    it("should end a run with reason 'budget' once the quota is spent", async () => {
      const quota = Budget.retryQuota({ tokens: 10 })
      const { attempts, reason } = await run(
        pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(5))),
        quota,
        alwaysDown
      )
      // two retries take the 10 tokens; the third is refused
      deepStrictEqual([attempts, reason, quota.tokens], [3, 'budget', 0])
    })
  })

  // Issue 27: the AWS SDKs' retries 2.1 quota beside 2.0's.
  describe('retryQuota with a throttleCost (awsRetries21)', () => {
    const throttle = { name: 'ThrottlingException' }
    const failing = (error: unknown): Budget.BudgetAttempt => ({ ...failed(1, 0), error })
    const succeeding = (retries: number, error: unknown): Budget.BudgetAttempt => ({
      ...succeeded(1, 0),
      retries,
      error
    })

    it('should take 14 per transient retry, 5 per throttled one, and 14 per timeout (no special case)', () => {
      const quota = Budget.retryQuota(Budget.awsRetries21)
      strictEqual(quota.tokens, 500)
      strictEqual(quota.onFailure(failing(new Error('503'))), true)
      strictEqual(quota.tokens, 486)
      strictEqual(quota.onFailure(failing(throttle)), true)
      strictEqual(quota.tokens, 481)
      strictEqual(quota.onFailure(failing({ _tag: 'TimeoutError' })), true)
      strictEqual(quota.tokens, 467)
      // a throttle that is also a timeout costs as a throttle
      strictEqual(quota.onFailure(failing({ name: 'TimeoutError', code: 'ThrottlingException' })), true)
      strictEqual(quota.tokens, 462)
    })

    it('should refund what the last retry took (14 or 5), and 1 after no retry', () => {
      const quota = Budget.retryQuota(Budget.awsRetries21)
      quota.onFailure(failing(new Error('503'))) // 486
      quota.onFailure(failing(throttle)) // 481
      quota.onSuccess(succeeding(2, throttle)) // the last retry was a throttle's: 5 back
      strictEqual(quota.tokens, 486)
      quota.onSuccess(succeeding(1, new Error('503'))) // 14 back
      strictEqual(quota.tokens, 500)
      quota.onFailure(failing(new Error('503'))) // 486
      quota.onSuccess(succeeding(0, undefined)) // no retry: 1
      strictEqual(quota.tokens, 487)
    })

    it('should allow 35 transient retries in a row from full, or 100 of throttles (2.0: 100 either way)', () => {
      for (const [options, error, retriesMade, left] of [
        [Budget.awsRetries21, new Error('503'), 35, 10],
        [Budget.awsRetries21, throttle, 100, 0],
        [Budget.awsRetries20, new Error('503'), 100, 0],
        [Budget.awsRetries20, throttle, 100, 0]
      ] as const) {
        const quota = Budget.retryQuota(options)
        let retries = 0
        for (let i = 0; i < 200; i++) if (quota.onFailure(failing(error))) retries++
        deepStrictEqual([retries, quota.tokens], [retriesMade, left])
      }
    })

    it('should tell a throttle as the AWS SDKs do by default', () => {
      const throttles: ReadonlyArray<unknown> = [
        { name: 'ThrottlingException' },
        { code: 'SlowDown' },
        { Code: 'Throttling' }, // an XML protocol's error (issue 33)
        { name: 'LimitExceededException' },
        { status: 429 },
        { statusCode: 429 },
        { $metadata: { httpStatusCode: 429 } },
        { $retryable: { throttling: true } },
        {
          response: new Response(null, {
            status: 400,
            headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/' }
          })
        },
        {
          response: new Response(null, {
            status: 400,
            headers: { 'x-amzn-errortype': 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException' }
          })
        }
      ]
      const others: ReadonlyArray<unknown> = [
        undefined,
        null,
        'ThrottlingException',
        new Error('503'),
        { status: 503 },
        { code: 409 },
        { Code: 'ValidationError' },
        { $retryable: { throttling: false } },
        { response: new Response(null, { status: 400, headers: { 'x-amzn-errortype': 'ValidationException' } }) },
        {
          response: {
            headers: {
              get: () => {
                throw new Error('not Headers')
              }
            }
          }
        }
      ]
      for (const error of [...throttles, ...others]) {
        const quota = Budget.retryQuota(Budget.awsRetries21)
        quota.onFailure(failing(error))
        strictEqual(quota.tokens, throttles.includes(error) ? 495 : 486)
      }
    })

    it('should read isThrottle only with a throttleCost: 2.0 is unchanged by default', () => {
      let asked = 0
      const isThrottle = (): boolean => {
        asked++
        return true
      }
      const v20 = Budget.retryQuota({ isThrottle })
      v20.onFailure(failing(throttle))
      deepStrictEqual([v20.tokens, asked], [495, 0])
      const own = Budget.retryQuota({ ...Budget.awsRetries21, isThrottle })
      own.onFailure(failing(new Error('503')))
      deepStrictEqual([own.tokens, asked], [495, 1])
    })

    it('should keep 2.0 and 2.1 options frozen, 2.0 being the defaults', () => {
      ok(Object.isFrozen(Budget.awsRetries20) && Object.isFrozen(Budget.awsRetries21))
      const [defaults, v20] = [Budget.retryQuota(), Budget.retryQuota(Budget.awsRetries20)]
      for (const error of [new Error('503'), throttle, { _tag: 'TimeoutError' }]) {
        defaults.onFailure(failing(error))
        v20.onFailure(failing(error))
        strictEqual(defaults.tokens, v20.tokens)
      }
    })

    it('should never hold fewer than 0 nor more than 500 tokens, whatever the failures and successes', () => {
      const error = fc.constantFrom<unknown>(new Error('503'), throttle, { _tag: 'TimeoutError' }, undefined)
      fc.assert(
        fc.property(
          fc.array(
            fc.record({ ok: fc.boolean(), retries: fc.integer({ min: 0, max: 3 }), error, retrying: fc.boolean() }),
            {
              maxLength: 300
            }
          ),
          (steps) => {
            const quota = Budget.retryQuota(Budget.awsRetries21)
            for (const step of steps) {
              if (step.ok) quota.onSuccess(succeeding(step.retries, step.error))
              else {
                const before = quota.tokens
                const allowed = quota.onFailure({ ...failing(step.error), retrying: step.retrying })
                const cost = before - quota.tokens
                ok(allowed ? cost === 14 || cost === 5 : cost === 0, `took ${cost}`)
              }
              ok(quota.tokens >= 0 && quota.tokens <= 500, `${quota.tokens}`)
            }
          }
        )
      )
    })
  })

  describe('allows', () => {
    it('retryThrottle: should answer whether the tokens are above half, taking none', () => {
      const bucket = Budget.retryThrottle({ maxTokens: 4, tokenRatio: 0.5 })
      strictEqual(bucket.allows?.(0), true)
      bucket.onFailure(failed(1, 0)) // 3
      strictEqual(bucket.allows?.(0), true)
      bucket.onFailure(failed(1, 0)) // 2: exactly half
      strictEqual(bucket.allows?.(0), false)
      strictEqual(bucket.tokens, 2)
    })

    it('adaptive: should judge the window at now, without adding a sample', () => {
      const guard = Budget.adaptive({ window: 1000, minSuccessRate: 0.5, minSamples: 2 })
      guard.onFailure(failed(1, 0))
      strictEqual(guard.allows?.(0), true) // one sample: too few
      guard.onFailure(failed(1, 0))
      strictEqual(guard.allows?.(500), false) // 0 of 2
      strictEqual(guard.allows?.(1000), true) // both have left the window
    })

    it('retryQuota: should answer whether a retry can be paid for, taking nothing', () => {
      const quota = Budget.retryQuota({ tokens: 7 })
      strictEqual(quota.allows?.(0), true)
      quota.onFailure(failed(1, 0)) // 2 left
      strictEqual(quota.allows?.(0), false)
      strictEqual(quota.tokens, 2)
    })

    it('should record nothing: a budget asked between its attempts decides as its twin that is never asked', () => {
      const kinds: ReadonlyArray<() => Budget.RetryBudget> = [
        () => Budget.retryThrottle({ maxTokens: 5, tokenRatio: 0.5 }),
        () => Budget.adaptive({ window: 100, minSuccessRate: 0.5, minSamples: 3 }),
        () => Budget.retryQuota({ tokens: 20 })
      ]
      fc.assert(
        fc.property(
          fc.constantFrom(...kinds),
          fc.array(fc.record({ ok: fc.boolean(), ask: fc.boolean(), after: fc.integer({ min: 0, max: 50 }) }), {
            maxLength: 60
          }),
          (kind, steps) => {
            const asked = kind()
            const twin = kind()
            let now = 0
            for (const step of steps) {
              now += step.after
              if (step.ask) void asked.allows?.(now)
              if (step.ok) {
                void asked.onSuccess(succeeded(1, now))
                void twin.onSuccess(succeeded(1, now))
              } else {
                deepStrictEqual(asked.onFailure(failed(1, now)), twin.onFailure(failed(1, now)))
              }
            }
          }
        )
      )
    })
  })

  describe('bad options', () => {
    const adaptive = (patch: Partial<Record<keyof Budget.AdaptiveOptions, unknown>>) => () =>
      Budget.adaptive({ window: 1000, minSuccessRate: 0.5, minSamples: 10, ...patch } as Budget.AdaptiveOptions)
    const cases: ReadonlyArray<RangeErrorCase> = [
      ...[0, 0.0001, 1e13, ...notDurations.map(([, v]) => v)].flatMap(
        (bad): ReadonlyArray<RangeErrorCase> => [
          [
            `retryThrottle({ maxTokens: ${bad} })`,
            () => Budget.retryThrottle({ maxTokens: bad, tokenRatio: 0.1 }),
            /^Budget\.retryThrottle: maxTokens must be a number in \[0\.001, 1000000000000\], received/
          ],
          [
            `retryThrottle({ tokenRatio: ${bad} })`,
            () => Budget.retryThrottle({ maxTokens: 10, tokenRatio: bad }),
            /^Budget\.retryThrottle: tokenRatio must be a number in \[0\.001, 1000000000000\], received/
          ]
        ]
      ),
      ...[0, ...notDurations.map(([, v]) => v)].map(
        (window): RangeErrorCase => [
          `adaptive({ window: ${window} })`,
          adaptive({ window }),
          /^Budget\.adaptive: window must be a finite number > 0, received/
        ]
      ),
      ...[-0.1, 1.1, NaN].map(
        (minSuccessRate): RangeErrorCase => [
          `adaptive({ minSuccessRate: ${minSuccessRate} })`,
          adaptive({ minSuccessRate }),
          /^Budget\.adaptive: minSuccessRate must be a number in \[0, 1\], received/
        ]
      ),
      ...[0, 1.5, NaN].map(
        (minSamples): RangeErrorCase => [
          `adaptive({ minSamples: ${minSamples} })`,
          adaptive({ minSamples }),
          /^Budget\.adaptive: minSamples must be a whole number >= 1, received/
        ]
      ),
      ...[0, 101, NaN].map(
        (percentile): RangeErrorCase => [
          `adaptive({ maxLatencyPercentile: { percentile: ${percentile} } })`,
          adaptive({ maxLatencyPercentile: { percentile, ms: 10 } }),
          /^Budget\.adaptive: maxLatencyPercentile\.percentile must be a number in \(0, 100\], received/
        ]
      ),
      ...notDurations.map(
        ([name, ms]): RangeErrorCase => [
          `adaptive({ maxLatencyPercentile: { ms: ${name} } })`,
          adaptive({ maxLatencyPercentile: { percentile: 99, ms } }),
          /^Budget\.adaptive: maxLatencyPercentile\.ms must be a finite number >= 0, received/
        ]
      ),
      ...(['tokens', 'retryCost', 'timeoutCost', 'throttleCost', 'noRetryIncrement'] as const).flatMap((key) =>
        notDurations.map(
          ([name, value]): RangeErrorCase => [
            `retryQuota({ ${key}: ${name} })`,
            () => Budget.retryQuota({ [key]: value }),
            new RegExp(`^Budget\\.retryQuota: ${key} must be a finite number >= 0, received`)
          ]
        )
      )
    ]
    itThrowsRangeErrors(cases)

    it('retryQuota: an isTimeout that is not a function should be a TypeError naming it', () => {
      throwsTypeError(
        () => Budget.retryQuota({ isTimeout: 1 as unknown as () => boolean }),
        /^Budget\.retryQuota: isTimeout must be a function, received 1$/
      )
    })

    it('retryQuota: an isThrottle that is not a function should be a TypeError naming it', () => {
      throwsTypeError(
        () => Budget.retryQuota({ ...Budget.awsRetries21, isThrottle: 'yes' as unknown as () => boolean }),
        /^Budget\.retryQuota: isThrottle must be a function, received "yes"$/
      )
    })

    it('adaptive: a maxLatencyPercentile of null should be a TypeError naming it', () => {
      throwsTypeError(
        adaptive({ maxLatencyPercentile: null }),
        /^Budget\.adaptive: maxLatencyPercentile must be an object, received null$/
      )
    })

    // Regression: a NaN time never left the window (retries refused for good), a NaN latency failed every
    // percentile check.
    it.each(notDurations)('adaptive: a latency or a time of %s told to it should be a RangeError', (shown, bad) => {
      const budget = Budget.adaptive({ window: 1000, minSuccessRate: 0.5, minSamples: 1 })
      throwsRangeError(
        () => budget.onFailure(failed(bad, 0)),
        new RegExp(`^Budget\\.adaptive: latency must be .*received ${shown}$`)
      )
      throwsRangeError(() => budget.onSuccess(succeeded(bad, 0)), /latency must be/)
      if (shown !== '-1') {
        throwsRangeError(
          () => budget.onFailure(failed(1, bad)),
          new RegExp(`^Budget\\.adaptive: now must be .*received ${shown}$`)
        )
        throwsRangeError(() => budget.allows?.(bad), /now must be/)
      }
    })

    it('options that are not an object should be a TypeError naming the constructor', () => {
      throwsTypeError(
        () => Budget.retryThrottle(null as unknown as Budget.RetryThrottleOptions),
        /^Budget\.retryThrottle: options must be an object, received null/
      )
      throwsTypeError(
        () => Budget.adaptive(null as unknown as Budget.AdaptiveOptions),
        /^Budget\.adaptive: options must be an object, received null/
      )
      throwsTypeError(
        () => Budget.retryQuota(null as unknown as Budget.RetryQuotaOptions),
        /^Budget\.retryQuota: options must be an object, received null/
      )
    })
  })
})
