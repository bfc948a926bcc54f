/**
 * Schedules as configuration: an io-ts codec for a JSON description of a schedule, and its interpreter.
 *
 * Operators tune retries from a JSON file, an environment variable or a service config, without a redeploy.
 * Decoding never throws: a bad config gives every error at once, each with its path and the expected form.
 *
 * @since 0.1.0
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as t from 'io-ts'
import ms from 'ms'
import { showValue } from './internal/show'
import * as Schedule from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * An error code a retry condition matches: a string (`"ECONNRESET"`) or a number (`503`).
 *
 * **Details**
 *
 * Codes compare as strings when matched: `503` and `"503"` are one code.
 *
 * @example
 * import type { Code } from 'fp-ts-retry/ScheduleConfig'
 *
 * const transient: ReadonlyArray<Code> = ['ECONNRESET', 'ETIMEDOUT', 429, 503]
 *
 * @category model
 * @since 0.1.0
 */
export type Code = string | number

/**
 * What a config may add to any schedule, applied in this order: `cap`, `jitter`, `minDelay`, `maxRetries`,
 * `maxElapsed`, `maxCumulativeDelay`, `retryOn` / `neverRetryOn`. Durations are in ms once decoded.
 *
 * @example
 * import type { Modifiers } from 'fp-ts-retry/ScheduleConfig'
 *
 * const modifiers: Modifiers = { cap: 10_000, jitter: 'full', maxRetries: 5, neverRetryOn: [400, 404] }
 *
 * @category model
 * @since 0.1.0
 */
export interface Modifiers {
  readonly cap?: number
  readonly jitter?: 'full' | 'equal' | 'none'
  readonly minDelay?: number
  readonly maxRetries?: number
  readonly maxElapsed?: number
  readonly maxCumulativeDelay?: number
  readonly retryOn?: ReadonlyArray<Code>
  readonly neverRetryOn?: ReadonlyArray<Code>
}

/**
 * The constructor part of a config: exactly one of these keys (`factor` goes with `exponential`,
 * `maxDoublings` with `truncatedBinaryExponential`, and `decorrelatedJitter` needs its `cap`).
 *
 * @example
 * import type { Kind } from 'fp-ts-retry/ScheduleConfig'
 *
 * const kinds: ReadonlyArray<Kind> = [
 *   { exponential: 100, factor: 3 },
 *   { truncatedBinaryExponential: 10_000, maxDoublings: 9 },
 *   { decorrelatedJitterV2: 100 },
 *   { delays: [10, 100] },
 *   { union: [{ recurs: 2 }, { constant: 1000 }] }
 * ]
 *
 * @category model
 * @since 0.1.0
 */
export type Kind =
  | { readonly exponential: number; readonly factor?: number }
  | { readonly constant: number }
  | { readonly linear: number }
  | { readonly fibonacci: number }
  | { readonly truncatedBinaryExponential: number; readonly maxDoublings: number }
  | { readonly decorrelatedJitter: number; readonly cap: number }
  | { readonly decorrelatedJitterV2: number }
  | { readonly randomBetween: readonly [number, number] }
  | { readonly delays: ReadonlyArray<number> }
  | { readonly recurs: number }
  | { readonly forever: true }
  | { readonly stop: true }
  | { readonly intersect: ReadonlyArray<ScheduleConfig> }
  | { readonly union: ReadonlyArray<ScheduleConfig> }
  | { readonly andThen: ReadonlyArray<ScheduleConfig> }

/**
 * A decoded schedule config: one constructor key and optional modifiers, durations in ms.
 *
 * @example
 * import type { ScheduleConfig } from 'fp-ts-retry/ScheduleConfig'
 * import { toSchedule } from 'fp-ts-retry/ScheduleConfig'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const config: ScheduleConfig = { exponential: 100, cap: 1000, maxRetries: 5 }
 * assert.deepStrictEqual(Schedule.delays(toSchedule(config)), [100, 200, 400, 800, 1000])
 *
 * @category model
 * @since 0.1.0
 */
export type ScheduleConfig = Kind & Modifiers

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

const DURATION = 'a duration like "250ms" or a number of ms'

/** How deep configs may nest: deeper (or cyclic) input is an error, not a stack overflow. */
const MAX_DEPTH = 32

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

/** Collects the errors of several fields instead of stopping at the first. */
class Errors {
  readonly list: Array<t.ValidationError> = []
  add(value: unknown, context: t.Context, expected: string): undefined {
    this.list.push({ value, context, message: expected })
    return undefined
  }
}

const at = (context: t.Context, key: string, type: t.Decoder<unknown, unknown>, actual: unknown): t.Context => [
  ...context,
  { key, type, actual }
]

/** A finite number `>= 0`, with `-0` read as `0` (so that a value reads the same after a JSON round trip). */
const toDuration = (value: unknown): number | undefined =>
  typeof value === 'number' && value >= 0 && value !== Infinity ? value + 0 : undefined

/**
 * A duration: a number of ms (finite, `>= 0`) or a string such as `"250ms"`, `"1.5s"`, `"2m"`, `"1h"` (parsed by
 * the `ms` package). Encodes to a number of ms.
 *
 * **Details**
 *
 * A string without a unit is a number of ms (`"250"`); units are `ms`, `s`, `m`, `h`, `d`, `w`, `y` and their
 * long forms (`"2 minutes"`), in any case. Negative, infinite and unparsable values fail.
 *
 * @example
 * import { Duration } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Duration.decode('1.5s'), { _tag: 'Right', right: 1500 })
 * assert.deepStrictEqual(Duration.decode(250), { _tag: 'Right', right: 250 })
 * assert.strictEqual(Duration.decode('ten')._tag, 'Left')
 *
 * @category codecs
 * @since 0.1.0
 */
export const Duration: t.Type<number, number, unknown> = new t.Type<number, number, unknown>(
  'Duration',
  (u): u is number => toDuration(u) !== undefined,
  (u, c) => {
    // ms parses strings of up to 100 characters and answers undefined for anything it cannot read.
    const ms_ = typeof u === 'string' && u.trim() !== '' ? (ms(u.trim() as ms.StringValue) as number | undefined) : u
    const value = toDuration(ms_)
    return value !== undefined ? t.success(value) : t.failure(u, c, DURATION)
  },
  (a) => a
)

const KINDS = [
  'exponential',
  'constant',
  'linear',
  'fibonacci',
  'truncatedBinaryExponential',
  'decorrelatedJitter',
  'decorrelatedJitterV2',
  'randomBetween',
  'delays',
  'recurs',
  'forever',
  'stop',
  'intersect',
  'union',
  'andThen'
] as const

type KindName = (typeof KINDS)[number]

const MODIFIERS = ['cap', 'jitter', 'minDelay', 'maxRetries', 'maxElapsed', 'maxCumulativeDelay', 'retryOn', 'neverRetryOn'] as const

/** The keys that go with one constructor only, and that constructor. */
const PARAMETERS = { factor: 'exponential', maxDoublings: 'truncatedBinaryExponential' } as const

const isParameter = (key: string): key is keyof typeof PARAMETERS => Object.prototype.hasOwnProperty.call(PARAMETERS, key)

/** Every key, in the order a canonical config (decoded, encoded, described) lists them. */
const KEYS: ReadonlyArray<string> = [...KINDS, ...Object.keys(PARAMETERS), ...MODIFIERS]

/** The constructors whose `cap` is their own argument (`decorrelatedJitter`'s cap, `decorrelatedJitterV2`'s maxDelay), not `capped`. */
const OWN_CAP: ReadonlyArray<string> = ['decorrelatedJitter', 'decorrelatedJitterV2']

const NESTED: ReadonlyArray<string> = ['intersect', 'union', 'andThen']

const JITTERS = ['full', 'equal', 'none'] as const

const isKind = (key: string): key is KindName => (KINDS as ReadonlyArray<string>).includes(key)

const oneOf = (names: ReadonlyArray<string>): string => names.map((n) => JSON.stringify(n)).join(', ')

const describeShape = `an object with exactly one of ${oneOf(KINDS)}, such as {"exponential": "100ms", "maxRetries": 5}`

const validateConfig = (u: unknown, c: t.Context, errors: Errors, depth: number): ScheduleConfig | undefined => {
  if (depth > MAX_DEPTH) return errors.add(u, c, `a schedule config nested at most ${MAX_DEPTH} levels deep`)
  if (!isRecord(u)) return errors.add(u, c, describeShape)
  // A key whose value is undefined is absent, as in io-ts's t.partial (JSON has no undefined).
  const keys = Object.keys(u).filter((key) => u[key] !== undefined)
  const kinds = keys.filter(isKind)
  const kind: KindName | undefined = kinds[0]
  const out: Record<string, unknown> = {}
  const before = errors.list.length

  const field = <A>(key: string, check: (value: unknown, context: t.Context) => A | undefined): A | undefined => {
    const value = u[key]
    if (value === undefined) return undefined
    const result = check(value, at(c, key, ScheduleConfigCodec, value))
    if (result !== undefined) out[key] = result
    return result
  }
  const duration = (value: unknown, context: t.Context): number | undefined =>
    pipe(
      Duration.validate(value, context),
      E.getOrElseW(() => errors.add(value, context, DURATION))
    )
  const count = (value: unknown, context: t.Context): number | undefined =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
      ? value + 0
      : errors.add(value, context, 'a whole number >= 0')
  /** Every item checked (Array.from visits the holes of a sparse array too), every error kept. */
  const list = <A>(
    value: ReadonlyArray<unknown>,
    context: t.Context,
    item: (value: unknown, context: t.Context) => A | undefined
  ): ReadonlyArray<A> | undefined => {
    const items = Array.from(value, (x, i) => item(x, at(context, String(i), ScheduleConfigCodec, x)))
    return items.every((x) => x !== undefined) ? (items as ReadonlyArray<A>) : undefined
  }
  const codes = (value: unknown, context: t.Context): ReadonlyArray<Code> | undefined =>
    Array.isArray(value)
      ? list(value, context, (code, ctx) =>
          typeof code === 'string' || (typeof code === 'number' && Number.isFinite(code))
            ? code
            : errors.add(code, ctx, 'an error code (a string or a number)')
        )
      : errors.add(value, context, 'a list of error codes (strings or numbers)')
  const configs = (value: unknown, context: t.Context): ReadonlyArray<ScheduleConfig> | undefined =>
    Array.isArray(value) && value.length > 0
      ? list(value, context, (item, ctx) => validateConfig(item, ctx, errors, depth + 1))
      : errors.add(value, context, 'a non-empty list of schedule configs')

  if (kind === undefined) errors.add(u, c, describeShape)
  for (const other of kinds.slice(1)) {
    errors.add(u[other], at(c, other, ScheduleConfigCodec, u[other]), `no constructor key besides ${JSON.stringify(kind)}`)
  }
  // Unknown keys are errors, so that a typo such as "maxRetry" is not silently ignored.
  const parameters = Object.keys(PARAMETERS).filter((key) => isParameter(key) && PARAMETERS[key] === kind)
  const allowed = kind === undefined ? KEYS : [kind, ...parameters, ...MODIFIERS]
  for (const key of keys) {
    if (isKind(key) || allowed.includes(key)) continue
    errors.add(
      u[key],
      at(c, key, ScheduleConfigCodec, u[key]),
      isParameter(key)
        ? `no ${JSON.stringify(key)}: it goes with ${JSON.stringify(PARAMETERS[key])} only`
        : `one of the keys ${oneOf(allowed)}`
    )
  }

  let base: number | undefined
  switch (kind) {
    case undefined:
      break
    case 'exponential':
    case 'constant':
    case 'linear':
    case 'fibonacci':
    case 'truncatedBinaryExponential':
    case 'decorrelatedJitter':
    case 'decorrelatedJitterV2':
      base = field(kind, duration)
      break
    case 'randomBetween':
      field(kind, (value, context) => {
        if (!Array.isArray(value) || value.length !== 2) return errors.add(value, context, `a pair of durations [min, max]`)
        const pair = list(value, context, duration)
        if (pair === undefined) return undefined
        const [min, max] = pair
        return min <= max ? ([min, max] as const) : errors.add(value, context, 'a pair [min, max] with min <= max')
      })
      break
    case 'delays':
      field(kind, (value, context) =>
        Array.isArray(value) ? list(value, context, duration) : errors.add(value, context, `a list of durations`)
      )
      break
    case 'recurs':
      field(kind, count)
      break
    case 'forever':
    case 'stop':
      field(kind, (value, context) => (value === true ? true : errors.add(value, context, 'true')))
      break
    case 'intersect':
    case 'union':
    case 'andThen':
      field(kind, configs)
      break
  }

  if (kind === 'exponential') {
    field('factor', (value, context) =>
      typeof value === 'number' && value >= 1 && value !== Infinity
        ? value
        : errors.add(value, context, 'a growth factor: a finite number >= 1')
    )
  }
  if (kind === 'truncatedBinaryExponential') {
    if (u.maxDoublings === undefined) {
      errors.add(
        undefined,
        at(c, 'maxDoublings', ScheduleConfigCodec, undefined),
        'a number of doublings for "truncatedBinaryExponential", such as {"truncatedBinaryExponential": "10s", "maxDoublings": 9}'
      )
    } else field('maxDoublings', count)
  }
  const cap = field('cap', duration)
  if (kind === 'decorrelatedJitter' && u.cap === undefined) {
    errors.add(undefined, at(c, 'cap', Duration, undefined), 'a cap for "decorrelatedJitter", such as {"decorrelatedJitter": "5ms", "cap": "2s"}')
  }
  // A cap below the constructor's value contradicts it: every delay (or, for truncatedBinaryExponential, the
  // longest wait it names) would be cut, as for a decorrelatedJitter whose cap is below its base.
  if (cap !== undefined && base !== undefined && cap < base) {
    const what =
      kind === 'truncatedBinaryExponential'
        ? 'the longest delay'
        : kind === 'decorrelatedJitterV2'
          ? 'the median first retry delay'
          : 'the base delay'
    errors.add(u.cap, at(c, 'cap', Duration, u.cap), `a cap >= ${what} (${base} ms)`)
  }
  field('jitter', (value, context) =>
    (JITTERS as ReadonlyArray<unknown>).includes(value)
      ? (value as Modifiers['jitter'])
      : errors.add(value, context, `one of ${oneOf(JITTERS)}`)
  )
  const min = field('minDelay', duration)
  if (min !== undefined && cap !== undefined && min > cap) {
    errors.add(u.minDelay, at(c, 'minDelay', Duration, u.minDelay), `a minimum delay <= the cap (${cap} ms)`)
  }
  field('maxRetries', count)
  field('maxElapsed', duration)
  field('maxCumulativeDelay', duration)
  field('retryOn', codes)
  field('neverRetryOn', codes)

  return kind !== undefined && errors.list.length === before ? (out as unknown as ScheduleConfig) : undefined
}

/** Equal as JSON: same keys with defined values (in any order), same items, same numbers (`Object.is`). */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  if (isRecord(a)) {
    if (!isRecord(b)) return false
    const keys = Object.keys(a).filter((k) => a[k] !== undefined)
    return keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => sameJson(a[k], b[k]))
  }
  return Object.is(a, b)
}

/** The canonical JSON of a config: keys in one fixed order, none undefined, nested configs alike. */
const encodeConfig = (config: ScheduleConfig): ScheduleConfigJson => {
  const record = config as unknown as Record<string, unknown>
  const out: Record<string, Schedule.Json> = {}
  for (const key of KEYS) {
    const value = record[key]
    if (value === undefined) continue
    out[key] = NESTED.includes(key)
      ? (value as ReadonlyArray<ScheduleConfig>).map(encodeConfig)
      : Array.isArray(value)
        ? [...(value as ReadonlyArray<Schedule.Json>)]
        : (value as Schedule.Json)
  }
  return out
}

/**
 * The JSON a config encodes to: the decoded form, with every duration as a number of ms and the keys in one
 * fixed order.
 *
 * @example
 * import { ScheduleConfigCodec, type ScheduleConfigJson } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const json: ScheduleConfigJson = ScheduleConfigCodec.encode({ maxRetries: 3, constant: 10 })
 * assert.strictEqual(JSON.stringify(json), '{"constant":10,"maxRetries":3}')
 *
 * @category model
 * @since 0.1.0
 */
export type ScheduleConfigJson = { readonly [key: string]: Schedule.Json }

/**
 * The io-ts codec of {@link ScheduleConfig}.
 *
 * **Details**
 *
 * - Compact form: one constructor key and optional modifiers, e.g.
 *   `{ "exponential": "100ms", "cap": "10s", "jitter": "full", "maxRetries": 5, "maxElapsed": "30s" }`.
 * - `{ "truncatedBinaryExponential": "10s", "maxDoublings": 9 }` is
 *   `truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10_000 })` (`maxDoublings` required);
 *   `{ "decorrelatedJitterV2": "100ms", "cap": "10s" }` is `decorrelatedJitterV2(100, 10_000)` (`cap` optional).
 * - Nested form: `{ "intersect": [config, ...] }`, `{ "union": [...] }`, `{ "andThen": [...] }`, which take
 *   modifiers too.
 * - Unknown keys, a missing or second constructor key, negative or unparsable durations, a `factor` below 1,
 *   a `maxDoublings` that is not a whole number, a `cap` below the base delay (for `truncatedBinaryExponential`,
 *   its longest delay; for `decorrelatedJitterV2`, its median first retry delay) are all errors, reported
 *   together; decoding never throws.
 * - `encode` writes durations as numbers of ms; decoding the result gives the same config.
 *
 * @example
 * import { ScheduleConfigCodec } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const decoded = ScheduleConfigCodec.decode({ constant: '10ms', maxRetries: 3 })
 * assert.deepStrictEqual(decoded, { _tag: 'Right', right: { constant: 10, maxRetries: 3 } })
 * if (decoded._tag === 'Right') assert.deepStrictEqual(ScheduleConfigCodec.encode(decoded.right), { constant: 10, maxRetries: 3 })
 *
 * @category codecs
 * @since 0.1.0
 */
export const ScheduleConfigCodec: t.Type<ScheduleConfig, ScheduleConfigJson, unknown> = new t.Type<
  ScheduleConfig,
  ScheduleConfigJson,
  unknown
>(
  'ScheduleConfig',
  // Already decoded: valid, and every duration already a number of ms.
  (u): u is ScheduleConfig => {
    const errors = new Errors()
    const config = validateConfig(u, [], errors, 0)
    return config !== undefined && sameJson(config, u)
  },
  (u, c) => {
    const errors = new Errors()
    const config = validateConfig(u, c, errors, 0)
    return config !== undefined && errors.list.length === 0 ? t.success(config) : t.failures(errors.list)
  },
  encodeConfig
)

// -------------------------------------------------------------------------------------
// error reporting
// -------------------------------------------------------------------------------------

/**
 * One problem in a config: where (`schedule.cap`, `schedule.intersect[1].maxRetries`), what was expected and
 * what was found.
 *
 * @example
 * import { parse } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const result = parse({ intersect: [{ constant: 10 }, { recurs: -1 }] })
 * assert.ok(result._tag === 'Left')
 * if (result._tag === 'Left') {
 *   assert.deepStrictEqual(result.left.issues, [{ path: 'schedule.intersect[1].recurs', expected: 'a whole number >= 0', actual: -1 }])
 * }
 *
 * @category error reporting
 * @since 0.1.0
 */
export interface ConfigIssue {
  readonly path: string
  readonly expected: string
  readonly actual: unknown
}

/**
 * A config that does not decode: every issue, and a readable message with one line per issue.
 *
 * @example
 * import { parse } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const result = parse({ constant: 'a second', maxRetries: 1.5 })
 * assert.ok(result._tag === 'Left')
 * if (result._tag === 'Left') {
 *   assert.strictEqual(result.left.issues.length, 2)
 *   assert.strictEqual(
 *     result.left.message,
 *     'at schedule.constant: expected a duration like "250ms" or a number of ms, got "a second"\n' +
 *       'at schedule.maxRetries: expected a whole number >= 0, got 1.5'
 *   )
 * }
 *
 * @category error reporting
 * @since 0.1.0
 */
export interface ConfigError {
  readonly _tag: 'ConfigError'
  readonly issues: ReadonlyArray<ConfigIssue>
  readonly message: string
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** `schedule.intersect[1].cap`: a list index in brackets, a key that is not an identifier quoted. */
const pathOf = (context: t.Context): string => {
  let path = 'schedule'
  for (let i = 1; i < context.length; i++) {
    const key = context[i].key
    path += Array.isArray(context[i - 1].actual) ? `[${key}]` : IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
  }
  return path
}

/** The value found, as JSON when it has one, shortened; never throws. */
const show = (value: unknown): string => (value === undefined ? 'nothing' : showValue(value))

/**
 * Turns io-ts validation errors of {@link ScheduleConfigCodec} into a {@link ConfigError}, one line per issue:
 * `at schedule.cap: expected a duration like "250ms" or a number of ms, got "ten"`.
 *
 * **Details**
 *
 * Paths start at `schedule`, the config's root, with `.key` and `[index]` (a key that is not an identifier is
 * quoted: `schedule["max-retries"]`). Values are shown as JSON, cut at 80 characters; it never throws.
 *
 * @example
 * import { ScheduleConfigCodec, toConfigError } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const decoded = ScheduleConfigCodec.decode({ exponential: '100ms', cap: 'ten' })
 * assert.ok(decoded._tag === 'Left')
 * if (decoded._tag === 'Left') {
 *   assert.strictEqual(toConfigError(decoded.left).message, 'at schedule.cap: expected a duration like "250ms" or a number of ms, got "ten"')
 * }
 *
 * @category error reporting
 * @since 0.1.0
 */
export const toConfigError = (errors: t.Errors): ConfigError => {
  const issues = errors.map((e) => ({ path: pathOf(e.context), expected: e.message ?? 'a valid value', actual: e.value }))
  return {
    _tag: 'ConfigError',
    issues,
    message: issues.map((i) => `at ${i.path}: expected ${i.expected}, got ${show(i.actual)}`).join('\n')
  }
}

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * Options of {@link toSchedule}.
 *
 * **Details**
 *
 * `codeOf` finds the error code that `retryOn` / `neverRetryOn` match; it returns `undefined` for an error without
 * one. The default is {@link defaultCodeOf}.
 *
 * @example
 * import { defaultCodeOf, type InterpretOptions } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * // an HTTP client that puts the status under response
 * const options: InterpretOptions = {
 *   codeOf: (e) => {
 *     const response = (e as { response?: { status?: unknown } }).response
 *     return typeof response?.status === 'number' ? response.status : defaultCodeOf(e)
 *   }
 * }
 * assert.strictEqual(options.codeOf?.({ response: { status: 503 } }), 503)
 *
 * @category interpreters
 * @since 0.1.0
 */
export interface InterpretOptions {
  readonly codeOf?: (error: unknown) => Code | undefined
}

/**
 * The error code `retryOn` / `neverRetryOn` look at by default: an error that is itself a string or a number,
 * else its `code`, else its `status`, else its `statusCode`, when that is a string or a number.
 *
 * **Details**
 *
 * Covers Node's system errors (`code: "ECONNRESET"`), most HTTP client errors (`status: 503`,
 * `statusCode: 503`) and plain codes used as errors (`TE.left(503)`). Anything else has no code
 * (`undefined`). Exported so that a custom `codeOf` can fall back on it.
 *
 * @example
 * import { defaultCodeOf } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(defaultCodeOf(Object.assign(new Error('reset'), { code: 'ECONNRESET' })), 'ECONNRESET')
 * assert.strictEqual(defaultCodeOf({ status: 503 }), 503)
 * assert.strictEqual(defaultCodeOf(429), 429)
 * assert.strictEqual(defaultCodeOf(new Error('no code')), undefined)
 *
 * @category utils
 * @since 0.1.0
 */
export const defaultCodeOf = (error: unknown): Code | undefined => {
  if (typeof error === 'string' || typeof error === 'number') return error
  if (typeof error !== 'object' || error === null) return undefined
  const record = error as Record<string, unknown>
  for (const key of ['code', 'status', 'statusCode']) {
    const value = record[key]
    if (typeof value === 'string' || typeof value === 'number') return value
  }
  return undefined
}

/** Whether the error's code is listed; codes compare as strings, so 503 and "503" are one code. */
const listed = (codes: ReadonlyArray<Code>, codeOf: (error: unknown) => Code | undefined) => {
  const set = new Set(codes.map(String))
  return (error: unknown): boolean => {
    const code = codeOf(error)
    return code !== undefined && set.has(String(code))
  }
}

const combine = (
  configs: ReadonlyArray<ScheduleConfig>,
  how: <I>(that: Schedule.Schedule<I>) => <J>(self: Schedule.Schedule<J>) => Schedule.Schedule<I & J>,
  options: InterpretOptions
): Schedule.Schedule<unknown> =>
  configs.slice(1).reduce<Schedule.Schedule<unknown>>((acc, c) => how(toSchedule(c, options))(acc), toSchedule(configs[0], options))

const kindToSchedule = (config: ScheduleConfig, options: InterpretOptions): Schedule.Schedule<unknown> => {
  if ('exponential' in config) return Schedule.exponential(config.exponential, config.factor)
  if ('constant' in config) return Schedule.constant(config.constant)
  if ('linear' in config) return Schedule.linear(config.linear)
  if ('fibonacci' in config) return Schedule.fibonacci(config.fibonacci)
  if ('truncatedBinaryExponential' in config) {
    return Schedule.truncatedBinaryExponential({ maxDoublings: config.maxDoublings, maxDelay: config.truncatedBinaryExponential })
  }
  if ('decorrelatedJitter' in config) return Schedule.decorrelatedJitter(config.decorrelatedJitter, config.cap)
  if ('decorrelatedJitterV2' in config) return Schedule.decorrelatedJitterV2(config.decorrelatedJitterV2, config.cap)
  if ('randomBetween' in config) return Schedule.randomBetween(config.randomBetween[0], config.randomBetween[1])
  if ('delays' in config) return Schedule.fromDelays(config.delays)
  if ('recurs' in config) return Schedule.recurs(config.recurs)
  if ('forever' in config) return Schedule.forever
  if ('stop' in config) return Schedule.stop
  if ('intersect' in config) return combine(config.intersect, Schedule.intersect, options)
  if ('union' in config) return combine(config.union, Schedule.union, options)
  return combine(config.andThen, Schedule.andThen, options)
}

/**
 * The schedule a decoded config describes.
 *
 * **Details**
 *
 * - Modifiers apply in a fixed order, whatever the order of the keys: the constructor, then `cap` (`capped`;
 *   for `decorrelatedJitter` the cap is the constructor's own, for `decorrelatedJitterV2` its `maxDelay`),
 *   `jitter` (after the cap, as in the AWS formulas), `minDelay`, `maxRetries` (intersect with `recurs`),
 *   `maxElapsed` (`upTo`), `maxCumulativeDelay`, and last the error-code conditions.
 * - `retryOn` retries only errors whose code is listed, `neverRetryOn` never retries a listed code; codes come
 *   from `options.codeOf` (default {@link defaultCodeOf}) and compare as strings (`503` matches `"503"`). An
 *   error without a code is in no list: `retryOn` does not retry it, `neverRetryOn` does.
 * - The schedule's `description` is `config(...)` with the config's canonical JSON (keys in a fixed order,
 *   durations in ms): the same for the same config however it was written, different when the config differs.
 *   A stored `RetryState` records it, so resuming under a changed config is detected. It does not record
 *   `codeOf`.
 *
 * @example
 * import { ScheduleConfigCodec, toSchedule } from 'fp-ts-retry/ScheduleConfig'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as E from 'fp-ts/Either'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const schedule = pipe(
 *   ScheduleConfigCodec.decode({ exponential: '100ms', cap: '1s', maxRetries: 5 }),
 *   E.map((config) => toSchedule(config))
 * )
 * assert.ok(E.isRight(schedule))
 * if (E.isRight(schedule)) {
 *   assert.deepStrictEqual(Schedule.delays(schedule.right), [100, 200, 400, 800, 1000])
 *   assert.strictEqual(schedule.right.description, 'config({"exponential":100,"cap":1000,"maxRetries":5})')
 * }
 *
 * @category interpreters
 * @since 0.1.0
 */
export const toSchedule = (config: ScheduleConfig, options: InterpretOptions = {}): Schedule.Schedule<unknown> => {
  let s = kindToSchedule(config, options)
  if (config.cap !== undefined && !OWN_CAP.some((kind) => kind in config)) s = Schedule.capped(config.cap)(s)
  if (config.jitter === 'full') s = Schedule.fullJitter(s)
  if (config.jitter === 'equal') s = Schedule.equalJitter(s)
  if (config.minDelay !== undefined) s = Schedule.minDelay(config.minDelay)(s)
  if (config.maxRetries !== undefined) s = Schedule.intersect(Schedule.recurs(config.maxRetries))(s)
  if (config.maxElapsed !== undefined) s = Schedule.upTo(config.maxElapsed)(s)
  if (config.maxCumulativeDelay !== undefined) s = Schedule.maxCumulativeDelay(config.maxCumulativeDelay)(s)
  const codeOf = options.codeOf ?? defaultCodeOf
  if (config.retryOn !== undefined) s = Schedule.whileInput(listed(config.retryOn, codeOf))(s)
  if (config.neverRetryOn !== undefined) s = Schedule.untilInput(listed(config.neverRetryOn, codeOf))(s)
  // Named by its canonical JSON: a stored run resumed under a changed config is then detected.
  return { ...s, description: `config(${JSON.stringify(encodeConfig(config))})` }
}

/**
 * Decodes a config (parsed JSON) straight to a schedule, or to a {@link ConfigError} listing every issue.
 *
 * @example
 * import { parse } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const result = parse({ exponential: '100ms', cap: 'ten' })
 * assert.ok(result._tag === 'Left')
 * if (result._tag === 'Left') {
 *   assert.strictEqual(result.left.message, 'at schedule.cap: expected a duration like "250ms" or a number of ms, got "ten"')
 * }
 *
 * @category interpreters
 * @since 0.1.0
 */
export const parse = (u: unknown, options: InterpretOptions = {}): E.Either<ConfigError, Schedule.Schedule<unknown>> =>
  pipe(
    ScheduleConfigCodec.decode(u),
    E.bimap(toConfigError, (config) => toSchedule(config, options))
  )
