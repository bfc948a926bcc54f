/**
 * What the AWS SDKs' standard retries (2.0 and 2.1) take as given, stated once for `Budget`, `Schedule` and `Http`:
 * their constants, and which errors are throttles.
 *
 * @internal
 */

/** The largest backoff before jitter, in ms (the SDKs' `MAX_BACKOFF`); a server's hint is not held to it. */
export const MAX_BACKOFF = 20_000

/** The bases of the exponential backoff, in ms: 2.0 has one; 2.1 one for throttles and one for other errors. */
export const BASE_20 = 1_000
export const BASE_21_TRANSIENT = 50
export const BASE_21_THROTTLE = 1_000

/** How far past the computed delay retries 2.1 lets `x-amz-retry-after` take a retry, in ms. */
export const RETRY_AFTER_ABOVE = 5_000

/**
 * The error codes the SDKs treat as throttling: `THROTTLING_ERROR_CODES` of the AWS SDK for JavaScript v3
 * (@smithy/service-error-classification), the list aws-sdk-go-v2 and the SDKs' shared retry behaviour name too.
 */
const THROTTLING_CODES: ReadonlySet<string> = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'TransactionInProgressException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'RequestThrottled',
  'SlowDown',
  'PriorRequestNotComplete',
  'EC2ThrottledException'
])

/**
 * Whether an `x-amzn-errortype` value names a throttling code: the code comes first, before any `:` (a URL
 * follows it), and may carry a Smithy namespace (`com.amazonaws.dynamodb#ThrottlingException`).
 */
const isThrottlingErrorType = (value: string): boolean => {
  const code = value.split(':')[0].trim()
  return THROTTLING_CODES.has(code.slice(code.lastIndexOf('#') + 1))
}

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === 'object' && u !== null

/** The `x-amzn-errortype` header of a `Response` an error carries (`Http.StatusError`), if any. */
const errorTypeOf = (error: Readonly<Record<string, unknown>>): string | null => {
  const response = error.response
  if (!isObject(response) || !isObject(response.headers)) return null
  const get = response.headers.get
  if (typeof get !== 'function') return null
  try {
    const value: unknown = get.call(response.headers, 'x-amzn-errortype')
    return typeof value === 'string' ? value : null
  } catch {
    return null // not a Headers after all
  }
}

const isThrottlingCode = (u: unknown): boolean => typeof u === 'string' && THROTTLING_CODES.has(u)

/**
 * Whether an error is a throttle, as the SDKs classify one: flagged so by the AWS SDK for JavaScript v3
 * (`$retryable.throttling`), named by a throttling code (its `name`; `code` in SDK v2; `Code` as the XML protocols'
 * errors carry it), of HTTP status 429 (`status`, `statusCode` or `$metadata.httpStatusCode`), or carrying a response
 * whose `x-amzn-errortype` names a throttling code. Never throws.
 */
export const isThrottle = (error: unknown): boolean => {
  if (!isObject(error)) return false
  const retryable = error.$retryable
  if (isObject(retryable) && retryable.throttling === true) return true
  const { name, code, Code, status, statusCode, $metadata } = error
  if (isThrottlingCode(name) || isThrottlingCode(code) || isThrottlingCode(Code)) return true
  if (status === 429 || statusCode === 429 || (isObject($metadata) && $metadata.httpStatusCode === 429)) return true
  const errorType = errorTypeOf(error)
  return errorType !== null && isThrottlingErrorType(errorType)
}
