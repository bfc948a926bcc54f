/**
 * Schedules as configuration: an io-ts codec for a JSON description of a schedule, and its interpreter.
 *
 * Operators tune retries from a JSON file, an environment variable or a service config, without a redeploy.
 * Decoding never throws: a bad config gives its errors at once, each with its path and the expected form.
 *
 * The grammar is one table: each constructor key (`exponential`, `intersect`, ...) and each modifier (`cap`,
 * `maxRetries`, ...) is one entry that says what its value is, how it decodes, how it builds the schedule (with
 * the public constructors and combinators of `Schedule`), how it encodes back and how it is documented. The
 * decoder, the encoder, {@link toSchedule} and {@link grammar} all read it.
 *
 * @since 0.1.0
 */
import * as E from 'fp-ts/Either'
import { identity, pipe } from 'fp-ts/function'
import * as t from 'io-ts'
import ms from 'ms'
import { didYouMean, issueLine } from './internal/hint'
import * as validate from './internal/validate'
import { isAtLeast, isCount, isDuration } from './internal/validate'
import * as Schedule from './Schedule'

// -------------------------------------------------------------------------------------
// bounds
// -------------------------------------------------------------------------------------

/** How deep configs may nest: deeper (or cyclic) input is an error, not a stack overflow. */
const MAX_DEPTH = 32

/** The most configs one decoding visits: a graph of shared objects cannot make it exponential. */
const MAX_CONFIGS = 1000

/** The longest list of error codes or of delays: longer input is rejected before any item is read. */
const MAX_ITEMS = 1000

/** The longest list of configs that `intersect`, `union` or `andThen` combine. */
const MAX_CONFIGS_PER_LIST = 100

/** The most issues one decoding reports one by one; the rest are counted in one line, "and K more". */
const MAX_ISSUES = 20

// -------------------------------------------------------------------------------------
// reading untrusted values: every read guarded, nothing read twice
// -------------------------------------------------------------------------------------

/** What a read that threw (a getter, a Proxy trap, a revoked Proxy) gives instead of a value. */
const UNREADABLE: unique symbol = Symbol('unreadable')

type Read<A> = A | typeof UNREADABLE

const attempt = <A>(f: () => A): Read<A> => {
  try {
    return f()
  } catch {
    return UNREADABLE
  }
}

/** `Array.isArray`, which throws on a revoked Proxy, as `false` then. */
const isArray = (u: unknown): u is ReadonlyArray<unknown> => attempt(() => Array.isArray(u)) === true

/** A plain object: not an array, a `Map`, a `Date`, a boxed string, ... (read through its tag, guarded). */
const isPlainObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === 'object' &&
  u !== null &&
  !isArray(u) &&
  attempt(() => Object.prototype.toString.call(u)) === '[object Object]'

/** The length of an array, when it can be read and is a count. */
const lengthOf = (u: ReadonlyArray<unknown>): number | undefined => {
  const length = attempt(() => u.length)
  return isCount(length) ? length : undefined
}

/**
 * The value found, for a message: JSON-like, shortened to `max` characters, and built in time proportional to
 * `max` whatever the value (a sparse array of length 2^32 − 1, a cycle, a getter that throws, a revoked Proxy).
 */
const show = (value: unknown, max = 80): string => {
  if (value === undefined) return 'nothing'
  let out = ''
  const ancestors: Array<object> = []
  const full = () => out.length > max
  const visit = (v: Read<unknown>, inList: boolean): void => {
    if (v === UNREADABLE) out += '<unreadable>'
    else if (v === null) out += 'null'
    else if (typeof v === 'string') out += JSON.stringify(v.length > max ? v.slice(0, max) : v)
    else if (typeof v === 'number') out += Number.isFinite(v) ? JSON.stringify(v) : String(v)
    else if (typeof v === 'boolean') out += String(v)
    else if (typeof v === 'bigint') out += `${v}n`
    else if (typeof v !== 'object') out += inList ? 'null' : typeof v === 'function' ? '<function>' : '<symbol>'
    else if (ancestors.includes(v)) out += '<cycle>'
    else if (isArray(v)) {
      const length = lengthOf(v) ?? 0
      ancestors.push(v)
      out += '['
      for (let i = 0; i < length && !full(); i++) {
        if (i > 0) out += ','
        visit(
          attempt(() => v[i]),
          true
        )
      }
      out += ']'
      ancestors.pop()
    } else if (isPlainObject(v)) {
      const keys = attempt(() => Object.keys(v))
      if (keys === UNREADABLE) {
        out += '<unreadable>'
        return
      }
      ancestors.push(v)
      out += '{'
      let first = true
      for (const key of keys) {
        if (full()) break
        const item = attempt(() => v[key])
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
        out += `${first ? '' : ','}${JSON.stringify(key.length > max ? key.slice(0, max) : key)}:`
        first = false
        visit(item, false)
      }
      out += '}'
      ancestors.pop()
    } else {
      const tag = attempt(() => Object.prototype.toString.call(v))
      out += tag === UNREADABLE ? '<unreadable>' : tag
    }
  }
  visit(value, false)
  return full() ? `${out.slice(0, max - 3)}...` : out
}

/** A key, quoted, shortened for a message. */
const quote = (key: string): string => show(key)

const oneOf = (names: ReadonlyArray<string>): string => names.map((n) => JSON.stringify(n)).join(', ')

// -------------------------------------------------------------------------------------
// reporting
// -------------------------------------------------------------------------------------

/**
 * One problem in a config: where (`schedule.cap`, `schedule.intersect[1].maxRetries`), what was expected, what
 * was found and, for a misspelt key or choice, the closest right one.
 *
 * **Details**
 *
 * `actual` is the value found; for an unknown key, the key itself. `hint` (since 0.2.0) is there when a close
 * match exists: `did you mean "maxRetries"?`.
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
 * @category model
 * @since 0.1.0
 */
export interface ConfigIssue {
  readonly path: string
  readonly expected: string
  readonly actual: unknown
  readonly hint?: string
}

/** A validation error of this module: its message is a whole line, so that io-ts's `PathReporter` prints it. */
interface IssueError extends t.ValidationError {
  readonly message: string
  readonly issue: ConfigIssue
}

/** The line that stands for the issues past the first {@link MAX_ISSUES}. */
interface MoreError extends t.ValidationError {
  readonly message: string
  readonly more: number
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** Union and intersection members add a step to the context that is not a step into the value. */
const isHop = (entry: t.ContextEntry): boolean => {
  const tag = attempt(() => (entry.type as { readonly _tag?: unknown })._tag)
  return tag === 'UnionType' || tag === 'IntersectionType'
}

/**
 * The path of a context: `schedule.intersect[1].cap` for a config decoded on its own, and relative to the
 * user's own type when the codec is part of it (`retry.cap` in `t.type({ retry: ScheduleConfigCodec })`).
 */
const pathOf = (context: t.Context): string => {
  let path = ''
  for (let i = 1; i < context.length; i++) {
    if (isHop(context[i - 1])) continue
    const key = context[i].key
    path += isArray(context[i - 1].actual)
      ? `[${key}]`
      : key.length <= 80 && IDENTIFIER.test(key)
      ? `${path === '' && context[0].type !== ScheduleConfigCodec ? '' : '.'}${key}`
      : `[${quote(key)}]`
  }
  return context.length === 0 || context[0].type === ScheduleConfigCodec || path === '' ? `schedule${path}` : path
}

/** The errors of one decoding: the first {@link MAX_ISSUES} kept, the others counted. */
class Report {
  readonly errors: Array<IssueError> = []
  total = 0
  configs = 0

  /**
   * Records an issue, or only counts it past the first {@link MAX_ISSUES}; `extra` (what was found, in words, and
   * a hint) is computed for recorded issues only.
   */
  fail(
    cursor: Cursor,
    expected: string,
    actual: unknown,
    more: () => { readonly got?: string; readonly hint?: string | undefined } = () => ({})
  ): undefined {
    this.total++
    if (this.errors.length < MAX_ISSUES) {
      const extra = more()
      const path = pathOf(cursor.context)
      const issue: ConfigIssue =
        extra.hint === undefined ? { path, expected, actual } : { path, expected, actual, hint: extra.hint }
      const message = issueLine(path, expected, extra.got ?? show(actual), extra.hint)
      this.errors.push({ value: actual, context: cursor.context, message, issue })
    }
    return undefined
  }

  /** The errors, and one line for those past the first {@link MAX_ISSUES}. */
  result(context: t.Context, u: unknown): t.Errors {
    const more = this.total - this.errors.length
    return more > 0 ? [...this.errors, moreError(u, context, more)] : this.errors
  }
}

const moreError = (value: unknown, context: t.Context, more: number): MoreError => ({
  value,
  context,
  message: `and ${more} more`,
  more
})

/**
 * Where decoding stands: the io-ts context (for paths), the report, how deep configs are nested and the configs
 * being decoded around this point (a config that contains itself is reported where it recurs).
 */
interface Cursor {
  readonly context: t.Context
  readonly report: Report
  readonly depth: number
  readonly ancestors: ReadonlyArray<object>
}

const at = (cursor: Cursor, key: string, actual: unknown): Cursor => ({
  ...cursor,
  context: [...cursor.context, { key, type: ScheduleConfigCodec, actual }]
})

// -------------------------------------------------------------------------------------
// value types: how each kind of value decodes, encodes and is documented
// -------------------------------------------------------------------------------------

/** A kind of value in a config: decodes (reporting its own errors, `undefined` when it does not), encodes, documents. */
interface Field<A> {
  /** For the docs: what the value is. */
  readonly doc: string
  readonly decode: (value: unknown, cursor: Cursor) => A | undefined
  readonly encode: (value: A) => Schedule.Json
}

const DURATION = 'a duration like "250ms" or a number of ms'

/**
 * A duration: a number of ms (finite, `>= 0`) or a string such as `"250ms"`, `"1.5s"`, `"2m"`, `"1h"` (parsed by
 * the `ms` package). Encodes to a number of ms.
 *
 * **Details**
 *
 * A string without a unit is a number of ms (`"250"`); units are `ms`, `s`, `m`, `h`, `d`, `w`, `y` and their
 * long forms (`"2 minutes"`), in any case. Negative, infinite and unparsable values fail; `-0` reads as `0`.
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
  isDuration,
  (u, c) => {
    // ms parses strings of up to 100 characters and answers undefined for anything it cannot read.
    const value = typeof u === 'string' && u.trim() !== '' ? (ms(u.trim() as ms.StringValue) as unknown) : u
    return isDuration(value) ? t.success(value + 0) : t.failure(u, c, DURATION)
  },
  identity
)

const durationField: Field<number> = {
  doc: 'a duration',
  decode: (value, cursor) =>
    pipe(
      Duration.validate(value, cursor.context),
      E.getOrElseW(() => cursor.report.fail(cursor, DURATION, value))
    ),
  encode: identity
}

/** A number that passes `is`, else the error `expected`. */
const numberField = (expected: string, is: (u: unknown) => u is number, doc = expected): Field<number> => ({
  doc,
  decode: (value, cursor) => (is(value) ? value + 0 : cursor.report.fail(cursor, expected, value)),
  encode: identity
})

const countField = numberField('a whole number >= 0', isCount, 'a whole number `>= 0`')

const trueField: Field<true> = {
  doc: '`true`',
  decode: (value, cursor) => (value === true ? true : cursor.report.fail(cursor, 'true', value)),
  encode: identity
}

/** One of the keys of `table`, with a hint for a near miss. */
const choiceField = <K extends string>(table: Readonly<Record<K, unknown>>): Field<K> => {
  const names = Object.keys(table) as ReadonlyArray<string> as ReadonlyArray<K>
  return {
    doc: names.map((n) => `\`${JSON.stringify(n)}\``).join(', '),
    decode: (value, cursor) =>
      (names as ReadonlyArray<unknown>).includes(value)
        ? (value as K)
        : cursor.report.fail(cursor, `one of ${oneOf(names)}`, value, () => ({
            hint: typeof value === 'string' ? didYouMean(value, names) : undefined
          })),
    encode: identity
  }
}

/**
 * A list of `item`s, of at most `max` (checked before any item is read: a sparse array of length 2^32 − 1 is one
 * error, at once), non-empty when `nonEmpty`; every item checked, holes included.
 */
const listField = <A>(
  item: Field<A>,
  of: string,
  options: { readonly max: number; readonly nonEmpty?: boolean; readonly doc?: string }
): Field<ReadonlyArray<A>> => ({
  doc: options.doc ?? `a list of ${of}`,
  decode: (value, cursor) => {
    const expected = `${options.nonEmpty === true ? 'a non-empty list' : 'a list'} of ${of}`
    if (!isArray(value)) return cursor.report.fail(cursor, expected, value)
    const length = lengthOf(value)
    if (length === undefined || (options.nonEmpty === true && length === 0)) {
      return cursor.report.fail(cursor, expected, value)
    }
    if (length > options.max) return cursor.report.fail(cursor, `a list of at most ${options.max} ${of}`, value)
    const out: Array<A> = []
    let ok = true
    for (let i = 0; i < length; i++) {
      const x = attempt(() => value[i])
      const decoded = readField(item, x, at(cursor, String(i), x))
      if (decoded === undefined) ok = false
      else out.push(decoded)
    }
    return ok ? out : undefined
  },
  encode: (values) => values.map(item.encode)
})

/** Decodes a value read with {@link attempt}: a read that threw is an error of its own. */
const readField = <A>(field: Field<A>, value: Read<unknown>, cursor: Cursor): A | undefined =>
  value === UNREADABLE
    ? cursor.report.fail(cursor, 'a value that can be read', undefined, () => ({ got: 'a property whose read threw' }))
    : field.decode(value, cursor)

const codeField: Field<Code> = {
  doc: 'an error code',
  decode: (value, cursor) =>
    typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
      ? value
      : cursor.report.fail(cursor, 'an error code (a string or a number)', value),
  encode: identity
}

const codesField = listField(codeField, 'error codes (strings or numbers)', {
  max: MAX_ITEMS,
  doc: `a list of error codes (strings or numbers), at most ${MAX_ITEMS}`
})

const pairField: Field<readonly [number, number]> = {
  doc: '`[min, max]`, two durations, `min <= max`',
  decode: (value, cursor) => {
    const expected = 'a pair of durations [min, max]'
    if (!isArray(value) || lengthOf(value) !== 2) return cursor.report.fail(cursor, expected, value)
    const pair = listField(durationField, 'durations', { max: 2 }).decode(value, cursor)
    if (pair === undefined) return undefined
    const [min, max] = pair
    return min <= max ? [min, max] : cursor.report.fail(cursor, 'a pair [min, max] with min <= max', value)
  },
  encode: ([min, max]) => [min, max]
}

/**
 * The configs that `intersect`, `union` and `andThen` combine. An interface rather than
 * `ReadonlyArray<ScheduleConfig>`, so that the type of the grammar's table, which {@link ScheduleConfig} is
 * read from, can name it before it is defined.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the interface is what breaks the cycle
interface ScheduleConfigs extends ReadonlyArray<ScheduleConfig> {}

/** The configs that `intersect`, `union` and `andThen` combine: decoded one level deeper. */
const configsField: Field<ScheduleConfigs> = listField(
  {
    doc: 'a schedule config',
    decode: (value, cursor) => decodeConfig(value, { ...cursor, depth: cursor.depth + 1 }),
    encode: (config) => encodeConfig(config)
  },
  'schedule configs',
  { max: MAX_CONFIGS_PER_LIST, nonEmpty: true, doc: `a non-empty list of configs, at most ${MAX_CONFIGS_PER_LIST}` }
)

// -------------------------------------------------------------------------------------
// the grammar
// -------------------------------------------------------------------------------------

/** What a constructor's or a modifier's build may use besides its own values. */
interface BuildContext {
  readonly codeOf: (error: unknown) => Code | undefined
  readonly toSchedule: (config: ScheduleConfig) => Schedule.Schedule<unknown>
}

/** What a cross-field check sees: the values decoded so far, and the config's constructor key. */
interface Decoded {
  readonly values: Readonly<Record<string, unknown>>
  readonly kind: string | undefined
}

/** A key whose value goes into a constructor or a modifier. */
interface Param<A, Required extends boolean = boolean> {
  readonly field: Field<A>
  /** When the key must be there: the expected text of its absence. */
  readonly required: Required extends true ? string : undefined
  /** For the docs: what the value is, when more than the field's own words (`a duration <= the cap`). */
  readonly value?: string
  /** For the docs: what it means, or what it does to the schedule. */
  readonly doc: string
  /** A check against the other values (a cap below the base delay): the expected text when it fails. */
  readonly check?: (value: A, decoded: Decoded) => string | undefined
}

type ParamSpec<A> = Omit<Param<A>, 'field' | 'required'>

const optional = <A>(field: Field<A>, spec: ParamSpec<A>): Param<A, false> => ({ ...spec, field, required: undefined })

const required = <A>(field: Field<A>, missing: string, spec: ParamSpec<A>): Param<A, true> => ({
  ...spec,
  field,
  required: missing
})

type Params = Readonly<Record<string, Param<any>>> // eslint-disable-line @typescript-eslint/no-explicit-any

type ValueOf<P> = P extends Param<infer A> ? A : never

/** The values of a constructor's parameters: required ones present, optional ones maybe. */
type ParamValues<P extends Params> = {
  readonly [K in keyof P as P[K] extends { readonly required: string } ? K : never]: ValueOf<P[K]>
} & {
  readonly [K in keyof P as P[K] extends { readonly required: string } ? never : K]?: ValueOf<P[K]>
}

/** One constructor of the grammar: its key's value, the keys that go with it only, and how it builds. */
interface Constructor<V, P extends Params> {
  readonly value: Param<V, true>
  readonly parameters: P
  /**
   * What the constructor's value is, when a `cap` below it contradicts it ("the base delay"); a cap is then
   * checked to be at least the value.
   */
  readonly capFloor?: string
  /** For the docs: the schedule it builds. */
  readonly doc: string
  readonly build: (value: V, parameters: ParamValues<P>, context: BuildContext) => Schedule.Schedule<unknown>
}

const kind = <V, P extends Params = Record<never, never>>(spec: {
  readonly value: Field<V>
  readonly what?: string
  readonly parameters?: P
  readonly capFloor?: string
  readonly doc: string
  readonly build: (value: V, parameters: ParamValues<P>, context: BuildContext) => Schedule.Schedule<unknown>
}): Constructor<V, P> => ({
  value: required(spec.value, 'the value', {
    value: spec.what === undefined ? spec.value.doc : `${spec.value.doc} (${spec.what})`,
    doc: spec.doc
  }),
  parameters: spec.parameters ?? ({} as P),
  ...(spec.capFloor === undefined ? {} : { capFloor: spec.capFloor }),
  doc: spec.doc,
  build: spec.build
})

/** One modifier: a key any config may add, and how it changes the schedule. */
interface Modifier<A> extends Param<A, false> {
  readonly build: (value: A, context: BuildContext) => (self: Schedule.Schedule<unknown>) => Schedule.Schedule<unknown>
}

const modifier = <A>(
  field: Field<A>,
  spec: ParamSpec<A> & {
    readonly build: (
      value: A,
      context: BuildContext
    ) => (self: Schedule.Schedule<unknown>) => Schedule.Schedule<unknown>
  }
): Modifier<A> => ({ ...spec, field, required: undefined })

/** `configs` folded left to right with `combine`: `combine(c2)(c1)`, then `combine(c3)(...)`. */
const fold =
  (
    combine: (that: Schedule.Schedule<unknown>) => (self: Schedule.Schedule<unknown>) => Schedule.Schedule<unknown>
  ): ((configs: ScheduleConfigs, _: unknown, context: BuildContext) => Schedule.Schedule<unknown>) =>
  (configs, _, context) =>
    configs.slice(1).reduce((acc, config) => combine(context.toSchedule(config))(acc), context.toSchedule(configs[0]))

// A cap below the constructor's value contradicts it: every delay (or, for truncatedBinaryExponential, the longest
// wait it names) would be cut. `decorrelatedJitter` and `decorrelatedJitterV2` take the cap as their own parameter.
const capAtLeastValue = (cap: number, decoded: Decoded): string | undefined => {
  const floor = decoded.kind === undefined ? undefined : CONSTRUCTORS[decoded.kind as KindKey].capFloor
  const value = decoded.kind === undefined ? undefined : decoded.values[decoded.kind]
  return floor !== undefined && typeof value === 'number' && cap < value ? `a cap >= ${floor} (${value} ms)` : undefined
}

const JITTERS = {
  full: Schedule.fullJitter,
  equal: Schedule.equalJitter,
  none: identity
} as const

/**
 * The constructors, one entry each: exactly one of these keys per config object. Their order is the order the
 * docs list them in.
 */
const CONSTRUCTORS = {
  exponential: kind({
    value: durationField,
    what: 'the base',
    parameters: {
      factor: optional(numberField('a growth factor: a finite number >= 1', isAtLeast(1)), {
        value: 'a number `>= 1`',
        doc: 'the growth factor (default 2)'
      })
    },
    capFloor: 'the base delay',
    doc: '`exponential(base, factor)`: `base, base·factor, base·factor², ...`',
    build: (base, { factor }) => Schedule.exponential(base, factor)
  }),
  constant: kind({
    value: durationField,
    capFloor: 'the base delay',
    doc: '`constant(d)`',
    build: (delay) => Schedule.constant(delay)
  }),
  linear: kind({
    value: durationField,
    what: 'the step',
    capFloor: 'the base delay',
    doc: '`linear(step)`: `step, 2·step, ...`',
    build: (step) => Schedule.linear(step)
  }),
  fibonacci: kind({
    value: durationField,
    what: 'the base',
    capFloor: 'the base delay',
    doc: '`fibonacci(base)`',
    build: (base) => Schedule.fibonacci(base)
  }),
  truncatedBinaryExponential: kind({
    value: durationField,
    what: 'the longest delay',
    parameters: {
      maxDoublings: required(
        countField,
        'a number of doublings for "truncatedBinaryExponential", such as {"truncatedBinaryExponential": "10s", "maxDoublings": 9}',
        { doc: 'how many times the delay doubles before it stays at the longest delay (required)' }
      )
    },
    capFloor: 'the longest delay',
    doc: '`truncatedBinaryExponential({ maxDoublings, maxDelay })`: `maxDelay / 2^maxDoublings`, doubling up to `maxDelay`',
    build: (maxDelay, { maxDoublings }) => Schedule.truncatedBinaryExponential({ maxDoublings, maxDelay })
  }),
  decorrelatedJitter: kind({
    value: durationField,
    what: 'the base',
    parameters: {
      cap: required(
        durationField,
        'a cap for "decorrelatedJitter", such as {"decorrelatedJitter": "5ms", "cap": "2s"}',
        {
          doc: 'its own cap, `>=` the base (required), in place of the `cap` modifier',
          check: capAtLeastValue
        }
      )
    },
    capFloor: 'the base delay',
    doc: '`decorrelatedJitter(base, cap)`: AWS decorrelated jitter',
    build: (base, { cap }) => Schedule.decorrelatedJitter(base, cap)
  }),
  decorrelatedJitterV2: kind({
    value: durationField,
    what: 'the median first retry delay',
    parameters: {
      cap: optional(durationField, {
        doc: 'its `maxDelay`, `>=` the median, in place of the `cap` modifier',
        check: capAtLeastValue
      })
    },
    capFloor: 'the median first retry delay',
    doc: "`decorrelatedJitterV2(median, cap)`: Polly's decorrelated jitter V2",
    build: (median, { cap }) => Schedule.decorrelatedJitterV2(median, cap)
  }),
  randomBetween: kind({
    value: pairField,
    doc: '`randomBetween(min, max)`',
    build: ([min, max]) => Schedule.randomBetween(min, max)
  }),
  delays: kind({
    value: listField(durationField, 'durations', {
      max: MAX_ITEMS,
      doc: `a list of durations (may be empty), at most ${MAX_ITEMS}`
    }),
    doc: '`fromDelays([...])`',
    build: (delays) => Schedule.fromDelays(delays)
  }),
  recurs: kind({
    value: countField,
    doc: '`recurs(n)`: `n` retries with no delay',
    build: (n) => Schedule.recurs(n)
  }),
  forever: kind({ value: trueField, doc: '`forever`', build: () => Schedule.forever }),
  stop: kind({ value: trueField, doc: '`stop`: no retry', build: () => Schedule.stop }),
  intersect: kind({
    value: configsField,
    doc: '`intersect`, folded left to right: both continue, with the longer delay',
    build: fold(Schedule.intersect)
  }),
  union: kind({
    value: configsField,
    doc: '`union`, folded left to right: either continues, with the shorter delay',
    build: fold(Schedule.union)
  }),
  andThen: kind({
    value: configsField,
    doc: '`andThen`, folded left to right: each until it stops, then the next',
    build: fold(Schedule.andThen)
  })
} as const

/**
 * The modifiers, one entry each, in the order they apply whatever the order of the keys: the cap before the
 * jitter (as in the AWS formulas: full jitter draws below the cap), the minimum after the jitter (it raises a
 * jittered delay that came out too small), the limits, and last the error-code conditions.
 */
const MODIFIERS = {
  cap: modifier(durationField, {
    value: "a duration `>=` the constructor's value (the base delay, the longest delay, the median)",
    doc: '`capped(cap)`: no delay above it',
    check: capAtLeastValue,
    build: (cap) => Schedule.capped(cap)
  }),
  jitter: modifier(choiceField(JITTERS), {
    doc: '`fullJitter`, `equalJitter`, or no jitter',
    build: (jitter) => JITTERS[jitter]
  }),
  minDelay: modifier(durationField, {
    value: 'a duration `<=` the cap',
    doc: '`minDelay(d)`: no delay below it',
    check: (min, { values }) =>
      typeof values.cap === 'number' && min > values.cap ? `a minimum delay <= the cap (${values.cap} ms)` : undefined,
    build: (min) => Schedule.minDelay(min)
  }),
  maxRetries: modifier(countField, {
    doc: '`intersect(recurs(n))`: at most `n` retries, `n + 1` attempts',
    build: (n) => Schedule.intersect(Schedule.recurs(n))
  }),
  maxElapsed: modifier(durationField, {
    doc: '`upTo(d)`: no retry that would start after `d` since the first attempt',
    build: (d) => Schedule.upTo(d)
  }),
  maxCumulativeDelay: modifier(durationField, {
    doc: '`maxCumulativeDelay(d)`: at most `d` slept in all',
    build: (d) => Schedule.maxCumulativeDelay(d)
  }),
  retryOn: modifier(codesField, {
    doc: '`whileInput`: retry only errors with one of these codes',
    build: (codes, { codeOf }) => Schedule.whileInput(listed(codes, codeOf), { description: codesLabel(codes) })
  }),
  neverRetryOn: modifier(codesField, {
    doc: '`untilInput`: never retry errors with one of these codes',
    build: (codes, { codeOf }) => Schedule.untilInput(listed(codes, codeOf), { description: codesLabel(codes) })
  })
} as const

type KindKey = keyof typeof CONSTRUCTORS
type ModifierKey = keyof typeof MODIFIERS

const KIND_KEYS = Object.keys(CONSTRUCTORS) as ReadonlyArray<KindKey>
const MODIFIER_KEYS = Object.keys(MODIFIERS) as ReadonlyArray<ModifierKey>

const has = <K extends string>(keys: ReadonlyArray<K>, key: string): key is K =>
  (keys as ReadonlyArray<string>).includes(key)

/** The fields of a config with this constructor, in canonical order: its key, its parameters, the other modifiers. */
const fieldsOf = (kind: KindKey | undefined): ReadonlyArray<readonly [string, Param<unknown>]> => {
  if (kind === undefined) return MODIFIER_KEYS.map((key) => [key, MODIFIERS[key] as Param<unknown>])
  const entry: Constructor<unknown, Params> = CONSTRUCTORS[kind] as Constructor<unknown, Params>
  const own = Object.keys(entry.parameters)
  return [
    [kind, entry.value as Param<unknown>],
    ...own.map((key): readonly [string, Param<unknown>] => [key, entry.parameters[key]]),
    // a parameter of the constructor that has a modifier's name (decorrelatedJitter's cap) takes its place
    ...MODIFIER_KEYS.filter((key) => !own.includes(key)).map((key): readonly [string, Param<unknown>] => [
      key,
      MODIFIERS[key] as Param<unknown>
    ])
  ]
}

const FIELDS: Readonly<Record<KindKey, ReadonlyArray<readonly [string, Param<unknown>]>>> = Object.fromEntries(
  KIND_KEYS.map((kind) => [kind, fieldsOf(kind)])
) as Record<KindKey, ReadonlyArray<readonly [string, Param<unknown>]>>

/** Every key, in the order a canonical config lists them: constructors, their parameters, modifiers. */
const ALL_KEYS: ReadonlyArray<string> = [
  ...new Set([
    ...KIND_KEYS,
    ...KIND_KEYS.flatMap((kind) => Object.keys(CONSTRUCTORS[kind].parameters)),
    ...MODIFIER_KEYS
  ])
]

/** The constructors a parameter goes with (`factor`: `exponential`), for a parameter used with another one. */
const OWNERS: ReadonlyMap<string, ReadonlyArray<KindKey>> = new Map(
  ALL_KEYS.filter((key) => !has(KIND_KEYS, key) && !has(MODIFIER_KEYS, key)).map((key) => [
    key,
    KIND_KEYS.filter((kind) => key in CONSTRUCTORS[kind].parameters)
  ])
)

const describeShape = `an object with exactly one of ${oneOf(
  KIND_KEYS
)}, such as {"exponential": "100ms", "maxRetries": 5}`

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
 * **Details**
 *
 * Derived from the grammar's table of modifiers: `{ cap?: number, jitter?: 'full' | 'equal' | 'none', minDelay?:
 * number, maxRetries?: number, maxElapsed?: number, maxCumulativeDelay?: number, retryOn?: ReadonlyArray<Code>,
 * neverRetryOn?: ReadonlyArray<Code> }`.
 *
 * @example
 * import type { Modifiers } from 'fp-ts-retry/ScheduleConfig'
 *
 * const modifiers: Modifiers = { cap: 10_000, jitter: 'full', maxRetries: 5, neverRetryOn: [400, 404] }
 *
 * @category model
 * @since 0.1.0
 */
export type Modifiers = { readonly [K in ModifierKey]?: ValueOf<(typeof MODIFIERS)[K]> }

/**
 * The constructor part of a config: exactly one of the constructor keys, with the parameters that go with it
 * (`factor` with `exponential`, `maxDoublings` with `truncatedBinaryExponential` (required), `cap` with
 * `decorrelatedJitter` (required) and `decorrelatedJitterV2`).
 *
 * **Details**
 *
 * Derived from the grammar's table of constructors: `{ exponential: number, factor?: number } | { constant:
 * number } | ... | { intersect: ReadonlyArray<ScheduleConfig> } | ...`; {@link grammar} lists every key.
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
export type Kind = {
  [K in KindKey]: (typeof CONSTRUCTORS)[K] extends Constructor<infer V, infer P>
    ? { readonly [k in K]: V } & ParamValues<P>
    : never
}[KindKey]

/**
 * A decoded schedule config: one constructor key and optional modifiers, durations in ms.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import type { ScheduleConfig } from 'fp-ts-retry/ScheduleConfig'
 * import { toSchedule } from 'fp-ts-retry/ScheduleConfig'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const config: ScheduleConfig = { exponential: 100, cap: 1000, maxRetries: 5 }
 * assert.deepStrictEqual(Driver.delays(toSchedule(config)), [100, 200, 400, 800, 1000])
 *
 * @category model
 * @since 0.1.0
 */
export type ScheduleConfig = Kind & Modifiers

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
 * A config that does not decode: its issues, and a readable message with one line per issue.
 *
 * **Details**
 *
 * At most 20 issues are listed, in `issues` and in `message`; `omitted` (since 0.2.0) counts the others, and
 * the message then ends with the line `and <omitted> more`. So a huge bad config (a list of a million `null`
 * codes) gives a short message.
 *
 * @example
 * import { parse } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const result = parse({ constant: 'a second', maxRetries: 1.5 })
 * assert.ok(result._tag === 'Left')
 * if (result._tag === 'Left') {
 *   assert.strictEqual(result.left.issues.length, 2)
 *   assert.strictEqual(result.left.omitted, 0)
 *   assert.strictEqual(
 *     result.left.message,
 *     'at schedule.constant: expected a duration like "250ms" or a number of ms, got "a second"\n' +
 *       'at schedule.maxRetries: expected a whole number >= 0, got 1.5'
 *   )
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface ConfigError {
  readonly _tag: 'ConfigError'
  readonly issues: ReadonlyArray<ConfigIssue>
  readonly omitted: number
  readonly message: string
}

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

/** The own keys of a config whose value is not `undefined` (absent, as in JSON), each value read once. */
const entriesOf = (u: Readonly<Record<string, unknown>>): ReadonlyMap<string, Read<unknown>> | undefined => {
  const keys = attempt(() => Object.keys(u))
  if (keys === UNREADABLE) return undefined
  const entries = new Map<string, Read<unknown>>()
  for (const key of keys) {
    const value = attempt(() => u[key])
    if (value !== undefined) entries.set(key, value)
  }
  return entries
}

/** Decodes one config object (and, through `intersect`, `union` and `andThen`, the configs it holds). */
function decodeConfig(u: unknown, cursor: Cursor): ScheduleConfig | undefined {
  const report = cursor.report
  if (cursor.depth > MAX_DEPTH)
    return report.fail(cursor, `a schedule config nested at most ${MAX_DEPTH} levels deep`, u)
  if (++report.configs > MAX_CONFIGS) return report.fail(cursor, `at most ${MAX_CONFIGS} schedule configs in all`, u)
  if (!isPlainObject(u)) return report.fail(cursor, describeShape, u)
  if (cursor.ancestors.includes(u)) return report.fail(cursor, 'a schedule config that does not contain itself', u)
  const entries = entriesOf(u)
  if (entries === undefined) return report.fail(cursor, describeShape, u)
  cursor = { ...cursor, ancestors: [...cursor.ancestors, u] }
  const before = report.total
  const keys = [...entries.keys()]
  const kinds = keys.filter((key) => has(KIND_KEYS, key))
  const kind: KindKey | undefined = kinds[0]

  if (kind === undefined) report.fail(cursor, describeShape, u)
  for (const other of kinds.slice(1)) {
    const value = entries.get(other)
    report.fail(at(cursor, other, value), `no constructor key besides ${JSON.stringify(kind)}`, value)
  }
  // Unknown keys are errors, so that a typo such as "maxRetry" is not silently ignored.
  const fields = kind === undefined ? fieldsOf(undefined) : FIELDS[kind]
  const allowed = kind === undefined ? ALL_KEYS : fields.map(([key]) => key)
  const oneOfAllowed = `one of the keys ${oneOf(allowed)}`
  for (const key of keys) {
    if (has(KIND_KEYS, key) || allowed.includes(key)) continue
    const value = entries.get(key)
    const owners = OWNERS.get(key)
    if (owners !== undefined) {
      report.fail(at(cursor, key, value), `no ${JSON.stringify(key)}: it goes with ${oneOf(owners)} only`, value)
    } else {
      report.fail(at(cursor, key, key), oneOfAllowed, key, () => ({
        got: `the unknown key ${quote(key)}`,
        hint: didYouMean(key, allowed)
      }))
    }
  }

  const values: Record<string, unknown> = {}
  for (const [key, param] of fields) {
    const raw = entries.get(key)
    if (raw === undefined) {
      if (param.required !== undefined) report.fail(at(cursor, key, undefined), param.required, undefined)
      continue
    }
    const here = at(cursor, key, raw)
    const value = readField(param.field, raw, here)
    if (value === undefined) continue
    values[key] = value
    const problem = param.check?.(value, { values, kind })
    if (problem !== undefined) report.fail(here, problem, raw)
  }
  return kind !== undefined && report.total === before ? (values as ScheduleConfig) : undefined
}

/** The canonical JSON of a config: keys in one fixed order, none undefined, nested configs alike. */
function encodeConfig(config: ScheduleConfig): ScheduleConfigJson {
  const record = config as unknown as Readonly<Record<string, unknown>>
  const kind = KIND_KEYS.find((key) => record[key] !== undefined)
  const out: Record<string, Schedule.Json> = {}
  for (const [key, param] of kind === undefined ? fieldsOf(undefined) : FIELDS[kind]) {
    const value = record[key]
    if (value !== undefined) out[key] = param.field.encode(value)
  }
  return out
}

/** Equal as JSON: same keys with defined values (in any order), same items, same numbers (`Object.is`). */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false
    const keys = Object.keys(a).filter((k) => a[k] !== undefined)
    return (
      keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => sameJson(a[k], b[k]))
    )
  }
  return Object.is(a, b)
}

const validateConfig = (
  u: unknown,
  c: t.Context
): { readonly config: ScheduleConfig | undefined; readonly errors: t.Errors } => {
  const report = new Report()
  const config = decodeConfig(u, { context: c, report, depth: 0, ancestors: [] })
  return { config: report.total === 0 ? config : undefined, errors: report.result(c, u) }
}

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
 * - Unknown keys (with a "did you mean" hint), a missing or second constructor key, negative or unparsable
 *   durations, a `factor` below 1, a `maxDoublings` that is not a whole number, a `cap` below the base delay are
 *   all errors, reported together (the first 20, then a count).
 * - Decoding never throws and takes time linear in the size of its input: every property is read once, guarded
 *   (getters, Proxies), and lists are bounded before they are read (1000 codes or delays, 100 configs per
 *   `intersect` / `union` / `andThen`, 32 levels of nesting, 1000 configs in all).
 * - Each error's `message` is a whole line, `at <path>: expected <form>, got <value>`, with the path from the
 *   root of the type being decoded: inside your own codec (`t.type({ retry: ScheduleConfigCodec })`) it is
 *   `retry.cap`, and io-ts's `PathReporter` prints these lines as they are.
 * - `encode` writes durations as numbers of ms, keys in one fixed order; decoding the result gives the same
 *   config. `is` holds for decoded configs: valid, and already in ms.
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
    const { config } = validateConfig(u, [])
    return config !== undefined && attempt(() => sameJson(config, u)) === true
  },
  (u, c) => {
    const { config, errors } = validateConfig(u, c)
    return config !== undefined ? t.success(config) : t.failures(errors)
  },
  encodeConfig
)

/** The name of the io-ts type that failed, for an error of the user's own type (`string`). */
const typeName = (context: t.Context): string => {
  const name = attempt(() => context[context.length - 1].type.name)
  return typeof name === 'string' ? name : 'a valid value'
}

/**
 * Turns io-ts validation errors into a {@link ConfigError}, one line per issue:
 * `at schedule.cap: expected a duration like "250ms" or a number of ms, got "ten"`.
 *
 * **Details**
 *
 * - Paths start at `schedule` for a config decoded on its own, with `.key` and `[index]` (a key that is not an
 *   identifier is quoted: `schedule["max-retries"]`); for a config inside your own io-ts type they start at
 *   your type's root (`retry.cap`). Values are shown as JSON, cut at 80 characters.
 * - Errors of your own type's other fields are listed too, by their path and io-ts type name.
 * - At most 20 issues; `omitted` counts the rest. It never throws.
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
 * @category codecs
 * @since 0.1.0
 */
export const toConfigError = (errors: t.Errors): ConfigError => {
  const issues: Array<ConfigIssue> = []
  const lines: Array<string> = []
  let omitted = 0
  for (const e of errors) {
    const more = (e as Partial<MoreError>).more
    if (typeof more === 'number') {
      omitted += more
    } else if (issues.length >= MAX_ISSUES) {
      omitted++
    } else {
      const own = (e as Partial<IssueError>).issue
      const issue: ConfigIssue = own ?? {
        path: pathOf(e.context),
        expected: e.message ?? typeName(e.context),
        actual: e.value
      }
      issues.push(issue)
      lines.push(
        own !== undefined && e.message !== undefined
          ? e.message
          : issueLine(issue.path, issue.expected, show(issue.actual), issue.hint)
      )
    }
  }
  if (omitted > 0) lines.push(`and ${omitted} more`)
  return { _tag: 'ConfigError', issues, omitted, message: lines.join('\n') }
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
 * (`undefined`), an error whose properties throw when read included. Exported so that a custom `codeOf` can
 * fall back on it.
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
  const record = error as Readonly<Record<string, unknown>>
  for (const key of ['code', 'status', 'statusCode']) {
    const value = attempt(() => record[key])
    if (typeof value === 'string' || typeof value === 'number') return value
  }
  return undefined
}

/** Whether the error's code is listed; codes compare as strings, so 503 and "503" are one code. */
/** How a list of codes names its predicate in a description: a change of the list changes the description. */
const codesLabel = (codes: ReadonlyArray<Code>): string => `code in ${JSON.stringify(codes)}`

const listed = (codes: ReadonlyArray<Code>, codeOf: (error: unknown) => Code | undefined) => {
  const set = new Set(codes.map(String))
  return (error: unknown): boolean => {
    const code = codeOf(error)
    return code !== undefined && set.has(String(code))
  }
}

/**
 * The schedule a decoded config describes: exactly the schedule written in code with the same constructors and
 * combinators.
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
 * - The schedule is the one the constructors and combinators build, with its own `description` (such as
 *   `intersect(recurs(5))(capped(1000)(exponential(100, 2)))`) and metadata: a config without `maxElapsed`
 *   builds a schedule that never reads the time, so the runner leaves the clock alone. For the config's own
 *   canonical JSON, see {@link format}.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
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
 * const byHand = pipe(Schedule.exponential(100), Schedule.capped(1000), Schedule.intersect(Schedule.recurs(5)))
 * assert.ok(E.isRight(schedule))
 * if (E.isRight(schedule)) {
 *   assert.deepStrictEqual(Driver.delays(schedule.right), [100, 200, 400, 800, 1000])
 *   assert.strictEqual(schedule.right.description, byHand.description)
 * }
 *
 * @category interpreters
 * @since 0.1.0
 */
export const toSchedule = (config: ScheduleConfig, options: InterpretOptions = {}): Schedule.Schedule<unknown> => {
  checkOptions('ScheduleConfig.toSchedule', options)
  const record = config as unknown as Readonly<Record<string, unknown>>
  const kind = KIND_KEYS.find((key) => record[key] !== undefined)
  if (kind === undefined) {
    throw new TypeError(
      `ScheduleConfig.toSchedule: config must have one of the keys ${oneOf(KIND_KEYS)}, received ${show(config)}`
    )
  }
  const context: BuildContext = {
    codeOf: options.codeOf ?? defaultCodeOf,
    toSchedule: (nested) => toSchedule(nested, options)
  }
  const entry = CONSTRUCTORS[kind] as Constructor<unknown, Params>
  let schedule = entry.build(record[kind], record as ParamValues<Params>, context)
  for (const key of MODIFIER_KEYS) {
    const value = record[key]
    if (value === undefined || key in entry.parameters) continue
    schedule = (MODIFIERS[key] as Modifier<unknown>).build(value, context)(schedule)
  }
  return schedule
}

/**
 * Decodes a config (parsed JSON) straight to a schedule, or to a {@link ConfigError} listing its issues.
 *
 * **Details**
 *
 * The schedule is {@link toSchedule}'s: the one the same constructors and combinators build in code, with its
 * own description and metadata.
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
export const parse = (
  u: unknown,
  options: InterpretOptions = {}
): E.Either<ConfigError, Schedule.Schedule<unknown>> => {
  checkOptions('ScheduleConfig.parse', options)
  return pipe(
    ScheduleConfigCodec.decode(u),
    E.bimap(toConfigError, (config) => toSchedule(config, options))
  )
}

/** The options of the interpreters, checked where they are given: a `TypeError` naming the bad one. */
const checkOptions = (where: string, options: InterpretOptions): void => {
  validate.object(where, 'options', options)
  if (options.codeOf !== undefined) validate.callable(where, 'options.codeOf', options.codeOf)
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * The canonical JSON text of a config: keys in one fixed order, durations in ms. The same for one config
 * however it was written (key order, `"1s"` or `1000`), different whenever the decoded configs differ: to log a
 * config, or to name the config a stored run was started with.
 *
 * @example
 * import * as ScheduleConfig from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const a = ScheduleConfig.ScheduleConfigCodec.decode({ exponential: '100ms', cap: '10s', maxRetries: 5 })
 * const b = ScheduleConfig.ScheduleConfigCodec.decode({ maxRetries: 5, cap: 10_000, exponential: 100 })
 * assert.ok(a._tag === 'Right' && b._tag === 'Right')
 * if (a._tag === 'Right' && b._tag === 'Right') {
 *   assert.strictEqual(ScheduleConfig.format(a.right), '{"exponential":100,"cap":10000,"maxRetries":5}')
 *   assert.strictEqual(ScheduleConfig.format(b.right), ScheduleConfig.format(a.right))
 * }
 *
 * @category utils
 * @since 1.0.0
 */
export const format = (config: ScheduleConfig): string => JSON.stringify(encodeConfig(config))

/**
 * One key of the config grammar, as {@link grammar} lists it.
 *
 * **Details**
 *
 * - `role`: a `constructor` (exactly one per config object), a `parameter` (goes with the constructors named in
 *   `with` only) or a `modifier` (any config may have it).
 * - `value`: the value it takes; `meaning`: the schedule it builds or what it changes.
 * - `required`: for a parameter, whether its constructor needs it.
 *
 * @example
 * import { grammar, type GrammarKey } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const factor: GrammarKey | undefined = grammar.find((k) => k.key === 'factor')
 * assert.deepStrictEqual(factor?.with, ['exponential'])
 *
 * @category model
 * @since 1.0.0
 */
export interface GrammarKey {
  readonly key: string
  readonly role: 'constructor' | 'parameter' | 'modifier'
  readonly value: string
  readonly meaning: string
  readonly with: ReadonlyArray<string>
  readonly required: boolean
}

const docOfValue = (param: { readonly value?: string; readonly field: { readonly doc: string } }): string =>
  param.value ?? param.field.doc

/**
 * Every key of the config grammar, read from the table that the decoder, the encoder and {@link toSchedule}
 * read too: the constructors, then their parameters, then the modifiers in the order they apply. For tools (an
 * editor's completion, a JSON schema) and for the docs' list of keys, which is generated from it.
 *
 * @example
 * import { grammar } from 'fp-ts-retry/ScheduleConfig'
 * import * as assert from 'assert'
 *
 * const keys = (role: string) => grammar.filter((k) => k.role === role).map((k) => k.key)
 * assert.deepStrictEqual(keys('parameter'), ['factor', 'maxDoublings', 'cap'])
 * assert.deepStrictEqual(keys('modifier').slice(0, 3), ['cap', 'jitter', 'minDelay'])
 * assert.ok(keys('constructor').includes('exponential'))
 *
 * @category utils
 * @since 1.0.0
 */
export const grammar: ReadonlyArray<GrammarKey> = [
  ...KIND_KEYS.map(
    (key): GrammarKey => ({
      key,
      role: 'constructor',
      value: docOfValue(CONSTRUCTORS[key].value),
      meaning: CONSTRUCTORS[key].doc,
      with: [],
      required: false
    })
  ),
  ...[...new Set(KIND_KEYS.flatMap((kind) => Object.keys(CONSTRUCTORS[kind].parameters)))].map((key): GrammarKey => {
    const owners = KIND_KEYS.filter((kind) => key in CONSTRUCTORS[kind].parameters)
    const params = owners.map((kind) => (CONSTRUCTORS[kind].parameters as Params)[key])
    return {
      key,
      role: 'parameter',
      value: [...new Set(params.map(docOfValue))].join(' or '),
      meaning: params.map((p, i) => (owners.length > 1 ? `with \`${owners[i]}\`, ${p.doc}` : p.doc)).join('; '),
      with: owners,
      required: params.every((p) => p.required !== undefined)
    }
  }),
  ...MODIFIER_KEYS.map(
    (key): GrammarKey => ({
      key,
      role: 'modifier',
      value: docOfValue(MODIFIERS[key]),
      meaning: MODIFIERS[key].doc,
      with: [],
      required: false
    })
  )
]
