import { Readable } from 'stream'
import { getEventListeners } from 'events'
import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import type { ServerResponse } from 'http'
import * as Breaker from '../src/Breaker'
import * as Budget from '../src/Budget'
import type { Event } from '../src/Event'
import * as Http from '../src/Http'
import * as Keyed from '../src/Keyed'
import * as RateLimiter from '../src/RateLimiter'
import type { StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import * as ScheduleConfig from '../src/ScheduleConfig'
import * as TestClock from '../src/TestClock'
import { closedPort, startServer, startTlsServer, type Handler, type TestServer } from './support/http'
import { drive, waitFor } from './support/wait'
import {
  deepStrictEqual,
  escapeRegExp,
  timersOf,
  itThrowsRangeErrors,
  itThrowsTypeErrors,
  leftOf,
  notDurations,
  ok,
  strictEqual,
  throwsRangeError,
  throwsTypeError,
  type RangeErrorCase
} from './util'

// -------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------

let server: TestServer | undefined

const serve = async (handler: Handler): Promise<TestServer> => {
  server = await startServer(handler)
  return server
}

afterEach(async () => {
  await server?.close()
  server = undefined
})

/** Answers `status` with optional headers and a short body. */
const answer = (
  res: ServerResponse,
  status: number,
  headers: Record<string, string> = {},
  body = `status ${status}`
): void => {
  res.writeHead(status, headers).end(body)
}

/** What a run did: every error retried (with the delay chosen) and how it ended. */
interface Log {
  readonly retried: Array<{ readonly error: Http.HttpError; readonly delay: number }>
  readonly done: Array<StopReason>
}

const logged = (): Log & Pick<Http.RetryingFetchOptions, 'onRetry' | 'onDone'> => {
  const log: Log = { retried: [], done: [] }
  return {
    ...log,
    onRetry: ({ error, delay }) => log.retried.push({ error, delay }),
    onDone: ({ reason }) => log.done.push(reason)
  }
}

const tagOf = <A>(
  result: { readonly _tag: 'Left'; readonly left: Http.HttpError } | { readonly _tag: 'Right'; readonly right: A }
): string => (result._tag === 'Left' ? result.left._tag : 'Right')

const threeRetries = (delay: number): Schedule.Schedule<Http.HttpError> =>
  pipe(Schedule.constant(delay), Schedule.intersect(Schedule.recurs(3)))

const GET = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }

/** Each event as its `_tag` (and attempt), with the `http` record it carries. */
const httpOf = (events: ReadonlyArray<Event>): ReadonlyArray<readonly [string, unknown]> =>
  events.map((e) => [
    `${e._tag}${'attempt' in e ? ` #${e.attempt}` : ''}`,
    e._tag === 'AttemptStarted' ||
    e._tag === 'AttemptSucceeded' ||
    e._tag === 'AttemptFailed' ||
    e._tag === 'AttemptTimedOut'
      ? e.http
      : undefined
  ])

const statusError = (status: number, headers: Record<string, string> = {}, request = GET): Http.HttpError => ({
  _tag: 'StatusError',
  request,
  status,
  response: new Response(null, { status, headers })
})

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('Http', () => {
  describe('request', () => {
    it('should answer a Response below 400 as a Right', async () => {
      const s = await serve((_, res) => answer(res, 200, {}, 'hello'))
      const result = await Http.request(`${s.url}/`)()
      strictEqual(result._tag, 'Right')
      if (result._tag === 'Right') strictEqual(await result.right.text(), 'hello')
    })

    it('should answer a status of 400 or more as a StatusError with its unread Response', async () => {
      const s = await serve((_, res) => answer(res, 404, {}, 'no such user'))
      const error = leftOf(await Http.request(`${s.url}/users/7`)())
      if (error._tag !== 'StatusError') throw new Error(error._tag)
      strictEqual(error.status, 404)
      deepStrictEqual(error.request, { method: 'GET', url: `${s.url}/users/7`, idempotent: true })
      strictEqual(error.response.bodyUsed, false)
      strictEqual(await error.response.text(), 'no such user')
    })

    it('should classify a connection reset as a NetworkError', async () => {
      const s = await serve((req) => req.socket.destroy())
      const error = leftOf(await Http.request(`${s.url}/`)())
      strictEqual(error._tag, 'NetworkError')
      if (error._tag === 'NetworkError') strictEqual(error.code, 'UND_ERR_SOCKET')
      strictEqual(Http.isRetryable(error), true)
    })

    it('should classify a refused connection as a NetworkError with code ECONNREFUSED', async () => {
      const port = await closedPort()
      const error = leftOf(await Http.request(`http://127.0.0.1:${port}/`)())
      strictEqual(error._tag, 'NetworkError')
      if (error._tag === 'NetworkError') strictEqual(error.code, 'ECONNREFUSED')
    })

    it('should classify an invalid URL and a non-HTTP scheme as InvalidRequestError, with no I/O', async () => {
      for (const url of ['not a url', 'ftp://127.0.0.1/file', 'file:///etc/hosts', 'data:text/plain,hi']) {
        const error = leftOf(await Http.request(url)())
        deepStrictEqual([url, error._tag], [url, 'InvalidRequestError'])
        strictEqual(Http.isRetryable(error), false)
      }
    })

    it('should classify a request fetch refuses to build (a body on a GET, a bad header) as InvalidRequestError', async () => {
      const s = await serve((_, res) => answer(res, 200))
      strictEqual(tagOf(await Http.request(`${s.url}/`, { body: 'x' })()), 'InvalidRequestError')
      strictEqual(tagOf(await Http.request(`${s.url}/`, { headers: { 'bad header': 'x' } })()), 'InvalidRequestError')
      strictEqual(tagOf(await Http.request(`http://127.0.0.1:1/`)()), 'InvalidRequestError') // a blocked port
      strictEqual(s.received.length, 0)
    })

    it('should classify too many redirects as a RedirectError', async () => {
      const s = await serve((_, res) => answer(res, 302, { location: '/loop' }))
      const error = leftOf(await Http.request(`${s.url}/loop`)())
      strictEqual(error._tag, 'RedirectError')
      strictEqual(s.received.length, 21) // fetch follows 20 redirects
      strictEqual(tagOf(await Http.request(`${s.url}/loop`, { redirect: 'error' })()), 'RedirectError')
    })

    it('should classify a self-signed certificate as a TlsError', async () => {
      server = await startTlsServer((_, res) => answer(res, 200))
      const error = leftOf(await Http.request(`${server.url}/`)())
      strictEqual(error._tag, 'TlsError')
      if (error._tag === 'TlsError') strictEqual(error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT')
      strictEqual(Http.isRetryable(error), false)
    })

    it('should map the codes and reasons undici reports along the cause chain', async () => {
      const failure = (cause: unknown): TypeError => new TypeError('fetch failed', { cause })
      const coded = (code: string, message = code): Error => Object.assign(new Error(message), { code })
      const cases: ReadonlyArray<readonly [unknown, string, string | undefined]> = [
        [failure(coded('CERT_HAS_EXPIRED', 'certificate has expired')), 'TlsError', 'CERT_HAS_EXPIRED'],
        [failure(coded('ERR_TLS_CERT_ALTNAME_INVALID')), 'TlsError', 'ERR_TLS_CERT_ALTNAME_INVALID'],
        [failure(coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE')), 'TlsError', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
        [failure(coded('ENOTFOUND')), 'NetworkError', 'ENOTFOUND'],
        [failure(coded('UND_ERR_CONNECT_TIMEOUT')), 'NetworkError', 'UND_ERR_CONNECT_TIMEOUT'],
        [failure(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')])), 'NetworkError', 'ECONNREFUSED'],
        [failure(new Error('wrapped', { cause: coded('ECONNRESET') })), 'NetworkError', 'ECONNRESET'],
        [failure(new Error('unexpected redirect')), 'RedirectError', undefined],
        [failure(new Error('URL scheme must be a HTTP(S) scheme')), 'RedirectError', undefined],
        [failure(new Error('bad port')), 'InvalidRequestError', undefined],
        [failure(new Error('something new')), 'NetworkError', undefined],
        [new TypeError('Request with GET/HEAD method cannot have body.'), 'InvalidRequestError', undefined],
        ['a string', 'NetworkError', undefined]
      ]
      const spy = jest.spyOn(globalThis, 'fetch')
      try {
        for (const [rejection, tag, code] of cases) {
          spy.mockRejectedValueOnce(rejection)
          const error = leftOf(await Http.request('https://127.0.0.1/')())
          const actualCode = error._tag === 'NetworkError' || error._tag === 'TlsError' ? error.code : undefined
          deepStrictEqual([String(rejection), error._tag, actualCode], [String(rejection), tag, code])
        }
      } finally {
        spy.mockRestore()
      }
    })

    it('should time out an attempt on the given clock, and abort it on the server', async () => {
      const s = await serve(() => undefined) // never answers
      const clock = TestClock.make()
      let settled = false
      const run = Http.request(`${s.url}/`, {}, { attemptTimeout: 1000, clock })().finally(() => (settled = true))
      await waitFor(() => s.received.length === 1, { what: 'the request' })
      await clock.advance(999)
      strictEqual(settled, false)
      await clock.advance(1)
      deepStrictEqual(leftOf(await run), {
        _tag: 'TimeoutError',
        request: { method: 'GET', url: `${s.url}/`, idempotent: true },
        timeout: 1000
      })
      await waitFor(() => s.abortedResponses() === 1, { what: 'the server to see the attempt go' })
      deepStrictEqual(timersOf(clock), ['timeout 1000'])
    })

    it('should clear the timeout and the abort listener once the attempt ends', async () => {
      const s = await serve((_, res) => answer(res, 200))
      const clock = TestClock.make()
      const controller = new AbortController()
      const result = await Http.request(`${s.url}/`, { signal: controller.signal }, { attemptTimeout: 1000, clock })()
      strictEqual(result._tag, 'Right')
      strictEqual(clock.pending, 0)
      strictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    it('should answer an AbortError when the signal aborts the attempt in flight', async () => {
      const s = await serve(() => undefined)
      const controller = new AbortController()
      const run = Http.request(`${s.url}/`, { signal: controller.signal })()
      await waitFor(() => s.received.length === 1, { what: 'the request' })
      controller.abort(new Error('user left'))
      const error = leftOf(await run)
      strictEqual(error._tag, 'AbortError')
      if (error._tag === 'AbortError') deepStrictEqual(error.reason, new Error('user left'))
      await waitFor(() => s.abortedResponses() === 1, { what: 'the server to see the attempt go' })
    })

    it('should answer an AbortError at once for a signal aborted before the start', async () => {
      const s = await serve((_, res) => answer(res, 200))
      strictEqual(tagOf(await Http.request(`${s.url}/`, { signal: AbortSignal.abort() })()), 'AbortError')
      strictEqual(s.received.length, 0)
    })
  })

  describe('isTransient', () => {
    it("should retry 408, 429 and 5xx but 501, and no other status (go-retryablehttp's rule)", () => {
      for (let status = 400; status <= 599; status++) {
        const expected = status === 408 || status === 429 || (status >= 500 && status !== 501)
        deepStrictEqual([status, Http.isTransient(statusError(status))], [status, expected])
      }
    })

    it('should retry network errors and timeouts, and never aborts, invalid requests, redirects or TLS errors', () => {
      const cause = undefined
      strictEqual(
        Http.isTransient({ _tag: 'NetworkError', request: GET, code: 'ECONNRESET', message: '', cause }),
        true
      )
      strictEqual(Http.isTransient({ _tag: 'TimeoutError', request: GET, timeout: 1 }), true)
      strictEqual(Http.isTransient({ _tag: 'AbortError', request: GET, reason: cause }), false)
      strictEqual(Http.isTransient({ _tag: 'InvalidRequestError', request: GET, message: '', cause }), false)
      strictEqual(Http.isTransient({ _tag: 'RedirectError', request: GET, message: '', cause }), false)
      strictEqual(
        Http.isTransient({ _tag: 'TlsError', request: GET, code: 'CERT_HAS_EXPIRED', message: '', cause }),
        false
      )
    })
  })

  describe('isIdempotent', () => {
    it('should allow GET, HEAD, OPTIONS, PUT, DELETE and TRACE, in any case', () => {
      for (const method of ['GET', 'head', 'Options', 'PUT', 'delete', 'TRACE'])
        deepStrictEqual([method, Http.isIdempotent(method)], [method, true])
      for (const method of ['POST', 'PATCH', 'CONNECT'])
        deepStrictEqual([method, Http.isIdempotent(method)], [method, false])
    })

    it('should allow any method with an Idempotency-Key header, in any form of headers', () => {
      strictEqual(Http.isIdempotent('POST', { 'idempotency-key': 'k' }), true)
      strictEqual(Http.isIdempotent('PATCH', [['Idempotency-Key', 'k']]), true)
      strictEqual(Http.isIdempotent('POST', new Headers({ 'IDEMPOTENCY-KEY': 'k' })), true)
      strictEqual(Http.isIdempotent('POST', { 'x-request-id': 'k' }), false)
    })
  })

  describe('parseRetryAfter', () => {
    const now = Date.UTC(2025, 0, 1, 12, 0, 0)

    it('should be a TypeError for a value that is not a string', () => {
      throwsTypeError(
        () => Http.parseRetryAfter(120 as unknown as string, now),
        /^Http\.parseRetryAfter: value must be a string, received 120$/
      )
    })

    // Regression: a date read against a NaN time was some(NaN).
    it.each(notDurations.filter(([name]) => name !== '-1'))('should be a RangeError for a time of %s', (shown, bad) => {
      throwsRangeError(
        () => Http.parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', bad),
        new RegExp(`^Http\\.parseRetryAfter: now must be a finite number, received ${shown}$`)
      )
    })

    it('should read delta-seconds as whole seconds', () => {
      deepStrictEqual(Http.parseRetryAfter('0', now), O.some(0))
      deepStrictEqual(Http.parseRetryAfter(' 120 ', now), O.some(120_000))
      deepStrictEqual(Http.parseRetryAfter('9'.repeat(400), now), O.some(Number.MAX_SAFE_INTEGER))
      for (const value of ['1.5', '-1', '+3', '2s', '', 'soon'])
        deepStrictEqual([value, Http.parseRetryAfter(value, now)], [value, O.none])
    })

    it('should read the three HTTP-date formats against now, a past date as 0', () => {
      deepStrictEqual(Http.parseRetryAfter('Wed, 01 Jan 2025 12:00:03 GMT', now), O.some(3000))
      deepStrictEqual(Http.parseRetryAfter('Wednesday, 01-Jan-25 12:00:03 GMT', now), O.some(3000))
      deepStrictEqual(Http.parseRetryAfter('Wed Jan  1 12:00:03 2025', now), O.some(3000))
      deepStrictEqual(Http.parseRetryAfter('Tue, 31 Dec 2024 12:00:00 GMT', now), O.some(0))
    })

    it('should read a two-digit RFC 850 year more than 50 years ahead as the past century', () => {
      deepStrictEqual(Http.parseRetryAfter('Friday, 01-Jan-99 00:00:00 GMT', now), O.some(0)) // 1999, not 2099
      deepStrictEqual(Http.parseRetryAfter('Monday, 01-Jan-74 00:00:00 GMT', now), O.some(Date.UTC(2074, 0, 1) - now))
    })

    it('should refuse dates that do not exist or are not in GMT', () => {
      for (const value of [
        'Sun, 30 Feb 2025 00:00:00 GMT',
        'Wed, 01 Jan 2025 24:00:00 GMT',
        'Wed, 01 Jan 2025 12:00:03 PST',
        '2025-01-01T12:00:03Z'
      ]) {
        deepStrictEqual([value, Http.parseRetryAfter(value, now)], [value, O.none])
      }
    })

    it('should read any IMF-fixdate written by Date.prototype.toUTCString as its distance from now', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 11, 31) }),
          fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 11, 31) }),
          (at, nowMs) => {
            const date = Math.floor(at / 1000) * 1000
            deepStrictEqual(
              Http.parseRetryAfter(new Date(date).toUTCString(), nowMs),
              O.some(Math.max(0, date - nowMs))
            )
          }
        )
      )
    })
  })

  describe('retryable', () => {
    it('should stop on what isRetryable refuses, and leave the rest to the schedule', () => {
      const policy = pipe(Schedule.constant(10), Http.retryable, Schedule.intersect(Schedule.recurs(2)))
      deepStrictEqual(Driver.delays(policy, { input: statusError(503) }), [10, 10])
      deepStrictEqual(Driver.delays(policy, { input: statusError(501) }), [])
      deepStrictEqual(
        Driver.delays(policy, { input: statusError(503, {}, { ...GET, method: 'POST', idempotent: false }) }),
        []
      )
    })
  })

  describe('retryAfter', () => {
    const policy = pipe(Schedule.exponential(100), Http.retryAfter(5000), Schedule.intersect(Schedule.recurs(3)))

    it("should use the server's delay, clamped to the maximum, and the schedule's otherwise", () => {
      deepStrictEqual(Driver.delays(policy, { input: statusError(503, { 'Retry-After': '2' }) }), [2000, 2000, 2000])
      deepStrictEqual(
        Driver.delays(policy, { input: statusError(503, { 'Retry-After': '86400' }) }),
        [5000, 5000, 5000]
      )
      deepStrictEqual(Driver.delays(policy, { input: statusError(503) }), [100, 200, 400])
      deepStrictEqual(Driver.delays(policy, { input: statusError(503, { 'Retry-After': 'later' }) }), [100, 200, 400])
      deepStrictEqual(
        Driver.delays(policy, { input: { _tag: 'TimeoutError', request: GET, timeout: 1 } }),
        [100, 200, 400]
      )
    })

    // Dates with four-digit years: what an HTTP-date can say.
    const readableDate = fc.date({
      min: new Date(Date.UTC(1970, 0, 1)),
      max: new Date(Date.UTC(9999, 11, 31)),
      noInvalidDate: true
    })

    it("should wait the header's delay clamped to the maximum, but never less than the backoff", () => {
      fc.assert(
        fc.property(
          fc.nat(10_000),
          fc.oneof(
            fc.nat().map(String),
            readableDate.map((d) => d.toUTCString())
          ),
          (max, value) => {
            const ds = Driver.delays(
              pipe(Schedule.constant(50), Http.retryAfter(max), Schedule.intersect(Schedule.recurs(2))),
              {
                input: statusError(429, { 'Retry-After': value })
              }
            )
            strictEqual(ds.length, 2)
            for (const d of ds)
              ok(d >= 50 && d <= Math.max(50, max), `${d} ms for Retry-After: ${value} and a maximum of ${max}`)
          }
        )
      )
    })

    it('regression: Retry-After: 0 should not collapse the backoff, which is a floor', () => {
      deepStrictEqual(Driver.delays(policy, { input: statusError(503, { 'Retry-After': '0' }) }), [100, 200, 400])
      // a date that has come (Driver.delays starts its clock at 0, the epoch) reads as 0 too
      deepStrictEqual(
        Driver.delays(policy, { input: statusError(503, { 'Retry-After': 'Thu, 01 Jan 1970 00:00:00 GMT' }) }),
        [100, 200, 400]
      )
      // and a header below the backoff gives way to it
      deepStrictEqual(
        Driver.delays(pipe(Schedule.exponential(1000), Http.retryAfter(5000), Schedule.intersect(Schedule.recurs(4))), {
          input: statusError(503, { 'Retry-After': '3' })
        }),
        [3000, 3000, 4000, 8000]
      )
    })

    it('should count toward a later upTo: a Retry-After past the deadline stops the run', () => {
      const limited = pipe(Schedule.constant(100), Http.retryAfter(10_000), Schedule.upTo(1500))
      deepStrictEqual(Driver.delays(limited, { input: statusError(503, { 'Retry-After': '2' }), limit: 5 }), [])
      deepStrictEqual(Driver.delays(limited, { input: statusError(503, { 'Retry-After': '1' }), limit: 5 }), [1000])
    })

    it('should refuse a schedule that already has a time limit, since the limit would be overslept', () => {
      throwsTypeError(
        () => pipe(Schedule.constant(100), Schedule.upTo(1000), Http.retryAfter(5000)),
        /^Http\.retryAfter: the schedule holds a time limit \(Schedule\.upTo, .*put Http\.retryAfter before it/
      )
      throwsTypeError(
        () =>
          pipe(
            Schedule.constant(100),
            Schedule.maxCumulativeDelay(1000),
            Schedule.intersect(Schedule.recurs(3)),
            Http.retryAfter(5000)
          ),
        /^Http\.retryAfter: .*Schedule\.maxCumulativeDelay/
      )
    })

    it('should read the time limits from the schedule, not from its description', () => {
      // a custom step that reads the time may stop on it: an Unknown limit
      throwsTypeError(
        () => Http.retryAfter(5000)(Schedule.make(null, () => Schedule.done, { description: 'plain' })),
        /^Http\.retryAfter: /
      )
      // a description that merely says upTo is no limit
      const named = Schedule.make(null, () => Schedule.done, { description: 'upTo(1000)', readsTime: false })
      deepStrictEqual(Http.retryAfter(5000)(named).timeLimits, [])
    })

    it('should refuse a config-built schedule whose config already has maxElapsed or maxCumulativeDelay', () => {
      const fromConfig = (config: unknown): Schedule.Schedule<unknown> => {
        const parsed = ScheduleConfig.parse(config)
        if (parsed._tag === 'Left') throw new Error(parsed.left.message)
        return parsed.right
      }
      throwsTypeError(
        () => Http.retryAfter(5000)(fromConfig({ exponential: '100ms', maxElapsed: '10s' })),
        /^Http\.retryAfter: /
      )
      throwsTypeError(
        () => Http.retryAfter(5000)(fromConfig({ constant: 10, maxCumulativeDelay: 100 })),
        /^Http\.retryAfter: /
      )
      // and accept one without a time limit
      Http.retryAfter(5000)(fromConfig({ exponential: '100ms', maxRetries: 3 }))
    })
  })

  describe('retryingFetch', () => {
    it('should retry a connection reset and succeed', async () => {
      const s = await serve((req, res, n) => (n === 1 ? req.socket.destroy() : answer(res, 200, {}, 'ok')))
      const clock = TestClock.make()
      const log = logged()
      const result = await drive(clock, Http.retryingFetch(threeRetries(1000), { clock, ...log })(`${s.url}/`)())
      strictEqual(result._tag, 'Right')
      deepStrictEqual(
        log.retried.map((r) => r.error._tag),
        ['NetworkError']
      )
      deepStrictEqual(clock.sleeps, [1000])
      deepStrictEqual(log.done, ['succeeded'])
    })

    it('should wait as a 503 with Retry-After: 2 asks', async () => {
      const s = await serve((_, res, n) => (n === 1 ? answer(res, 503, { 'Retry-After': '2' }) : answer(res, 200)))
      const clock = TestClock.make()
      const policy = pipe(Schedule.exponential(100), Http.retryAfter(10_000), Schedule.intersect(Schedule.recurs(3)))
      const result = await drive(clock, Http.retryingFetch(policy, { clock })(`${s.url}/`)())
      strictEqual(result._tag, 'Right')
      deepStrictEqual(clock.sleeps, [2000])
      strictEqual(s.received.length, 2)
    })

    it("should wait until a 429's HTTP-date, read against the clock's now", async () => {
      const clock = TestClock.make(Date.UTC(2025, 5, 1, 8, 0, 0))
      const s = await serve((_, res, n) =>
        n === 1 ? answer(res, 429, { 'Retry-After': new Date(clock.now() + 3000).toUTCString() }) : answer(res, 200)
      )
      const policy = pipe(Schedule.exponential(100), Http.retryAfter(10_000), Schedule.intersect(Schedule.recurs(3)))
      const result = await drive(clock, Http.retryingFetch(policy, { clock })(`${s.url}/`)())
      strictEqual(result._tag, 'Right')
      deepStrictEqual(clock.sleeps, [3000])
    })

    it('should not retry a 501 or a 400', async () => {
      for (const status of [501, 400]) {
        const s = await serve((_, res) => answer(res, status))
        const clock = TestClock.make()
        const log = logged()
        const result = await drive(clock, Http.retryingFetch(threeRetries(100), { clock, ...log })(`${s.url}/`)())
        deepStrictEqual([status, tagOf(result), s.received.length], [status, 'StatusError', 1])
        deepStrictEqual(log.done, ['schedule'])
        deepStrictEqual(clock.sleeps, [])
        await s.close()
      }
    })

    it('should not retry a POST without an Idempotency-Key', async () => {
      const s = await serve((_, res) => answer(res, 503))
      const clock = TestClock.make()
      const result = await drive(
        clock,
        Http.retryingFetch(threeRetries(100), { clock })(`${s.url}/orders`, { method: 'POST', body: '{}' })()
      )
      strictEqual(tagOf(result), 'StatusError')
      strictEqual(s.received.length, 1)
    })

    it('should retry a POST with an Idempotency-Key, sending the same key and body each time', async () => {
      const bodies: Array<string> = []
      const s = await serve((req, res, n) => {
        let body = ''
        req.on('data', (chunk: Buffer) => (body += chunk.toString()))
        req.on('end', () => {
          bodies.push(body)
          if (n < 3) answer(res, 503)
          else answer(res, 201)
        })
      })
      const clock = TestClock.make()
      const init = { method: 'POST', body: '{"sku":1}', headers: { 'Idempotency-Key': 'order-42' } }
      const result = await drive(clock, Http.retryingFetch(threeRetries(100), { clock })(`${s.url}/orders`, init)())
      strictEqual(result._tag, 'Right')
      deepStrictEqual(
        s.received.map((r) => r.headers['idempotency-key']),
        ['order-42', 'order-42', 'order-42']
      )
      deepStrictEqual(bodies, ['{"sku":1}', '{"sku":1}', '{"sku":1}'])
    })

    it('should retry a POST opted in with idempotent: true, and no GET opted out with false', async () => {
      const s = await serve((_, res) => answer(res, 503))
      const clock = TestClock.make()
      await drive(
        clock,
        Http.retryingFetch(threeRetries(100), { clock, idempotent: true })(`${s.url}/`, { method: 'POST' })()
      )
      strictEqual(s.received.length, 4)
      await drive(clock, Http.retryingFetch(threeRetries(100), { clock, idempotent: false })(`${s.url}/`)())
      strictEqual(s.received.length, 5)
    })

    it('should retry an attempt that timed out, the timeout running on the clock', async () => {
      const s = await serve((_, res, n) => (n === 1 ? undefined : answer(res, 200, {}, 'late but ok')))
      const clock = TestClock.make()
      const log = logged()
      const run = Http.retryingFetch(threeRetries(500), { clock, attemptTimeout: 1000, ...log })(`${s.url}/`)()
      await waitFor(() => s.received.length === 1, { what: 'the first request' })
      await clock.advance(1000) // the first attempt's timeout fires
      await waitFor(() => clock.pending === 1 && log.retried.length === 1, { what: 'the retry sleep' })
      await clock.advance(500) // the retry
      const result = await run
      strictEqual(result._tag, 'Right')
      deepStrictEqual(
        log.retried.map((r) => [r.error._tag, r.delay]),
        [['TimeoutError', 500]]
      )
      deepStrictEqual(timersOf(clock), ['timeout 1000', 'backoff 500', 'timeout 1000']) // the second timeout is cleared
      strictEqual(clock.pending, 0)
      await waitFor(() => s.abortedResponses() === 1, { what: 'the server to see the first attempt go' })
    })

    it('should cancel the attempt in flight when the signal aborts, and end the run', async () => {
      const s = await serve(() => undefined)
      const clock = TestClock.make()
      const controller = new AbortController()
      const log = logged()
      const run = Http.retryingFetch(threeRetries(100), { clock, attemptTimeout: 60_000, ...log })(`${s.url}/`, {
        signal: controller.signal
      })()
      await waitFor(() => s.received.length === 1, { what: 'the request' })
      controller.abort()
      strictEqual(tagOf(await run), 'AbortError')
      deepStrictEqual(log.done, ['aborted'])
      await waitFor(() => s.abortedResponses() === 1, { what: 'the server to see the attempt go' })
      strictEqual(s.received.length, 1)
      strictEqual(clock.pending, 0)
      strictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    it('should end a sleep at once when the signal aborts, with the last error', async () => {
      const s = await serve((_, res) => answer(res, 503))
      const clock = TestClock.make()
      const controller = new AbortController()
      const log = logged()
      const run = Http.retryingFetch(threeRetries(10_000), { clock, ...log })(`${s.url}/`, {
        signal: controller.signal
      })()
      await waitFor(() => clock.pending === 1, { what: 'the retry sleep' })
      controller.abort()
      const error = leftOf(await run)
      strictEqual(error._tag === 'StatusError' && error.status, 503)
      deepStrictEqual(log.done, ['aborted'])
      deepStrictEqual(clock.sleeps, [10_000])
      strictEqual(s.received.length, 1)
    })

    it('should answer an AbortError at once for a signal aborted before the start', async () => {
      const s = await serve((_, res) => answer(res, 200))
      const result = await Http.retryingFetch(threeRetries(100))(`${s.url}/`, { signal: AbortSignal.abort() })()
      strictEqual(tagOf(result), 'AbortError')
      strictEqual(s.received.length, 0)
    })

    it('should release the body of every retried response, so its connection is not held', async () => {
      // The first answer's body never ends: only a client that lets go of it closes that response.
      const s = await serve((_, res, n) => {
        if (n === 1) res.writeHead(503).write('x'.repeat(256 * 1024))
        else answer(res, 200)
      })
      const clock = TestClock.make()
      const log = logged()
      const result = await drive(clock, Http.retryingFetch(threeRetries(100), { clock, ...log })(`${s.url}/`)())
      strictEqual(result._tag, 'Right')
      const retried = log.retried[0].error
      strictEqual(retried._tag === 'StatusError' && retried.response.bodyUsed, true)
      await waitFor(() => s.abortedResponses() === 1, { what: 'the unfinished 503 to be closed by the client' })
    })

    it('should leave the body of the last response, the one the run ends with, unread', async () => {
      const s = await serve((_, res) => answer(res, 503, {}, 'still busy'))
      const clock = TestClock.make()
      const log = logged()
      const error = leftOf(await drive(clock, Http.retryingFetch(threeRetries(100), { clock, ...log })(`${s.url}/`)()))
      strictEqual(
        log.retried.every((r) => r.error._tag === 'StatusError' && r.error.response.bodyUsed),
        true
      )
      strictEqual(log.retried.length, 3)
      if (error._tag !== 'StatusError') throw new Error(error._tag)
      strictEqual(await error.response.text(), 'still busy')
    })

    it('should let retryOn extend the default condition', async () => {
      const s = await serve((_, res, n) => (n === 1 ? answer(res, 409) : answer(res, 200)))
      const clock = TestClock.make()
      const retryOn = (e: Http.HttpError): boolean =>
        Http.isRetryable(e) || (e._tag === 'StatusError' && e.status === 409)
      const result = await drive(clock, Http.retryingFetch(threeRetries(100), { clock, retryOn })(`${s.url}/`)())
      strictEqual(result._tag, 'Right')
      strictEqual(s.received.length, 2)
    })

    it("should end the run with the last error and reason 'budget' when the budget refuses", async () => {
      const s = await serve((_, res) => answer(res, 503))
      const clock = TestClock.make()
      const budget = Budget.retryThrottle({ maxTokens: 4, tokenRatio: 0.1 })
      const log = logged()
      const result = await drive(clock, Http.retryingFetch(threeRetries(100), { clock, budget, ...log })(`${s.url}/`)())
      // 4 tokens: the first failure leaves 3 (> 2: retry), the second 2 (refused)
      strictEqual(tagOf(result), 'StatusError')
      strictEqual(s.received.length, 2)
      deepStrictEqual(log.done, ['budget'])
      strictEqual(budget.tokens, 2)
    })

    it('should tell the budget of transient failures only, as gRPC counts retryable codes only', async () => {
      const s = await serve((req, res) => answer(res, req.url === '/missing' ? 404 : 503))
      const clock = TestClock.make()
      const budget = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.5 })
      const get = Http.retryingFetch(Schedule.stop, { clock, budget })
      for (let i = 0; i < 3; i++) await get(`${s.url}/missing`)()
      strictEqual(budget.tokens, 10)
      await get(`${s.url}/down`)()
      strictEqual(budget.tokens, 9)
    })
  })

  describe('events', () => {
    it('retryingFetch should tell each request and resend as the runner’s events, from source http', async () => {
      const s = await serve((_, res, n) => answer(res, n < 2 ? 503 : 200))
      const clock = TestClock.make()
      const events: Array<string> = []
      const get = Http.retryingFetch(threeRetries(100), {
        clock,
        onEvent: (e) => void events.push(`${e.source} ${e._tag}${'attempt' in e ? ` #${e.attempt}` : ''}`)
      })
      const result = await drive(clock, get(`${s.url}/`)())
      ok(result._tag === 'Right')
      await result.right.text()
      deepStrictEqual(events, [
        'http AttemptStarted #1',
        'http AttemptFailed #1',
        'http RetryScheduled #1',
        'http AttemptStarted #2',
        'http AttemptSucceeded #2',
        'http RunStopped'
      ])
    })

    it('retryingFetch should put on each attempt’s events what it sent, and the status that came back', async () => {
      const s = await serve((_, res, n) => answer(res, n < 2 ? 503 : 200))
      const clock = TestClock.make()
      const events: Array<Event> = []
      const get = Http.retryingFetch(threeRetries(100), { clock, onEvent: (e) => void events.push(e) })
      const result = await drive(clock, get(`${s.url}/users/1?page=2`)())
      ok(result._tag === 'Right')
      await result.right.text()
      const port = Number(new URL(s.url).port)
      const sent = { method: 'GET', url: `${s.url}/users/1?page=2`, serverAddress: '127.0.0.1', serverPort: port }
      deepStrictEqual(httpOf(events), [
        ['AttemptStarted #1', sent],
        ['AttemptFailed #1', { ...sent, statusCode: 503 }],
        ['RetryScheduled #1', undefined],
        ['AttemptStarted #2', sent],
        ['AttemptSucceeded #2', { ...sent, statusCode: 200 }],
        ['RunStopped', undefined]
      ])
      // plain JSON, whole: a log line is the event
      deepStrictEqual(JSON.parse(JSON.stringify(events[4])), { ...events[4] })
    })

    it('should give no status to an attempt that got no response, and no http record to a URL it cannot send', async () => {
      const port = await closedPort()
      const events: Array<Event> = []
      const onEvent = (e: Event): void => void events.push(e)
      const refused = await Http.retryingFetch(Schedule.stop, { onEvent })(`http://127.0.0.1:${port}/`)()
      strictEqual(tagOf(refused), 'NetworkError')
      const sent = { method: 'GET', url: `http://127.0.0.1:${port}/`, serverAddress: '127.0.0.1', serverPort: port }
      deepStrictEqual(httpOf(events), [
        ['AttemptStarted #1', sent],
        ['AttemptFailed #1', sent],
        ['RunStopped', undefined]
      ])
      events.length = 0
      const invalid = await Http.retryingFetch(Schedule.stop, { onEvent })('ftp://127.0.0.1/file')()
      strictEqual(tagOf(invalid), 'InvalidRequestError')
      deepStrictEqual(httpOf(events), [
        ['AttemptStarted #1', undefined],
        ['AttemptFailed #1', undefined],
        ['RunStopped', undefined]
      ])
    })

    it('should redact the credentials and the signing parameters of the URL, and tell the method as fetch sends it', async () => {
      const s = await serve((_, res) => answer(res, 200))
      const events: Array<Event> = []
      const get = Http.retryingFetch(Schedule.stop, { onEvent: (e) => void events.push(e) })
      const host = s.url.replace('http://', '')
      // fetch refuses a URL with credentials before sending: a failed attempt, with its URL redacted all the same
      await get(`http://alice:s3cret@${host}/a?X-Amz-Signature=abc&b=1&sig=def`)()
      const signed = await get(`${s.url}/b?Signature=ghi&AWSAccessKeyId=jkl&signature=kept`, { method: 'get' })()
      ok(signed._tag === 'Right')
      await signed.right.text()
      // sent as 'patch', which Node's server refuses (methods are case-sensitive): what the event says, too
      const patched = await get(`${s.url}/c`, { method: 'patch' })()
      strictEqual(tagOf(patched), 'StatusError')
      const started = events.flatMap((e) => (e._tag === 'AttemptStarted' ? [e.http] : []))
      deepStrictEqual(
        started.map((http) => [http?.method, http?.url]),
        [
          ['GET', `http://REDACTED:REDACTED@${host}/a?X-Amz-Signature=REDACTED&b=1&sig=REDACTED`],
          // the signing parameters are matched case-sensitively, as the conventions ask
          ['GET', `${s.url}/b?Signature=REDACTED&AWSAccessKeyId=REDACTED&signature=kept`],
          // fetch sends the six methods it normalizes in upper case, any other as given
          ['patch', `${s.url}/c`]
        ]
      )
      // in no http record (the errors are the caller's own: an Http error keeps the URL it was given)
      const records = JSON.stringify(httpOf(events))
      for (const secret of ['alice', 's3cret', 'abc', 'def', 'ghi', 'jkl']) ok(!records.includes(secret), secret)
    })

    it('hedgingFetch should tell hedging’s events from source http, each hedge a resend with what it sent', async () => {
      const clock = TestClock.make()
      const s = await serve((_, res, n) => {
        if (n === 2) answer(res, 200) // the first is left hanging
      })
      const events: Array<Event> = []
      const get = Http.hedgingFetch(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(1))), {
        clock,
        onEvent: (e) => void events.push(e)
      })
      const pending = get(`${s.url}/item`)()
      await waitFor(() => s.received.length === 1)
      await clock.advance(100)
      const result = await pending
      ok(result._tag === 'Right')
      await result.right.text()
      await waitFor(() => s.abortedResponses() === 1)
      deepStrictEqual(
        events.map((e) => e.source),
        events.map(() => 'http')
      )
      const port = Number(new URL(s.url).port)
      const sent = { method: 'GET', url: `${s.url}/item`, serverAddress: '127.0.0.1', serverPort: port }
      deepStrictEqual(httpOf(events), [
        ['HedgeLaunched', undefined],
        ['AttemptStarted #1', sent],
        ['HedgeLaunched', undefined],
        ['AttemptStarted #2', sent],
        ['AttemptSucceeded #2', { ...sent, statusCode: 200 }],
        ['HedgeWon', undefined],
        ['HedgeAborted', undefined],
        ['RunStopped', undefined]
      ])
    })

    it('retryingFetch should refuse an onEvent that is not a function, naming it', () => {
      throwsTypeError(
        () => Http.retryingFetch(Schedule.stop, { onEvent: 'log' as never }),
        /^Http\.retryingFetch: options\.onEvent must be a function/
      )
    })
  })

  describe('retryingFetch with a breaker', () => {
    const breakerOn = (clock: TestClock.TestClock, threshold: number): Breaker.Breaker =>
      Breaker.consecutive({ threshold, halfOpenAfter: Schedule.constant(30_000), clock })

    it('should end the run when the circuit opens, then refuse without sending while it is open', async () => {
      const s = await serve((_, res) => answer(res, 503))
      const clock = TestClock.make()
      const breaker = breakerOn(clock, 2)
      const log = logged()
      const get = Http.retryingFetch(threeRetries(100), { clock, breaker, ...log })
      const first = await drive(clock, get(`${s.url}/`)())
      // the second 503 opened the circuit: the run ends at once rather than sleep toward it
      ok(first._tag === 'Left' && first.left._tag === 'StatusError' && first.left.status === 503)
      deepStrictEqual([s.received.length, clock.sleeps, log.done], [2, [100], ['breaker']])
      strictEqual(breaker.state._tag, 'Open')
      const second = await drive(clock, get(`${s.url}/`)())
      ok(second._tag === 'Left' && second.left._tag === 'CircuitOpenError', tagOf(second))
      deepStrictEqual([second.left.request.url, second.left.state._tag], [`${s.url}/`, 'Open'])
      // nothing was sent, an open circuit is not retried, and the run says the breaker ended it (issue 18, defect 11)
      deepStrictEqual([s.received.length, clock.sleeps, log.done], [2, [100], ['breaker', 'breaker']])
    })

    it('should count only transient failures: a 404 leaves the circuit closed', async () => {
      const s = await serve((_, res, n) => answer(res, n === 1 ? 404 : 200))
      const clock = TestClock.make()
      const breaker = breakerOn(clock, 1)
      const get = Http.retryingFetch(threeRetries(100), { clock, breaker })
      strictEqual(tagOf(await drive(clock, get(`${s.url}/`)())), 'StatusError')
      strictEqual(breaker.state._tag, 'Closed')
      strictEqual(tagOf(await drive(clock, get(`${s.url}/`)())), 'Right')
      strictEqual(s.received.length, 2)
    })

    it('should not tell the budget of an open circuit', async () => {
      const s = await serve((_, res) => answer(res, 503))
      const clock = TestClock.make()
      const breaker = breakerOn(clock, 1)
      const failures: Array<number> = []
      const budget: Budget.RetryBudget = {
        onSuccess: () => undefined,
        onFailure: ({ now }) => (failures.push(now), true)
      }
      const get = Http.retryingFetch(threeRetries(100), { clock, breaker, budget })
      await drive(clock, get(`${s.url}/`)())
      await drive(clock, get(`${s.url}/`)())
      deepStrictEqual([s.received.length, failures.length], [1, 1])
    })

    it('should reject a breaker or a rate limiter that is not one (nor a registry of them) when built', () => {
      throwsTypeError(
        () => Http.retryingFetch(Schedule.stop, { breaker: {} as Breaker.Breaker }),
        /^Http\.retryingFetch: options\.breaker must be a Breaker or a Keyed registry of them, received \{\}$/
      )
      throwsTypeError(
        () =>
          Http.retryingFetch(Schedule.stop, {
            rateLimiter: { take: () => true } as unknown as RateLimiter.RateLimiter
          }),
        /^Http\.retryingFetch: options\.rateLimiter must be a RateLimiter or a Keyed registry of them, received /
      )
      throwsTypeError(
        () => Http.retryingFetch(Schedule.stop, { key: 1 as unknown as string }),
        /^Http\.retryingFetch: options\.key must be a string, received 1$/
      )
    })
  })

  describe('retryingFetch keyed by authority', () => {
    const breakersOn = (clock: TestClock.TestClock, onEvent?: (event: Event) => void) =>
      Keyed.make({
        make: (_authority, onEvent) =>
          Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.constant(30_000), clock, onEvent }),
        maxKeys: 100,
        onEvent
      })

    it("should open only the failing host's breaker, and tell each request's events with its authority", async () => {
      const down = await startServer((_, res) => answer(res, 503))
      const up = await startServer((_, res) => answer(res, 200))
      try {
        const clock = TestClock.make()
        const events: Array<Event> = []
        const onEvent = (event: Event): void => void events.push(event)
        const breakers = breakersOn(clock, onEvent)
        const get = Http.retryingFetch(threeRetries(100), { clock, breaker: breakers, onEvent })
        const [a, b] = [new URL(down.url).host, new URL(up.url).host]
        const first = await drive(clock, get(`${down.url}/`)())
        ok(first._tag === 'Left' && first.left._tag === 'StatusError', tagOf(first))
        deepStrictEqual([breakers.get(a).state._tag, down.received.length, clock.sleeps], ['Open', 2, [100]])
        // the open host refuses without sending; the other host goes on
        const refused = await drive(clock, get(`${down.url}/again`)())
        strictEqual(tagOf(refused), 'CircuitOpenError')
        const fine = await drive(clock, get(`${up.url}/`)())
        ok(fine._tag === 'Right')
        await fine.right.text()
        deepStrictEqual([down.received.length, up.received.length], [2, 1])
        deepStrictEqual(breakers.keys(), [a, b])
        deepStrictEqual([breakers.get(a).state._tag, breakers.get(b).state._tag], ['Open', 'Closed'])
        deepStrictEqual(
          events.map((e) => `${e.source} ${e._tag} ${String(e.key)}`),
          [
            `http AttemptStarted ${a}`,
            `http AttemptFailed ${a}`,
            `http RetryScheduled ${a}`,
            `http AttemptStarted ${a}`,
            `breaker BreakerStateChanged ${a}`,
            `http AttemptFailed ${a}`,
            `http GuardRefused ${a}`,
            `http RunStopped ${a}`,
            `http AttemptStarted ${a}`,
            `http AttemptFailed ${a}`,
            `http RunStopped ${a}`,
            `http AttemptStarted ${b}`,
            `http AttemptSucceeded ${b}`,
            `http RunStopped ${b}`
          ]
        )
      } finally {
        await Promise.all([down.close(), up.close()])
      }
    })

    it('should key a request by new URL(input).host: the host in lower case, the default port left out', async () => {
      const seen: Array<string> = []
      const breakers = Keyed.make({
        make: (authority) => (
          seen.push(authority), Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1) })
        ),
        maxKeys: 10
      })
      const get = Http.retryingFetch(Schedule.stop, { breaker: breakers })
      // an aborted signal: the request sends nothing, but its breaker is chosen as it is made
      const signal = AbortSignal.abort('no I/O')
      for (const url of [
        'https://API.Example.com:443/a',
        'https://api.example.com/b',
        'http://api.example.com:80/c',
        'http://api.example.com:8080/d',
        new URL('https://[::1]:443/e'),
        'https://bücher.example/f'
      ])
        strictEqual(tagOf(await get(url, { signal })()), 'AbortError')
      deepStrictEqual(seen, ['api.example.com', 'api.example.com:8080', '[::1]', 'xn--bcher-kva.example'])
      // a URL that does not parse goes through no breaker: it fails before any I/O
      strictEqual(tagOf(await get('not a url')()), 'InvalidRequestError')
      strictEqual(breakers.size, 4)
    })

    it("should make each attempt wait for its host's token, another host's at once, and give a token back on abort", async () => {
      const a = await startServer((_, res) => answer(res, 200))
      const b = await startServer((_, res) => answer(res, 200))
      try {
        const clock = TestClock.make()
        const events: Array<Event> = []
        const limiters = Keyed.make({
          make: (_authority, onEvent) => RateLimiter.gcra({ rate: 1, per: 1_000, burst: 1, clock, onEvent }),
          maxKeys: 100,
          onEvent: (e) => void events.push(e)
        })
        const get = Http.retryingFetch(Schedule.stop, { clock, rateLimiter: limiters })
        const text = async (task: ReturnType<ReturnType<typeof get>>): Promise<string> => {
          const result = await task
          if (result._tag === 'Left') return result.left._tag
          await result.right.text()
          return String(result.right.status)
        }
        const first = text(get(`${a.url}/1`)())
        const second = text(get(`${a.url}/2`)()) // waits for a's next token, 1 s later
        const other = text(get(`${b.url}/1`)()) // b's own token: at once
        deepStrictEqual(await Promise.all([first, other]), ['200', '200'])
        deepStrictEqual([a.received.length, b.received.length, clock.now()], [1, 1, 0])
        await clock.advance(1_000)
        strictEqual(await second, '200')
        deepStrictEqual(clock.sleepsOf('throttle'), [1_000])
        // a wait the caller aborts ends at once, its token given back
        const controller = new AbortController()
        const aborted = text(get(`${a.url}/3`, { signal: controller.signal })())
        await waitFor(() => clock.pending === 1)
        controller.abort('gave up')
        strictEqual(await aborted, 'AbortError')
        await clock.advance(1_000)
        strictEqual(await text(get(`${a.url}/4`)()), '200')
        deepStrictEqual([a.received.length, clock.now()], [3, 2_000])
        const host = new URL(a.url).host
        deepStrictEqual(
          events.map((e) => `${e._tag} ${String(e.key)}`),
          [`RateLimitWaited ${host}`, `RateLimitWaited ${host}`]
        )
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    })

    it('should tell the events with options.key instead of the authority when it is given', async () => {
      const s = await serve((_, res) => answer(res, 200))
      const keys: Array<string | undefined> = []
      const clock = TestClock.make()
      const get = Http.retryingFetch(Schedule.stop, {
        clock,
        breaker: breakersOn(clock),
        key: 'users-api',
        onEvent: (e) => void keys.push(e.key)
      })
      const result = await get(`${s.url}/`)()
      ok(result._tag === 'Right')
      await result.right.text()
      deepStrictEqual(keys, ['users-api', 'users-api', 'users-api'])
      // without a keyed policy nor options.key, the events have no key
      keys.length = 0
      const plain = await Http.retryingFetch(Schedule.stop, { clock, onEvent: (e) => void keys.push(e.key) })(
        `${s.url}/`
      )()
      ok(plain._tag === 'Right')
      await plain.right.text()
      deepStrictEqual(keys, [undefined, undefined, undefined])
    })
  })

  describe('bodies that can be read once (issue 18, defect 2)', () => {
    const bodies = (): Array<[string, () => RequestInit]> => [
      [
        'a Node Readable',
        () => ({ method: 'PUT', body: Readable.from(['new ', 'value']) as never, duplex: 'half' } as RequestInit)
      ],
      [
        'a ReadableStream',
        () => ({ method: 'PUT', body: new Blob(['new value']).stream(), duplex: 'half' } as RequestInit)
      ],
      [
        'an async iterable',
        () =>
          ({
            method: 'PUT',
            body: (async function* () {
              yield new TextEncoder().encode('new value')
            })() as never,
            duplex: 'half'
          } as RequestInit)
      ]
    ]

    it('hedgingFetch should refuse each before any I/O', async () => {
      const s = await serve((_, res) => answer(res, 200))
      const put = Http.hedgingFetch(pipe(Schedule.constant(5), Schedule.intersect(Schedule.recurs(2))))
      for (const [name, init] of bodies()) {
        const result = await put(`${s.url}/item`, init())()
        ok(result._tag === 'Left' && result.left._tag === 'InvalidRequestError', `${name}: ${tagOf(result)}`)
        ok(/can be read once/.test(result.left.message), result.left.message)
      }
      strictEqual(s.received.length, 0)
    })

    it('retryingFetch should send each once, whole, and not retry it', async () => {
      const seen: Array<string> = []
      const s = await serve((req, res) => {
        let text = ''
        req.on('data', (chunk: Buffer) => (text += chunk.toString()))
        req.on('end', () => {
          seen.push(text)
          answer(res, 503)
        })
      })
      const log = logged()
      const put = Http.retryingFetch(threeRetries(1), { retryOn: () => true, ...log })
      for (const [name, init] of bodies()) {
        const result = await put(`${s.url}/item`, init())()
        ok(result._tag === 'Left' && result.left._tag === 'StatusError', `${name}: ${tagOf(result)}`)
        if (result._tag === 'Left') await Http.discardBody(result.left)
      }
      // a body sent twice would arrive drained (an empty PUT applied): each arrived once, whole
      deepStrictEqual(seen, ['new value', 'new value', 'new value'])
      deepStrictEqual(log.done, ['schedule', 'schedule', 'schedule'])
    })
  })

  describe('bad arguments', () => {
    itThrowsRangeErrors([
      // a string is shown quoted: "100" is not the number 100
      ...[['0', 0] as const, ...notDurations, ['"100"', '100' as unknown as number] as const].flatMap(
        ([name, timeout]): ReadonlyArray<RangeErrorCase> => [
          [
            `request with timeout ${name}`,
            () => Http.request('http://127.0.0.1/', {}, { attemptTimeout: timeout }),
            new RegExp(
              `^Http\\.request: options\\.attemptTimeout must be a finite number > 0, received ${escapeRegExp(name)}$`
            )
          ],
          [
            `retryingFetch with timeout ${name}`,
            () => Http.retryingFetch(Schedule.stop, { attemptTimeout: timeout }),
            new RegExp(
              `^Http\\.retryingFetch: options\\.attemptTimeout must be a finite number > 0, received ${escapeRegExp(
                name
              )}$`
            )
          ]
        ]
      ),
      ...notDurations.map(
        ([name, max]): RangeErrorCase => [
          `retryAfter(${name})`,
          () => Http.retryAfter(max),
          /^Http\.retryAfter: max must be a finite number >= 0, received/
        ]
      )
    ])
    itThrowsTypeErrors([
      [
        'retryingFetch with a retryOn that is not a function',
        () => Http.retryingFetch(Schedule.stop, { retryOn: 'yes' as unknown as () => boolean }),
        /^Http\.retryingFetch: options\.retryOn must be a function/
      ],
      [
        'retryingFetch with an onRetry that is not a function',
        () => Http.retryingFetch(Schedule.stop, { onRetry: 1 as unknown as () => void }),
        /^Http\.retryingFetch: options\.onRetry must be a function/
      ],
      [
        'retryingFetch with an onDone that is not a function',
        () => Http.retryingFetch(Schedule.stop, { onDone: 1 as unknown as () => void }),
        /^Http\.retryingFetch: options\.onDone must be a function/
      ]
    ])
  })

  describe('Show', () => {
    it('should describe each error in one line', () => {
      const cause = undefined
      deepStrictEqual(
        [
          Http.Show.show({ _tag: 'NetworkError', request: GET, code: 'ECONNRESET', message: 'read ECONNRESET', cause }),
          Http.Show.show({ _tag: 'NetworkError', request: GET, code: undefined, message: 'other side closed', cause }),
          Http.Show.show({ _tag: 'TimeoutError', request: GET, timeout: 250 }),
          Http.Show.show(statusError(429, { 'Retry-After': '3' })),
          Http.Show.show({ _tag: 'AbortError', request: GET, reason: new Error('bye') }),
          Http.Show.show({ _tag: 'InvalidRequestError', request: GET, message: 'invalid URL: x', cause }),
          Http.Show.show({ _tag: 'RedirectError', request: GET, message: 'redirect count exceeded', cause }),
          Http.Show.show({
            _tag: 'TlsError',
            request: GET,
            code: 'CERT_HAS_EXPIRED',
            message: 'certificate has expired',
            cause
          }),
          Http.Show.show({
            _tag: 'CircuitOpenError',
            request: GET,
            state: { _tag: 'Open', since: 0, halfOpenAt: 30_000 }
          }),
          Http.Show.show({ _tag: 'CircuitOpenError', request: GET, state: { _tag: 'HalfOpen', since: 30_000 } })
        ],
        [
          'network error ECONNRESET: read ECONNRESET',
          'network error: other side closed',
          'timed out after 250 ms',
          '429 (Retry-After: 3)',
          'aborted: bye',
          'invalid request: invalid URL: x',
          'redirect error: redirect count exceeded',
          'TLS certificate error CERT_HAS_EXPIRED: certificate has expired',
          'circuit open: not sent',
          'circuit half-open, probe in flight: not sent'
        ]
      )
    })
  })
})
