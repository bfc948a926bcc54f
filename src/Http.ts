/**
 * HTTP retries done right, on the global `fetch` of Node 18 and later: a `TaskEither` view of `fetch` whose
 * failures are a classified union, the retry condition of go-retryablehttp as a schedule combinator, idempotency
 * rules, `Retry-After` with a cap, a per-attempt timeout driven by the run's `Clock`, and the body of every
 * response that is retried released, so that no socket is held across retries.
 *
 * `retryingFetch` puts it together; `request`, `retryable`, `retryAfter` and `isRetryable` are the parts.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const policy = pipe(
 *   Schedule.exponential(100), //            100, 200, 400, ... ms
 *   Schedule.fullJitter, //                  ... drawn in [0, d)
 *   Http.retryAfter(5_000), //               the server's Retry-After instead, never more than 5 s
 *   Schedule.intersect(Schedule.recurs(3)), // 3 retries, 4 attempts
 *   Schedule.upTo(10_000) //                 last: it sees the Retry-After delays too
 * )
 * const getJson = Http.retryingFetch(policy, { attemptTimeout: 2_000 })
 * assert.strictEqual(typeof getJson, 'function')
 *
 * @since 0.1.0
 */
import * as O from 'fp-ts/Option'
import type { Predicate } from 'fp-ts/Predicate'
import type { Show as ShowT } from 'fp-ts/Show'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Breaker, State as BreakerState } from './Breaker'
import * as Breakers from './Breaker'
import type { RetryBudget } from './Budget'
import * as Budget from './Budget'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import { hedging, type HedgeContext, type Summary } from './Hedging'
import { noop, onAbort } from './internal/abort'
import * as aws from './internal/aws'
import { showValue } from './internal/show'
import { MAX_DELAY } from './internal/validate'
import * as validate from './internal/validate'
import type { HttpAttempt, Observer } from './Event'
import * as Guard from './Guard'
import type { Keyed } from './Keyed'
import { withKey } from './internal/observe'
import type { Random } from './Random'
import type { RateLimiter } from './RateLimiter'
import * as RateLimiters from './RateLimiter'
import * as LiveRandom from './Random'
import type { Hooks } from './Retry'
import { retryingReaderTaskEither } from './Retry'
import * as Schedule from './Schedule'
import * as Timeout from './Timeout'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What an error says about the request that failed: its method (upper case), its URL, and whether it may be
 * retried (see {@link isIdempotent}).
 *
 * @example
 * import type { RequestSummary } from 'fp-ts-retry/Http'
 *
 * const request: RequestSummary = { method: 'GET', url: 'http://127.0.0.1:8080/users/1', idempotent: true }
 *
 * @category model
 * @since 0.1.0
 */
export interface RequestSummary {
  readonly method: string
  readonly url: string
  readonly idempotent: boolean
}

/**
 * The connection failed before a response arrived: refused, reset, closed by the other side, a DNS failure, or
 * one of undici's own timeouts. Retryable.
 *
 * **Details**
 *
 * `code` is the first error code found along the `cause` chain of `fetch`'s `TypeError` (`ECONNRESET`,
 * `ECONNREFUSED`, `UND_ERR_SOCKET`, `ENOTFOUND`, ...), `undefined` if there is none.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.NetworkError = {
 *   _tag: 'NetworkError',
 *   request: { method: 'GET', url: 'http://127.0.0.1:8080/', idempotent: true },
 *   code: 'ECONNRESET',
 *   message: 'read ECONNRESET',
 *   cause: undefined
 * }
 * assert.strictEqual(Http.isRetryable(error), true)
 *
 * @category model
 * @since 0.1.0
 */
export interface NetworkError {
  readonly _tag: 'NetworkError'
  readonly request: RequestSummary
  readonly code: string | undefined
  readonly message: string
  readonly cause: unknown
}

/**
 * The attempt took longer than its `timeout` (ms) to get the response headers, and was aborted. Retryable.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.TimeoutError = {
 *   _tag: 'TimeoutError',
 *   request: { method: 'GET', url: 'http://127.0.0.1:8080/', idempotent: true },
 *   timeout: 2000
 * }
 * assert.strictEqual(Http.isRetryable(error), true)
 *
 * @category model
 * @since 0.1.0
 */
export interface TimeoutError {
  readonly _tag: 'TimeoutError'
  readonly request: RequestSummary
  readonly timeout: number
}

/**
 * The server answered with a status of 400 or more. The `Response` is there to read (its body, its headers).
 *
 * **Details**
 *
 * Retryable for 408, 429, 5xx except 501 and throttles (see {@link isTransient}). When a run retries after it, its
 * body has been released (`bodyUsed` is `true`); the `StatusError` a run ends with keeps its body for you to read
 * or release (see {@link discardBody}).
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.StatusError = {
 *   _tag: 'StatusError',
 *   request: { method: 'GET', url: 'http://127.0.0.1:8080/', idempotent: true },
 *   status: 503,
 *   response: new Response('busy', { status: 503 })
 * }
 * assert.strictEqual(Http.isRetryable(error), true)
 *
 * @category model
 * @since 0.1.0
 */
export interface StatusError {
  readonly _tag: 'StatusError'
  readonly request: RequestSummary
  readonly status: number
  readonly response: Response
}

/**
 * The caller's `AbortSignal` aborted the attempt. Never retried: the caller has given up.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.AbortError = {
 *   _tag: 'AbortError',
 *   request: { method: 'GET', url: 'http://127.0.0.1:8080/', idempotent: true },
 *   reason: new Error('shutting down')
 * }
 * assert.strictEqual(Http.isRetryable(error), false)
 *
 * @category model
 * @since 0.1.0
 */
export interface AbortError {
  readonly _tag: 'AbortError'
  readonly request: RequestSummary
  readonly reason: unknown
}

/**
 * The request could not be made as written: an invalid URL, a scheme other than `http:` or `https:`, a blocked
 * port, an invalid header, a body on a GET, a body stream already read. Never retried: it would fail the same way.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const result = await Http.request('ftp://127.0.0.1/file')()
 *   assert.ok(result._tag === 'Left' && result.left._tag === 'InvalidRequestError')
 * }
 * main()
 *
 * @category model
 * @since 0.1.0
 */
export interface InvalidRequestError {
  readonly _tag: 'InvalidRequestError'
  readonly request: RequestSummary
  readonly message: string
  readonly cause: unknown
}

/**
 * Redirects went wrong: more than 20 of them (`fetch`'s limit), a redirect with `redirect: 'error'`, or a
 * redirect to a scheme other than HTTP(S). Never retried.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.RedirectError = {
 *   _tag: 'RedirectError',
 *   request: { method: 'GET', url: 'http://127.0.0.1:8080/loop', idempotent: true },
 *   message: 'redirect count exceeded',
 *   cause: undefined
 * }
 * assert.strictEqual(Http.isRetryable(error), false)
 *
 * @category model
 * @since 0.1.0
 */
export interface RedirectError {
  readonly _tag: 'RedirectError'
  readonly request: RequestSummary
  readonly message: string
  readonly cause: unknown
}

/**
 * The server's TLS certificate was refused: self-signed, expired, not yet valid, for another host name, from an
 * unknown authority. Never retried: the certificate will not change in a few seconds.
 *
 * **Details**
 *
 * `code` is Node's (OpenSSL's) verification code, such as `DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED` or
 * `ERR_TLS_CERT_ALTNAME_INVALID`.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.TlsError = {
 *   _tag: 'TlsError',
 *   request: { method: 'GET', url: 'https://127.0.0.1:8443/', idempotent: true },
 *   code: 'CERT_HAS_EXPIRED',
 *   message: 'certificate has expired',
 *   cause: undefined
 * }
 * assert.strictEqual(Http.isRetryable(error), false)
 *
 * @category model
 * @since 0.1.0
 */
export interface TlsError {
  readonly _tag: 'TlsError'
  readonly request: RequestSummary
  readonly code: string
  readonly message: string
  readonly cause: unknown
}

/**
 * The circuit breaker given to {@link retryingFetch} (`options.breaker`) refused the attempt: no request was
 * sent. `state` is the breaker's state then. Never retried, and not told to a budget: it says nothing new about
 * the server's health.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const error: Http.CircuitOpenError = {
 *   _tag: 'CircuitOpenError',
 *   request: { method: 'GET', url: 'http://127.0.0.1:8080/users/1', idempotent: true },
 *   state: { _tag: 'Open', since: 0, halfOpenAt: 30_000 }
 * }
 * assert.strictEqual(Http.isRetryable(error), false)
 *
 * @category model
 * @since 1.0.0
 */
export interface CircuitOpenError {
  readonly _tag: 'CircuitOpenError'
  readonly request: RequestSummary
  readonly state: BreakerState
}

/**
 * Every way an HTTP attempt can fail, classified so that a schedule can tell a transient failure from one that
 * would fail again.
 *
 * **Details**
 *
 * | `_tag` | what happened | retried by default |
 * | --- | --- | --- |
 * | `NetworkError` | refused, reset, closed, DNS, undici timeouts | yes |
 * | `TimeoutError` | the attempt's own `timeout` | yes |
 * | `StatusError` | status 408, 429, 500, 502, 503, 504, ... (5xx but 501) | yes |
 * | `StatusError` | a throttle (a 400 `x-amzn-errortype: ThrottlingException`, ...: {@link isThrottle}) | yes |
 * | `StatusError` | any other status >= 400 (400, 401, 404, 501, ...) | no |
 * | `AbortError` | the caller's signal | no |
 * | `InvalidRequestError` | invalid URL or scheme, bad header, blocked port | no |
 * | `RedirectError` | too many redirects, `redirect: 'error'` | no |
 * | `TlsError` | certificate refused | no |
 * | `CircuitOpenError` | `retryingFetch`'s breaker refused the attempt: nothing sent | no |
 *
 * "Retried by default" also needs an idempotent request: see {@link isRetryable}.
 *
 * @example
 * import type { HttpError } from 'fp-ts-retry/Http'
 *
 * const describe = (e: HttpError): string => (e._tag === 'StatusError' ? `HTTP ${e.status}` : e._tag)
 *
 * @category model
 * @since 0.1.0
 */
export type HttpError =
  | NetworkError
  | TimeoutError
  | StatusError
  | AbortError
  | InvalidRequestError
  | RedirectError
  | TlsError
  | CircuitOpenError

/**
 * Options of {@link request}.
 *
 * **Details**
 *
 * - `attemptTimeout`: the longest an attempt may wait for the response headers, in ms (finite, > 0); none by
 *   default (the runner's option of the same name, whose failure here is a `TimeoutError`). It sleeps on `clock`, so a `TestClock` drives it. Reading the body is not covered: the body is yours.
 * - `clock` (default `Clock.live`): the clock of the timeout. Give the same clock as the runner's.
 * - `idempotent`: whether this request may be retried, overriding the method rule of {@link isIdempotent}
 *   (`true` opts a POST in; `false` opts a GET out).
 *
 * @example
 * import type { RequestOptions } from 'fp-ts-retry/Http'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 *
 * const options: RequestOptions = { attemptTimeout: 2_000, clock: TestClock.make(), idempotent: true }
 *
 * @category model
 * @since 0.1.0
 */
export interface RequestOptions {
  readonly attemptTimeout?: number | undefined
  readonly clock?: Clock | undefined
  readonly idempotent?: boolean | undefined
}

/**
 * Options of {@link retryingFetch}: those of {@link request}, the runner's `random`, `budget` and hooks, and the
 * retry condition.
 *
 * **Details**
 *
 * - `retryOn` (default {@link isRetryable}) decides which errors may be retried; the schedule decides when. Extend
 *   the default rather than replace it: `(e) => Http.isRetryable(e) || (e._tag === 'StatusError' && e.status === 409)`.
 * - `budget`: a shared `RetryBudget`. As in gRPC's retry throttling, only transient failures ({@link isTransient})
 *   count as failures: a 404 or an abort says nothing about the server's health, and is not recorded.
 * - `clock` serves both the runner's sleeps and the attempts' timeouts.
 * - `breaker`: a `Breaker.Breaker`, asked before each attempt (a refused attempt sends nothing and is a
 *   {@link CircuitOpenError}) and before each sleep (the run ends at once, reason `'breaker'`, rather than sleep
 *   toward a circuit that will still be open). As with the budget, only transient failures count as failures.
 * - `rateLimiter`: a `RateLimiter.RateLimiter`; each attempt waits for its token on `clock` before it is sent (a
 *   `'throttle'` sleep: a `TestClock` lists it), after the breaker has let it through, so that a refused attempt
 *   spends no token. `init.signal` ends the wait (an `AbortError`; the token is given back).
 * - `breaker` and `rateLimiter` may each be a `Keyed.Keyed` registry instead: a request then goes through the
 *   policy of its **authority**, `new URL(input).host` (the host name in lower case, and the port unless it is
 *   the scheme's default: `https://API.example.com:443/a` and `https://api.example.com/b` share one breaker,
 *   `http://api.example.com:8080` has its own), got from the registry once per request. One failing host then
 *   opens only its own breaker. A URL that does not parse goes through none (it fails before any I/O).
 * - `key` (a string, see `Retry.Hooks`): the key on the request's events. By default, when `breaker` or
 *   `rateLimiter` is keyed, the request's authority; else none.
 *
 * @example
 * import type { RetryingFetchOptions } from 'fp-ts-retry/Http'
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as Keyed from 'fp-ts-retry/Keyed'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * const options: RetryingFetchOptions = {
 *   attemptTimeout: 2_000,
 *   budget: Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 }),
 *   // a breaker per host
 *   breaker: Keyed.make({
 *     make: () => Breaker.consecutive({ threshold: 5, halfOpenAfter: Schedule.constant(30_000) }),
 *     maxKeys: 1_000
 *   })
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface RetryingFetchOptions extends RequestOptions, Hooks<HttpError, HttpError, Response> {
  readonly random?: Random | undefined
  readonly budget?: RetryBudget | undefined
  readonly breaker?: Breaker | Keyed<Breaker> | undefined
  readonly rateLimiter?: RateLimiter | Keyed<RateLimiter> | undefined
  readonly retryOn?: Predicate<HttpError> | undefined
}

/**
 * Options of {@link hedgingFetch}: those of {@link request}, and those of `hedging` that make sense for HTTP.
 *
 * **Details**
 *
 * - `isFatal` (default: not {@link isTransient}) ends the call at once: a 404 or a 400 from one replica will not be
 *   a 200 from another, so the other attempts are aborted and that error returned.
 * - `budget`: told of every attempt as gRFC A6 counts them (transient failures as failures), and asked before each
 *   hedge (`budget.allows`).
 * - `maxConcurrent`, `random`, `onDone`: as in `Hedging.HedgingOptions`. `clock` serves the launches and the
 *   timeouts.
 *
 * @example
 * import type { HedgingFetchOptions } from 'fp-ts-retry/Http'
 * import * as Budget from 'fp-ts-retry/Budget'
 *
 * const options: HedgingFetchOptions = { attemptTimeout: 2_000, maxConcurrent: 2, budget: Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 }) }
 *
 * @category model
 * @since 1.0.0
 */
export interface HedgingFetchOptions extends RequestOptions {
  readonly random?: Random | undefined
  readonly budget?: RetryBudget | undefined
  readonly maxConcurrent?: number | undefined
  readonly isFatal?: Predicate<HttpError> | undefined
  readonly onDone?: ((summary: Summary) => void) | undefined
  readonly onEvent?: Observer | undefined
}

// -------------------------------------------------------------------------------------
// classification
// -------------------------------------------------------------------------------------

/** RFC 9110 §9.2.2 idempotent methods, and TRACE (safe). */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])

/**
 * Node's certificate verification codes (the `X509_V_ERR_*` of OpenSSL, without the prefix) and its host name
 * check: a certificate that was refused once will be refused again.
 */
const TLS_CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID'
])

/** Codes of a request that is wrong as written, from Node or undici. */
const INVALID_REQUEST_CODES: ReadonlySet<string> = new Set([
  'ERR_INVALID_URL',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_INVALID_CHAR',
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED'
])

/**
 * The reasons undici gives, as plain messages without a code, for the network errors of the Fetch standard that
 * are not transient (lib/web/fetch/index.js). Any other reason is taken as transient, as go-retryablehttp does.
 */
const REDIRECT_REASONS: ReadonlySet<string> = new Set([
  'redirect count exceeded',
  'unexpected redirect',
  'URL scheme must be a HTTP(S) scheme'
])
const INVALID_REQUEST_REASONS: ReadonlySet<string> = new Set([
  'bad port',
  'blocked',
  'local URLs only',
  'unknown scheme',
  'invalid URL',
  'not implemented... yet...',
  'proxy authentication required',
  'cross origin not allowed for request mode "cors"',
  'URL cannot contain credentials for request mode "cors"'
])

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null

const messageOf = (u: unknown): string => (isObject(u) && typeof u.message === 'string' ? u.message : String(u))

/** The first string `code` along the `cause` chain (and the first of an `AggregateError`), at most 8 deep. */
const findCode = (error: unknown): { readonly code: string; readonly message: string } | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && isObject(current); depth++) {
    if (typeof current.code === 'string') return { code: current.code, message: messageOf(current) }
    const errors = current.errors
    current = current.cause ?? (Array.isArray(errors) ? errors[0] : undefined)
  }
  return undefined
}

/** Classifies what `fetch` rejected with (when it was not an abort). */
const classify = (error: unknown, request: RequestSummary): HttpError => {
  const found = findCode(error)
  if (found !== undefined) {
    if (TLS_CERTIFICATE_CODES.has(found.code)) {
      return { _tag: 'TlsError', request, code: found.code, message: found.message, cause: error }
    }
    if (INVALID_REQUEST_CODES.has(found.code)) {
      return { _tag: 'InvalidRequestError', request, message: messageOf(error), cause: error }
    }
    return { _tag: 'NetworkError', request, code: found.code, message: found.message, cause: error }
  }
  const cause = isObject(error) ? error.cause : undefined
  if (cause !== undefined) {
    const reason = messageOf(cause)
    if (REDIRECT_REASONS.has(reason)) return { _tag: 'RedirectError', request, message: reason, cause: error }
    if (INVALID_REQUEST_REASONS.has(reason))
      return { _tag: 'InvalidRequestError', request, message: reason, cause: error }
    return { _tag: 'NetworkError', request, code: undefined, message: reason, cause: error }
  }
  // A TypeError without a cause comes from building the Request (a bad header, a body on a GET, a used body).
  // Compared by name: fetch's TypeError may come from another realm (a vm context, a test runner).
  if (isObject(error) && error.name === 'TypeError')
    return { _tag: 'InvalidRequestError', request, message: messageOf(error), cause: error }
  return { _tag: 'NetworkError', request, code: undefined, message: messageOf(error), cause: error }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Whether a request may be retried by default: its method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE, TRACE)
 * or it carries an `Idempotency-Key` header.
 *
 * **Details**
 *
 * A POST or PATCH repeated after a timeout may be applied twice. Send an `Idempotency-Key` (the server then
 * applies it once), or opt in with `RequestOptions.idempotent` when you know the endpoint is safe to repeat.
 * The method is compared in upper case, as `fetch` normalizes it.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(Http.isIdempotent('get'), true)
 * assert.strictEqual(Http.isIdempotent('POST'), false)
 * assert.strictEqual(Http.isIdempotent('POST', { 'Idempotency-Key': '8e03978e' }), true)
 *
 * @category utils
 * @since 0.1.0
 */
export const isIdempotent = (method: string, headers?: RequestInit['headers']): boolean =>
  IDEMPOTENT_METHODS.has(method.toUpperCase()) ||
  (headers !== undefined && headers !== null && new Headers(headers).has('idempotency-key'))

/**
 * Whether an error is worth retrying, whatever the method: a network error, a timeout, a status of 408, 429 or
 * 5xx except 501 (go-retryablehttp's `DefaultRetryPolicy`), or a throttle of any status (see {@link isThrottle}).
 *
 * **Details**
 *
 * - AWS answers many throttles with a 400 whose `x-amzn-errortype` names the code (`ThrottlingException`,
 *   `RequestLimitExceeded`, ...): the request is right, the server asks for patience, as with a 429.
 * - Never transient: another 4xx (the request is wrong, retrying repeats it), 501 (the server does not implement
 *   it), an abort, an invalid request, a redirect error, a TLS certificate error or an open circuit.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const request = { method: 'POST', url: 'http://127.0.0.1:8080/orders', idempotent: false }
 * const status = (n: number, headers: Record<string, string> = {}): Http.HttpError => ({ _tag: 'StatusError', request, status: n, response: new Response(null, { status: n, headers }) })
 * assert.deepStrictEqual([408, 429, 500, 501, 503, 400, 404].map((n) => Http.isTransient(status(n))), [true, true, true, false, true, false, false])
 * assert.strictEqual(Http.isTransient(status(400, { 'x-amzn-errortype': 'ThrottlingException' })), true) // AWS's throttle
 *
 * @category utils
 * @since 0.1.0
 */
export const isTransient = (error: HttpError): boolean => {
  switch (error._tag) {
    case 'NetworkError':
    case 'TimeoutError':
      return true
    case 'StatusError':
      return (
        error.status === 408 ||
        error.status === 429 ||
        (error.status >= 500 && error.status <= 599 && error.status !== 501) ||
        aws.isThrottle(error)
      )
    default:
      return false
  }
}

/**
 * The default retry condition: the request is idempotent (see {@link isIdempotent}) and the error is transient
 * (see {@link isTransient}).
 *
 * **Details**
 *
 * Extend it rather than rewrite it, so that the idempotency rule stays:
 * `(e) => Http.isRetryable(e) || (e._tag === 'StatusError' && e.status === 409 && e.request.idempotent)`.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const timeout = (method: string, idempotent: boolean): Http.HttpError => ({ _tag: 'TimeoutError', request: { method, url: 'http://127.0.0.1/', idempotent }, timeout: 1000 })
 * assert.strictEqual(Http.isRetryable(timeout('GET', true)), true)
 * assert.strictEqual(Http.isRetryable(timeout('POST', false)), false) // may have been applied: not retried
 *
 * @category utils
 * @since 0.1.0
 */
export const isRetryable: Predicate<HttpError> = (error) => error.request.idempotent && isTransient(error)

/**
 * Whether an error is a throttle, as the AWS SDKs tell one: a `StatusError` of status 429, or one whose
 * `x-amzn-errortype` header names a throttling code (`ThrottlingException`, `TooManyRequestsException`, `SlowDown`,
 * `RequestLimitExceeded`, ...: the code before any `:`, after any `#` namespace).
 *
 * **Details**
 *
 * - What `Schedule.awsRetries21` and `Budget.awsRetries21` need to tell: a throttle backs off from 1 s and costs 5
 *   tokens, any other error from 50 ms for 14.
 * - Every throttle is transient ({@link isTransient}), a 400 `ThrottlingException` too: {@link isRetryable} retries
 *   it when the request is idempotent, and a budget or breaker counts it as a failure.
 * - The body is not read: a throttle told only there (the query protocols' `<Code>Throttling</Code>` of a 400,
 *   without the header) is a plain 400. Read the body and retry on your own predicate (`retryOn`) for those.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const request = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }
 * const status = (n: number, headers: Record<string, string> = {}): Http.HttpError => ({ _tag: 'StatusError', request, status: n, response: new Response(null, { status: n, headers }) })
 * assert.strictEqual(Http.isThrottle(status(429)), true)
 * assert.strictEqual(Http.isThrottle(status(400, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/' })), true)
 * assert.strictEqual(Http.isThrottle(status(503)), false)
 *
 * @category utils
 * @since 1.0.0
 */
export const isThrottle: Predicate<HttpError> = (error) => error._tag === 'StatusError' && aws.isThrottle(error)

const WEEKDAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const LONG_WEEKDAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const MONTH = `(${MONTHS.join('|')})`
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})'
// The three HTTP-date formats of RFC 9110 §5.6.7: IMF-fixdate, then the obsolete RFC 850 and asctime formats.
const IMF_FIXDATE = new RegExp(`^${WEEKDAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`)
const RFC_850 = new RegExp(`^${LONG_WEEKDAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`)
const ASCTIME = new RegExp(`^${WEEKDAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`)

/** Epoch ms of a date, or undefined if a field is out of range (Feb 30, 25:00). A leap second 60 is allowed. */
const utc = (year: number, month: string, day: number, h: number, m: number, s: number): number | undefined => {
  const monthIndex = MONTHS.indexOf(month)
  if (day < 1 || h > 23 || m > 59 || s > 60) return undefined
  const t = Date.UTC(year, monthIndex, day, h, m, s)
  return new Date(Date.UTC(year, monthIndex, day)).getUTCDate() === day ? t : undefined
}

const parseHttpDate = (value: string, now: number): number | undefined => {
  let match = IMF_FIXDATE.exec(value)
  if (match !== null) return utc(+match[3], match[2], +match[1], +match[4], +match[5], +match[6])
  match = ASCTIME.exec(value)
  if (match !== null) return utc(+match[6], match[1], +match[2].trim(), +match[3], +match[4], +match[5])
  match = RFC_850.exec(value)
  if (match === null) return undefined
  // RFC 9110: a two-digit year more than 50 years in the future is the most recent past year with those digits.
  const thisYear = new Date(now).getUTCFullYear()
  let year = thisYear - (thisYear % 100) + +match[3]
  if (year > thisYear + 50) year -= 100
  return utc(year, match[2], +match[1], +match[4], +match[5], +match[6])
}

/**
 * The delay a `Retry-After` header value asks for, in ms, read against `now` (epoch ms): `some(ms)`, or `none`
 * when the value is neither delta-seconds nor an HTTP-date.
 *
 * **Details**
 *
 * - Delta-seconds: `"2"` is `some(2000)`. Only whole numbers of seconds are valid (RFC 9110 §10.2.3).
 * - An HTTP-date in any of the three formats of RFC 9110 (`Wed, 21 Oct 2015 07:28:00 GMT`, the obsolete RFC 850
 *   and asctime forms) is read against `now`; a date in the past is `some(0)`.
 * - The result is not capped here: {@link retryAfter} clamps it.
 * - `value` must be a string (a `TypeError` otherwise), and `now` a finite number (a `RangeError` otherwise): a
 *   date's delay is counted from it.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as O from 'fp-ts/Option'
 * import * as assert from 'assert'
 *
 * const now = Date.UTC(2015, 9, 21, 7, 28, 0)
 * assert.deepStrictEqual(Http.parseRetryAfter('2', now), O.some(2000))
 * assert.deepStrictEqual(Http.parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now), O.some(30_000))
 * assert.deepStrictEqual(Http.parseRetryAfter('Wed, 21 Oct 2015 07:00:00 GMT', now), O.some(0))
 * assert.deepStrictEqual(Http.parseRetryAfter('soon', now), O.none)
 *
 * @category utils
 * @since 0.1.0
 */
export const parseRetryAfter = (value: string, now: number): O.Option<number> => {
  if (typeof value !== 'string') {
    throw new TypeError(`Http.parseRetryAfter: value must be a string, received ${showValue(value)}`)
  }
  validate.finite('Http.parseRetryAfter', 'now', now)
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return O.some(Math.min(Number(trimmed) * 1000, MAX_DELAY))
  const date = parseHttpDate(trimmed, now)
  return date === undefined ? O.none : O.some(Math.max(0, Math.min(date - now, MAX_DELAY)))
}

/**
 * Releases the body of the response an error carries, if any, so that its connection is not held: for the
 * `StatusError` a run ends with, when you do not read its body.
 *
 * **Details**
 *
 * Cancels the body stream (undici then closes the connection if the body was still arriving). Resolves once
 * done; never rejects. {@link retryingFetch} does this itself for every response it retries.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const response = new Response('busy', { status: 503 })
 *   await Http.discardBody({ _tag: 'StatusError', request: { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }, status: 503, response })
 *   assert.strictEqual(response.bodyUsed, true)
 * }
 * main()
 *
 * @category utils
 * @since 0.1.0
 */
export const discardBody = async (error: HttpError): Promise<void> => {
  if (error._tag !== 'StatusError' || error.response.bodyUsed) return
  try {
    await error.response.body?.cancel()
  } catch {
    // A body that errored or is locked by a reader is not ours to release.
  }
}

// -------------------------------------------------------------------------------------
// instances
// -------------------------------------------------------------------------------------

/**
 * A one-line description of an error, for logs: `503 Service Unavailable (Retry-After: 2)`,
 * `network error ECONNRESET: read ECONNRESET`, `timed out after 2000 ms`, ...
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as assert from 'assert'
 *
 * const request = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }
 * const response = new Response(null, { status: 503, statusText: 'Service Unavailable', headers: { 'Retry-After': '2' } })
 * assert.strictEqual(Http.Show.show({ _tag: 'StatusError', request, status: 503, response }), '503 Service Unavailable (Retry-After: 2)')
 * assert.strictEqual(Http.Show.show({ _tag: 'TimeoutError', request, timeout: 2000 }), 'timed out after 2000 ms')
 *
 * @category instances
 * @since 0.1.0
 */
export const Show: ShowT<HttpError> = {
  show: (error) => {
    switch (error._tag) {
      case 'NetworkError':
        return `network error${error.code === undefined ? '' : ` ${error.code}`}: ${error.message}`
      case 'TimeoutError':
        return `timed out after ${error.timeout} ms`
      case 'StatusError': {
        const retryAfterValue = error.response.headers.get('retry-after')
        const text = error.response.statusText === '' ? '' : ` ${error.response.statusText}`
        return `${error.status}${text}${retryAfterValue === null ? '' : ` (Retry-After: ${retryAfterValue})`}`
      }
      case 'AbortError':
        return `aborted: ${messageOf(error.reason)}`
      case 'InvalidRequestError':
        return `invalid request: ${error.message}`
      case 'RedirectError':
        return `redirect error: ${error.message}`
      case 'TlsError':
        return `TLS certificate error ${error.code}: ${error.message}`
      case 'CircuitOpenError':
        return `circuit ${error.state._tag === 'Open' ? 'open' : 'half-open, probe in flight'}: not sent`
    }
  }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Retries only what {@link isRetryable} allows: idempotent requests that failed transiently.
 *
 * **Details**
 *
 * `Schedule.whileInput(Http.isRetryable)`: stops on a 4xx (but 408, 429 and throttles), a 501, an abort, an invalid
 * request, a redirect or TLS error, and on any failure of a POST or PATCH without an `Idempotency-Key`. For another
 * condition, use `Schedule.whileInput` with your own predicate. {@link retryingFetch} applies its `retryOn`
 * (by default this condition) itself.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Http from 'fp-ts-retry/Http'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const request = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }
 * const status = (n: number): Http.HttpError => ({ _tag: 'StatusError', request, status: n, response: new Response(null, { status: n }) })
 * const policy = pipe(Schedule.constant(100), Http.retryable, Schedule.intersect(Schedule.recurs(2)))
 * assert.deepStrictEqual(Driver.delays(policy, { input: status(503) }), [100, 100])
 * assert.deepStrictEqual(Driver.delays(policy, { input: status(404) }), [])
 *
 * @category combinators
 * @since 0.1.0
 */
export const retryable: <In>(self: Schedule.Schedule<In>) => Schedule.Schedule<In & HttpError> = Schedule.whileInput(
  isRetryable,
  { description: 'Http.isRetryable' }
)

/**
 * Waits as the server's `Retry-After` asks, never more than `max` ms and never less than the schedule says: after a
 * `StatusError` carrying the header, the delay is `max(schedule's delay, min(server's delay, max))`.
 *
 * **Details**
 *
 * - `Schedule.withHint` with the header as the hint: the backoff is a floor, so `Retry-After: 0` does not collapse
 *   a 3 s backoff to 0.
 * - Delta-seconds and HTTP-dates are both read (see {@link parseRetryAfter}); a date is read against the run's
 *   clock, so a `TestClock` drives it. An unreadable value is ignored.
 * - The clamp is not optional: go-retryablehttp honours the header uncapped (its issues 247 and 295), and a
 *   server (or a proxy) answering `Retry-After: 86400` would park the caller for a day.
 * - The wrapped schedule is still stepped, so its counts and its stops hold: `recurs(3)` still ends the run.
 * - Put it **before** `Schedule.upTo` / `Schedule.maxCumulativeDelay` in a `pipe`, so that the server's delay
 *   counts toward the time limit like any other: applied to a schedule that holds a time limit
 *   (`Schedule.timeLimits`), it throws a `TypeError`. Put jitter before it too, or it jitters the server's delay.
 * - The schedule's input must admit an {@link HttpError}: a schedule of another error type is a type error here.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Http from 'fp-ts-retry/Http'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const request = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }
 * const busy = (retryAfter: string): Http.HttpError => ({
 *   _tag: 'StatusError', request, status: 503, response: new Response(null, { status: 503, headers: { 'Retry-After': retryAfter } })
 * })
 * const policy = pipe(Schedule.exponential(100), Http.retryAfter(5_000), Schedule.intersect(Schedule.recurs(3)))
 * assert.deepStrictEqual(Driver.delays(policy, { input: busy('2') }), [2000, 2000, 2000])
 * assert.deepStrictEqual(Driver.delays(policy, { input: busy('3600') }), [5000, 5000, 5000]) // clamped
 * assert.deepStrictEqual(Driver.delays(policy, { input: busy('0') }), [100, 200, 400]) // the backoff is a floor
 * // the order that would let upTo be overslept is refused
 * assert.throws(() => pipe(Schedule.exponential(100), Schedule.upTo(10_000), Http.retryAfter(5_000)), TypeError)
 *
 * @category combinators
 * @since 0.1.0
 */
export const retryAfter = (
  max: number
): (<In>(self: AcceptsHttpError<In, 'Http.retryAfter'>) => Schedule.Schedule<In & HttpError>) => {
  validate.duration('Http.retryAfter', 'max', max)
  return headerHint(
    'Http.retryAfter',
    Schedule.withHint(
      (input: HttpError, now) => {
        if (input?._tag !== 'StatusError') return undefined
        const value = input.response.headers.get('retry-after')
        return value === null ? undefined : O.toUndefined(parseRetryAfter(value, now))
      },
      { max, readsTime: true }
    )
  )
}

/** A `Schedule.withHint` read from a response header, whose refusals name the combinator that made it (`where`). */
const headerHint =
  <Where extends string>(
    where: Where,
    hinted: <In>(self: Schedule.Schedule<In>) => Schedule.Schedule<In & HttpError>
  ): (<In>(self: AcceptsHttpError<In, Where>) => Schedule.Schedule<In & HttpError>) =>
  <In>(self: AcceptsHttpError<In, Where>) => {
    try {
      return hinted(self as Schedule.Schedule<In>)
    } catch (e) {
      throw e instanceof TypeError
        ? new TypeError(e.message.replace('Schedule.withHint', where).replace('put withHint', `put ${where}`))
        : e
    }
  }

/**
 * Waits as the server's `x-amz-retry-after` asks, as the AWS SDKs' retries 2.1 do: after a `StatusError` carrying
 * the header, the delay is the header's, clamped to `[delay, delay + 5 s]`, where `delay` is the schedule's own.
 *
 * **Details**
 *
 * - The header is a whole number of milliseconds (`"1500"`); anything else is ignored, and the schedule's delay
 *   stands. `Retry-After` is not read: for it, use {@link retryAfter}.
 * - The floor is the backoff the schedule computed, jitter included: put it **after** the jitter
 *   (`Schedule.awsRetries21` ends with one). The ceiling is 5 s past that delay, whatever the backoff's cap: a
 *   server asking for a day waits at most 5 s more than the backoff. It is `Schedule.withHint` with
 *   `maxAbove: 5_000`.
 * - The wrapped schedule is still stepped, so its counts and its stops hold. Put it before `Schedule.upTo` /
 *   `Schedule.maxCumulativeDelay`: applied to a schedule that holds a time limit, it throws a `TypeError`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Http from 'fp-ts-retry/Http'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const request = { method: 'GET', url: 'http://127.0.0.1/', idempotent: true }
 * const busy = (ms: string): Http.HttpError => ({
 *   _tag: 'StatusError', request, status: 503, response: new Response(null, { status: 503, headers: { 'x-amz-retry-after': ms } })
 * })
 * // the SDKs' defaults: 3 attempts
 * const policy = pipe(Schedule.awsRetries21(Http.isThrottle), Http.amzRetryAfter, Schedule.intersect(Schedule.recurs(2)))
 * const half = { random: Random.fixed(0.5) } // the backoff draws 25, then 50 ms
 * assert.deepStrictEqual(Driver.delays(policy, { ...half, input: busy('1500') }), [1500, 1500])
 * assert.deepStrictEqual(Driver.delays(policy, { ...half, input: busy('60000') }), [5025, 5050]) // 5 s past the backoff
 * assert.deepStrictEqual(Driver.delays(policy, { ...half, input: busy('0') }), [25, 50]) // the backoff is a floor
 *
 * @category combinators
 * @since 1.0.0
 */
export const amzRetryAfter: <In>(
  self: AcceptsHttpError<In, 'Http.amzRetryAfter'>
) => Schedule.Schedule<In & HttpError> = headerHint(
  'Http.amzRetryAfter',
  Schedule.withHint(
    (input: HttpError) => {
      if (input?._tag !== 'StatusError') return undefined
      const value = input.response.headers.get('x-amz-retry-after')?.trim()
      return value === undefined || !/^\d+$/.test(value) ? undefined : Math.min(Number(value), MAX_DELAY)
    },
    { max: MAX_DELAY, maxAbove: aws.RETRY_AFTER_ABOVE }
  )
)

/**
 * A schedule whose input admits an {@link HttpError}, or, when it cannot (`In & HttpError` is `never`), a type
 * that says so where the combinator is applied, instead of a `Schedule<never>` that fails far away.
 *
 * @example
 * import type { AcceptsHttpError } from 'fp-ts-retry/Http'
 * import type { Schedule } from 'fp-ts-retry/Schedule'
 *
 * type Ok = AcceptsHttpError<unknown, 'Http.retryAfter'> // Schedule<unknown>
 * const ok: Ok = null as unknown as Schedule<unknown>
 *
 * @category model
 * @since 1.0.0
 */
export type AcceptsHttpError<In, Where extends string> = unknown extends In
  ? Schedule.Schedule<In>
  : // Only the object members of In: TypeScript keeps \`string & HttpError\` (a branded string), it is not never.
  [Extract<In, object> & HttpError] extends [never]
  ? { readonly error: `${Where} needs a schedule whose input can be an HttpError`; readonly input: In }
  : Schedule.Schedule<In>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const positive = validate.positive

const validateRequestOptions = (where: string, options: RequestOptions): void => {
  validate.object(where, 'options', options)
  validate.services(where, 'options', { clock: options.clock })
  if (options.attemptTimeout !== undefined) positive(where, 'options.attemptTimeout', options.attemptTimeout)
  if (options.idempotent !== undefined && typeof options.idempotent !== 'boolean') {
    throw new TypeError(`${where}: options.idempotent must be a boolean, received ${String(options.idempotent)}`)
  }
}

const summarize = (input: string | URL, init: RequestInit, options: RequestOptions): RequestSummary => {
  const method = (init.method ?? 'GET').toUpperCase()
  const url = String(input)
  let idempotent = options.idempotent
  if (idempotent === undefined) {
    try {
      idempotent = isIdempotent(method, init.headers)
    } catch {
      idempotent = false // invalid headers: the attempt fails as an InvalidRequestError anyway
    }
  }
  return { method, url, idempotent }
}

const checkUrl = (request: RequestSummary): InvalidRequestError | undefined => {
  let url: URL
  try {
    url = new URL(request.url)
  } catch (cause) {
    return { _tag: 'InvalidRequestError', request, message: `invalid URL: ${request.url}`, cause }
  }
  return url.protocol === 'http:' || url.protocol === 'https:'
    ? undefined
    : { _tag: 'InvalidRequestError', request, message: `unsupported scheme ${url.protocol}`, cause: undefined }
}

/** Runs one attempt; the caller's `signal` and the timeout both abort it, and no listener outlives it. */
const attempt = async (
  input: string | URL,
  init: RequestInit,
  request: RequestSummary,
  timeout: number | undefined,
  clock: Clock
): Promise<
  { readonly _tag: 'Left'; readonly left: HttpError } | { readonly _tag: 'Right'; readonly right: Response }
> => {
  const invalid = checkUrl(request)
  if (invalid !== undefined) return { _tag: 'Left', left: invalid }
  const signal = init.signal ?? undefined
  if (signal?.aborted) return { _tag: 'Left', left: { _tag: 'AbortError', request, reason: signal.reason } }
  const once = fetchOn(input, init, request, signal)
  // One timeout in the library (Timeout): it aborts the attempt's signal and answers the TimeoutError.
  if (timeout !== undefined) {
    const timedOut = (): HttpError => ({ _tag: 'TimeoutError', request, timeout })
    return Timeout.timeoutSignalled(timeout, timedOut, { clock })(({ signal: own }) => once(own))({ signal })()
  }
  // A composition by hand rather than AbortSignal.any: on Node 20, AbortSignal.any keeps every composed signal
  // alive for as long as a long-lived caller signal lives (nodejs/node#55351). One listener per signal whatever
  // the number of attempts sharing it (internal/abort); it goes at the end.
  const controller = new AbortController()
  const unlink = signal === undefined ? noop : onAbort(signal, () => controller.abort(signal.reason))
  try {
    return await once(controller.signal)()
  } finally {
    unlink()
  }
}

/** `fetch` on a signal of the attempt's own, every failure classified; the caller's abort is an `AbortError`. */
const fetchOn =
  (input: string | URL, init: RequestInit, request: RequestSummary, caller: AbortSignal | undefined) =>
  (signal: AbortSignal): TaskEither<HttpError, Response> =>
  async () => {
    try {
      const response = await fetch(input, { ...init, signal })
      return response.status >= 400
        ? { _tag: 'Left', left: { _tag: 'StatusError', request, status: response.status, response } }
        : { _tag: 'Right', right: response }
    } catch (error) {
      if (caller?.aborted) return { _tag: 'Left', left: { _tag: 'AbortError', request, reason: caller.reason } }
      return { _tag: 'Left', left: classify(error, request) }
    }
  }

/**
 * One HTTP attempt as a `TaskEither`: `fetch(input, init)`, with a `Response` of status below 400 on the right and
 * every failure classified on the left as an {@link HttpError}. It never rejects.
 *
 * **Details**
 *
 * - `input` is a URL (a string or a `URL`) with the scheme `http:` or `https:`; anything else is an
 *   `InvalidRequestError`, before any I/O. Each run of the task makes a new request, so it can be retried (a
 *   `ReadableStream` body can be sent once only: the second attempt is an `InvalidRequestError`).
 * - `init.signal` aborts the attempt in flight (an `AbortError`); once the response has arrived, the body is
 *   yours and the signal no longer touches it.
 * - `options.attemptTimeout` aborts an attempt that has no response headers after that many ms of `options.clock`: a
 *   `TimeoutError`. Its timer is cleared as soon as the attempt ends.
 * - A status of 400 or more is a `StatusError`, whose `Response` is not read: read or release its body.
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as http from 'http'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const server = http.createServer((req, res) => { res.statusCode = req.url === '/missing' ? 404 : 200; res.end('hello') })
 *   await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
 *   const { port } = server.address() as { port: number }
 *   try {
 *     const ok = await Http.request(`http://127.0.0.1:${port}/`)()
 *     assert.ok(ok._tag === 'Right' && (await ok.right.text()) === 'hello')
 *     const missing = await Http.request(`http://127.0.0.1:${port}/missing`)()
 *     assert.ok(missing._tag === 'Left' && missing.left._tag === 'StatusError' && missing.left.status === 404)
 *     await Http.discardBody(missing.left)
 *   } finally {
 *     server.close()
 *   }
 * }
 * main()
 *
 * @category constructors
 * @since 0.1.0
 */
export const request = (
  input: string | URL,
  init: RequestInit = {},
  options: RequestOptions = {}
): TaskEither<HttpError, Response> => {
  validateRequestOptions('Http.request', options)
  const clock = options.clock ?? LiveClock.live
  return () => attempt(input, init, summarize(input, init, options), options.attemptTimeout, clock)
}

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * A `fetch` that retries: `retryingFetch(schedule, options)(input, init)` is a `TaskEither` that makes the
 * request with {@link request} and retries it as `schedule` says, for the errors `options.retryOn` allows
 * (default {@link isRetryable}: idempotent requests that failed transiently).
 *
 * **Details**
 *
 * - The body of every response that is retried is released before the sleep, so no connection is held across
 *   retries. The `StatusError` a run ends with keeps its body: read it or call {@link discardBody}.
 * - `init.signal` aborts the attempt in flight and ends a sleep at once; the run then returns the last error (an
 *   `AbortError` if the attempt was cut short). A signal aborted before the start gives an `AbortError` at once.
 * - A body that can be read once (a `ReadableStream`, a Node `Readable`, any async iterable) is sent once: the run
 *   makes that one attempt and is not retried (reason `'schedule'`), since a second send would find it drained.
 *   Send a string, bytes or a `Blob` to have the request retried.
 * - Retry-After: put {@link retryAfter} in the schedule, before any time limit.
 * - With `options.breaker`, a request the open circuit refuses sends nothing and ends the run with reason
 *   `'breaker'` (its error is a `CircuitOpenError`). With `options.rateLimiter`, each attempt the breaker lets
 *   through waits for its token first.
 * - Either may be a `Keyed` registry: each request then goes through its authority's (`new URL(input).host`), so
 *   that one failing host opens its own breaker only, and its events carry the authority as `key` (see
 *   {@link RetryingFetchOptions}).
 * - `options.budget` is told of every attempt, transient failures counting as failures and other errors not at
 *   all, and is asked before every retry; when it refuses, the run ends with the last error, reason `'budget'`.
 * - The schedule's time (`upTo`) and the timeouts both run on `options.clock` (default `Clock.live`).
 * - `options.onEvent` is told the run's events with `source: 'http'` (an attempt is a request, a retry its
 *   resend); each attempt's `AttemptStarted` and end carry `http`, what it sent and the status that came back
 *   (`Event.HttpAttempt`, the facts of OpenTelemetry's HTTP client spans).
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import { pipe } from 'fp-ts/function'
 * import * as http from 'http'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   let calls = 0
 *   const server = http.createServer((_, res) => {
 *     if (++calls < 3) res.writeHead(503, { 'Retry-After': '1' }).end('busy')
 *     else res.end('ok')
 *   })
 *   await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
 *   const { port } = server.address() as { port: number }
 *   const delays: Array<number> = []
 *   const policy = pipe(Schedule.constant(1), Http.retryAfter(5), Schedule.intersect(Schedule.recurs(3)))
 *   try {
 *     const get = Http.retryingFetch(policy, { onRetry: ({ delay }) => void delays.push(delay) })
 *     const result = await get(`http://127.0.0.1:${port}/`)()
 *     assert.ok(result._tag === 'Right' && (await result.right.text()) === 'ok')
 *     assert.deepStrictEqual(delays, [5, 5]) // Retry-After: 1 s, clamped to 5 ms
 *   } finally {
 *     server.close()
 *   }
 * }
 * main()
 *
 * @category interpreters
 * @since 0.1.0
 */
export const retryingFetch = (
  schedule: Schedule.Schedule<HttpError>,
  options: RetryingFetchOptions = {}
): ((input: string | URL, init?: RequestInit) => TaskEither<HttpError, Response>) => {
  const where = 'Http.retryingFetch'
  validate.schedule(where, 'schedule', schedule)
  validateRequestOptions(where, options)
  // the breaker is checked below: it may be a registry
  validate.services(where, 'options', { ...options, breaker: undefined })
  const retryOn = validate.callable(where, 'options.retryOn', options.retryOn ?? isRetryable)
  const onRetry =
    options.onRetry === undefined ? undefined : validate.callable(where, 'options.onRetry', options.onRetry)
  if (options.onDone !== undefined) validate.callable(where, 'options.onDone', options.onDone)
  const policy = Schedule.whileInput(retryOn, {
    description: retryOn === isRetryable ? 'Http.isRetryable' : undefined
  })(schedule)
  const clock = options.clock ?? LiveClock.live
  const random = options.random ?? LiveRandom.live
  const { budget, onDone, attemptTimeout: timeout } = options
  const breaker = policyOf(where, 'options.breaker', 'a Breaker', ['enter', 'admitsIn'], options.breaker)
  const limiter = policyOf(where, 'options.rateLimiter', 'a RateLimiter', ['take', 'reserve'], options.rateLimiter)
  const key = options.key === undefined ? undefined : validate.string(where, 'options.key', options.key)
  // a request goes through its authority's policies, and its events say so unless `key` says otherwise
  const keyed = breaker?._tag === 'Keyed' || limiter?._tag === 'Keyed'
  const budgetGuard =
    budget === undefined ? [] : [Budget.asGuard(budget, { counts: (e) => isTransient(e as HttpError) })]
  // Set up once, shared by every request: the guards (the breaker's refusal stops a run with its reason; as in
  // gRPC's retry throttling, only transient failures count against the budget) and the runners.
  const guardsOf = (breaker: Breaker | undefined): ReadonlyArray<Guard.Guard> => [
    ...(breaker === undefined ? [] : [Breakers.asGuard(breaker, { refused: (e) => isCircuitOpen(e as HttpError) })]),
    ...budgetGuard
  ]
  const guards = guardsOf(breaker?._tag === 'One' ? breaker.policy : undefined)
  const onEvent =
    options.onEvent === undefined ? undefined : validate.callable(where, 'options.onEvent', options.onEvent)
  const hooks: Hooks<HttpError, HttpError, Response> = {
    onRetry: (retried) => {
      void discardBody(retried.error)
      return onRetry?.(retried)
    },
    onDone
  }
  // The runners; observed, a request's own, made as it is sent: its events say what it sends (requestEvents).
  const runnerOf = (replayable: boolean, observer: Observer | undefined) =>
    replayable
      ? retryingReaderTaskEither(policy, { ...hooks, onEvent: observer })
      : // A body that can be read once is sent once: the run makes that one attempt.
        retryingReaderTaskEither(Schedule.stop, { onDone, onEvent: observer })
  const retried = runnerOf(true, undefined)
  const once = runnerOf(false, undefined)
  const protectedBy =
    (breaker: Breaker, summary: RequestSummary) =>
    (action: TaskEither<HttpError, Response>): TaskEither<HttpError, Response> =>
      Breakers.protect(breaker, (state): HttpError => ({ _tag: 'CircuitOpenError', request: summary, state }), {
        isFailure: isTransient
      })(action)
  const throttledBy =
    (limiter: RateLimiter, summary: RequestSummary, signal: AbortSignal | undefined) =>
    (action: TaskEither<HttpError, Response>): TaskEither<HttpError, Response> =>
      RateLimiters.throttleSignalled(
        limiter,
        (reason): HttpError => ({ _tag: 'AbortError', request: summary, reason }),
        {
          clock
        }
      )(() => action)({ signal })
  return (input, init = {}) => {
    const requestSummary = summarize(input, init, options)
    const signal = init.signal ?? undefined
    const authority = keyed ? authorityOf(input) : undefined
    const itsBreaker = breaker === undefined ? undefined : policyFor(breaker, authority)
    const itsLimiter = limiter === undefined ? undefined : policyFor(limiter, authority)
    const fetchOnce: TaskEither<HttpError, Response> = () => attempt(input, init, requestSummary, timeout, clock)
    // from the inside out: the attempt (and its timeout), its token, the breaker (see docs/resilience-order.md)
    const throttled = itsLimiter === undefined ? fetchOnce : throttledBy(itsLimiter, requestSummary, signal)(fetchOnce)
    const action = itsBreaker === undefined ? throttled : protectedBy(itsBreaker, requestSummary)(throttled)
    const replayable = isReplayable(init.body)
    const eventKey = key ?? authority
    const events =
      onEvent === undefined
        ? undefined
        : requestEvents(eventKey === undefined ? onEvent : withKey(eventKey, onEvent), input, init)
    // The runner makes one call of the action per attempt: the calls counted are the events' `attempt`.
    let sent = 0
    const counted: TaskEither<HttpError, Response> =
      events === undefined ? action : () => action().then((result) => events.ended(++sent, result))
    const runner = events === undefined ? (replayable ? retried : once) : runnerOf(replayable, events.observer)
    const runGuards = breaker?._tag === 'Keyed' ? guardsOf(itsBreaker) : guards
    const run = runner(() => counted)({ clock, random, signal, guards: runGuards })
    return async () => {
      if (signal?.aborted)
        return { _tag: 'Left', left: { _tag: 'AbortError', request: requestSummary, reason: signal.reason } }
      return run()
    }
  }
}

/** A policy given to `Http`: one for every request, or a registry of them by the requests' authority. */
type GivenPolicy<P> =
  | { readonly _tag: 'One'; readonly policy: P }
  | { readonly _tag: 'Keyed'; readonly keyed: Keyed<P> }

/** Checks a policy option: a policy with `methods`, or a `Keyed` registry of them (with `get`). */
const policyOf = <P>(
  where: string,
  name: string,
  what: string,
  methods: ReadonlyArray<string>,
  given: P | Keyed<P> | undefined
): GivenPolicy<P> | undefined => {
  if (given === undefined) return undefined
  const o = given as Record<string, unknown> | null
  if (
    o !== null &&
    typeof o === 'object' &&
    typeof o.get === 'function' &&
    methods.every((m) => typeof o[m] !== 'function')
  )
    return { _tag: 'Keyed', keyed: given as Keyed<P> }
  return {
    _tag: 'One',
    policy: validate.implementing(where, name, `${what} or a Keyed registry of them`, methods, given as P)
  }
}

/** The policy a request goes through: the one given, or its authority's (none for a URL that does not parse). */
const policyFor = <P>(given: GivenPolicy<P>, authority: string | undefined): P | undefined =>
  given._tag === 'One' ? given.policy : authority === undefined ? undefined : given.keyed.get(authority)

/**
 * A request's authority, as a keyed policy of `Http` knows it: `new URL(input).host`, the host name in lower
 * case (an IDN in punycode) and the port unless it is the scheme's default; `undefined` for a URL that does not
 * parse.
 */
const authorityOf = (input: string | URL): string | undefined => {
  try {
    return new URL(String(input)).host
  } catch {
    return undefined
  }
}

/** What a body that cannot be sent again is, for a message: its class's name. */
const streamName = (body: unknown): string =>
  (body as { readonly constructor?: { readonly name?: unknown } } | null)?.constructor?.name?.toString() ?? typeof body

const isCircuitOpen = (error: HttpError): boolean => error._tag === 'CircuitOpenError'

/**
 * Whether a request body can be sent again: none, a string, bytes, a `Blob`, `FormData` or `URLSearchParams`. A
 * stream (a `ReadableStream`, a Node `Readable`, any async iterable) is drained by the first send.
 */
const isReplayable = (body: RequestInit['body'] | null | undefined): boolean =>
  body === undefined ||
  body === null ||
  typeof body === 'string' ||
  body instanceof ArrayBuffer ||
  ArrayBuffer.isView(body) ||
  body instanceof Blob ||
  body instanceof URLSearchParams ||
  (typeof FormData !== 'undefined' && body instanceof FormData)

/** Releases what a result that the call does not return holds: a response body. */
const releaseResult = (
  result: { readonly _tag: 'Left'; readonly left: HttpError } | { readonly _tag: 'Right'; readonly right: Response }
): Promise<void> | undefined =>
  result._tag === 'Left' ? discardBody(result.left) : result.right.bodyUsed ? undefined : result.right.body?.cancel()

/** The methods that `fetch` sends in upper case whatever case they are given in (the Fetch standard's "normalize"). */
const NORMALIZED_METHODS: ReadonlySet<string> = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'])

/**
 * The query parameters whose values sign a URL: OpenTelemetry's HTTP conventions redact them in `url.full`
 * (matched case-sensitively, as they ask).
 */
const SIGNING_PARAMETERS: ReadonlySet<string> = new Set([
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
  'AWSAccessKeyId',
  'Signature',
  'sig',
  'X-Goog-Signature'
])

/**
 * What the events of a request's attempts say it sends (`Event.HttpAttempt`), its secrets redacted; `undefined`
 * when `input` is no `http:` or `https:` URL (the attempt is then an `InvalidRequestError`, sending nothing).
 */
const httpAttemptOf = (input: string | URL, init: RequestInit): HttpAttempt | undefined => {
  let url: URL
  try {
    url = new URL(String(input))
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username !== '') url.username = 'REDACTED'
  if (url.password !== '') url.password = 'REDACTED'
  const params = [...url.searchParams]
  if (params.some(([key]) => SIGNING_PARAMETERS.has(key)))
    url.search = new URLSearchParams(
      params.map(([key, value]): [string, string] => [key, SIGNING_PARAMETERS.has(key) ? 'REDACTED' : value])
    ).toString()
  const method = init.method ?? 'GET'
  return {
    method: NORMALIZED_METHODS.has(method.toUpperCase()) ? method.toUpperCase() : method,
    url: url.href,
    serverAddress: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    serverPort: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  }
}

type Result = { readonly _tag: 'Left'; readonly left: HttpError } | { readonly _tag: 'Right'; readonly right: Response }

/**
 * A request's events, as this module's (`source: 'http'`: an attempt is a request, a retry or a hedge its resend):
 * its attempts' events carry what it sends (`http`) and, once they end, the status of the response, if one came.
 * `ended(attempt, result)` is told each attempt's result before the runner or hedging tells its end.
 */
const requestEvents = (
  onEvent: Observer,
  input: string | URL,
  init: RequestInit
): { readonly observer: Observer; readonly ended: <R extends Result>(attempt: number, result: R) => R } => {
  const http = httpAttemptOf(input, init)
  /** The status of each attempt's response, by attempt, until its end is told. */
  const statuses = new Map<number, number>()
  return {
    observer: (event) => {
      if (http !== undefined)
        switch (event._tag) {
          case 'AttemptStarted':
            return onEvent({ ...event, source: 'http', http })
          case 'AttemptSucceeded':
          case 'AttemptFailed':
          case 'AttemptTimedOut': {
            const statusCode = statuses.get(event.attempt)
            statuses.delete(event.attempt)
            return onEvent({
              ...event,
              source: 'http',
              http: statusCode === undefined ? http : { ...http, statusCode }
            })
          }
        }
      onEvent({ ...event, source: 'http' })
    },
    ended: (attempt, result) => {
      const status =
        result._tag === 'Right'
          ? result.right.status
          : result.left._tag === 'StatusError'
          ? result.left.status
          : undefined
      if (http !== undefined && status !== undefined) statuses.set(attempt, status)
      return result
    }
  }
}

/**
 * A hedged `fetch`, for idempotent requests only: `hedgingFetch(schedule, options)(input, init)` makes the
 * request with {@link request}, and while no response has come, another after each of the schedule's delays; the
 * first response below 400 wins and the other attempts are aborted (see `Hedging.hedging`).
 *
 * **Details**
 *
 * - A request that is not idempotent ({@link isIdempotent}: a POST or PATCH without an `Idempotency-Key`, unless
 *   `options.idempotent` opts it in) is refused before any I/O with an `InvalidRequestError`: hedging sends it
 *   several times at once. So is a body that can be read once (a `ReadableStream`, a Node `Readable`, any async
 *   iterable): the first send drains it.
 * - Each attempt gets its own `AbortController`, linked to `init.signal`: a loser is aborted alone, and the
 *   caller's signal aborts them all (the call then returns the last error, an `AbortError`).
 * - The bodies of the responses that lose (a 200 that arrives second, the `StatusError`s not returned) are
 *   released, so that no connection is held. The response returned is yours to read.
 * - `options.attemptTimeout` applies to each attempt, on `options.clock`.
 * - `options.onEvent` is told hedging's events with `source: 'http'` (each hedge a resend of the request); each
 *   attempt's `AttemptStarted` and end carry `http`, as `retryingFetch`'s do (`Event.HttpAttempt`).
 *
 * @example
 * import * as Http from 'fp-ts-retry/Http'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import type { Summary } from 'fp-ts-retry/Hedging'
 * import { pipe } from 'fp-ts/function'
 * import * as http from 'http'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   let calls = 0
 *   // the first request hangs until it is aborted; the second is answered at once
 *   const server = http.createServer((_, res) => void (++calls === 1 ? res.on('close', () => undefined) : res.end('fast')))
 *   await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
 *   const { port } = server.address() as { port: number }
 *   const summaries: Array<Summary> = []
 *   try {
 *     const get = Http.hedgingFetch(pipe(Schedule.constant(20), Schedule.intersect(Schedule.recurs(1))), { onDone: (s) => void summaries.push(s) })
 *     const result = await get(`http://127.0.0.1:${port}/`)()
 *     assert.ok(result._tag === 'Right' && (await result.right.text()) === 'fast')
 *     assert.strictEqual(summaries[0].winner, 1)
 *     const post = await get(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' })()
 *     assert.ok(post._tag === 'Left' && post.left._tag === 'InvalidRequestError') // refused: not idempotent
 *   } finally {
 *     server.closeAllConnections()
 *     server.close()
 *   }
 * }
 * main()
 *
 * @category interpreters
 * @since 1.0.0
 */
export const hedgingFetch = (
  schedule: Schedule.Schedule<unknown>,
  options: HedgingFetchOptions = {}
): ((input: string | URL, init?: RequestInit) => TaskEither<HttpError, Response>) => {
  const where = 'Http.hedgingFetch'
  validateRequestOptions(where, options)
  const isFatal = validate.callable(where, 'options.isFatal', options.isFatal ?? ((e: HttpError) => !isTransient(e)))
  const clock = options.clock ?? LiveClock.live
  const { random, budget, maxConcurrent, onDone, onEvent, attemptTimeout: timeout } = options
  const hedgingOptions = { clock, random, budget, maxConcurrent, isFatal, onDone, onEvent, release: releaseResult }
  try {
    // Checks the schedule and the options now, not at the first request.
    hedging<HttpError, Response>(schedule, hedgingOptions)
  } catch (e) {
    if (!(e instanceof Error && e.message.startsWith('hedging: '))) throw e
    throw new (e.constructor as new (message: string) => Error)(`${where}: ${e.message.slice('hedging: '.length)}`)
  }
  return (input, init = {}) => {
    const requestSummary = summarize(input, init, options)
    const signal = init.signal ?? undefined
    // its events as this module's, with what each attempt sends: a hedge is a resend of the request
    const events = onEvent === undefined ? undefined : requestEvents(onEvent, input, init)
    const hedged = hedging<HttpError, Response>(schedule, { ...hedgingOptions, signal, onEvent: events?.observer })
    return async () => {
      const refuse = (message: string): { readonly _tag: 'Left'; readonly left: HttpError } => ({
        _tag: 'Left',
        left: {
          _tag: 'InvalidRequestError',
          request: requestSummary,
          message: `${where}: ${message}`,
          cause: undefined
        }
      })
      if (!requestSummary.idempotent) {
        return refuse(
          `${requestSummary.method} is not idempotent and hedging sends it several times; send an ` +
            'Idempotency-Key header, or set options.idempotent if the endpoint is safe to repeat'
        )
      }
      if (!isReplayable(init.body)) {
        return refuse(
          `a body that can be read once (a ${streamName(init.body)}) is drained by the first send, and hedging ` +
            'sends the request several times: send a string, bytes or a Blob'
        )
      }
      if (signal?.aborted) {
        return { _tag: 'Left', left: { _tag: 'AbortError', request: requestSummary, reason: signal.reason } }
      }
      const once =
        ({ signal: attemptSignal, index }: HedgeContext): TaskEither<HttpError, Response> =>
        () => {
          const sent = attempt(input, { ...init, signal: attemptSignal }, requestSummary, timeout, clock)
          // hedge `index` is the call's attempt `index + 1`
          return events === undefined ? sent : sent.then((result) => events.ended(index + 1, result))
        }
      return hedged(once)()
    }
  }
}
