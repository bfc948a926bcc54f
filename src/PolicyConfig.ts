/**
 * A whole resilience pipeline as configuration: one io-ts codec for a JSON document that names pipelines (the
 * attempt timeout, the rate limit, the breaker, the adaptive throttle, the retry schedule and its budget, hedging,
 * the bulkhead or the adaptive limit, the fallback, the key they are kept by and the Redis store they are shared
 * through), for `Policies` to build and
 * reload.
 *
 * The schedules are `ScheduleConfig`'s grammar (`"retry": { "exponential": "100ms", "maxRetries": 3 }`), decoded
 * by its codec; durations are its `Duration` (`"250ms"`, `"2s"`). A document names what each layer is, never
 * where it goes: the order of the layers is the code's (docs/resilience-order.md), whatever the order of the keys.
 *
 * The grammar is one table: each section (`breaker`, `rateLimit`, ...) and each of its keys is one entry that
 * decodes, encodes and describes itself; the decoder, the encoder and {@link jsonSchema} all read it. Decoding
 * never throws and applies nothing: a document is valid as a whole, or its errors are listed, each with its path
 * and, for a misspelt word, the nearest right one.
 *
 * @since 1.0.0
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as t from 'io-ts'
import { didYouMean, issueLine } from './internal/hint'
import type { Json } from './internal/model'
import { showValue } from './internal/show'
import { isAtLeast, isCount, isDuration, MAX_BUCKETS, MAX_WINDOW_SIZE } from './internal/validate'
import {
  Duration,
  grammar as scheduleGrammar,
  ScheduleConfigCodec,
  toConfigError,
  type ConfigError,
  type ConfigIssue,
  type ScheduleConfig
} from './ScheduleConfig'

// -------------------------------------------------------------------------------------
// bounds
// -------------------------------------------------------------------------------------

/** The most pipelines one document names. */
const MAX_POLICIES = 1000

/** The issues reported one by one; past them, one line counts the rest. */
const MAX_ISSUES = 20

/** The longest name of a pipeline, key template or store prefix. */
const MAX_NAME = 100

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How a breaker counts, as a document says it: the failures in a row (`consecutive`, `threshold`), the last `size`
 * calls (`count`) or the last `window` ms (`sampling`), each with its `halfOpenAfter` schedule (a `ScheduleConfig`)
 * and its `probes` (default 1), as `Breaker.consecutive`, `Breaker.count` and `Breaker.sampling` take them.
 *
 * @example
 * import type { BreakerConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const breaker: BreakerConfig = { kind: 'consecutive', threshold: 5, halfOpenAfter: { constant: 30_000 } }
 *
 * @category model
 * @since 1.0.0
 */
export type BreakerConfig = {
  readonly halfOpenAfter: ScheduleConfig
  readonly probes?: number
} & (
  | { readonly kind: 'consecutive'; readonly threshold: number }
  | { readonly kind: 'count'; readonly size: number; readonly minimumCalls?: number; readonly failureRate: number }
  | {
      readonly kind: 'sampling'
      readonly window: number
      readonly minThroughput: number
      readonly failureRate: number
      readonly buckets?: number
    }
)

/**
 * A rate limit: a token bucket of `rate` tokens every `per` ms, `burst` at once (`gcra`), or at most `limit` calls
 * in each `window` ms (`fixedWindow`, `slidingWindow`): `RateLimiter`'s, or `RedisRateLimiter`'s with a `store`.
 *
 * @example
 * import type { RateLimitConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const limit: RateLimitConfig = { kind: 'gcra', rate: 100, per: 1_000, burst: 10 }
 *
 * @category model
 * @since 1.0.0
 */
export type RateLimitConfig =
  | { readonly kind: 'gcra'; readonly rate: number; readonly per: number; readonly burst: number }
  | { readonly kind: 'fixedWindow' | 'slidingWindow'; readonly limit: number; readonly window: number }

/**
 * A client-side adaptive throttle (`AdaptiveThrottle.make`, or `RedisAdaptiveThrottle.make` with a `store`): it
 * drops a share of the attempts once the backend refuses more than `1 / k` of them for overload (`k`, default 2),
 * counted over `window` ms (default 2 minutes) in `buckets` buckets (default 10). `{}` takes every default.
 *
 * @example
 * import type { ThrottleConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const throttle: ThrottleConfig = { k: 2, window: 60_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface ThrottleConfig {
  readonly k?: number
  readonly window?: number
  readonly buckets?: number
}

/**
 * A retry budget: gRPC's retry throttle (`Budget.retryThrottle`, or `RedisBudget.retryThrottle` with a `store`).
 *
 * @example
 * import type { BudgetConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const budget: BudgetConfig = { kind: 'retryThrottle', maxTokens: 10, tokenRatio: 0.1 }
 *
 * @category model
 * @since 1.0.0
 */
export type BudgetConfig = { readonly kind: 'retryThrottle'; readonly maxTokens: number; readonly tokenRatio: number }

/**
 * A bulkhead: `maxConcurrent` runs at once, `maxQueue` waiting (`Bulkhead.make`).
 *
 * @example
 * import type { BulkheadConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const bulkhead: BulkheadConfig = { maxConcurrent: 10, maxQueue: 100 }
 *
 * @category model
 * @since 1.0.0
 */
export interface BulkheadConfig {
  readonly maxConcurrent: number
  readonly maxQueue: number
}

/**
 * An adaptive concurrency limit instead of a bulkhead (`AdaptiveLimit.make`): its algorithm by `kind`, `'aimd'`
 * (`backoffRatio`, `increase`, `latencyThreshold`) or `'gradient'` (`tolerance`, `smoothing`, `longWindow`,
 * `queueSize`, default `'sqrt'` of the limit), its bounds `min <= initial <= max`, its windows (`window` ms,
 * default 1 s, and `minSamples`, default 10), and its queue (`maxQueue`, default 0, and `queueTimeout` ms).
 *
 * @example
 * import type { AdaptiveLimitConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const limit: AdaptiveLimitConfig = { kind: 'gradient', min: 5, max: 200, initial: 20, maxQueue: 50, queueTimeout: 500 }
 *
 * @category model
 * @since 1.0.0
 */
export type AdaptiveLimitConfig = (
  | {
      readonly kind: 'aimd'
      readonly backoffRatio: number
      readonly increase?: number
      readonly latencyThreshold?: number
    }
  | {
      readonly kind: 'gradient'
      readonly tolerance?: number
      readonly smoothing?: number
      readonly longWindow?: number
      readonly queueSize?: number
    }
) & {
  readonly min: number
  readonly max: number
  readonly initial: number
  readonly window?: number
  readonly minSamples?: number
  readonly maxQueue?: number
  readonly queueTimeout?: number
}

/**
 * Hedging instead of retrying: the `delays` between hedges (a `ScheduleConfig`), at most `maxConcurrent` attempts
 * in flight (`Hedging.hedging`).
 *
 * @example
 * import type { HedgingConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const hedging: HedgingConfig = { delays: { constant: 100, maxRetries: 2 }, maxConcurrent: 3 }
 *
 * @category model
 * @since 1.0.0
 */
export interface HedgingConfig {
  readonly delays: ScheduleConfig
  readonly maxConcurrent?: number
}

/**
 * When the fallback the code gives answers a call: the stop reasons it is used `on` (`Fallback.stoppedBy`).
 *
 * @example
 * import type { FallbackConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const fallback: FallbackConfig = { on: ['breaker', 'bulkhead'] }
 *
 * @category model
 * @since 1.0.0
 */
export interface FallbackConfig {
  readonly on: ReadonlyArray<FallbackReason>
}

/**
 * A stop reason a fallback may be used on: every reason a run stops for but `'succeeded'` and `'defect'` (a defect is a bug to see, not to hide).
 *
 * @example
 * import type { FallbackReason } from 'fp-ts-retry/PolicyConfig'
 *
 * const reason: FallbackReason = 'breaker'
 *
 * @category model
 * @since 1.0.0
 */
export type FallbackReason = (typeof FALLBACK_REASONS)[number]

const FALLBACK_REASONS = [
  'failed',
  'schedule',
  'aborted',
  'budget',
  'breaker',
  'rateLimit',
  'bulkhead',
  'shed'
] as const

/**
 * What a pipeline is kept by: a `template` that names fields of the call (`"{authority}"`,
 * `"{tenant}:{method}"`), each a {@link KEY_FIELDS} name, so that each key has its own breaker, limiter and
 * bulkhead (`Keyed.make`), at most `maxKeys` of them, dropped after `idleAfter` ms unused.
 *
 * @example
 * import type { KeyConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const key: KeyConfig = { template: '{authority}', maxKeys: 1_000, idleAfter: 600_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface KeyConfig {
  readonly template: string
  readonly maxKeys: number
  readonly idleAfter?: number
}

/**
 * The fields a key template may name, the fields of a call that `Policies` keys pipelines by.
 *
 * @example
 * import { KEY_FIELDS } from 'fp-ts-retry/PolicyConfig'
 * import * as assert from 'assert'
 *
 * assert.ok(KEY_FIELDS.includes('authority'))
 *
 * @category utils
 * @since 1.0.0
 */
export const KEY_FIELDS = ['authority', 'host', 'method', 'route', 'tenant'] as const

/**
 * One of {@link KEY_FIELDS}.
 *
 * @example
 * import type { KeyField } from 'fp-ts-retry/PolicyConfig'
 *
 * const field: KeyField = 'tenant'
 *
 * @category model
 * @since 1.0.0
 */
export type KeyField = (typeof KEY_FIELDS)[number]

/**
 * Where a fleet shares the pipeline's breaker, rate limit and budget: Redis, under keys that start with `prefix`
 * (the client is the code's: `Policies.make`'s `redis`), each call to it bounded by `timeout` ms, and the
 * `fallback` of the rate limit and budget while it does not answer (`'local'` by default).
 *
 * @example
 * import type { StoreConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const store: StoreConfig = { kind: 'redis', prefix: 'payments:', timeout: 100 }
 *
 * @category model
 * @since 1.0.0
 */
export interface StoreConfig {
  readonly kind: 'redis'
  readonly prefix: string
  readonly timeout?: number
  readonly fallback?: 'local' | 'allow' | 'refuse'
}

/**
 * One pipeline, as decoded: durations in ms, every section optional. The layers wrap one another in the order of
 * docs/resilience-order.md, from the inside out: `timeout` (each attempt), `rateLimit`, `breaker`, `throttle`,
 * `retry` (with its `budget`) or `hedging`, `bulkhead` or `adaptiveLimit`, `fallback`; `key` and `store` say where
 * they are kept.
 *
 * @example
 * import type { PipelineConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const pipeline: PipelineConfig = { timeout: 2_000, retry: { exponential: 100, maxRetries: 3 } }
 *
 * @category model
 * @since 1.0.0
 */
export interface PipelineConfig {
  readonly timeout?: number
  readonly rateLimit?: RateLimitConfig
  readonly breaker?: BreakerConfig
  readonly throttle?: ThrottleConfig
  readonly retry?: ScheduleConfig
  readonly budget?: BudgetConfig
  readonly hedging?: HedgingConfig
  readonly bulkhead?: BulkheadConfig
  readonly adaptiveLimit?: AdaptiveLimitConfig
  readonly fallback?: FallbackConfig
  readonly key?: KeyConfig
  readonly store?: StoreConfig
}

/**
 * A decoded document: pipelines by name (names of letters, digits, `.`, `_`, `:` and `-`, at most 100 characters),
 * and the `$schema` an editor reads, kept as it is.
 *
 * @example
 * import type { PolicyConfig } from 'fp-ts-retry/PolicyConfig'
 *
 * const config: PolicyConfig = { policies: { payments: { timeout: 1_000 } } }
 *
 * @category model
 * @since 1.0.0
 */
export interface PolicyConfig {
  readonly $schema?: string
  readonly policies: Readonly<Record<string, PipelineConfig>>
}

/**
 * A document as JSON: what {@link PolicyConfigCodec} encodes to (durations in ms, keys in the grammar's order).
 *
 * @example
 * import type { PolicyConfigJson } from 'fp-ts-retry/PolicyConfig'
 *
 * const json: PolicyConfigJson = { policies: { payments: { timeout: 1_000 } } }
 *
 * @category model
 * @since 1.0.0
 */
export type PolicyConfigJson = { readonly [key: string]: Json }

// -------------------------------------------------------------------------------------
// reporting
// -------------------------------------------------------------------------------------

/** An error line of this module, in the form `ScheduleConfig.toConfigError` reads (its `issue` and `message`). */
interface IssueError extends t.ValidationError {
  readonly message: string
  readonly issue: ConfigIssue
}

/** The issues of one decoding: the first {@link MAX_ISSUES} kept with their line, the others counted. */
class Issues {
  readonly errors: Array<t.ValidationError> = []
  total = 0

  fail(at: At, expected: string, actual: unknown, extra: { readonly got?: string; readonly hint?: string } = {}) {
    this.total++
    if (this.errors.length < MAX_ISSUES) {
      const { hint } = extra
      const path = at.path === '' ? 'document' : at.path
      const issue: ConfigIssue = hint === undefined ? { path, expected, actual } : { path, expected, actual, hint }
      const error: IssueError = {
        value: actual,
        context: at.context,
        message: issueLine(path, expected, extra.got ?? showValue(actual), hint),
        issue
      }
      this.errors.push(error)
    }
    return undefined
  }

  /** The errors of a nested codec (a schedule), counted the same way. */
  add(errors: t.Errors): void {
    for (const error of errors) {
      const more = (error as { readonly more?: unknown }).more
      const count = typeof more === 'number' ? more : 1
      this.total += count
      if (typeof more !== 'number' && this.errors.length < MAX_ISSUES) this.errors.push(error)
    }
  }

  result(u: unknown, context: t.Context): t.Errors {
    const more = this.total - this.errors.length
    return more > 0
      ? [...this.errors, { value: u, context, message: `and ${more} more`, more } as t.ValidationError]
      : this.errors
  }
}

/** Where decoding stands: the path for a message, the io-ts context for nested codecs, the issues so far. */
interface At {
  readonly path: string
  readonly context: t.Context
  readonly issues: Issues
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** The path of `key` under `at`, in the form `ScheduleConfig` writes its paths: `policies["payments-api"].retry`. */
const child = (at: At, key: string, actual: unknown): At => ({
  ...at,
  path: IDENTIFIER.test(key) ? (at.path === '' ? key : `${at.path}.${key}`) : `${at.path}[${showValue(key)}]`,
  context: [...at.context, { key, type: PolicyConfigCodec, actual }]
})

const item = (at: At, index: number, actual: unknown): At => ({
  ...at,
  path: `${at.path}[${index}]`,
  context: [...at.context, { key: String(index), type: PolicyConfigCodec, actual }]
})

const oneOf = (names: ReadonlyArray<string>): string => names.map((n) => JSON.stringify(n)).join(', ')

// -------------------------------------------------------------------------------------
// the grammar: each kind of value decodes, encodes and describes itself
// -------------------------------------------------------------------------------------

/** A JSON Schema (draft-07) fragment. */
type Schema = { readonly [key: string]: Json }

/** A kind of value: decodes (reporting its own issues; `undefined` when it does not), encodes, describes itself. */
interface Field<A> {
  readonly doc: string
  readonly schema: Schema
  readonly decode: (value: unknown, at: At) => A | undefined
  readonly encode: (value: A) => Json
}

/** A plain object, read once and guarded: its own keys and values, `undefined` ones left out (absent, as in JSON). */
const entriesOf = (u: unknown): ReadonlyMap<string, unknown> | undefined => {
  try {
    if (typeof u !== 'object' || u === null || Array.isArray(u)) return undefined
    if (Object.prototype.toString.call(u) !== '[object Object]') return undefined
    const entries = new Map<string, unknown>()
    for (const key of Object.keys(u)) {
      const value = (u as Record<string, unknown>)[key]
      if (value !== undefined) entries.set(key, value)
    }
    return entries
  } catch {
    return undefined
  }
}

const number = (expected: string, holds: (u: unknown) => u is number, schema: Schema): Field<number> => ({
  doc: expected,
  schema: { ...schema, description: expected },
  decode: (value, at) => (holds(value) ? value + 0 : at.issues.fail(at, expected, value)),
  encode: (value) => value
})

const isPositiveCount = (u: unknown): u is number => isCount(u) && u >= 1
const isRatio = (u: unknown): u is number => typeof u === 'number' && u > 0 && u <= 1
const isPositive = (u: unknown): u is number => isDuration(u) && u > 0
const isTokens = (u: unknown): u is number => typeof u === 'number' && u >= 0.001 && u <= 1e12

const positiveCount = number('a whole number >= 1', isPositiveCount, { type: 'integer', minimum: 1 })
const count = number('a whole number >= 0', isCount, { type: 'integer', minimum: 0 })
const ratio = number('a number in (0, 1]', isRatio, { type: 'number', exclusiveMinimum: 0, maximum: 1 })
const positive = number('a finite number > 0', isPositive, { type: 'number', exclusiveMinimum: 0 })
const tokens = number('a number in [0.001, 1e12]', isTokens, { type: 'number', minimum: 0.001, maximum: 1e12 })
const backoffRatio = number('a number in [0.5, 1)', (u): u is number => typeof u === 'number' && u >= 0.5 && u < 1, {
  type: 'number',
  minimum: 0.5,
  exclusiveMaximum: 1
})
const tolerance = number('a finite number >= 1', (u): u is number => isDuration(u) && u >= 1, {
  type: 'number',
  minimum: 1
})
const nonNegative = number('a finite number >= 0', isDuration, { type: 'number', minimum: 0 })
const windowSize = number(
  `a whole number in [1, ${MAX_WINDOW_SIZE}]`,
  (u): u is number => isPositiveCount(u) && u <= MAX_WINDOW_SIZE,
  { type: 'integer', minimum: 1, maximum: MAX_WINDOW_SIZE }
)

const DURATION = 'a duration > 0 like "250ms" or "2s", or a number of ms'

/** A duration > 0: `ScheduleConfig.Duration` (the `ms` package reads the units), and not 0. */
const duration: Field<number> = {
  doc: DURATION,
  schema: {
    description: DURATION,
    anyOf: [
      { type: 'number', exclusiveMinimum: 0 },
      { type: 'string', pattern: '^\\s*[0-9.]+\\s*[A-Za-z ]*\\s*$' }
    ]
  },
  decode: (value, at) =>
    pipe(
      Duration.validate(value, at.context),
      E.chainW((ms) => (ms > 0 ? E.right(ms) : E.left(undefined))),
      E.getOrElseW(() => at.issues.fail(at, DURATION, value))
    ),
  encode: (value) => value
}

/** One of `names`, with the nearest as a hint. */
const choice = <K extends string>(names: ReadonlyArray<K>): Field<K> => ({
  doc: `one of ${oneOf(names)}`,
  schema: { enum: [...names] },
  decode: (value, at) =>
    (names as ReadonlyArray<unknown>).includes(value)
      ? (value as K)
      : at.issues.fail(at, `one of ${oneOf(names)}`, value, {
          hint: typeof value === 'string' ? didYouMean(value, names) : undefined
        }),
  encode: (value) => value
})

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/
const NAME_DOC = `a name of letters, digits, ".", "_", ":" and "-" (at most ${MAX_NAME} characters)`

const name: Field<string> = {
  doc: NAME_DOC,
  schema: { type: 'string', pattern: NAME.source, maxLength: MAX_NAME, description: NAME_DOC },
  decode: (value, at) =>
    typeof value === 'string' && value.length <= MAX_NAME && NAME.test(value)
      ? value
      : at.issues.fail(at, NAME_DOC, value),
  encode: (value) => value
}

const anyString: Field<string> = {
  doc: 'a string',
  schema: { type: 'string' },
  decode: (value, at) => (typeof value === 'string' ? value : at.issues.fail(at, 'a string', value)),
  encode: (value) => value
}

/** The schedule grammar's keys, for the JSON Schema of a schedule: each with its meaning, for an editor. */
const scheduleSchema: Schema = {
  type: 'object',
  description: 'a schedule, in the grammar of ScheduleConfig (docs/configuration.md)',
  properties: Object.fromEntries(
    [...new Map(scheduleGrammar.map((k) => [k.key, k])).values()].map((k) => [
      k.key,
      { description: `${k.value}: ${k.meaning}` }
    ])
  ),
  additionalProperties: false
}

/** A schedule, decoded by `ScheduleConfigCodec`: its issues come with their own paths, under this one. */
const schedule: Field<ScheduleConfig> = {
  doc: 'a schedule (ScheduleConfig)',
  schema: scheduleSchema,
  decode: (value, at) =>
    pipe(
      ScheduleConfigCodec.validate(value, at.context),
      E.getOrElseW((errors) => {
        at.issues.add(errors)
        return undefined
      })
    ),
  encode: (value) => ScheduleConfigCodec.encode(value)
}

/** A non-empty list of `of`, without repeats. */
const list = <A extends string>(of: Field<A>): Field<ReadonlyArray<A>> => ({
  doc: `a non-empty list of ${of.doc}`,
  schema: { type: 'array', items: of.schema, minItems: 1, uniqueItems: true },
  decode: (value, at) => {
    const expected = `a non-empty list of ${of.doc}`
    let length: number
    try {
      if (!Array.isArray(value)) return at.issues.fail(at, expected, value)
      length = value.length
    } catch {
      return at.issues.fail(at, expected, value)
    }
    if (length === 0 || length > 100) return at.issues.fail(at, `${expected} (at most 100)`, value)
    const before = at.issues.total
    const out: Array<A> = []
    for (let i = 0; i < length; i++) {
      const raw = (value as ReadonlyArray<unknown>)[i]
      const decoded = of.decode(raw, item(at, i, raw))
      if (decoded === undefined) continue
      if (out.includes(decoded)) at.issues.fail(item(at, i, raw), `no repeat of ${JSON.stringify(decoded)}`, raw)
      else out.push(decoded)
    }
    return at.issues.total === before ? out : undefined
  },
  encode: (value) => [...value]
})

const TEMPLATE_FIELD = /\{([^{}]*)\}/g
const TEMPLATE_DOC = `a key template naming at least one field in braces, of ${oneOf(KEY_FIELDS)} ("{authority}")`

/** A key template: text with `{field}`s, at least one, each a known field. */
const template: Field<string> = {
  doc: TEMPLATE_DOC,
  schema: { type: 'string', pattern: '\\{[a-z]+\\}', maxLength: MAX_NAME, description: TEMPLATE_DOC },
  decode: (value, at) => {
    if (typeof value !== 'string' || value.length > MAX_NAME) return at.issues.fail(at, TEMPLATE_DOC, value)
    const fields = [...value.matchAll(TEMPLATE_FIELD)].map((m) => m[1])
    if (fields.length === 0 || value.replace(TEMPLATE_FIELD, '').match(/[{}]/) !== null) {
      return at.issues.fail(at, TEMPLATE_DOC, value, { got: `${showValue(value)}, which names no field` })
    }
    const unknown = fields.find((f) => !(KEY_FIELDS as ReadonlyArray<string>).includes(f))
    if (unknown !== undefined) {
      return at.issues.fail(at, `fields of ${oneOf(KEY_FIELDS)}`, value, {
        got: `${showValue(value)}, which names the unknown field ${showValue(unknown)}`,
        hint: didYouMean(unknown, KEY_FIELDS)
      })
    }
    return value
  },
  encode: (value) => value
}

/** One key of an object: its field, whether it is required, what it means. */
interface Param {
  readonly field: Field<unknown>
  readonly required: boolean
  readonly doc: string
}

type Params = Readonly<Record<string, Param>>

const req = <A>(field: Field<A>, doc: string): Param => ({ field: field as Field<unknown>, required: true, doc })
const opt = <A>(field: Field<A>, doc: string): Param => ({ field: field as Field<unknown>, required: false, doc })

/** Decodes the keys of `params` from `entries`, reporting unknown keys with the nearest known one. */
const decodeParams = (
  entries: ReadonlyMap<string, unknown>,
  params: Params,
  at: At,
  known: ReadonlyArray<string> = Object.keys(params)
): Record<string, unknown> => {
  for (const key of entries.keys()) {
    if (known.includes(key)) continue
    at.issues.fail(child(at, key, key), `one of the keys ${oneOf(known)}`, key, {
      got: `the unknown key ${showValue(key)}`,
      hint: didYouMean(key, known)
    })
  }
  const out: Record<string, unknown> = {}
  for (const [key, param] of Object.entries(params)) {
    const value = entries.get(key)
    if (value === undefined) {
      if (param.required) at.issues.fail(child(at, key, undefined), param.field.doc, undefined, { got: 'nothing' })
      continue
    }
    const decoded = param.field.decode(value, child(at, key, value))
    if (decoded !== undefined) out[key] = decoded
  }
  return out
}

const encodeParams = (value: Readonly<Record<string, unknown>>, params: Params): Record<string, Json> => {
  const out: Record<string, Json> = {}
  for (const [key, param] of Object.entries(params)) {
    if (value[key] !== undefined) out[key] = param.field.encode(value[key])
  }
  return out
}

const objectSchema = (params: Params, description: string, extra: Readonly<Record<string, Schema>> = {}): Schema => ({
  type: 'object',
  description,
  properties: {
    ...extra,
    ...Object.fromEntries(
      Object.entries(params).map(([key, p]) => [key, { ...p.field.schema, description: `${p.doc} (${p.field.doc})` }])
    )
  },
  required: Object.entries(params)
    .filter(([, p]) => p.required)
    .map(([key]) => key),
  additionalProperties: false
})

/** An object of fixed keys. */
const section = <A>(params: Params, doc: string, check?: (value: A) => string | undefined): Field<A> => ({
  doc,
  schema: objectSchema(params, doc),
  decode: (value, at) => {
    const entries = entriesOf(value)
    if (entries === undefined) return at.issues.fail(at, `an object: ${doc}`, value)
    const before = at.issues.total
    const decoded = decodeParams(entries, params, at) as A
    if (at.issues.total !== before) return undefined
    const problem = check?.(decoded)
    return problem === undefined ? decoded : at.issues.fail(at, problem, value)
  },
  encode: (value) => encodeParams(value as Readonly<Record<string, unknown>>, params)
})

/** An object with a `kind` that says which keys it has besides the `common` ones. */
const kinds = <A extends { readonly kind: string }>(
  table: Readonly<Record<A['kind'], Params>>,
  doc: string,
  common: Params = {},
  check?: (value: A) => string | undefined
): Field<A> => {
  const names = Object.keys(table) as ReadonlyArray<A['kind']>
  const kindField = choice(names)
  const paramsOf = (kind: A['kind']): Params => ({ ...(table[kind] as Params), ...common })
  return {
    doc,
    schema: {
      description: doc,
      oneOf: names.map((kind) => objectSchema(paramsOf(kind), `${doc}: ${kind}`, { kind: { const: kind } }))
    },
    decode: (value, at) => {
      const entries = entriesOf(value)
      if (entries === undefined) return at.issues.fail(at, `an object: ${doc}`, value)
      const rawKind = entries.get('kind')
      if (rawKind === undefined) {
        return at.issues.fail(child(at, 'kind', undefined), kindField.doc, undefined, { got: 'nothing' })
      }
      const kind = kindField.decode(rawKind, child(at, 'kind', rawKind))
      if (kind === undefined) return undefined
      const params = paramsOf(kind)
      const before = at.issues.total
      const decoded = { kind, ...decodeParams(entries, params, at, ['kind', ...Object.keys(params)]) } as A
      if (at.issues.total !== before) return undefined
      const problem = check?.(decoded)
      return problem === undefined ? decoded : at.issues.fail(at, problem, value)
    },
    encode: (value) => ({
      kind: value.kind,
      ...encodeParams(value as unknown as Record<string, unknown>, paramsOf(value.kind))
    })
  }
}

// -------------------------------------------------------------------------------------
// the sections of a pipeline, in the order the layers wrap one another
// -------------------------------------------------------------------------------------

const breaker = kinds<BreakerConfig>(
  {
    consecutive: { threshold: req(positiveCount, 'the failures in a row that open the circuit') },
    count: {
      size: req(windowSize, 'how many of the last calls count'),
      minimumCalls: opt(positiveCount, 'the calls the window needs before it may open (default size)'),
      failureRate: req(ratio, 'the share of failures that opens the circuit')
    },
    sampling: {
      window: req(duration, 'how far back outcomes count'),
      minThroughput: req(positiveCount, 'the outcomes the window needs before it may open'),
      failureRate: req(ratio, 'the share of failures that opens the circuit'),
      buckets: opt(positiveCount, "the buckets of a fleet's window (default 10)")
    }
  },
  'a circuit breaker (Breaker.consecutive, count or sampling)',
  {
    halfOpenAfter: req(schedule, 'the waits before a probe'),
    probes: opt(positiveCount, 'the probes of a half-open circuit (default 1)')
  },
  (b) =>
    b.kind === 'count' && b.minimumCalls !== undefined && b.minimumCalls > b.size
      ? `minimumCalls at most size (${b.size})`
      : undefined
)

const SECTIONS = {
  timeout: opt(duration, 'the time each attempt has (Timeout.timeout), innermost'),
  rateLimit: opt(
    kinds<RateLimitConfig>(
      {
        gcra: {
          rate: req(positive, 'the tokens every `per`'),
          per: req(duration, 'the period of `rate`'),
          burst: req(positiveCount, 'the tokens the bucket holds')
        },
        fixedWindow: {
          limit: req(positiveCount, 'the calls in each window'),
          window: req(duration, 'the length of a window')
        },
        slidingWindow: {
          limit: req(positiveCount, 'the calls in any window'),
          window: req(duration, 'the length of the window')
        }
      },
      'a rate limit on the attempts (RateLimiter.gcra, fixedWindow or slidingWindow)'
    ),
    'the pace of the attempts, around the timeout'
  ),
  breaker: opt(breaker, 'the circuit breaker, around each attempt'),
  throttle: opt(
    section<ThrottleConfig>(
      {
        k: opt(
          number('a finite number >= 1', isAtLeast(1), { type: 'number', minimum: 1 }),
          'the multiplier of the accepts (default 2)'
        ),
        window: opt(duration, 'how far back requests and accepts count (default 2 minutes)'),
        buckets: opt(
          number(`a whole number in [1, ${MAX_BUCKETS}]`, (u): u is number => isPositiveCount(u) && u <= MAX_BUCKETS, {
            type: 'integer',
            minimum: 1,
            maximum: MAX_BUCKETS
          }),
          "the window's buckets (default 10)"
        )
      },
      'a client-side adaptive throttle (AdaptiveThrottle.make)'
    ),
    'the adaptive throttle, around the breaker: it drops attempts while the backend refuses'
  ),
  retry: opt(schedule, 'the retry schedule (retrying), around the breaker'),
  budget: opt(
    kinds<BudgetConfig>(
      {
        retryThrottle: {
          maxTokens: req(tokens, "the bucket's tokens"),
          tokenRatio: req(tokens, 'the tokens a success gives back')
        }
      },
      'a retry budget (Budget.retryThrottle)'
    ),
    "the retries' budget, asked before each retry"
  ),
  hedging: opt(
    section<HedgingConfig>(
      {
        delays: req(schedule, 'the waits between hedges'),
        maxConcurrent: opt(positiveCount, 'the attempts in flight at most')
      },
      'hedged attempts (Hedging.hedging)'
    ),
    'hedging instead of retry'
  ),
  bulkhead: opt(
    section<BulkheadConfig>(
      {
        maxConcurrent: req(positiveCount, 'the runs at once'),
        maxQueue: req(count, 'the runs waiting')
      },
      'a bulkhead (Bulkhead.make)'
    ),
    'the runs in progress, around the retry'
  ),
  adaptiveLimit: opt(
    kinds<AdaptiveLimitConfig>(
      {
        aimd: {
          backoffRatio: req(backoffRatio, 'what a drop or a slow window multiplies the limit by'),
          increase: opt(positiveCount, 'what a busy window adds to the limit (default 1)'),
          latencyThreshold: opt(duration, 'the mean latency above which a window is slow')
        },
        gradient: {
          tolerance: opt(tolerance, 'the latency taken for no queueing, times the no-load latency (default 1.5)'),
          smoothing: opt(ratio, 'how much of a new limit is taken each window (default 0.2)'),
          longWindow: opt(positiveCount, 'the windows the no-load latency averages (default 600)'),
          queueSize: opt(nonNegative, "the calls allowed to queue (default the limit's square root)")
        }
      },
      'an adaptive concurrency limit (AdaptiveLimit.make with aimd or gradient)',
      {
        min: req(positiveCount, 'the lowest limit'),
        max: req(positiveCount, 'the highest limit'),
        initial: req(positiveCount, 'the limit to start from'),
        window: opt(duration, 'the shortest window of samples (default 1s)'),
        minSamples: opt(positiveCount, 'the samples a window needs (default 10)'),
        maxQueue: opt(count, 'the runs waiting (default 0)'),
        queueTimeout: opt(duration, 'the longest a run waits')
      },
      (a) =>
        a.min <= a.initial && a.initial <= a.max
          ? undefined
          : `min <= initial <= max (received min ${a.min}, initial ${a.initial}, max ${a.max})`
    ),
    'the runs in progress by a learned limit, around the retry (instead of a bulkhead)'
  ),
  fallback: opt(
    section<FallbackConfig>(
      { on: req(list(choice(FALLBACK_REASONS)), 'the stop reasons the fallback answers') },
      'when the fallback answers (Fallback.stoppedBy)'
    ),
    'the fallback, outermost'
  ),
  key: opt(
    section<KeyConfig>(
      {
        template: req(template, 'the key of a call'),
        maxKeys: req(positiveCount, 'the keys kept at most'),
        idleAfter: opt(duration, 'how long an unused key is kept')
      },
      'policies per key (Keyed.make)'
    ),
    'what the pipeline is kept by'
  ),
  store: opt(
    section<StoreConfig>(
      {
        kind: req(choice(['redis'] as const), 'the store'),
        prefix: req(name, 'the start of every key'),
        timeout: opt(duration, 'the longest a call to the store is waited for'),
        fallback: opt(choice(['local', 'allow', 'refuse'] as const), 'what goes on while it does not answer')
      },
      'a Redis store shared by a fleet'
    ),
    'where a fleet shares the breaker, rate limit, throttle and budget'
  )
} as const

const pipeline = section<PipelineConfig>(SECTIONS, 'a pipeline', (p) =>
  p.retry !== undefined && p.hedging !== undefined
    ? 'either "retry" or "hedging", not both: a pipeline retries or hedges'
    : p.budget !== undefined && p.retry === undefined && p.hedging === undefined
    ? 'a "retry" or "hedging" for the budget to limit'
    : p.bulkhead !== undefined && p.adaptiveLimit !== undefined
    ? 'either "bulkhead" or "adaptiveLimit", not both: one bound on the runs in progress'
    : undefined
)

const DOCUMENT_DOC = 'a policy document: { "policies": { "<name>": <pipeline> } }'

const decodeDocument = (u: unknown, at: At): PolicyConfig | undefined => {
  const entries = entriesOf(u)
  if (entries === undefined) return at.issues.fail(at, DOCUMENT_DOC, u)
  const top = decodeParams(entries, { $schema: opt(anyString, ''), policies: req(anyRecord, '') }, at)
  const raw = top.policies as ReadonlyMap<string, unknown> | undefined
  if (raw === undefined) return undefined
  const policiesAt = child(at, 'policies', entries.get('policies'))
  if (raw.size > MAX_POLICIES)
    return at.issues.fail(policiesAt, `at most ${MAX_POLICIES} policies`, `${raw.size} policies`)
  const before = at.issues.total
  const policies: Record<string, PipelineConfig> = {}
  for (const [key, value] of raw) {
    const here = child(policiesAt, key, value)
    if (!(key.length <= MAX_NAME && NAME.test(key))) {
      at.issues.fail(here, NAME_DOC, key, { got: `the name ${showValue(key)}` })
      continue
    }
    const decoded = pipeline.decode(value, here)
    if (decoded !== undefined) policies[key] = decoded
  }
  if (at.issues.total !== before) return undefined
  return top.$schema === undefined ? { policies } : { $schema: top.$schema as string, policies }
}

/** The `policies` object, read as a map: its pipelines are decoded by name. */
const anyRecord: Field<ReadonlyMap<string, unknown>> = {
  doc: 'an object of pipelines by name',
  schema: {},
  decode: (value, at) => entriesOf(value) ?? at.issues.fail(at, 'an object of pipelines by name', value),
  encode: () => null
}

const encodeDocument = (config: PolicyConfig): PolicyConfigJson => {
  const policies: Record<string, Json> = {}
  // by name: one document, however its pipelines were ordered, has one text
  for (const key of Object.keys(config.policies).sort()) policies[key] = pipeline.encode(config.policies[key])
  return config.$schema === undefined ? { policies } : { $schema: config.$schema, policies }
}

/** Structural equality of a decoded document and a value (already found valid: of bounded depth). */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
  return (
    ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  )
}

const validateDocument = (u: unknown, context: t.Context): E.Either<t.Errors, PolicyConfig> => {
  const issues = new Issues()
  const decoded = decodeDocument(u, { path: '', context, issues })
  return decoded !== undefined && issues.total === 0 ? E.right(decoded) : E.left(issues.result(u, context))
}

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

/**
 * The io-ts codec of a policy document: decodes parsed JSON to a {@link PolicyConfig} (durations in ms), and encodes
 * one back to its canonical JSON (keys in the grammar's order, durations in ms).
 *
 * **Details**
 *
 * - Every key is checked: an unknown one is an error with the nearest known key as a hint (`"treshold"`: did you
 *   mean `"threshold"`?), and so is an unknown `kind`. Paths start at the document's root
 *   (`policies.payments.breaker.threshold`; a name that is no identifier is quoted: `policies["payments-api"]`).
 * - Durations are `ScheduleConfig.Duration`s (`"250ms"`, `"2s"`, a number of ms), and must be > 0; rates and
 *   thresholds are checked to their ranges (a `failureRate` in `(0, 1]`, a `threshold` a whole number >= 1, ...).
 * - Schedules (`retry`, `breaker.halfOpenAfter`, `hedging.delays`) are decoded by `ScheduleConfigCodec`, with its
 *   bounds (nested at most 32 deep) and its messages.
 * - A key `template` must name at least one field, each one of {@link KEY_FIELDS}.
 * - A pipeline has `retry` or `hedging`, not both; a `budget` needs one of them.
 * - At most 1,000 pipelines; at most 20 issues are listed, the rest counted (`ConfigError.omitted`). It never
 *   throws, and reads nothing it does not know: a huge value under an unknown key is one issue.
 *
 * @example
 * import { PolicyConfigCodec } from 'fp-ts-retry/PolicyConfig'
 * import * as assert from 'assert'
 *
 * const document = {
 *   policies: {
 *     payments: {
 *       timeout: '2s',
 *       breaker: { kind: 'consecutive', threshold: 5, halfOpenAfter: { constant: '30s' } },
 *       retry: { exponential: '100ms', maxRetries: 3 }
 *     }
 *   }
 * }
 * const decoded = PolicyConfigCodec.decode(document)
 * assert.ok(decoded._tag === 'Right')
 * if (decoded._tag === 'Right') {
 *   assert.strictEqual(decoded.right.policies.payments.timeout, 2_000)
 *   assert.deepStrictEqual(PolicyConfigCodec.encode(decoded.right).policies, {
 *     payments: {
 *       timeout: 2_000,
 *       breaker: { kind: 'consecutive', threshold: 5, halfOpenAfter: { constant: 30_000 } },
 *       retry: { exponential: 100, maxRetries: 3 }
 *     }
 *   })
 * }
 *
 * @category codecs
 * @since 1.0.0
 */
export const PolicyConfigCodec: t.Type<PolicyConfig, PolicyConfigJson, unknown> = new t.Type<
  PolicyConfig,
  PolicyConfigJson,
  unknown
>(
  'PolicyConfig',
  (u): u is PolicyConfig => {
    const decoded = validateDocument(u, [])
    return E.isRight(decoded) && sameJson(decoded.right, u)
  },
  (u, c) => validateDocument(u, c),
  encodeDocument
)

/**
 * Decodes a document to a {@link PolicyConfig}, or to a `ScheduleConfig.ConfigError` listing its issues, one line
 * each (`at policies.payments.breaker.kind: expected one of "consecutive", "count", "sampling", got "consecutve"
 * (did you mean "consecutive"?)`).
 *
 * @example
 * import { parse } from 'fp-ts-retry/PolicyConfig'
 * import * as assert from 'assert'
 *
 * const result = parse({ policies: { payments: { breaker: { kind: 'consecutive', treshold: 5, halfOpenAfter: { constant: '1s' } } } } })
 * assert.ok(result._tag === 'Left')
 * if (result._tag === 'Left') {
 *   assert.strictEqual(
 *     result.left.message,
 *     'at policies.payments.breaker.treshold: expected one of the keys "kind", "threshold", "halfOpenAfter", "probes", got the unknown key "treshold" (did you mean "threshold"?)\n' +
 *       'at policies.payments.breaker.threshold: expected a whole number >= 1, got nothing'
 *   )
 * }
 *
 * @category interpreters
 * @since 1.0.0
 */
export const parse = (u: unknown): E.Either<ConfigError, PolicyConfig> =>
  pipe(PolicyConfigCodec.decode(u), E.mapLeft(toConfigError))

/**
 * The canonical JSON text of a document: the same for one document however it was written (key order, `"1s"` or
 * `1000`), so that two documents compare by their text (`Policies` tells which pipelines a reload changed by it).
 *
 * @example
 * import { format, PolicyConfigCodec } from 'fp-ts-retry/PolicyConfig'
 * import * as assert from 'assert'
 *
 * const a = PolicyConfigCodec.decode({ policies: { p: { timeout: '1s', bulkhead: { maxQueue: 0, maxConcurrent: 2 } } } })
 * assert.ok(a._tag === 'Right')
 * if (a._tag === 'Right') assert.strictEqual(format(a.right), '{"policies":{"p":{"timeout":1000,"bulkhead":{"maxConcurrent":2,"maxQueue":0}}}}')
 *
 * @category utils
 * @since 1.0.0
 */
export const format = (config: PolicyConfig): string => JSON.stringify(encodeDocument(config))

/**
 * The canonical JSON text of one pipeline, as {@link format} writes it inside a document.
 *
 * @example
 * import { formatPipeline } from 'fp-ts-retry/PolicyConfig'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(formatPipeline({ bulkhead: { maxQueue: 0, maxConcurrent: 2 }, timeout: 1_000 }), '{"timeout":1000,"bulkhead":{"maxConcurrent":2,"maxQueue":0}}')
 *
 * @category utils
 * @since 1.0.0
 */
export const formatPipeline = (config: PipelineConfig): string => JSON.stringify(pipeline.encode(config))

/**
 * A JSON Schema (draft-07) of the document, generated from the same table the codec reads, for an editor's
 * completion and checks (`"$schema": "./policy.schema.json"`).
 *
 * **Details**
 *
 * - Every section and key is there, with its description, type and range; unknown keys are refused
 *   (`additionalProperties: false`), and a `kind` picks its keys (`oneOf`).
 * - A schedule's keys are listed with their meaning, but its values are the codec's to check (a schema cannot say
 *   "exactly one constructor key" simply): the codec is the judge, the schema the editor's help.
 *
 * @example
 * import { jsonSchema } from 'fp-ts-retry/PolicyConfig'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(jsonSchema.$schema, 'http://json-schema.org/draft-07/schema#')
 * assert.deepStrictEqual(jsonSchema.required, ['policies'])
 *
 * @category utils
 * @since 1.0.0
 */
export const jsonSchema: { readonly [key: string]: Json } = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'fp-ts-retry policy document',
  description: DOCUMENT_DOC,
  type: 'object',
  properties: {
    $schema: { type: 'string' },
    policies: {
      type: 'object',
      maxProperties: MAX_POLICIES,
      propertyNames: { pattern: NAME.source, maxLength: MAX_NAME },
      additionalProperties: pipeline.schema
    }
  },
  required: ['policies'],
  additionalProperties: false
}
