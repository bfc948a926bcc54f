/**
 * `fp-ts-retry/OpenTelemetry` against the real OpenTelemetry SDK: spans through `InMemorySpanExporter`, metrics
 * through a `MetricReader` collected by hand, each run on a `TestClock` so that every time is exact.
 */
import { type Meter, type Tracer, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from '@opentelemetry/sdk-trace-base'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as t from 'io-ts'
import * as os from 'os'
import * as path from 'path'
import * as Breaker from '../src/Breaker'
import * as Bulkhead from '../src/Bulkhead'
import * as Budget from '../src/Budget'
import * as Durable from '../src/Durable'
import * as Event from '../src/Event'
import * as FileEngine from '../src/FileEngine'
import { hedging } from '../src/Hedging'
import * as Http from '../src/Http'
import * as OpenTelemetry from '../src/OpenTelemetry'
import * as RateLimiter from '../src/RateLimiter'
import { retrying, retryingWithContext } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import * as Timeout from '../src/Timeout'
import { startServer } from './support/http'
import { drive } from './support/wait'
import { deepStrictEqual, strictEqual, throwsTypeError } from './util'

// -------------------------------------------------------------------------------------
// the SDK, and what it recorded, as plain data
// -------------------------------------------------------------------------------------

class Reader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

interface Sdk {
  readonly tracer: Tracer
  readonly meter: Meter
  readonly exporter: InMemorySpanExporter
  readonly reader: Reader
}

const sdk = (): Sdk => {
  const exporter = new InMemorySpanExporter()
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test')
  const reader = new Reader()
  const meter = new MeterProvider({ readers: [reader] }).getMeter('test')
  return { tracer, meter, exporter, reader }
}

const ms = ([s, ns]: readonly [number, number]): number => s * 1000 + ns / 1e6

/** A span as the tests read it: its parent by name (with its attempt, for an attempt's), its times in ms. */
interface SpanView {
  readonly name: string
  readonly kind: SpanKind
  readonly parent: string | undefined
  readonly start: number
  readonly end: number
  readonly error: boolean
  readonly attributes: string
  readonly events: ReadonlyArray<string>
}

const label = (span: ReadableSpan): string => {
  const attempt = span.attributes['fp_ts_retry.attempt']
  return attempt === undefined ? span.name : `${span.name} ${String(attempt)}`
}

/** The finished spans, in the order they ended; each span event as `name at ms {attributes}`. */
const spansOf = ({ exporter }: Sdk): ReadonlyArray<SpanView> => {
  const spans = exporter.getFinishedSpans()
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]))
  return spans.map((span) => {
    const parentId = span.parentSpanContext?.spanId
    const parent = parentId === undefined ? undefined : byId.get(parentId)
    if (parentId !== undefined && parent === undefined) throw new Error(`the parent of ${label(span)} never ended`)
    return {
      name: label(span),
      kind: span.kind,
      parent: parent === undefined ? undefined : label(parent),
      start: ms(span.startTime),
      end: ms(span.endTime),
      error: span.status.code === SpanStatusCode.ERROR,
      attributes: line(span.attributes),
      events: span.events.map((e) => `${e.name} at ${ms(e.time)}: ${line(e.attributes ?? {})}`)
    }
  })
}

/** A span without its kind: what the tests of the runners compare (their spans are all internal or client). */
const withoutKind = ({ name, parent, start, end, error, attributes, events }: SpanView): Omit<SpanView, 'kind'> => ({
  name,
  parent,
  start,
  end,
  error,
  attributes,
  events
})

/** Attributes as one short line: `key=value` sorted, without the `fp_ts_retry.` prefix. */
const line = (attributes: Record<string, unknown>): string =>
  Object.entries(attributes)
    .map(([k, v]) => `${k.replace(/^fp_ts_retry\./, '')}=${String(v)}`)
    .sort()
    .join(' ')

/** Every metric's points, by `name (unit)`, then by their attributes; a histogram's value as `[count, sum]`. */
const pointsOf = async ({
  reader
}: Sdk): Promise<Record<string, Record<string, number | readonly [number, number]>>> => {
  const { resourceMetrics } = await reader.collect()
  const out: Record<string, Record<string, number | readonly [number, number]>> = {}
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      const points = metric.dataPoints as ReadonlyArray<DataPoint<number | Histogram>>
      if (points.length === 0) continue
      out[`${metric.descriptor.name} (${metric.descriptor.unit})`] = Object.fromEntries(
        points.map((p) => [
          line(p.attributes),
          typeof p.value === 'number' ? p.value : ([p.value.count, p.value.sum ?? 0] as const)
        ])
      )
    }
  }
  return out
}

const observe = (s: Sdk, options: Partial<OpenTelemetry.ObserverOptions> = {}): Event.Observer =>
  OpenTelemetry.observer({ tracer: s.tracer, meter: s.meter, ...options })

const sleepThen =
  <A>(clock: TestClock.TestClock, ms: number, value: A) =>
  (): Promise<A> =>
    clock.sleep(ms).then(() => value)

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('OpenTelemetry', () => {
  describe('errorType', () => {
    it('should be the status of an Http.StatusError, the _tag of a record, the name of an Error, else _OTHER', () => {
      deepStrictEqual(
        [{ _tag: 'StatusError', status: 503 }, { _tag: 'NetworkError' }, new TypeError('x'), 'down', null, 42].map(
          OpenTelemetry.errorType
        ),
        ['503', 'NetworkError', 'TypeError', '_OTHER', '_OTHER', '_OTHER']
      )
    })
  })

  describe('observer', () => {
    it('should refuse options of the wrong type with a TypeError naming them', () => {
      throwsTypeError(() => OpenTelemetry.observer(null as never), /options.*null/)
      throwsTypeError(() => OpenTelemetry.observer({ tracer: 'tracer' as never }), /options\.tracer.*"tracer"/)
      throwsTypeError(() => OpenTelemetry.observer({ meter: {} as never }), /options\.meter\.createCounter/)
      throwsTypeError(() => OpenTelemetry.observer({ errorType: 1 as never }), /options\.errorType.*1/)
      throwsTypeError(() => OpenTelemetry.observer({ budgets: 'b' as never }), /options\.budgets.*"b"/)
    })

    it('should trace a run with retries and an ignored hint: the run, an attempt span each, the decisions as events', async () => {
      const s = sdk()
      interface Busy {
        readonly retryInMs?: number
      }
      const policy = pipe(
        Schedule.exponential(100),
        Schedule.withHint((e: Busy) => e.retryInMs, { max: 1_000 }),
        Schedule.intersect(Schedule.recurs(3))
      )
      const answers: ReadonlyArray<E.Either<Busy, string>> = [
        E.left({ retryInMs: -5 }),
        E.left({ retryInMs: 250 }),
        E.right('ok')
      ]
      let n = 0
      const { result } = await TestClock.run((clock) =>
        pipe(() => sleepThen(clock, 10, answers[n++])(), retrying(policy, { clock, onEvent: observe(s) }))
      )
      deepStrictEqual(result, E.right('ok'))
      const run = 'retry'
      deepStrictEqual(spansOf(s), [
        {
          name: 'retry attempt 1',
          kind: SpanKind.CLIENT,
          parent: run,
          start: 0,
          end: 10,
          error: true,
          attributes: 'attempt=1 error.type=_OTHER outcome=failed source=retry',
          events: []
        },
        {
          name: 'retry attempt 2',
          kind: SpanKind.CLIENT,
          parent: run,
          start: 110,
          end: 120,
          error: true,
          attributes: 'attempt=2 error.type=_OTHER outcome=failed source=retry',
          events: []
        },
        {
          name: 'retry attempt 3',
          kind: SpanKind.CLIENT,
          parent: run,
          start: 370,
          end: 380,
          error: false,
          attributes: 'attempt=3 outcome=succeeded source=retry',
          events: []
        },
        {
          name: run,
          kind: SpanKind.INTERNAL,
          parent: undefined,
          start: 0,
          end: 380,
          error: false,
          attributes: 'attempts=3 source=retry stop_reason=succeeded',
          events: [
            'HintIgnored at 10: attempt=1 hint=-5',
            'RetryScheduled at 10: attempt=1 delay=0.1',
            'RetryScheduled at 120: attempt=2 delay=0.25'
          ]
        }
      ])
      deepStrictEqual(await pointsOf(s), {
        'fp_ts_retry.events ({event})': {
          'event=AttemptStarted source=retry': 3,
          'event=AttemptFailed source=retry': 2,
          'event=HintIgnored source=retry': 1,
          'event=RetryScheduled source=retry': 2,
          'event=AttemptSucceeded source=retry': 1,
          'event=RunStopped source=retry stop_reason=succeeded': 1
        },
        'fp_ts_retry.attempt.duration (s)': {
          'attempt=1 error.type=_OTHER outcome=failed source=retry': [1, 0.01],
          'attempt=2 error.type=_OTHER outcome=failed source=retry': [1, 0.01],
          'attempt=3 outcome=succeeded source=retry': [1, 0.01]
        },
        'fp_ts_retry.retry.delay (s)': { 'source=retry': [2, 0.35] }
      })
    })

    it('should end a timed-out attempt at its timeout, with its error.type, and a run that gives up with an error', async () => {
      const s = sdk()
      interface Timeout {
        readonly _tag: 'Timeout'
      }
      const policy = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(1)))
      const hang =
        ({ signal }: { readonly signal: AbortSignal }): TaskEither<Timeout, string> =>
        () =>
          new Promise((resolve) => signal.addEventListener('abort', () => resolve(E.left({ _tag: 'Timeout' }))))
      const { result, clock } = await TestClock.run((clock) =>
        pipe(
          hang,
          retryingWithContext(policy, {
            clock,
            attemptTimeout: 50,
            onTimeout: (): Timeout => ({ _tag: 'Timeout' }),
            onEvent: observe(s)
          })
        )
      )
      deepStrictEqual(result, E.left({ _tag: 'Timeout' as const }))
      strictEqual(clock.now(), 200)
      deepStrictEqual(spansOf(s).map(withoutKind), [
        {
          name: 'retry attempt 1',
          parent: 'retry',
          start: 0,
          end: 50,
          error: true,
          attributes: 'attempt=1 error.type=Timeout outcome=timed_out source=retry timeout=0.05',
          events: []
        },
        {
          name: 'retry attempt 2',
          parent: 'retry',
          start: 150,
          end: 200,
          error: true,
          attributes: 'attempt=2 error.type=Timeout outcome=timed_out source=retry timeout=0.05',
          events: []
        },
        {
          name: 'retry',
          parent: undefined,
          start: 0,
          end: 200,
          error: true,
          attributes: 'attempts=2 error.type=Timeout source=retry stop_reason=schedule',
          events: ['RetryScheduled at 50: attempt=1 delay=0.1']
        }
      ])
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.attempt.duration (s)'], {
        'attempt=1 error.type=Timeout outcome=timed_out source=retry': [1, 0.05],
        'attempt=2 error.type=Timeout outcome=timed_out source=retry': [1, 0.05]
      })
    })

    it("should report a breaker's state as a gauge (1 for its state, 0 for the others) as it opens and half-opens", async () => {
      const s = sdk()
      const onEvent = observe(s)
      const changes: Array<string> = []
      const seen = Event.all([
        onEvent,
        (e) => void (e._tag === 'BreakerStateChanged' && changes.push(`${e.from} -> ${e.to} at ${e.at}`))
      ])
      const states = async (): Promise<unknown> => (await pointsOf(s))['fp_ts_retry.breaker.state (1)']
      await TestClock.run((clock) => {
        const breaker = Breaker.consecutive({
          threshold: 2,
          halfOpenAfter: Schedule.constant(1_000),
          clock,
          name: 'db',
          onEvent: seen
        })
        const down: TaskEither<string, never> = () => Promise.resolve(E.left('down'))
        const policy = pipe(Schedule.constant(600), Schedule.intersect(Schedule.recurs(3)))
        return pipe(
          down,
          Breaker.guard(breaker, () => 'open'),
          retrying(policy, { clock, onEvent })
        )
      })
      deepStrictEqual(changes, ['Closed -> Open at 600', 'Open -> HalfOpen at 1800', 'HalfOpen -> Open at 1800'])
      deepStrictEqual(await states(), {
        'breaker.name=db breaker.state=closed': 0,
        'breaker.name=db breaker.state=open': 1,
        'breaker.name=db breaker.state=half_open': 0
      })
      const counted = (await pointsOf(s))['fp_ts_retry.events ({event})']
      deepStrictEqual(
        Object.entries(counted).filter(([k]) => k.includes('Breaker')),
        [
          ['breaker.name=db breaker.state=open event=BreakerStateChanged source=breaker', 2],
          ['breaker.name=db breaker.state=half_open event=BreakerStateChanged source=breaker', 1]
        ]
      )
      // no run is the breaker's: its changes are no span of their own
      deepStrictEqual(
        spansOf(s).filter((span) => span.name.startsWith('breaker')),
        []
      )
    })

    it("should count the bulkhead's, the rate limiter's and the timeout's events by _tag, and make no span of them", async () => {
      const s = sdk()
      // every span started, ended or not: a span left open would never reach the exporter
      const started: Array<string> = []
      const tracer: Tracer = {
        startSpan: (name, ...rest) => (started.push(name), s.tracer.startSpan(name, ...rest)),
        startActiveSpan: s.tracer.startActiveSpan.bind(s.tracer)
      }
      const onEvent = observe(s, { tracer })
      const clock = TestClock.make()
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1, clock, onEvent })
      const hold = bulkhead.enter() as Bulkhead.Release
      const queued = bulkhead.enter()
      strictEqual(bulkhead.enter(), undefined)
      const limiter = RateLimiter.gcra({ rate: 1, per: 100, burst: 1, clock, onEvent })
      const throttled = [0, 1].map(() => pipe(TE.right(1), RateLimiter.throttle(limiter, { clock }))())
      strictEqual(limiter.take(), false)
      const hangs: TaskEither<string, never> = () => new Promise(() => undefined)
      const timedOut = pipe(
        hangs,
        Timeout.timeout(50, () => 'timeout', { clock, onEvent })
      )()
      await clock.runAll()
      await Promise.all(throttled)
      deepStrictEqual(await timedOut, E.left('timeout'))
      hold()
      await queued
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.events ({event})'], {
        'event=BulkheadQueued source=bulkhead': 1,
        'event=BulkheadRefused source=bulkhead': 1,
        'event=RateLimitWaited source=rateLimit': 1,
        'event=RateLimitRefused source=rateLimit': 1,
        'event=TimedOut source=timeout': 1
      })
      deepStrictEqual(started, [])
    })

    it('should trace a hedged call: the attempts side by side, the loser aborted, the winner on the run', async () => {
      const s = sdk()
      const { result } = await TestClock.run((clock) =>
        hedging(Schedule.fromDelays([50]), { clock, onEvent: observe(s) })(
          (signal, index): TaskEither<string, string> =>
            index === 0
              ? () => new Promise((resolve) => signal.addEventListener('abort', () => resolve(E.left('aborted'))))
              : sleepThen(clock, 30, E.right(`hedge ${index}`))
        )
      )
      deepStrictEqual(result, E.right('hedge 1'))
      deepStrictEqual(spansOf(s).map(withoutKind), [
        {
          name: 'hedging attempt 2',
          parent: 'hedging',
          start: 50,
          end: 80,
          error: false,
          attributes: 'attempt=2 outcome=succeeded source=hedging',
          events: []
        },
        {
          name: 'hedging attempt 1',
          parent: 'hedging',
          start: 0,
          end: 80,
          error: false,
          attributes: 'attempt=1 outcome=aborted source=hedging',
          events: []
        },
        {
          name: 'hedging',
          parent: undefined,
          start: 0,
          end: 80,
          error: false,
          attributes: 'attempts=2 hedge.winner=1 source=hedging stop_reason=succeeded',
          events: ['HedgeWon at 80: hedge.index=1']
        }
      ])
      const points = await pointsOf(s)
      deepStrictEqual(points['fp_ts_retry.hedge.launches ({attempt})'], { 'hedge.index=0': 1, 'hedge.index=1': 1 })
      deepStrictEqual(points['fp_ts_retry.hedge.wins ({attempt})'], { 'hedge.index=1': 1 })
    })

    it('should trace an HTTP call against a real server: a span per request, http.request.resend_count on the resends', async () => {
      const server = await startServer((_, res, n) => {
        res.writeHead(n === 1 ? 503 : 200)
        res.end(n === 1 ? 'busy' : 'ok')
      })
      try {
        const s = sdk()
        const { result } = await TestClock.run(
          (clock) => Http.retryingFetch(Schedule.fromDelays([100]), { clock, onEvent: observe(s) })(`${server.url}/`),
          { quiet: 20 }
        )
        strictEqual(E.isRight(result) && (await result.right.text()), 'ok')
        deepStrictEqual(
          spansOf(s).map(({ name, kind, parent, start, end, error, attributes }) => ({
            name,
            kind,
            parent,
            start,
            end,
            error,
            attributes
          })),
          [
            {
              name: 'http attempt 1',
              kind: SpanKind.CLIENT,
              parent: 'http',
              start: 0,
              end: 0,
              error: true,
              attributes: 'attempt=1 error.type=503 outcome=failed source=http'
            },
            {
              name: 'http attempt 2',
              kind: SpanKind.CLIENT,
              parent: 'http',
              start: 100,
              end: 100,
              error: false,
              attributes: 'attempt=2 http.request.resend_count=1 outcome=succeeded source=http'
            },
            {
              name: 'http',
              kind: SpanKind.INTERNAL,
              parent: undefined,
              start: 0,
              end: 100,
              error: false,
              attributes: 'attempts=2 source=http stop_reason=succeeded'
            }
          ]
        )
        deepStrictEqual((await pointsOf(s))['fp_ts_retry.attempt.duration (s)'], {
          'attempt=1 error.type=503 outcome=failed source=http': [1, 0],
          'attempt=2 outcome=succeeded source=http': [1, 0]
        })
      } finally {
        await server.close()
      }
    })

    it('should trace a durable run of FileEngine by its id across a worker restart, on a TestClock', async () => {
      const s = sdk()
      const onEvent = observe(s)
      const clock = TestClock.make(0)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-otel-'))
      const def = Durable.define({
        name: 'traced',
        schedule: Schedule.fromDelays([1_000]),
        payload: t.null,
        // attempt 1 fails after 5 ms, attempt 2 succeeds after 4
        action: (_, run) => () =>
          run.status.iterNumber === 0
            ? clock.sleep(5).then(() => E.left(new Error('down')))
            : clock.sleep(4).then(() => E.right('ok'))
      })
      try {
        const first = FileEngine.make({ dir, clock, onEvent })
        const retried = new Promise<void>((resolve) => void first.work(def, { onRetry: () => resolve() }))
        await first.submit(def, 'job-1', null)
        await drive(clock, retried)
        await first.close()
        // a restarted worker: another engine on the same folder, the same observer
        const second = FileEngine.make({ dir, clock, onEvent })
        const done = new Promise<void>((resolve) => void second.work(def, { onDone: () => resolve() }))
        await drive(clock, done)
        await second.close()
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
      deepStrictEqual(spansOf(s).map(withoutKind), [
        {
          name: 'durable attempt 1',
          parent: 'durable',
          start: 0,
          end: 5,
          error: true,
          attributes: 'attempt=1 error.type=Error outcome=failed source=durable',
          events: []
        },
        {
          name: 'durable attempt 2',
          parent: 'durable',
          start: 1_005,
          end: 1_009,
          error: false,
          attributes: 'attempt=2 outcome=succeeded source=durable',
          events: []
        },
        {
          name: 'durable',
          parent: undefined,
          start: 0,
          end: 1_009,
          error: false,
          attributes: 'attempts=2 run.id=job-1 source=durable stop_reason=succeeded',
          events: [
            'RunSubmitted at 0: ',
            'RunDelivered at 0: ',
            'RetryScheduled at 5: attempt=1 delay=1',
            'RunRetried at 5: delay=1',
            // the restarted worker delivers the run at once: not due, no attempt
            'RunDelivered at 5: ',
            'RunDelivered at 1005: '
          ]
        }
      ])
      const points = await pointsOf(s)
      deepStrictEqual(points['fp_ts_retry.retry.delay (s)'], { 'source=durable': [1, 1] })
      deepStrictEqual(
        points['fp_ts_retry.events ({event})']['event=RunCompleted source=durable stop_reason=succeeded'],
        1
      )
    })

    it("should report the named budgets' tokens as a gauge, and skip a budget that holds no count", async () => {
      const s = sdk()
      const bucket = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
      observe(s, {
        budgets: {
          api: bucket,
          other: Budget.retryThrottle({ maxTokens: 4, tokenRatio: 0.5 }),
          none: { onSuccess: () => undefined, onFailure: () => true }
        }
      })
      bucket.onFailure(0, 0, { retries: 0, error: 'x', retrying: true })
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.budget.tokens ({token})'], {
        'budget.name=api': 9,
        'budget.name=other': 4
      })
    })

    it('should make no attempt span for a run whose span is not recorded (sampled out, or the no-op API)', async () => {
      const s = sdk()
      const exporter = new InMemorySpanExporter()
      const sampledOut = new BasicTracerProvider({
        sampler: new AlwaysOffSampler(),
        spanProcessors: [new SimpleSpanProcessor(exporter)]
      }).getTracer('off')
      const noop = OpenTelemetry.observer({ tracer: trace.getTracer('noop'), meter: metrics.getMeter('noop') })
      const onEvent = Event.all([noop, OpenTelemetry.observer({ tracer: sampledOut, meter: s.meter })])
      const { result } = await TestClock.run((clock) =>
        pipe(() => Promise.resolve(E.left('down')), retrying(Schedule.fromDelays([10]), { clock, onEvent }))
      )
      deepStrictEqual(result, E.left('down'))
      deepStrictEqual(exporter.getFinishedSpans(), [])
      // the metrics are still recorded
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.retry.delay (s)'], { 'source=retry': [1, 0.01] })
    })

    // The property that keeps the mapping honest: whatever a module reports, the counter counts exactly those
    // events, there is one attempt span per attempt with its events' times, and the delays recorded are the ones
    // scheduled.
    it("should agree with the events a module reports: the counter's points, the attempt spans, the delays", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 4 }),
          fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
          fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 6, maxLength: 6 }),
          fc.boolean(),
          async (delays, outcomes, latencies, hedged) => {
            const s = sdk()
            const events: Array<Event.Event> = []
            const onEvent = Event.all([(e) => void events.push(e), observe(s)])
            await TestClock.run((clock) => {
              let n = 0
              const next = (): Promise<E.Either<string, number>> => {
                const i = n++
                return clock
                  .sleep(latencies[i % 6])
                  .then(() => (outcomes[i % outcomes.length] ? E.right(i) : E.left(`e${i}`)))
              }
              return hedged
                ? hedging(Schedule.fromDelays(delays), { clock, onEvent })(() => next)
                : pipe(next, retrying(Schedule.fromDelays(delays), { clock, onEvent }))
            })
            const points = await pointsOf(s)
            const counts: Record<string, number> = {}
            for (const e of events) {
              const key = line({
                'fp_ts_retry.event': e._tag,
                'fp_ts_retry.source': e.source,
                ...('reason' in e ? { 'fp_ts_retry.stop_reason': e.reason } : {})
              })
              counts[key] = (counts[key] ?? 0) + 1
            }
            deepStrictEqual(points['fp_ts_retry.events ({event})'], counts)
            const source = hedged ? 'hedging' : 'retry'
            const started = events.filter((e): e is Event.AttemptStarted => e._tag === 'AttemptStarted')
            const attemptSpans = spansOf(s).filter((span) => span.parent !== undefined)
            deepStrictEqual(
              attemptSpans.map((span) => `${span.name} from ${span.start}`).sort(),
              started.map((e) => `${source} attempt ${e.attempt} from ${e.at}`).sort()
            )
            const ended = events.filter(
              (e) => e._tag === 'AttemptSucceeded' || e._tag === 'AttemptFailed' || e._tag === 'HedgeAborted'
            )
            deepStrictEqual(attemptSpans.length, ended.length)
            const scheduled = events.flatMap((e) => (e._tag === 'RetryScheduled' ? [e.delay / 1000] : []))
            const sum = scheduled.reduce((a, b) => a + b, 0)
            deepStrictEqual(
              points['fp_ts_retry.retry.delay (s)'],
              scheduled.length === 0 ? undefined : { [`source=${source}`]: [scheduled.length, sum] as const }
            )
            deepStrictEqual(spansOf(s).filter((span) => span.parent === undefined).length, 1)
          }
        ),
        { numRuns: 40 }
      )
    })
  })
})
