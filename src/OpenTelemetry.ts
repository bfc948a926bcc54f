/**
 * `fp-ts-retry/OpenTelemetry`: the library's {@link Event.Event}s as OpenTelemetry spans and metrics. Give
 * {@link observer} a tracer and a meter, and pass what it returns as the `onEvent` of a runner, of hedging, of
 * `Http`, of a breaker or of a durable engine (compose several observers with `Event.all`).
 *
 * It imports `@opentelemetry/api` alone (an optional peer dependency of this library), never an SDK: the
 * application chooses and configures its SDK and exporters, as OpenTelemetry asks of libraries.
 *
 * @since 0.2.0
 */
import type { Attributes, Context, Counter, Histogram, HrTime, Meter, Span, Tracer } from '@opentelemetry/api'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { RetryBudget } from './Budget'
import type * as Event from './Event'
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
 * - `budgets`: budgets to report the tokens of, by name (`fp_ts_retry.budget.tokens`): those with a numeric
 *   `tokens` (`Budget.retryThrottle`, `Budget.retryQuota`); the others are skipped.
 * - `errorType` (default {@link errorType}): the `error.type` of a failed attempt's error. Keep its answers few (a
 *   class, a code): they are a metric's attribute.
 *
 * @example
 * import type { ObserverOptions } from 'fp-ts-retry/OpenTelemetry'
 * import { trace, metrics } from '@opentelemetry/api'
 *
 * const options: ObserverOptions = { tracer: trace.getTracer('checkout'), meter: metrics.getMeter('checkout') }
 *
 * @category model
 * @since 0.2.0
 */
export interface ObserverOptions {
  readonly tracer?: Tracer | undefined
  readonly meter?: Meter | undefined
  readonly budgets?: Readonly<Record<string, RetryBudget>> | undefined
  readonly errorType?: ((error: unknown) => string) | undefined
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
 * @since 0.2.0
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
  id: 'fp_ts_retry.run.id',
  index: 'fp_ts_retry.hedge.index',
  winner: 'fp_ts_retry.hedge.winner',
  breaker: 'fp_ts_retry.breaker.name',
  state: 'fp_ts_retry.breaker.state',
  budget: 'fp_ts_retry.budget.name',
  service: 'fp_ts_retry.service',
  resendCount: 'http.request.resend_count',
  errorType: 'error.type'
} as const

const STATES = ['Closed', 'Open', 'HalfOpen'] as const
type BreakerState = (typeof STATES)[number]
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

/** A run's span, its attempts' spans in flight, and its last error (for the run's `error.type`). */
interface RunSpan {
  readonly span: Span
  /** The context its attempts' spans are started in: the run's span in the context of its start. */
  readonly context: Context
  /** Whether the run's span is recorded: a run that is not (no SDK, or sampled out) makes no attempt span. */
  readonly recording: boolean
  readonly attempts: Map<number, Span>
  lastError: string | undefined
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

/** What tells a run apart: a durable run by its `id` (it outlives a worker), the others by `source` and `run`. */
const keyOf = (event: Event.Event): string => {
  const id = (event as { readonly id?: unknown }).id
  return event.source === 'durable' && typeof id === 'string' ? `durable ${id}` : `${event.source} ${event.run}`
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

/** The gauges that are read at collection: the breakers' states (as seen in their events) and the budgets' tokens. */
const observeGauges = (
  meter: Meter,
  breakers: ReadonlyMap<string | undefined, BreakerState>,
  budgets: ReadonlyArray<readonly [string, { readonly tokens: number }]>
): void => {
  meter
    .createObservableGauge('fp_ts_retry.breaker.state', {
      unit: '1',
      description: "A circuit breaker's state: 1 for the one it is in, 0 for the others, by breaker name."
    })
    .addCallback((result) => {
      for (const [name, current] of breakers) {
        for (const state of STATES) {
          const attributes: Attributes = { [A.state]: STATE_NAMES[state] }
          if (name !== undefined) attributes[A.breaker] = name
          result.observe(state === current ? 1 : 0, attributes)
        }
      }
    })
  if (budgets.length === 0) return
  meter
    .createObservableGauge('fp_ts_retry.budget.tokens', {
      unit: '{token}',
      description: "The tokens a retry budget holds, by the name given in the observer's options."
    })
    .addCallback((result) => {
      for (const [name, budget] of budgets) result.observe(budget.tokens, { [A.budget]: name })
    })
}

/** The attributes of the events counter: the kind, the module, and what keeps the count readable. */
const counted = (event: Event.Event): Attributes => {
  const attributes: Attributes = { [A.event]: event._tag, [A.source]: event.source }
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
  }
  return attributes
}

const hasTokens = (budget: unknown): budget is { readonly tokens: number } =>
  typeof (budget as { readonly tokens?: unknown } | null)?.tokens === 'number'

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

/**
 * An {@link Event.Observer} that turns every event it is told into OpenTelemetry spans and metrics.
 *
 * **Details**
 *
 * - Spans: one `INTERNAL` span for each run (named after its source: `retry`, `hedging`, `http`, `durable`),
 *   child of the context active at its first event; a `CLIENT` span for each attempt (`<source> attempt`), child
 *   of its run's, as OpenTelemetry's HTTP conventions ask of a client that resends a request (each resend its own
 *   span; for `Http`, `http.request.resend_count` from the second attempt on). A durable run is one span by its
 *   `id`, from its first event in this process to its `RunCompleted` (a worker that dies takes its open span
 *   with it: the next worker's deliveries make a span of their own). An end told of a run with no open span
 *   makes none.
 * - Times are the events' `at` (ms since the epoch on the module's clock): on a `TestClock` they are exact.
 * - Retry decisions (`RetryScheduled`, with its delay), hints ignored, guards' refusals, hedges won and a
 *   durable run's deliveries, retries and write failures are events of the run's span, named by their `_tag`.
 *   The stop reason and the number of attempts are attributes of the run's span.
 * - A failed or timed-out attempt, and a run that did not succeed, have the `ERROR` status and an `error.type`
 *   (see `options.errorType`); no error message is recorded (it may hold what a trace must not).
 * - A breaker's change of state is an event of the span active when it changes, if any, and a point of the
 *   `fp_ts_retry.breaker.state` gauge (1 for its current state, 0 for the others, by breaker `name`).
 * - A bulkhead's, a rate limiter's and `Timeout`'s events (`BulkheadQueued`, `BulkheadRefused`, `BulkheadAborted`,
 *   `RateLimitWaited`, `RateLimitRefused`, `TimedOut`) belong to no run: each is an event of the span active when
 *   it is told, if any, and counts in `fp_ts_retry.events` by its `_tag`.
 * - The metrics' names, units and attributes: the table of the observability guide.
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
 * @since 0.2.0
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
  const budgets = Object.entries(
    options.budgets === undefined ? {} : validate.object(where, 'options.budgets', options.budgets)
  ).filter((entry): entry is [string, RetryBudget & { readonly tokens: number }] => hasTokens(entry[1]))
  const breakers = new Map<string | undefined, BreakerState>()
  const instruments = meter === undefined ? undefined : makeInstruments(meter)
  if (meter !== undefined) observeGauges(meter, breakers, budgets)
  const runs = new Map<string, RunSpan>()

  const runOf = (event: Event.Event, tracer: Tracer): RunSpan => {
    const key = keyOf(event)
    let run = runs.get(key)
    if (run === undefined) {
      const attributes: Attributes = { [A.source]: event.source }
      if (event.source === 'durable' && 'id' in event && event.id !== undefined) attributes[A.id] = event.id
      const span = tracer.startSpan(
        event.source,
        { kind: SpanKind.INTERNAL, startTime: hrTime(event.at), attributes },
        context.active()
      )
      run = {
        span,
        context: trace.setSpan(context.active(), span),
        recording: span.isRecording(),
        attempts: new Map(),
        lastError: undefined
      }
      runs.set(key, run)
    }
    return run
  }

  const endAttempt = (run: RunSpan, attempt: number, at: HrTime, outcome: string, error?: unknown): void => {
    const span = run.attempts.get(attempt)
    if (span === undefined) return
    run.attempts.delete(attempt)
    span.setAttribute(A.outcome, outcome)
    if (error !== undefined) {
      const type = typeOf(error)
      run.lastError = type
      span.setAttribute(A.errorType, type)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end(at)
  }

  const endRun = (key: string, run: RunSpan, at: HrTime, reason: string, attempts?: number): void => {
    for (const attempt of [...run.attempts.keys()]) endAttempt(run, attempt, at, 'aborted')
    const { span } = run
    if (attempts !== undefined) span.setAttribute(A.attempts, attempts)
    span.setAttribute(A.reason, reason)
    if (reason !== 'succeeded') {
      span.setAttribute(A.errorType, run.lastError ?? reason)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end(at)
    runs.delete(key)
  }

  const spans = (event: Event.Event, tracer: Tracer): void => {
    switch (event._tag) {
      case 'BreakerStateChanged':
      case 'ServiceUnavailable':
      case 'ServiceRecovered':
      case 'BulkheadQueued':
      case 'BulkheadRefused':
      case 'BulkheadAborted':
      case 'RateLimitWaited':
      case 'RateLimitRefused':
      case 'TimedOut': {
        // Not a run's: told to whatever span is active (the request a breaker refused, say), if any.
        trace.getActiveSpan()?.addEvent(event._tag, counted(event), hrTime(event.at))
        return
      }
    }
    // An end that finds no run (told twice, or after a restart) makes no span of its own.
    if ((event._tag === 'RunStopped' || event._tag === 'RunCompleted') && !runs.has(keyOf(event))) return
    const run = runOf(event, tracer)
    if (!run.recording) {
      // Only its end is needed: the samplers decide for a trace, so its attempts would not be recorded either.
      if (event._tag === 'RunCompleted' || (event._tag === 'RunStopped' && event.source !== 'durable')) {
        run.span.end()
        runs.delete(keyOf(event))
      }
      return
    }
    const at = hrTime(event.at)
    switch (event._tag) {
      case 'AttemptStarted': {
        const attributes: Attributes = { [A.source]: event.source, [A.attempt]: event.attempt }
        if (event.source === 'http' && event.attempt > 1) attributes[A.resendCount] = event.attempt - 1
        const span = tracer.startSpan(
          `${event.source} attempt`,
          { kind: SpanKind.CLIENT, startTime: at, attributes },
          run.context
        )
        run.attempts.set(event.attempt, span)
        return
      }
      case 'AttemptSucceeded':
        return endAttempt(run, event.attempt, at, 'succeeded')
      case 'AttemptFailed':
        return endAttempt(run, event.attempt, at, 'failed', event.error)
      case 'AttemptTimedOut':
        run.attempts.get(event.attempt)?.setAttribute(A.timeout, seconds(event.timeout))
        return endAttempt(run, event.attempt, at, 'timed_out', event.error)
      case 'HedgeAborted':
        return endAttempt(run, event.index + 1, at, 'aborted')
      case 'RetryScheduled':
        run.span.addEvent(event._tag, { [A.attempt]: event.attempt, [A.delay]: seconds(event.delay) }, at)
        return
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
        // A durable run outlives its deliveries: it ends with `RunCompleted`.
        if (event.source === 'durable') {
          run.span.setAttribute(A.attempts, event.attempts)
          return
        }
        return endRun(keyOf(event), run, at, event.reason, event.attempts)
      case 'RunCompleted':
        return endRun(keyOf(event), run, at, event.reason)
      case 'RunRetried':
        run.span.addEvent(event._tag, { [A.delay]: seconds(Math.max(0, event.dueAt - event.at)) }, at)
        return
      case 'RunCorrupt':
      case 'WriteFailed': {
        const type = typeOf(event.error)
        if (event._tag === 'RunCorrupt') {
          run.lastError = type
          run.span.setStatus({ code: SpanStatusCode.ERROR })
        }
        run.span.addEvent(event._tag, { [A.errorType]: type }, at)
        return
      }
      case 'RunSubmitted':
      case 'RunDelivered':
        run.span.addEvent(event._tag, {}, at)
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
        const attributes: Attributes = { [A.source]: event.source, [A.attempt]: event.attempt, [A.outcome]: outcome }
        if (event._tag !== 'AttemptSucceeded') attributes[A.errorType] = typeOf(event.error)
        return m.attemptDuration.record(seconds(event.latency), attributes)
      }
      // every engine tells its decision as RetryScheduled (a durable run's RunRetried is its storage of it)
      case 'RetryScheduled':
        return m.retryDelay.record(seconds(event.delay), { [A.source]: event.source })
      case 'HedgeLaunched':
        return m.hedgeLaunches.add(1, { [A.index]: event.index })
      case 'HedgeWon':
        return m.hedgeWins.add(1, { [A.index]: event.index })
    }
  }

  return (event) => {
    if (event._tag === 'BreakerStateChanged') breakers.set(event.name, event.to)
    if (tracer !== undefined) spans(event, tracer)
    if (instruments !== undefined) metrics(event, instruments)
  }
}
