/**
 * `fp-ts-retry/OpenTelemetry`: the library's {@link Event.Event}s as OpenTelemetry spans and metrics. Give
 * {@link observer} a tracer and a meter, and pass what it returns as the `onEvent` of a runner, of hedging, of
 * `Http`, of a breaker or of a durable engine (compose several observers with `Event.all`).
 *
 * It imports `@opentelemetry/api` alone (an optional peer dependency of this library), never an SDK: the
 * application chooses and configures its SDK and exporters, as OpenTelemetry asks of libraries. Both current
 * lines of the JavaScript SDK, 2.x and 3.x, are tested; the observability guide names their packages. `Http`'s
 * attempts follow the HTTP client semantic conventions.
 *
 * @since 1.0.0
 */
import type { Attributes, Context, Counter, Histogram, HrTime, Meter, Span, Tracer } from '@opentelemetry/api'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { AdaptiveLimit } from './AdaptiveLimit'
import type { AdaptiveThrottle } from './AdaptiveThrottle'
import type { Breaker } from './Breaker'
import type { RetryBudget } from './Budget'
import type * as Event from './Event'
import type { Keyed } from './Keyed'
import { showValue } from './internal/show'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Options of {@link observer}.
 *
 * **Details**
 *
 * - `tracer`: where the spans go (one for each run, a child for each attempt). Without it, no span is made.
 * - `meter`: where the metrics go (see the table in the observability guide). Without it, none is recorded.
 * - `breakers`: breakers to report the state of, by name (`fp_ts_retry.breaker.state`), from the start: a breaker
 *   that never changed state is reported closed, as resilience4j's `resilience4j.circuitbreaker.state` reports
 *   every breaker it is given. Each is read at each collection (`breaker.state`, this process's view). A breaker
 *   that is not given here is reported from its first `BreakerStateChanged`, under the `name` its events carry,
 *   unless its events carry a policy key (a `Keyed` registry's breaker): see below.
 * - `budgets`: budgets to report the tokens of, by name (`fp_ts_retry.budget.tokens`): those with a numeric
 *   `tokens` (`Budget.retryThrottle`, `Budget.retryQuota`); the others are skipped.
 * - `adaptiveLimits`: adaptive limits to report the limit and the calls in flight of, by name
 *   (`fp_ts_retry.adaptive_limit.limit` and `fp_ts_retry.adaptive_limit.in_flight`), each read at each collection:
 *   an `AdaptiveLimit`, or a `Keyed` registry of them, whose keys are reported each with its `fp_ts_retry.key`.
 * - `throttles`: adaptive throttles to report the drop probability of, by name
 *   (`fp_ts_retry.throttle.drop_probability`), read at each collection: a throttle, or a `Keyed` registry of them,
 *   reported for each key it holds then (`fp_ts_retry.key`).
 * - Either may name a `Keyed` registry instead of one policy: each collection then reports the policies the registry
 *   holds at that moment (`registry.entries()`), each with its key as `fp_ts_retry.key`, and no other. A key the
 *   registry has evicted, dropped as idle or deleted is no longer observed. (The JavaScript SDK's cumulative readers
 *   still export the last point of an attribute set no longer observed, against the specification's rule for
 *   asynchronous instruments; a delta reader exports only the live keys.)
 * - `errorType` (default {@link errorType}): the `error.type` of a failed attempt's error. Keep its answers few (a
 *   class, a code): they are a metric's attribute.
 * - `knownMethods` (default {@link KnownMethods}): the HTTP methods an `Http` attempt's span names and reports as
 *   they are; any other is `_OTHER` (its span is named `HTTP`, and `http.request.method_original` holds it), as the
 *   HTTP conventions ask. The list replaces the default, it does not add to it; the names are case-sensitive.
 *
 * @example
 * import type { ObserverOptions } from 'fp-ts-retry/OpenTelemetry'
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { trace, metrics } from '@opentelemetry/api'
 *
 * const payments = Breaker.consecutive({ threshold: 5, halfOpenAfter: Schedule.constant(10_000), name: 'payments' })
 * const options: ObserverOptions = {
 *   tracer: trace.getTracer('checkout'),
 *   meter: metrics.getMeter('checkout'),
 *   breakers: { payments }
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface ObserverOptions {
  readonly tracer?: Tracer | undefined
  readonly meter?: Meter | undefined
  readonly breakers?: Readonly<Record<string, Breaker | Keyed<Breaker>>> | undefined
  readonly budgets?: Readonly<Record<string, RetryBudget | Keyed<RetryBudget>>> | undefined
  readonly adaptiveLimits?: Readonly<Record<string, AdaptiveLimit | Keyed<AdaptiveLimit>>> | undefined
  readonly throttles?: Readonly<Record<string, AdaptiveThrottle | Keyed<AdaptiveThrottle>>> | undefined
  readonly errorType?: ((error: unknown) => string) | undefined
  readonly knownMethods?: ReadonlyArray<string> | undefined
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * The `error.type` of an error, as OpenTelemetry's semantic conventions ask: low in cardinality, never a message.
 *
 * **Details**
 *
 * - An `Http.StatusError` is its status code (`'503'`), as the HTTP conventions say; any other record with a
 *   string `_tag` (the other `Http` errors, your own ADTs) is its `_tag`.
 * - An `Error` is its `name` (`'TypeError'`); anything else is `'_OTHER'`.
 *
 * @example
 * import { errorType } from 'fp-ts-retry/OpenTelemetry'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(errorType({ _tag: 'StatusError', status: 503 }), '503')
 * assert.strictEqual(errorType({ _tag: 'TimeoutError' }), 'TimeoutError')
 * assert.strictEqual(errorType(new RangeError('no')), 'RangeError')
 * assert.strictEqual(errorType('down'), '_OTHER')
 *
 * @category utils
 * @since 1.0.0
 */
export const errorType = (error: unknown): string => {
  if (error instanceof Error) return error.name
  if (error !== null && typeof error === 'object') {
    const { _tag, status } = error as { readonly _tag?: unknown; readonly status?: unknown }
    if (_tag === 'StatusError' && typeof status === 'number') return String(status)
    if (typeof _tag === 'string') return _tag
  }
  return '_OTHER'
}

/**
 * The HTTP methods the HTTP conventions call known by default: those of RFC 9110, `PATCH` (RFC 5789) and `QUERY`
 * (the safe method with a body). The default of `options.knownMethods`.
 *
 * @example
 * import { KnownMethods } from 'fp-ts-retry/OpenTelemetry'
 * import * as assert from 'assert'
 *
 * assert.ok(KnownMethods.includes('GET') && KnownMethods.includes('PATCH'))
 * assert.ok(!KnownMethods.includes('PURGE'))
 *
 * @category utils
 * @since 1.0.0
 */
export const KnownMethods: ReadonlyArray<string> = [
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'QUERY',
  'TRACE'
]

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** The attributes' names, in one place (the guide's table lists them). */
const A = {
  source: 'fp_ts_retry.source',
  event: 'fp_ts_retry.event',
  attempt: 'fp_ts_retry.attempt',
  attempts: 'fp_ts_retry.attempts',
  outcome: 'fp_ts_retry.outcome',
  reason: 'fp_ts_retry.stop_reason',
  delay: 'fp_ts_retry.delay',
  timeout: 'fp_ts_retry.timeout',
  hint: 'fp_ts_retry.hint',
  hintDelay: 'fp_ts_retry.hint_delay',
  id: 'fp_ts_retry.run.id',
  definition: 'fp_ts_retry.definition',
  index: 'fp_ts_retry.hedge.index',
  winner: 'fp_ts_retry.hedge.winner',
  breaker: 'fp_ts_retry.breaker.name',
  state: 'fp_ts_retry.breaker.state',
  budget: 'fp_ts_retry.budget.name',
  adaptiveLimit: 'fp_ts_retry.adaptive_limit.name',
  throttle: 'fp_ts_retry.throttle.name',
  service: 'fp_ts_retry.service',
  chaos: 'fp_ts_retry.chaos.kind',
  key: 'fp_ts_retry.key',
  // OpenTelemetry's HTTP client span (semantic conventions 1.x, stable)
  method: 'http.request.method',
  methodOriginal: 'http.request.method_original',
  resendCount: 'http.request.resend_count',
  statusCode: 'http.response.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  url: 'url.full',
  errorType: 'error.type'
} as const

const STATES = ['Closed', 'Open', 'HalfOpen'] as const
type BreakerState = (typeof STATES)[number]

/** A breaker known by its events only: its name and its latest state. */
interface Seen {
  readonly name: string | undefined
  readonly state: BreakerState
}

/** A policy the observer's options name: one, or a `Keyed` registry of them. */
type Given<P> = { readonly _tag: 'One'; readonly policy: P } | { readonly _tag: 'Keyed'; readonly keyed: Keyed<P> }

/** Whether `u` is a `Keyed` registry: it lists its entries, and has no `method` of the policy it would hold. */
const isKeyed = (u: unknown, method: string): u is Keyed<unknown> => {
  const o = u as Readonly<Record<string, unknown>> | null
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.get === 'function' &&
    typeof o.entries === 'function' &&
    typeof o[method] !== 'function'
  )
}

/**
 * What a given policy stands for at this moment, each with its policy key: the policy itself, or the policies its
 * registry holds now, so that a gauge read at collection reports the live keys and no evicted one.
 */
const live = <P>(given: Given<P>): ReadonlyArray<readonly [key: string | undefined, policy: P]> =>
  given._tag === 'One' ? [[undefined, given.policy]] : given.keyed.entries()
const STATE_NAMES: Record<BreakerState, string> = { Closed: 'closed', Open: 'open', HalfOpen: 'half_open' }

/** The HTTP conventions' buckets for a request's duration (s), and longer ones for a backoff's delays. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
const DELAY_BUCKETS = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]

/** The instruments, made once per observer. */
interface Instruments {
  readonly events: Counter
  readonly attemptDuration: Histogram
  readonly retryDelay: Histogram
  readonly hedgeLaunches: Counter
  readonly hedgeWins: Counter
}

/** A run's span, its attempts' spans in flight, and what its next spans need: all of it dropped at its end. */
interface RunSpan {
  readonly span: Span
  /** The context its attempts' spans are started in: the run's span in the context of its start. */
  readonly context: Context
  /** Whether the run's span is recorded: a run that is not (no SDK, or sampled out) makes no attempt span. */
  readonly recording: boolean
  readonly attempts: Map<number, Span>
  /** The highest attempt started. */
  lastAttempt: number
  /** The `error.type` of the latest attempt, if it failed: the error the run returns, if it stops now. */
  lastError: string | undefined
  /** The delay a hint set for the retry scheduled, reported on the attempt that follows it. */
  hint: number | undefined
}

const seconds = (ms: number): number => ms / 1000

/**
 * An event's `at` as an `HrTime`: the SDK takes a number below `performance.now()` for a time since the process
 * started, which a `TestClock`'s times are; an `HrTime` is read as it is, to the nanosecond.
 */
const hrTime = (ms: number): HrTime => {
  const s = Math.floor(ms / 1000)
  const ns = Math.round((ms - s * 1000) * 1e6)
  return ns >= 1e9 ? [s + 1, ns - 1e9] : [s, ns]
}

/**
 * What tells a run apart: its module and number, and, for a durable run, its `id` and definition. Each delivery of
 * a durable run has a number of its own (`Event.nextRun`), so it is a run here; two definitions may run one id.
 */
const keyOf = (event: Event.Event): string => {
  const { id, definition } = event as { readonly id?: unknown; readonly definition?: unknown }
  return typeof id === 'string'
    ? JSON.stringify([event.source, event.run, id, typeof definition === 'string' ? definition : null])
    : `${event.source} ${event.run}`
}

const makeInstruments = (meter: Meter): Instruments => ({
  events: meter.createCounter('fp_ts_retry.events', {
    unit: '{event}',
    description: 'Events reported by fp-ts-retry, by kind (fp_ts_retry.event) and module (fp_ts_retry.source).'
  }),
  attemptDuration: meter.createHistogram('fp_ts_retry.attempt.duration', {
    unit: 's',
    description: 'How long each attempt took, by attempt number and outcome.',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS }
  }),
  retryDelay: meter.createHistogram('fp_ts_retry.retry.delay', {
    unit: 's',
    description: 'The wait before each retry that was scheduled.',
    advice: { explicitBucketBoundaries: DELAY_BUCKETS }
  }),
  hedgeLaunches: meter.createCounter('fp_ts_retry.hedge.launches', {
    unit: '{attempt}',
    description: 'Attempts a hedged call launched, by index (0: the first, 1 and on: the hedges).'
  }),
  hedgeWins: meter.createCounter('fp_ts_retry.hedge.wins', {
    unit: '{attempt}',
    description: 'Hedged calls won, by the index of the attempt that won.'
  })
})

/**
 * The breakers' state gauge, read at collection: those given, read from them (a registry's live ones), the others
 * as their events told.
 */
const observeBreakers = (
  meter: Meter,
  given: ReadonlyArray<readonly [string, Given<Breaker>]>,
  seen: ReadonlyMap<string, Seen>
): void => {
  const names = new Set(given.map(([name]) => name))
  meter
    .createObservableGauge('fp_ts_retry.breaker.state', {
      unit: '1',
      description: "A circuit breaker's state: 1 for the one it is in, 0 for the others, by breaker name."
    })
    .addCallback((result) => {
      const observe = (name: string | undefined, key: string | undefined, current: BreakerState): void => {
        for (const state of STATES) {
          const attributes: Attributes = { [A.state]: STATE_NAMES[state] }
          if (name !== undefined) attributes[A.breaker] = name
          if (key !== undefined) attributes[A.key] = key
          result.observe(state === current ? 1 : 0, attributes)
        }
      }
      for (const [name, one] of given) for (const [key, breaker] of live(one)) observe(name, key, breaker.state._tag)
      for (const { name, state } of seen.values())
        if (name === undefined || !names.has(name)) observe(name, undefined, state)
    })
}

/** A gauge of a kind of policy: what it reads of each (`undefined`: nothing to report for it). */
interface Gauge<P> {
  readonly name: string
  readonly unit: string
  readonly description: string
  readonly read: (policy: P) => number | undefined
}

/**
 * Gauges of the policies given by name, read at collection: each given policy, and each live key of a registry
 * given (`entries()`, which keeps no key alive), with `attribute` its name and `fp_ts_retry.key` its key.
 */
const observeEach = <P>(
  meter: Meter,
  attribute: string,
  given: ReadonlyArray<readonly [string, Given<P>]>,
  gauges: ReadonlyArray<Gauge<P>>
): void => {
  if (given.length === 0) return
  for (const { name, unit, description, read } of gauges)
    meter.createObservableGauge(name, { unit, description }).addCallback((result) => {
      for (const [named, one] of given)
        for (const [key, policy] of live(one)) {
          const value = read(policy)
          if (value === undefined) continue
          const attributes: Attributes = { [attribute]: named }
          if (key !== undefined) attributes[A.key] = key
          result.observe(value, attributes)
        }
    })
}

/** The options' policies of one kind, each checked: a policy (with `methods`) or a `Keyed` registry of them. */
const givenAll = <P>(
  where: string,
  option: string,
  record: Readonly<Record<string, unknown>> | undefined,
  what: string,
  methods: readonly [string, ...Array<string>]
): ReadonlyArray<readonly [string, Given<P>]> =>
  Object.entries(record === undefined ? {} : validate.object(where, `options.${option}`, record)).map(
    ([name, value]): readonly [string, Given<P>] =>
      isKeyed(value, methods[0])
        ? [name, { _tag: 'Keyed', keyed: value as Keyed<P> }]
        : [
            name,
            {
              _tag: 'One',
              policy: validate.implementing(
                where,
                `options.${option}.${name}`,
                `${what} or a Keyed registry of them`,
                methods,
                value
              ) as P
            }
          ]
  )

/** `attributes`, with the event's policy key (`Keyed`) when it has one. */
const keyed = (event: Event.Event, attributes: Attributes): Attributes => {
  if (event.key !== undefined) attributes[A.key] = event.key
  return attributes
}

/** The attributes of the events counter: the kind, the module, and what keeps the count readable. */
const counted = (event: Event.Event): Attributes => {
  const attributes: Attributes = keyed(event, { [A.event]: event._tag, [A.source]: event.source })
  // a durable run's definition: as few as the application defines
  const { definition } = event as { readonly definition?: unknown }
  if (typeof definition === 'string') attributes[A.definition] = definition
  switch (event._tag) {
    case 'RunStopped':
    case 'GuardRefused':
    case 'RunCompleted':
      attributes[A.reason] = event.reason
      break
    case 'BreakerStateChanged':
      if (event.name !== undefined) attributes[A.breaker] = event.name
      attributes[A.state] = STATE_NAMES[event.to]
      break
    case 'ServiceUnavailable':
    case 'ServiceRecovered':
      attributes[A.service] = event.service
      break
    case 'FallbackUsed':
      if (event.reason !== undefined) attributes[A.reason] = event.reason
      attributes[A.outcome] = event.succeeded ? 'succeeded' : 'failed'
      break
    case 'ChaosInjected':
      attributes[A.chaos] = event.kind
  }
  return attributes
}

const hasTokens = (budget: unknown): budget is { readonly tokens: number } =>
  typeof (budget as { readonly tokens?: unknown } | null)?.tokens === 'number'

/** An `Http` error that says the caller aborted the request: a cancellation, not an error, to the HTTP conventions. */
const isCancellation = (event: Event.AttemptEnded): boolean =>
  event.source === 'http' &&
  event._tag === 'AttemptFailed' &&
  (event.error as { readonly _tag?: unknown } | null)?._tag === 'AbortError'

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * An {@link Event.Observer} that turns every event it is told into OpenTelemetry spans and metrics.
 *
 * **Details**
 *
 * - Spans: one `INTERNAL` span for each run (named after its source: `retry`, `hedging`, `http`, `durable`),
 *   child of the context active at its first attempt; a `CLIENT` span for each attempt (`<source> attempt`),
 *   child of its run's. A run is told apart by its source and number, and a durable one also by its `id` and
 *   definition (`fp_ts_retry.run.id`, `fp_ts_retry.definition`): each delivery of a durable run is a run of its
 *   own, from its first attempt (or its `RunCorrupt`) to its `RunRetried` or its `RunStopped`.
 * - An `Http` attempt's span follows the HTTP client conventions: named by its method (`GET`; `HTTP` for a method
 *   not in `options.knownMethods`), with `http.request.method`, `server.address`, `server.port`, `url.full`,
 *   `http.response.status_code` when a response came, and `http.request.resend_count` on every resend (a retry,
 *   or a hedge of `Http.hedgingFetch`). A request the caller aborted is a cancellation: no `ERROR` status.
 * - Every run ends with its `RunStopped`, whatever the reason (a `'defect'` too): its span ends then, with the
 *   attempts still in flight (outcome `aborted`), and nothing of the run is kept. An event of a run with no open
 *   span (a durable run's `RunCompleted`, told after its `RunStopped`) opens none. A durable delivery's span ends
 *   exactly once, whatever its fate: at its `RunStopped`, its `RunRetried` (the retry stored), or its
 *   `RunAbandoned` (the worker closed or the job was cancelled mid-attempt, a write given up, the run gone from
 *   the store), which is an event of the span, with no stop reason.
 * - Times are the events' `at` (ms since the epoch on the module's clock): on a `TestClock` they are exact.
 * - Retry decisions (`RetryScheduled`, with its delay, and `fp_ts_retry.hint_delay` when a `Schedule.withHint`
 *   hint set it, on the attempt that follows too), hints ignored, guards' refusals, hedges won and a durable
 *   delivery's retry and write failures are events of the run's span, named by their `_tag`. The stop reason and
 *   the number of attempts are attributes of the run's span.
 * - A failed or timed-out attempt, and a run that did not succeed, have the `ERROR` status and an `error.type`
 *   (see `options.errorType`; a run's is the error it returns, its last attempt's, or else its stop reason, as
 *   for a `'defect'`); no error message is recorded (it may hold what a trace must not).
 * - A breaker's change of state is an event of the span active when it changes, if any, and the
 *   `fp_ts_retry.breaker.state` gauge reports every breaker of `options.breakers` from the start.
 * - The events that belong to no run (a bulkhead's, a load shedder's, a rate limiter's, `Timeout`'s, a service's, a
 *   fallback's and chaos's) and a durable run's `RunSubmitted` and `RunDelivered` are events of the span active when they are
 *   told, if any.
 * - Every event counts in `fp_ts_retry.events` by its `_tag`; the metrics' names, units and attributes: the table
 *   of the observability guide.
 * - An event's policy key (`event.key`: a keyed policy's, a run's given a key, an `Http` request's authority) is
 *   the attribute `fp_ts_retry.key` of its run's span and attempt spans, of its span event when it belongs to no
 *   run, and of its metrics (the events counter, the attempts' durations, the retries' delays, and the gauges).
 * - The gauges report a keyed policy through its registry, given in `options.breakers` or `options.budgets`: the
 *   keys it holds at each collection, never one it has evicted. A keyed breaker's events alone put it on no gauge:
 *   the observer cannot tell from them whether the key is still held.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import * as OpenTelemetry from 'fp-ts-retry/OpenTelemetry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const exporter = new InMemorySpanExporter()
 *   const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('example')
 *   const onEvent = OpenTelemetry.observer({ tracer })
 *   await TestClock.run((clock) => pipe(TE.left('down'), retrying(Schedule.fromDelays([100]), { clock, onEvent })))
 *   const spans = exporter.getFinishedSpans()
 *   assert.deepStrictEqual(spans.map((s) => s.name), ['retry attempt', 'retry attempt', 'retry'])
 *   assert.deepStrictEqual(spans[2].attributes, { 'fp_ts_retry.source': 'retry', 'fp_ts_retry.attempts': 2, 'fp_ts_retry.stop_reason': 'schedule', 'error.type': '_OTHER' })
 * }
 * main()
 *
 * @category interpreters
 * @since 1.0.0
 */
export const observer = (options: ObserverOptions): Event.Observer => {
  const where = 'OpenTelemetry.observer'
  validate.object(where, 'options', options)
  const { tracer, meter } = options
  if (tracer !== undefined)
    validate.callable(where, 'options.tracer.startSpan', validate.object(where, 'options.tracer', tracer).startSpan)
  if (meter !== undefined)
    validate.callable(
      where,
      'options.meter.createCounter',
      validate.object(where, 'options.meter', meter).createCounter
    )
  const typeOf =
    options.errorType === undefined ? errorType : validate.callable(where, 'options.errorType', options.errorType)
  const budgets = givenAll<RetryBudget>(where, 'budgets', options.budgets, 'a RetryBudget', ['onFailure'])
  const given = givenAll<Breaker>(where, 'breakers', options.breakers, 'a Breaker', ['enter', 'admitsIn'])
  const limits = givenAll<AdaptiveLimit>(where, 'adaptiveLimits', options.adaptiveLimits, 'an AdaptiveLimit', ['enter'])
  const throttles = givenAll<AdaptiveThrottle>(where, 'throttles', options.throttles, 'an AdaptiveThrottle', [
    'dropProbability'
  ])
  const { knownMethods = KnownMethods } = options
  if (!Array.isArray(knownMethods))
    throw new TypeError(
      `${where}: options.knownMethods must be an array of strings, received ${showValue(knownMethods)}`
    )
  const known = new Set(knownMethods.map((method, i) => validate.string(where, `options.knownMethods[${i}]`, method)))
  /** The breakers known by their events only: their name, key and latest state. */
  const seen = new Map<string, Seen>()
  const instruments = meter === undefined ? undefined : makeInstruments(meter)
  if (meter !== undefined) {
    observeBreakers(meter, given, seen)
    observeEach(meter, A.budget, budgets, [
      {
        name: 'fp_ts_retry.budget.tokens',
        unit: '{token}',
        description: "The tokens a retry budget holds, by the name given in the observer's options.",
        // a budget without a count of tokens (a RetryQuota's is one; a custom budget may have none) is not reported
        read: (budget) => (hasTokens(budget) ? budget.tokens : undefined)
      }
    ])
    observeEach(meter, A.adaptiveLimit, limits, [
      {
        name: 'fp_ts_retry.adaptive_limit.limit',
        unit: '{call}',
        description: "The calls an adaptive limit lets in flight now, by the name given in the observer's options.",
        read: (limit) => limit.limit
      },
      {
        name: 'fp_ts_retry.adaptive_limit.in_flight',
        unit: '{call}',
        description: "The calls in flight through an adaptive limit, by the name given in the observer's options.",
        read: (limit) => limit.inFlight
      }
    ])
    observeEach(meter, A.throttle, throttles, [
      {
        name: 'fp_ts_retry.throttle.drop_probability',
        unit: '1',
        description:
          "The probability an adaptive throttle drops a request, by the name given in the observer's options.",
        read: (throttle) => throttle.dropProbability()
      }
    ])
  }
  /**
   * A breaker's change of state, kept for the gauge; not a keyed one's: the observer cannot tell whether its registry
   * still holds it, so a keyed breaker is on the gauge through its registry given in `breakers`, live keys only.
   */
  const see = ({ name, key, to }: Event.BreakerStateChanged): void => {
    if (key === undefined) seen.set(JSON.stringify(name ?? null), { name, state: to })
  }
  /** The runs with an open span, by {@link keyOf}: a run leaves at its end. */
  const runs = new Map<string, RunSpan>()

  const open = (key: string, event: Event.Event, tracer: Tracer): RunSpan => {
    const attributes: Attributes = keyed(event, { [A.source]: event.source })
    const { id, definition } = event as { readonly id?: unknown; readonly definition?: unknown }
    if (typeof id === 'string') attributes[A.id] = id
    if (typeof definition === 'string') attributes[A.definition] = definition
    const span = tracer.startSpan(
      event.source,
      { kind: SpanKind.INTERNAL, startTime: hrTime(event.at), attributes },
      context.active()
    )
    const run: RunSpan = {
      span,
      context: trace.setSpan(context.active(), span),
      recording: span.isRecording(),
      attempts: new Map(),
      lastAttempt: 0,
      lastError: undefined,
      hint: undefined
    }
    runs.set(key, run)
    return run
  }

  const endAttempt = (run: RunSpan, attempt: number, at: HrTime, outcome: string, error?: string): void => {
    const span = run.attempts.get(attempt)
    if (span === undefined) return
    run.attempts.delete(attempt)
    span.setAttribute(A.outcome, outcome)
    if (error !== undefined) {
      span.setAttribute(A.errorType, error)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end(at)
  }

  /** Ends a run's span, and the attempts still in flight; `reason` when it stopped (not when a retry was stored). */
  const end = (key: string, run: RunSpan, at: HrTime, attempts: number, reason?: string): void => {
    runs.delete(key)
    for (const attempt of [...run.attempts.keys()]) endAttempt(run, attempt, at, 'aborted')
    const { span } = run
    span.setAttribute(A.attempts, attempts)
    if (reason !== undefined) {
      span.setAttribute(A.reason, reason)
      if (reason !== 'succeeded') {
        // a defect rejects the run: it returns no error, whatever its last attempt failed with
        span.setAttribute(A.errorType, reason === 'defect' ? reason : run.lastError ?? reason)
        span.setStatus({ code: SpanStatusCode.ERROR })
      }
    }
    span.end(at)
  }

  const attemptStarted = (run: RunSpan, event: Event.AttemptStarted, at: HrTime, tracer: Tracer): void => {
    const attributes: Attributes = keyed(event, { [A.source]: event.source, [A.attempt]: event.attempt })
    let name = `${event.source} attempt`
    if (event.http !== undefined) {
      const { method, url, serverAddress, serverPort } = event.http
      const reported = known.has(method) ? method : '_OTHER'
      name = reported === '_OTHER' ? 'HTTP' : reported
      attributes[A.method] = reported
      if (reported !== method) attributes[A.methodOriginal] = method
      attributes[A.serverAddress] = serverAddress
      attributes[A.serverPort] = serverPort
      attributes[A.url] = url
    }
    if (event.source === 'http' && event.attempt > 1) attributes[A.resendCount] = event.attempt - 1
    if (run.hint !== undefined) attributes[A.hintDelay] = seconds(run.hint)
    run.hint = undefined
    run.lastError = undefined
    run.lastAttempt = Math.max(run.lastAttempt, event.attempt)
    run.attempts.set(
      event.attempt,
      tracer.startSpan(name, { kind: SpanKind.CLIENT, startTime: at, attributes }, run.context)
    )
  }

  const attemptEnded = (run: RunSpan, event: Event.AttemptEnded, at: HrTime): void => {
    const span = run.attempts.get(event.attempt)
    if (span === undefined) return
    const statusCode = event.http?.statusCode
    if (statusCode !== undefined) span.setAttribute(A.statusCode, statusCode)
    if (event._tag === 'AttemptSucceeded') return endAttempt(run, event.attempt, at, 'succeeded')
    if (isCancellation(event)) return endAttempt(run, event.attempt, at, 'aborted')
    const type = typeOf(event.error)
    run.lastError = type
    if (event._tag === 'AttemptFailed') return endAttempt(run, event.attempt, at, 'failed', type)
    span.setAttribute(A.timeout, seconds(event.timeout))
    endAttempt(run, event.attempt, at, 'timed_out', type)
  }

  const spans = (event: Event.Event, tracer: Tracer): void => {
    const at = hrTime(event.at)
    switch (event._tag) {
      case 'BreakerStateChanged':
      case 'ServiceUnavailable':
      case 'ServiceRecovered':
      case 'BulkheadQueued':
      case 'BulkheadRefused':
      case 'BulkheadAborted':
      case 'BulkheadLeaseLost':
      case 'LimitChanged':
      case 'LoadShed':
      case 'RateLimitWaited':
      case 'RateLimitRefused':
      case 'TimedOut':
      case 'FallbackUsed':
      case 'ChaosInjected':
      case 'RunSubmitted':
      case 'RunDelivered': {
        // Not a run's (a durable run's delivery starts with its attempt): told to whatever span is active (the
        // request a breaker refused, the request that submitted a job), if any.
        trace.getActiveSpan()?.addEvent(event._tag, counted(event), at)
        return
      }
    }
    const key = keyOf(event)
    let run = runs.get(key)
    if (run === undefined) {
      // A run begins with an attempt (a hedged call with its launch; a durable delivery that finds its stored run
      // corrupt, with that): any other event of a run with no open span (its end told after it, or twice) opens none.
      if (event._tag !== 'AttemptStarted' && event._tag !== 'HedgeLaunched' && event._tag !== 'RunCorrupt') {
        if (event._tag === 'WriteFailed') trace.getActiveSpan()?.addEvent(event._tag, counted(event), at)
        return
      }
      run = open(key, event, tracer)
    }
    if (!run.recording) {
      // Only its end is needed: the samplers decide for a trace, so its attempts would not be recorded either.
      if (
        event._tag === 'RunStopped' ||
        event._tag === 'RunRetried' ||
        event._tag === 'RunCompleted' ||
        event._tag === 'RunAbandoned'
      ) {
        runs.delete(key)
        run.span.end(at)
      }
      return
    }
    switch (event._tag) {
      case 'AttemptStarted':
        return attemptStarted(run, event, at, tracer)
      case 'AttemptSucceeded':
      case 'AttemptFailed':
      case 'AttemptTimedOut':
        return attemptEnded(run, event, at)
      case 'HedgeAborted':
        return endAttempt(run, event.index + 1, at, 'aborted')
      case 'RetryScheduled': {
        const attributes: Attributes = { [A.attempt]: event.attempt, [A.delay]: seconds(event.delay) }
        if (event.hint !== undefined) attributes[A.hintDelay] = seconds(event.hint)
        run.hint = event.hint
        run.span.addEvent(event._tag, attributes, at)
        return
      }
      case 'HintIgnored':
        run.span.addEvent(event._tag, { [A.attempt]: event.attempt, [A.hint]: String(event.hint) }, at)
        return
      case 'GuardRefused':
        run.span.addEvent(event._tag, { [A.attempt]: event.attempt, [A.reason]: event.reason }, at)
        return
      case 'HedgeLaunched':
        return
      case 'HedgeWon':
        run.span.setAttribute(A.winner, event.index)
        run.span.addEvent(event._tag, { [A.index]: event.index }, at)
        return
      case 'RunStopped':
        return end(key, run, at, event.attempts, event.reason)
      case 'RunCompleted':
        return end(key, run, at, run.lastAttempt, event.reason)
      case 'RunAbandoned':
        // the delivery ends with nothing stored: no stop reason, the run goes on (or is gone) as it was
        run.span.addEvent(event._tag, {}, at)
        return end(key, run, at, run.lastAttempt)
      case 'RunRetried':
        // the delivery ends with its retry stored: the run goes on in another delivery (here or elsewhere)
        run.span.addEvent(event._tag, { [A.delay]: seconds(Math.max(0, event.dueAt - event.at)) }, at)
        return end(key, run, at, run.lastAttempt)
      case 'RunCorrupt':
      case 'WriteFailed': {
        const type = typeOf(event.error)
        if (event._tag === 'RunCorrupt') run.lastError = type
        run.span.addEvent(event._tag, { [A.errorType]: type }, at)
        return
      }
    }
  }

  const metrics = (event: Event.Event, m: Instruments): void => {
    m.events.add(1, counted(event))
    switch (event._tag) {
      case 'AttemptSucceeded':
      case 'AttemptFailed':
      case 'AttemptTimedOut': {
        const outcome =
          event._tag === 'AttemptSucceeded' ? 'succeeded' : event._tag === 'AttemptFailed' ? 'failed' : 'timed_out'
        const attributes = keyed(event, { [A.source]: event.source, [A.attempt]: event.attempt, [A.outcome]: outcome })
        if (event._tag !== 'AttemptSucceeded') attributes[A.errorType] = typeOf(event.error)
        return m.attemptDuration.record(seconds(event.latency), attributes)
      }
      // every engine tells its decision as RetryScheduled (a durable run's RunRetried is its storage of it)
      case 'RetryScheduled':
        return m.retryDelay.record(seconds(event.delay), keyed(event, { [A.source]: event.source }))
      case 'HedgeLaunched':
        return m.hedgeLaunches.add(1, { [A.index]: event.index })
      case 'HedgeWon':
        return m.hedgeWins.add(1, { [A.index]: event.index })
    }
  }

  return (event) => {
    if (event._tag === 'BreakerStateChanged') see(event)
    if (tracer !== undefined) spans(event, tracer)
    if (instruments !== undefined) metrics(event, instruments)
  }
}
