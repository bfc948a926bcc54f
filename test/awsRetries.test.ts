/**
 * Issue 27, "AWS retries 2.1": the AWS SDKs' standard retries 2.0 and 2.1 as this library's parts, beside each
 * other. `Schedule.awsRetries20` / `awsRetries21` (the backoffs), `Http.amzRetryAfter` (the `x-amz-retry-after`
 * clamp, on `Schedule.withHint`'s `maxAbove`) and `Http.isThrottle`, each alone and in one run of `retryingFetch`
 * with `Budget.awsRetries21`. The quota's own arithmetic is in Budget.test.ts, the contention comparison in
 * Contention.test.ts.
 */
import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import * as Budget from '../src/Budget'
import * as Driver from '../src/Driver'
import * as Http from '../src/Http'
import * as Random from '../src/Random'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { startServer, type TestServer } from './support/http'
import { drive } from './support/wait'
import { deepStrictEqual, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

/** The SDKs' `MAX_BACKOFF`, and how far past the backoff `x-amz-retry-after` may go. */
const CAP = 20_000
const ABOVE = 5_000

const request: Http.RequestSummary = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }

/** A `StatusError` of `status`, with these response headers. */
const statusError = (status: number, headers: Record<string, string> = {}): Http.HttpError => ({
  _tag: 'StatusError',
  request,
  status,
  response: new Response(null, { status, headers })
})

const transient = statusError(503)
const throttle = statusError(429)

/** The delays of `schedule` for these inputs, one retry each, every draw `u`. */
const delaysFor = <In>(
  schedule: Schedule.Schedule<In>,
  inputs: ReadonlyArray<In>,
  u: number
): ReadonlyArray<number> => {
  const driver = Driver.make(schedule, { start: 0, random: Random.fixed(u) })
  return inputs.map((input) => driver.advance(input, 0))
}

describe('AWS retries 2.0 and 2.1', () => {
  describe('Schedule.awsRetries20', () => {
    it('should wait min(u · 1 s · 2^(n−1), 20 s), whatever the error', () => {
      const policy = Schedule.awsRetries20
      deepStrictEqual(
        Driver.delays(policy, { random: Random.fixed(0.5), limit: 8 }),
        [500, 1000, 2000, 4000, 8000, 16000, 20000, 20000]
      )
      deepStrictEqual(delaysFor(policy, [transient, throttle, transient], 0.5), [500, 1000, 2000])
    })

    it('should jitter before the cap: from the 6th retry, a draw of 0.9 waits the cap exactly', () => {
      deepStrictEqual(
        Driver.delays(Schedule.awsRetries20, { random: Random.fixed(0.9), limit: 7 }),
        [900, 1800, 3600, 7200, 14400, 20000, 20000]
      )
    })
  })

  describe('Schedule.awsRetries21', () => {
    it('should back off from 50 ms after a transient error, from 1 s after a throttle', () => {
      const policy = Schedule.awsRetries21(Http.isThrottle)
      deepStrictEqual(
        Driver.delays(policy, { random: Random.fixed(0.5), input: transient, limit: 5 }),
        [25, 50, 100, 200, 400]
      )
      deepStrictEqual(
        Driver.delays(policy, { random: Random.fixed(0.5), input: throttle, limit: 5 }),
        [500, 1000, 2000, 4000, 8000]
      )
    })

    it("should take each retry's base from its own error, and its doubling from the retry's number", () => {
      const policy = Schedule.awsRetries21(Http.isThrottle)
      // 50 · 1, 1000 · 2, 50 · 4, 1000 · 8, halved
      deepStrictEqual(delaysFor(policy, [transient, throttle, transient, throttle], 0.5), [25, 1000, 100, 4000])
    })

    it('should cap before the jitter: a draw of 0.9 waits 0.9 of the cap, never the cap itself', () => {
      const policy = Schedule.awsRetries21(Http.isThrottle)
      deepStrictEqual(
        Driver.delays(policy, { random: Random.fixed(0.9), input: throttle, limit: 7 }),
        [900, 1800, 3600, 7200, 14400, 18000, 18000]
      )
      // 2.0 on the same draws pins the 6th and 7th retries to the cap
      deepStrictEqual(
        Driver.delays(Schedule.awsRetries20, { random: Random.fixed(0.9), limit: 7 }).slice(5),
        [20000, 20000]
      )
      // the transient base reaches the cap at the 10th retry: 50 · 2^9 = 25.6 s, capped to 20 s, then drawn
      deepStrictEqual(
        Driver.delays(policy, { random: Random.fixed(0.5), input: transient, limit: 11 }).slice(8),
        [6400, 10000, 10000]
      )
    })

    it("should tell a throttle by the AWS SDKs' rule by default", () => {
      const policy = Schedule.awsRetries21()
      deepStrictEqual(
        delaysFor(policy, [{ name: 'ThrottlingException' }, new Error('503'), throttle], 0.5),
        [500, 50, 2000]
      )
    })

    it('should be a TypeError naming it when isThrottle is not a function', () => {
      throwsTypeError(
        () => Schedule.awsRetries21(1 as unknown as () => boolean),
        /^Schedule\.awsRetries21: isThrottle must be a function, received 1$/
      )
    })

    it('should describe itself by its parts', () => {
      strictEqual(Schedule.awsRetries20.description, 'capped(20000)(fullJitter(exponential(1000, 2)))')
      strictEqual(
        Schedule.awsRetries21().description,
        'fullJitter(capped(20000)(awsBase21(<isThrottle>)(exponential(1, 2))))'
      )
    })

    it('should keep every delay finite and in [0, 20 s), whatever the draws and the errors', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 2 ** 32 - 1 }),
          fc.array(fc.boolean(), { minLength: 1, maxLength: 80 }),
          (seed, throttles) => {
            for (const policy of [Schedule.awsRetries21(Http.isThrottle), Schedule.awsRetries20]) {
              const driver = Driver.make(policy, { start: 0, random: Random.seeded(seed) })
              for (const isThrottle of throttles) {
                const delay = driver.advance(isThrottle ? throttle : transient, 0)
                ok(Number.isFinite(delay) && delay >= 0 && delay <= CAP, `${policy.description}: ${delay}`)
                // 2.1 draws over [0, cap): it never waits the cap itself
                if (policy !== Schedule.awsRetries20) ok(delay < CAP, `${delay}`)
              }
            }
          }
        )
      )
    })
  })

  describe('Http.amzRetryAfter', () => {
    const amz = (ms: string, status = 503): Http.HttpError => statusError(status, { 'x-amz-retry-after': ms })
    const policy = pipe(Schedule.awsRetries21(Http.isThrottle), Http.amzRetryAfter)
    const half = (input: Http.HttpError, limit = 3) =>
      Driver.delays(policy, { random: Random.fixed(0.5), input, limit })

    it('should wait as the header asks when it is within [backoff, backoff + 5 s]', () => {
      deepStrictEqual(half(amz('1500')), [1500, 1500, 1500])
      deepStrictEqual(half(amz('25')), [25, 50, 100]) // exactly the floor
    })

    it('should clamp the header to the backoff from below: the backoff is a floor', () => {
      deepStrictEqual(half(amz('0')), [25, 50, 100])
      deepStrictEqual(half(amz('10', 429)), [500, 1000, 2000]) // a throttle's backoff
    })

    it('should clamp the header to the backoff + 5 s from above, whatever the cap', () => {
      deepStrictEqual(half(amz('60000')), [5025, 5050, 5100])
      deepStrictEqual(half(amz('5025')), [5025, 5025, 5025]) // exactly the ceiling, then within it
      // past the backoff's cap: the cap holds the backoff, not the hint
      deepStrictEqual(
        Driver.delays(policy, { random: Random.fixed(0.9), input: amz('999999999', 429), limit: 7 }).slice(5),
        [23000, 23000]
      )
    })

    it('should ignore a header that is not a whole number of ms, and an error without one', () => {
      for (const value of ['1.5', '-1', '1e3', 'soon', '', '0x10']) deepStrictEqual(half(amz(value)), [25, 50, 100])
      deepStrictEqual(half(statusError(503, { 'Retry-After': '3' })), [25, 50, 100]) // not its header
      const timeout: Http.HttpError = { _tag: 'TimeoutError', request, timeout: 1000 }
      deepStrictEqual(half(timeout), [25, 50, 100])
    })

    it('should keep every delay in [backoff, backoff + 5 s], at the header when it is inside', () => {
      const header = fc.oneof(fc.integer({ min: 0, max: 100_000 }).map(String), fc.constantFrom('soon', '-5', '2.5'))
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 2 ** 32 - 1 }),
          fc.array(fc.record({ header, status: fc.constantFrom(429, 500, 503) }), { minLength: 1, maxLength: 40 }),
          (seed, failures) => {
            // the hint draws nothing: the bare backoff on the same seed draws what the hinted one does
            const hinted = Driver.make(policy, { start: 0, random: Random.seeded(seed) })
            const bare = Driver.make(Schedule.awsRetries21(Http.isThrottle), { start: 0, random: Random.seeded(seed) })
            for (const { header: value, status } of failures) {
              const input = amz(value, status)
              const [delay, backoff] = [hinted.advance(input, 0), bare.advance(input, 0)]
              ok(Number.isFinite(delay) && delay >= backoff && delay <= backoff + ABOVE, `${delay} for ${backoff}`)
              const asked = /^\d+$/.test(value) ? Number(value) : undefined
              const expected = asked === undefined ? backoff : Math.min(Math.max(asked, backoff), backoff + ABOVE)
              strictEqual(delay, expected)
            }
          }
        )
      )
    })

    it('should refuse to come after a time limit, naming itself', () => {
      throwsTypeError(
        () => pipe(Schedule.awsRetries21(Http.isThrottle), Schedule.upTo(10_000), Http.amzRetryAfter),
        /^Http\.amzRetryAfter: the schedule holds a time limit .*put Http\.amzRetryAfter before it/
      )
    })
  })

  describe('Schedule.withHint maxAbove', () => {
    interface Hinted {
      readonly hint?: number
    }
    const hinted = (max: number, maxAbove: number) =>
      pipe(
        Schedule.exponential(100),
        Schedule.withHint((e: Hinted) => e.hint, { max, maxAbove })
      )

    it('should hold a hint to [delay, min(delay + maxAbove, max)]', () => {
      deepStrictEqual(Driver.delays(hinted(10_000, 150), { input: { hint: 1000 }, limit: 4 }), [250, 350, 550, 950])
      deepStrictEqual(Driver.delays(hinted(300, 150), { input: { hint: 1000 }, limit: 4 }), [250, 300, 400, 800])
      deepStrictEqual(Driver.delays(hinted(10_000, 150), { input: { hint: 0 }, limit: 3 }), [100, 200, 400])
    })

    it('should ignore every hint with maxAbove 0', () => {
      deepStrictEqual(Driver.delays(hinted(10_000, 0), { input: { hint: 1000 }, limit: 3 }), [100, 200, 400])
    })

    it('should be a RangeError naming maxAbove when it is not a duration', () => {
      for (const bad of [-1, NaN, Infinity])
        throwsRangeError(
          () => Schedule.withHint((e: Hinted) => e.hint, { max: 100, maxAbove: bad }),
          /^Schedule\.withHint: options\.maxAbove must be a finite number >= 0, received/
        )
    })
  })

  describe('Http.isThrottle', () => {
    it('should tell a 429, or an x-amzn-errortype naming a throttling code, from any other error', () => {
      const errorType = (value: string) => statusError(400, { 'x-amzn-errortype': value })
      for (const error of [
        throttle,
        errorType('ThrottlingException'),
        errorType('SlowDown:http://internal.amazon.com/coral/com.amazon.coral.service/'),
        errorType('com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException'),
        errorType('RequestLimitExceeded')
      ])
        strictEqual(Http.isThrottle(error), true)
      const timeout: Http.HttpError = { _tag: 'TimeoutError', request, timeout: 1000 }
      const network: Http.HttpError = { _tag: 'NetworkError', request, code: 'SlowDown', message: '', cause: undefined }
      for (const error of [transient, statusError(400), errorType('ValidationException'), timeout, network])
        strictEqual(Http.isThrottle(error), false)
    })
  })

  describe('Http.isRetryable (issue 33)', () => {
    /** The throttling codes of the AWS SDK for JavaScript v3 (@smithy/service-error-classification). */
    const CODES = [
      'BandwidthLimitExceeded',
      'EC2ThrottledException',
      'LimitExceededException',
      'PriorRequestNotComplete',
      'ProvisionedThroughputExceededException',
      'RequestLimitExceeded',
      'RequestThrottled',
      'RequestThrottledException',
      'SlowDown',
      'ThrottledException',
      'Throttling',
      'ThrottlingException',
      'TooManyRequestsException',
      'TransactionInProgressException'
    ]
    const errorType = (status: number, value: string, idempotent = true): Http.HttpError => ({
      ...statusError(status, { 'x-amzn-errortype': value }),
      request: { ...request, idempotent }
    })

    it('should retry a 400 whose x-amzn-errortype names any throttling code of the SDKs, and no other 400', () => {
      for (const code of CODES) {
        deepStrictEqual([code, Http.isRetryable(errorType(400, code))], [code, true])
        deepStrictEqual([code, Http.isTransient(errorType(400, `${code}:http://internal.amazon.com/`))], [code, true])
        deepStrictEqual([code, Http.isRetryable(errorType(400, code, false))], [code, false]) // a POST stays
      }
      for (const error of [statusError(400), errorType(400, 'ValidationException'), errorType(400, 'Throttlingx')])
        strictEqual(Http.isRetryable(error), false)
    })

    it('should retry what it retried before, and a throttle of any status besides', () => {
      const code = fc.oneof(fc.constantFrom(...CODES), fc.constantFrom('ValidationException', 'AccessDenied', ''))
      fc.assert(
        fc.property(fc.integer({ min: 400, max: 599 }), code, fc.boolean(), (status, value, idempotent) => {
          const error = errorType(status, value, idempotent)
          const before = status === 408 || status === 429 || (status >= 500 && status !== 501)
          strictEqual(Http.isThrottle(error), status === 429 || CODES.includes(value))
          strictEqual(Http.isRetryable(error), idempotent && (before || Http.isThrottle(error)))
        })
      )
    })
  })

  describe('in one run of retryingFetch', () => {
    let server: TestServer | undefined
    afterEach(async () => {
      await server?.close()
      server = undefined
    })

    it('should sleep as x-amz-retry-after asks within the clamp, and charge and refund the 2.1 quota', async () => {
      // two 503s (the first asks for 1.5 s, the second for a minute), a 429 asking for nothing, then a 200
      server = await startServer((_, res, n) => {
        if (n === 1) res.writeHead(503, { 'x-amz-retry-after': '1500' }).end()
        else if (n === 2) res.writeHead(503, { 'x-amz-retry-after': '60000' }).end()
        else if (n === 3) res.writeHead(429).end()
        else res.end('ok')
      })
      const clock = TestClock.make()
      const quota = Budget.retryQuota(Budget.awsRetries21)
      const tokens: Array<number> = []
      const policy = pipe(
        Schedule.awsRetries21(Http.isThrottle),
        Http.amzRetryAfter,
        Schedule.intersect(Schedule.recurs(3))
      )
      const get = Http.retryingFetch(policy, {
        clock,
        random: Random.fixed(0.5),
        budget: quota,
        onRetry: () => void tokens.push(quota.tokens)
      })
      const result = await drive(clock, get(`${server.url}/`)())
      ok(result._tag === 'Right')
      strictEqual(await result.right.text(), 'ok')
      // 1500 (inside [25, 5025]); 50 + 5000 (a minute, clamped); the 429's own backoff, 1000 · 4 · 0.5
      deepStrictEqual(clock.sleeps, [1500, 5050, 2000])
      // 14, 14, then 5 for the throttle; the success gives back its last retry's 5
      deepStrictEqual(tokens, [486, 472, 467])
      strictEqual(quota.tokens, 472)
    })

    it('should retry a 400 ThrottlingException from the throttle base, for the throttle cost (issue 33)', async () => {
      server = await startServer((_, res, n) => {
        if (n <= 2) res.writeHead(400, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/' }).end()
        else res.end('ok')
      })
      const clock = TestClock.make()
      const quota = Budget.retryQuota(Budget.awsRetries21)
      const tokens: Array<number> = []
      const get = Http.retryingFetch(
        pipe(Schedule.awsRetries21(Http.isThrottle), Schedule.intersect(Schedule.recurs(3))),
        {
          clock,
          random: Random.fixed(0.5),
          budget: quota,
          onRetry: () => void tokens.push(quota.tokens)
        }
      )
      const result = await drive(clock, get(`${server.url}/`)())
      ok(result._tag === 'Right')
      strictEqual(await result.right.text(), 'ok')
      strictEqual(server.received.length, 3)
      // 1000 · 0.5, then 1000 · 2 · 0.5: the throttle's base, not the 50 ms of a transient error
      deepStrictEqual(clock.sleeps, [500, 1000])
      // 5 a retry of a throttle, not 14; the success gives its last retry's 5 back
      deepStrictEqual(tokens, [495, 490])
      strictEqual(quota.tokens, 495)
    })

    it('should not retry a plain 400, nor charge the quota for it', async () => {
      server = await startServer((_, res) => res.writeHead(400, { 'x-amzn-errortype': 'ValidationException' }).end())
      const clock = TestClock.make()
      const quota = Budget.retryQuota(Budget.awsRetries21)
      const get = Http.retryingFetch(
        pipe(Schedule.awsRetries21(Http.isThrottle), Schedule.intersect(Schedule.recurs(3))),
        {
          clock,
          random: Random.fixed(0.5),
          budget: quota
        }
      )
      const result = await drive(clock, get(`${server.url}/`)())
      ok(result._tag === 'Left' && result.left._tag === 'StatusError')
      strictEqual(result.left.status, 400)
      strictEqual(server.received.length, 1)
      deepStrictEqual(clock.sleeps, [])
      strictEqual(quota.tokens, 500)
    })
  })
})
