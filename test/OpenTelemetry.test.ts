/**
 * `fp-ts-retry/OpenTelemetry` against the real OpenTelemetry SDK, on both of its current lines (2.x and 3.x, see
 * `./support/otel`): spans through each line's `InMemorySpanExporter`, metrics through a `MetricReader` collected by
 * hand, each run on a `TestClock` so that every time is exact.
 */
import type { Context, Span, SpanOptions, Tracer } from '@opentelemetry/api'
import { context, type ContextManager, metrics, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as t from 'io-ts'
import * as os from 'os'
import * as path from 'path'
import * as AdaptiveLimit from '../src/AdaptiveLimit'
import * as AdaptiveThrottle from '../src/AdaptiveThrottle'
import * as Breaker from '../src/Breaker'
import * as Bulkhead from '../src/Bulkhead'
import * as BullMQ from '../src/BullMQ'
import * as Chaos from '../src/Chaos'
import * as Budget from '../src/Budget'
import * as Durable from '../src/Durable'
import * as Event from '../src/Event'
import * as Fallback from '../src/Fallback'
import * as FileEngine from '../src/FileEngine'
import { hedging } from '../src/Hedging'
import * as Http from '../src/Http'
import * as Keyed from '../src/Keyed'
import * as OpenTelemetry from '../src/OpenTelemetry'
import * as Random from '../src/Random'
import * as RateLimiter from '../src/RateLimiter'
import { retrying, retryingWithContext } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import * as Timeout from '../src/Timeout'
import { startServer, type TestServer } from './support/http'
import { type FinishedSpan, type Sdk, sdk2 } from './support/otel'
import { sdk3 } from './support/otel-sdk3'
import { drive, waitFor } from './support/wait'
import { deepStrictEqual, ok, strictEqual, throwsTypeError } from './util'

// -------------------------------------------------------------------------------------
// what the SDK recorded, as plain data
// -------------------------------------------------------------------------------------

const ERROR = 2 // SpanStatusCode.ERROR, the same in both lines' API

const ms = ([s, ns]: readonly [number, number]): number => s * 1000 + ns / 1e6

/** A span as the tests read it: its parent by name (with its attempt, for an attempt's), its times in ms. */
interface SpanView {
  readonly name: string
  readonly kind: number
  readonly parent: string | undefined
  readonly start: number
  readonly end: number
  readonly error: boolean
  readonly attributes: string
  readonly events: ReadonlyArray<string>
}

const label = (span: FinishedSpan): string => {
  const attempt = span.attributes['fp_ts_retry.attempt']
  return attempt === undefined ? span.name : `${span.name} ${String(attempt)}`
}

/** The finished spans, in the order they ended; each span event as `name at ms: {attributes}`. */
const spansOf = (s: Sdk): ReadonlyArray<SpanView> => {
  const spans = s.finished()
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
      error: span.status.code === ERROR,
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
const line = (attributes: Readonly<Record<string, unknown>>): string =>
  Object.entries(attributes)
    .map(([k, v]) => `${k.replace(/^fp_ts_retry\./, '')}=${String(v)}`)
    .sort()
    .join(' ')

/** Every metric's points, by `name (unit)`, then by their attributes; a histogram's value as `[count, sum]`. */
const pointsOf = async (s: Sdk): Promise<Record<string, Record<string, number | readonly [number, number]>>> => {
  const out: Record<string, Record<string, number | readonly [number, number]>> = {}
  for (const metric of await s.collect()) {
    if (metric.points.length === 0) continue
    out[`${metric.name} (${metric.unit})`] = Object.fromEntries(
      metric.points.map((p) => [
        line(p.attributes),
        typeof p.value === 'number' ? p.value : ([p.value.count, p.value.sum] as const)
      ])
    )
  }
  return out
}

/** A context manager of the test's own, synchronous: enough for `trace.getActiveSpan()` inside `context.with`. */
const syncContexts = (): ContextManager => {
  let current = ROOT_CONTEXT
  const manager: ContextManager = {
    active: () => current,
    with: (ctx, fn, thisArg, ...args) => {
      const before = current
      current = ctx
      try {
        return fn.call(thisArg, ...args)
      } finally {
        current = before
      }
    },
    bind: (_ctx, target) => target,
    enable: () => manager,
    disable: () => {
      current = ROOT_CONTEXT
      return manager
    }
  }
  return manager
}

const observe = (s: Sdk, options: Partial<OpenTelemetry.ObserverOptions> = {}): Event.Observer =>
  OpenTelemetry.observer({ tracer: s.tracer, meter: s.meter, ...options })

const sleepThen =
  <A>(clock: TestClock.TestClock, ms: number, value: A) =>
  (): Promise<A> =>
    clock.sleep(ms).then(() => value)

/** A test server, closed after the test. */
const withServer = async (handler: Parameters<typeof startServer>[0], test: (server: TestServer) => Promise<void>) => {
  const server = await startServer(handler)
  try {
    await test(server)
  } finally {
    await server.close()
  }
}

/** The attributes of an `Http` attempt's span, as the HTTP client conventions name them. */
const httpSpan = (server: TestServer, path: string, method = 'GET'): Record<string, unknown> => ({
  'http.request.method': method,
  'server.address': '127.0.0.1',
  'server.port': Number(new URL(server.url).port),
  'url.full': `${server.url}${path}`
})

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

  describe('KnownMethods', () => {
    it('should be the methods of RFC 9110, PATCH and QUERY, in upper case', () => {
      deepStrictEqual([...OpenTelemetry.KnownMethods].sort(), [
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
      ])
    })
  })

  describe('observer options', () => {
    it('should refuse options of the wrong type with a TypeError naming them', () => {
      throwsTypeError(() => OpenTelemetry.observer(null as never), /options.*null/)
      throwsTypeError(() => OpenTelemetry.observer({ tracer: 'tracer' as never }), /options\.tracer.*"tracer"/)
      throwsTypeError(() => OpenTelemetry.observer({ meter: {} as never }), /options\.meter\.createCounter/)
      throwsTypeError(() => OpenTelemetry.observer({ errorType: 1 as never }), /options\.errorType.*1/)
      throwsTypeError(() => OpenTelemetry.observer({ budgets: 'b' as never }), /options\.budgets.*"b"/)
      throwsTypeError(() => OpenTelemetry.observer({ breakers: 'b' as never }), /options\.breakers.*"b"/)
      throwsTypeError(() => OpenTelemetry.observer({ breakers: { db: {} as never } }), /options\.breakers\.db.*Breaker/)
      throwsTypeError(() => OpenTelemetry.observer({ knownMethods: 'GET' as never }), /options\.knownMethods.*"GET"/)
      throwsTypeError(() => OpenTelemetry.observer({ knownMethods: [1] as never }), /options\.knownMethods\[0\].*1/)
    })
  })

  describe('the gauges of keyed adaptive limits', () => {
    it('should observe the keys the registry keeps, and keep none alive by reading them', async () => {
      // the gauge's callback, called by hand: what it observes at each collection (an SDK keeps its last points)
      let collect: (() => ReadonlyArray<string>) | undefined
      const noop = { add: () => undefined, record: () => undefined }
      const meter = {
        createCounter: () => noop,
        createHistogram: () => noop,
        createObservableGauge: (name: string) => ({
          addCallback: (callback: (result: { observe: (value: number, attributes: object) => void }) => void) => {
            if (name !== 'fp_ts_retry.adaptive_limit.in_flight') return
            collect = () => {
              const seen: Array<string> = []
              callback({ observe: (value, attributes) => void seen.push(`${line({ ...attributes })}: ${value}`) })
              return seen
            }
          }
        })
      } as unknown as OpenTelemetry.ObserverOptions['meter']
      const clock = TestClock.make()
      const hosts = Keyed.make({
        make: () => AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 100, initial: 5, clock }),
        maxKeys: 10,
        idleAfter: 1_000,
        clock
      })
      OpenTelemetry.observer({ meter, adaptiveLimits: { hosts } })
      ok(collect !== undefined)
      const held = [hosts.get('a').enter(), hosts.get('a').enter(), hosts.get('b').enter()]
      deepStrictEqual(collect(), ['adaptive_limit.name=hosts key=a: 2', 'adaptive_limit.name=hosts key=b: 1'])
      await clock.advance(600)
      hosts.get('b')
      await clock.advance(600)
      collect() // read at a collection: a is not used by it
      hosts.get('c') // a is idle for 1.2 s: dropped
      deepStrictEqual(collect(), ['adaptive_limit.name=hosts key=b: 1', 'adaptive_limit.name=hosts key=c: 0'])
      for (const p of held) if (p !== undefined && !(p instanceof Promise)) p.ignore()
    })
  })

  // The same tests on each SDK line, each with its own in-memory exporter and metric reader.
  describe('the breaker gauge of keyed breakers', () => {
    it('should put a breaker known by its events on the gauge, but not a keyed one: its events cannot tell it was evicted', () => {
      // the gauge's callback, called by hand: what it observes at each collection
      let collect: (() => ReadonlyArray<string>) | undefined
      const noop = { add: () => undefined, record: () => undefined }
      const meter = {
        createCounter: () => noop,
        createHistogram: () => noop,
        createObservableGauge: (name: string) => ({
          addCallback: (callback: (result: { observe: (value: number, attributes: object) => void }) => void) => {
            if (name !== 'fp_ts_retry.breaker.state') return
            collect = () => {
              const seen: Array<string> = []
              callback({ observe: (value, attributes) => void (value === 1 && seen.push(line({ ...attributes }))) })
              return seen
            }
          }
        })
      } as unknown as OpenTelemetry.ObserverOptions['meter']
      const onEvent = OpenTelemetry.observer({ meter })
      const changed = (key: string | undefined, from: 'Closed' | 'Open' | 'HalfOpen', to: 'Closed' | 'HalfOpen') =>
        onEvent({
          _tag: 'BreakerStateChanged',
          source: 'breaker',
          run: 0,
          at: 0,
          from,
          to,
          since: 0,
          origin: 'local',
          name: 'hosts',
          key
        })
      const opened = (key: string | undefined) =>
        onEvent({
          _tag: 'BreakerStateChanged',
          source: 'breaker',
          run: 0,
          at: 0,
          from: 'Closed',
          to: 'Open',
          since: 0,
          halfOpenAt: 1,
          origin: 'local',
          name: 'hosts',
          key
        })
      opened('a')
      opened('b')
      opened(undefined)
      changed('a', 'Open', 'HalfOpen')
      changed('a', 'HalfOpen', 'Closed')
      // issue 33: a keyed breaker's events said open until it closed, so an evicted open key stayed open forever
      deepStrictEqual(collect?.(), ['breaker.name=hosts breaker.state=open'])
      changed(undefined, 'Open', 'HalfOpen')
      changed(undefined, 'HalfOpen', 'Closed')
      // a breaker without a key is kept, closed
      deepStrictEqual(collect?.(), ['breaker.name=hosts breaker.state=closed'])
      deepStrictEqual(collect?.(), ['breaker.name=hosts breaker.state=closed'])
    })
  })

  describe.each([sdk2, sdk3])('observer on the SDK $line', (sdkLine) => {
    it('should run on the packages of its line', () => {
      const major = (name: string): string => sdkLine.versions[name]?.split('.')[0] ?? 'missing'
      if (sdkLine.line === '2.x') {
        deepStrictEqual(['@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-metrics'].map(major), ['2', '2'])
      } else {
        deepStrictEqual(['@opentelemetry/sdk-trace', '@opentelemetry/sdk-metrics'].map(major), ['3', '3'])
        // the API 3.x asks for as a peer
        ok(/^1\.10\./.test(sdkLine.versions['@opentelemetry/api'] ?? ''), sdkLine.versions['@opentelemetry/api'])
      }
    })

    it('should trace a run with retries, an ignored hint and a used one: the run, an attempt span each, the decisions as events', async () => {
      const s = sdkLine.make()
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
          // the retry the server's hint timed
          name: 'retry attempt 3',
          kind: SpanKind.CLIENT,
          parent: run,
          start: 370,
          end: 380,
          error: false,
          attributes: 'attempt=3 hint_delay=0.25 outcome=succeeded source=retry',
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
            'RetryScheduled at 120: attempt=2 delay=0.25 hint_delay=0.25'
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
      const s = sdkLine.make()
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
      const s = sdkLine.make()
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
          Breaker.protect(breaker, () => 'open'),
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

    it("should set a keyed policy's key and a keyed run's as fp_ts_retry.key: on the spans, the counter, the histograms and the gauge", async () => {
      const s = sdkLine.make()
      const clock = TestClock.make()
      const breakers: Keyed.Keyed<Breaker.Breaker> = Keyed.make({
        make: (_host, onEvent) =>
          Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000), clock, name: 'hosts', onEvent }),
        maxKeys: 10,
        onEvent: (event) => onEvent(event)
      })
      const onEvent = observe(s, { breakers: { hosts: breakers } })
      const call = (host: string, action: TaskEither<string, string>) =>
        pipe(
          action,
          Breaker.protect(breakers.get(host), () => 'open'),
          retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(1))), {
            clock,
            breaker: breakers.get(host),
            onEvent,
            key: host
          })
        )()
      const a = call('a.example.com', TE.left('down'))
      const b = call('b.example.com', TE.right('up'))
      await clock.runAll()
      deepStrictEqual([await a, await b], [E.left('down'), E.right('up')])
      deepStrictEqual(
        spansOf(s).map((span) => `${span.name}: ${span.attributes}`),
        [
          'retry attempt 1: attempt=1 error.type=_OTHER key=a.example.com outcome=failed source=retry',
          'retry: attempts=1 error.type=_OTHER key=a.example.com source=retry stop_reason=breaker',
          'retry attempt 1: attempt=1 key=b.example.com outcome=succeeded source=retry',
          'retry: attempts=1 key=b.example.com source=retry stop_reason=succeeded'
        ]
      )
      const points = await pointsOf(s)
      deepStrictEqual(points['fp_ts_retry.breaker.state (1)'], {
        'breaker.name=hosts breaker.state=closed key=a.example.com': 0,
        'breaker.name=hosts breaker.state=open key=a.example.com': 1,
        'breaker.name=hosts breaker.state=half_open key=a.example.com': 0,
        'breaker.name=hosts breaker.state=closed key=b.example.com': 1,
        'breaker.name=hosts breaker.state=open key=b.example.com': 0,
        'breaker.name=hosts breaker.state=half_open key=b.example.com': 0
      })
      const counted = points['fp_ts_retry.events ({event})']
      strictEqual(
        counted['breaker.name=hosts breaker.state=open event=BreakerStateChanged key=a.example.com source=breaker'],
        1
      )
      strictEqual(counted['event=RunStopped key=a.example.com source=retry stop_reason=breaker'], 1)
      strictEqual(counted['event=RunStopped key=b.example.com source=retry stop_reason=succeeded'], 1)
      deepStrictEqual(Object.keys(points['fp_ts_retry.attempt.duration (s)']).sort(), [
        'attempt=1 error.type=_OTHER key=a.example.com outcome=failed source=retry',
        'attempt=1 key=b.example.com outcome=succeeded source=retry'
      ])
      // the gauge reads the registry's breakers: a key is reported as it is now
      await clock.advance(1_000)
      deepStrictEqual(await call('a.example.com', TE.right('up again')), E.right('up again'))
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.breaker.state (1)'], {
        'breaker.name=hosts breaker.state=closed key=a.example.com': 1,
        'breaker.name=hosts breaker.state=open key=a.example.com': 0,
        'breaker.name=hosts breaker.state=half_open key=a.example.com': 0,
        'breaker.name=hosts breaker.state=closed key=b.example.com': 1,
        'breaker.name=hosts breaker.state=open key=b.example.com': 0,
        'breaker.name=hosts breaker.state=half_open key=b.example.com': 0
      })
    })

    describe('issue 33: the gauges of a Keyed registry report its live keys, never an evicted one', () => {
      const opened = (breaker: Breaker.Breaker): Promise<unknown> =>
        pipe(
          TE.left('down'),
          Breaker.protect(breaker, () => 'open')
        )()
      /** The keys of a metric's points, with the value of each state that is 1 (or the value of a count). */
      const keysOf = (points: Record<string, number | readonly [number, number]> | undefined): ReadonlyArray<string> =>
        Object.entries(points ?? {})
          .filter(([, value]) => value !== 0)
          .map(([attributes]) => attributes)

      it('should leave an evicted breaker out of the next collection, from its events alone', async () => {
        // a delta reader: the SDK's cumulative readers repeat the last point of a series no longer observed
        const s = sdkLine.make({ temporality: 'delta' })
        const clock = TestClock.make()
        const onEvent = observe(s)
        const hosts = Keyed.make({
          make: (_host, onEvent) =>
            Breaker.consecutive({
              threshold: 1,
              halfOpenAfter: Schedule.constant(60_000),
              clock,
              name: 'hosts',
              onEvent
            }),
          maxKeys: 2,
          onEvent
        })
        await opened(hosts.get('a'))
        hosts.get('b')
        hosts.get('c') // evicts a, open
        deepStrictEqual(hosts.keys(), ['b', 'c'])
        const points = await pointsOf(s)
        deepStrictEqual(
          keysOf(points['fp_ts_retry.breaker.state (1)']).filter((attributes) => attributes.includes('key=a')),
          []
        )
      })

      it('should report the breakers the registry holds at each collection, and none it has evicted', async () => {
        const s = sdkLine.make({ temporality: 'delta' })
        const clock = TestClock.make()
        const hosts: Keyed.Keyed<Breaker.Breaker> = Keyed.make({
          make: (_host, onEvent) =>
            Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(60_000), clock, onEvent }),
          maxKeys: 2,
          onEvent: (event) => onEvent(event)
        })
        const onEvent = observe(s, { breakers: { hosts } })
        const states = async () => keysOf((await pointsOf(s))['fp_ts_retry.breaker.state (1)'])
        deepStrictEqual(await states(), []) // nothing held yet
        await opened(hosts.get('a'))
        hosts.get('b')
        deepStrictEqual(await states(), [
          'breaker.name=hosts breaker.state=open key=a',
          'breaker.name=hosts breaker.state=closed key=b'
        ])
        hosts.get('c') // evicts a, still open
        deepStrictEqual(await states(), [
          'breaker.name=hosts breaker.state=closed key=b',
          'breaker.name=hosts breaker.state=closed key=c'
        ])
        hosts.delete('b')
        deepStrictEqual(await states(), ['breaker.name=hosts breaker.state=closed key=c'])
        // a new breaker for a, made at its next use: closed
        hosts.get('a')
        deepStrictEqual(await states(), [
          'breaker.name=hosts breaker.state=closed key=c',
          'breaker.name=hosts breaker.state=closed key=a'
        ])
      })

      it("should report a registry's budgets' tokens by key, and none of a key dropped as idle", async () => {
        const s = sdkLine.make({ temporality: 'delta' })
        const clock = TestClock.make()
        const tenants = Keyed.make({
          make: () => Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 }),
          maxKeys: 10,
          idleAfter: 60_000,
          clock
        })
        observe(s, { budgets: { tenants } })
        const tokens = async () => (await pointsOf(s))['fp_ts_retry.budget.tokens ({token})']
        const failure = { latency: 1, now: 0, retries: 0, error: 'down', retrying: true }
        tenants.get('t1').onFailure(failure)
        tenants.get('t2')
        deepStrictEqual(await tokens(), { 'budget.name=tenants key=t1': 9, 'budget.name=tenants key=t2': 10 })
        await clock.advance(30_000)
        tenants.get('t2')
        await clock.advance(30_000)
        tenants.get('t2') // t1 unused for 60 s: dropped
        deepStrictEqual(await tokens(), { 'budget.name=tenants key=t2': 10 })
      })
    })

    it('should report every breaker it is given from the start, closed, as resilience4j does, and read its state', async () => {
      const s = sdkLine.make()
      const clock = TestClock.make()
      const breakerOf = (name: string): Breaker.Breaker =>
        Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000), clock, name })
      const db = breakerOf('db')
      const cache = breakerOf('cache')
      const onEvent = observe(s, { breakers: { db, cache } })
      const states = async (): Promise<unknown> => (await pointsOf(s))['fp_ts_retry.breaker.state (1)']
      const closed = (name: string): Record<string, number> => ({
        [`breaker.name=${name} breaker.state=closed`]: 1,
        [`breaker.name=${name} breaker.state=open`]: 0,
        [`breaker.name=${name} breaker.state=half_open`]: 0
      })
      // before any call, and with no event told
      deepStrictEqual(await states(), { ...closed('db'), ...closed('cache') })
      // db opens, its events told to nobody: the gauge reads the breaker itself
      deepStrictEqual(
        await pipe(
          TE.left('down'),
          Breaker.protect(db, () => 'open')
        )(),
        E.left('down')
      )
      strictEqual(db.state._tag, 'Open')
      // a breaker that is not given is reported from its first event, by the name its events carry
      const other = Breaker.consecutive({
        threshold: 1,
        halfOpenAfter: Schedule.constant(1_000),
        clock,
        name: 'other',
        onEvent
      })
      await pipe(
        TE.left('down'),
        Breaker.protect(other, () => 'open')
      )()
      deepStrictEqual(await states(), {
        'breaker.name=db breaker.state=closed': 0,
        'breaker.name=db breaker.state=open': 1,
        'breaker.name=db breaker.state=half_open': 0,
        ...closed('cache'),
        'breaker.name=other breaker.state=closed': 0,
        'breaker.name=other breaker.state=open': 1,
        'breaker.name=other breaker.state=half_open': 0
      })
      // a given breaker whose events are told too is reported once, as it is
      const told = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000), clock, name: 'told' })
      const s2 = sdkLine.make()
      const onEvent2 = observe(s2, { breakers: { told } })
      onEvent2({
        _tag: 'BreakerStateChanged',
        source: 'breaker',
        run: 0,
        at: 0,
        from: 'Closed',
        to: 'Open',
        since: 0,
        halfOpenAt: 1_000,
        origin: 'store',
        name: 'told'
      })
      deepStrictEqual((await pointsOf(s2))['fp_ts_retry.breaker.state (1)'], closed('told'))
    })

    it("should count the bulkhead's, the rate limiter's and the timeout's events by _tag, and make no span of them", async () => {
      const s = sdkLine.make()
      const onEvent = observe(s)
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
      // no span started: none ended, none open
      deepStrictEqual([s.finished().length, s.open()], [0, 0])
    })

    it("should make a fleet bulkhead's lost lease an event of the span active then, and count it (issue 33)", async () => {
      const s = sdkLine.make()
      const onEvent = observe(s)
      context.setGlobalContextManager(syncContexts())
      try {
        const request = s.tracer.startSpan('request')
        context.with(trace.setSpan(context.active(), request), () =>
          onEvent({ _tag: 'BulkheadLeaseLost', source: 'bulkhead', run: 0, at: 5, inFlight: 0, queued: 0 })
        )
        request.end()
      } finally {
        context.disable()
      }
      deepStrictEqual(
        s.finished().map((span) => span.events.map((e) => e.name)),
        [['BulkheadLeaseLost']]
      )
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.events ({event})'], {
        'event=BulkheadLeaseLost source=bulkhead': 1
      })
    })

    it("should count the fallback's events by stop reason and outcome, and chaos's by kind, and make no span of them", async () => {
      const s = sdkLine.make()
      const onEvent = observe(s)
      const random = Random.seeded(1)
      const faulty = Chaos.fault('injected', { injectionRate: 1, random, onEvent })
      const slow = Chaos.latency(0, { injectionRate: 1, random, onEvent })
      const cache = (answer: E.Either<string, string>) =>
        Fallback.fallback(Fallback.always, () => () => Promise.resolve(answer), { onEvent })
      await pipe(TE.right('ok'), faulty, slow, cache(E.right('cached')))()
      await pipe(
        Fallback.telling((tell) => pipe(TE.left('503'), faulty, retrying(Schedule.recurs(1), tell({})))),
        cache(E.left('cache down'))
      )()
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.events ({event})'], {
        'chaos.kind=fault event=ChaosInjected source=chaos': 3,
        'chaos.kind=latency event=ChaosInjected source=chaos': 1,
        'event=FallbackUsed outcome=succeeded source=fallback': 1,
        'event=FallbackUsed outcome=failed source=fallback stop_reason=schedule': 1
      })
      deepStrictEqual([s.finished().length, s.open()], [0, 0])
    })

    it('should trace a hedged call: the attempts side by side, the loser aborted, the winner on the run', async () => {
      const s = sdkLine.make()
      const { result } = await TestClock.run((clock) =>
        hedging(Schedule.fromDelays([50]), { clock, onEvent: observe(s) })(
          ({ signal, index }): TaskEither<string, string> =>
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

    it('should trace an Http.retryingFetch as the HTTP client conventions ask: a span per request named by its method, the resends counted', async () => {
      await withServer(
        (_, res, n) => void res.writeHead(n === 1 ? 503 : 200).end(n === 1 ? 'busy' : 'ok'),
        async (server) => {
          const s = sdkLine.make()
          const { result } = await TestClock.run(
            (clock) =>
              Http.retryingFetch(Schedule.fromDelays([100]), { clock, onEvent: observe(s) })(
                `${server.url}/items?page=2`
              ),
            { quiet: 20 }
          )
          strictEqual(E.isRight(result) && (await result.right.text()), 'ok')
          const http = httpSpan(server, '/items?page=2')
          deepStrictEqual(spansOf(s), [
            {
              name: 'GET 1',
              kind: SpanKind.CLIENT,
              parent: 'http',
              start: 0,
              end: 0,
              error: true,
              attributes: line({
                ...http,
                'fp_ts_retry.attempt': 1,
                'fp_ts_retry.outcome': 'failed',
                'fp_ts_retry.source': 'http',
                'error.type': '503',
                'http.response.status_code': 503
              }),
              events: []
            },
            {
              name: 'GET 2',
              kind: SpanKind.CLIENT,
              parent: 'http',
              start: 100,
              end: 100,
              error: false,
              attributes: line({
                ...http,
                'fp_ts_retry.attempt': 2,
                'fp_ts_retry.outcome': 'succeeded',
                'fp_ts_retry.source': 'http',
                'http.request.resend_count': 1,
                'http.response.status_code': 200
              }),
              events: []
            },
            {
              name: 'http',
              kind: SpanKind.INTERNAL,
              parent: undefined,
              start: 0,
              end: 100,
              error: false,
              attributes: 'attempts=2 source=http stop_reason=succeeded',
              events: ['RetryScheduled at 0: attempt=1 delay=0.1']
            }
          ])
          deepStrictEqual((await pointsOf(s))['fp_ts_retry.attempt.duration (s)'], {
            'attempt=1 error.type=503 outcome=failed source=http': [1, 0],
            'attempt=2 outcome=succeeded source=http': [1, 0]
          })
        }
      )
    })

    it('should trace an Http.hedgingFetch from source http: each hedge a resend, the loser aborted', async () => {
      await withServer(
        (_, res, n) => {
          if (n === 2) res.end('fast') // the first is left hanging
        },
        async (server) => {
          const s = sdkLine.make()
          const clock = TestClock.make()
          const get = Http.hedgingFetch(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(1))), {
            clock,
            onEvent: observe(s)
          })
          const pending = get(`${server.url}/item`)()
          await waitFor(() => server.received.length === 1)
          await clock.advance(100)
          const result = await pending
          strictEqual(E.isRight(result) && (await result.right.text()), 'fast')
          const http = httpSpan(server, '/item')
          deepStrictEqual(spansOf(s).map(withoutKind), [
            {
              name: 'GET 2',
              parent: 'http',
              start: 100,
              end: 100,
              error: false,
              attributes: line({
                ...http,
                'fp_ts_retry.attempt': 2,
                'fp_ts_retry.outcome': 'succeeded',
                'fp_ts_retry.source': 'http',
                'http.request.resend_count': 1,
                'http.response.status_code': 200
              }),
              events: []
            },
            {
              name: 'GET 1',
              parent: 'http',
              start: 0,
              end: 100,
              error: false,
              attributes: line({
                ...http,
                'fp_ts_retry.attempt': 1,
                'fp_ts_retry.outcome': 'aborted',
                'fp_ts_retry.source': 'http'
              }),
              events: []
            },
            {
              name: 'http',
              parent: undefined,
              start: 0,
              end: 100,
              error: false,
              attributes: 'attempts=2 hedge.winner=1 source=http stop_reason=succeeded',
              events: ['HedgeWon at 100: hedge.index=1']
            }
          ])
        }
      )
    })

    it('should take a request the caller aborted for a cancellation, and a method it does not know for _OTHER', async () => {
      await withServer(
        (req, res) => {
          if (req.url !== '/hang') res.end('purged')
        },
        async (server) => {
          const s = sdkLine.make()
          const controller = new AbortController()
          const pending = Http.retryingFetch(Schedule.fromDelays([100]), { onEvent: observe(s) })(
            `${server.url}/hang`,
            {
              signal: controller.signal
            }
          )()
          await waitFor(() => server.received.length === 1)
          controller.abort()
          strictEqual(leftTag(await pending), 'AbortError')
          const purge = (options: Partial<OpenTelemetry.ObserverOptions>) =>
            Http.retryingFetch(Schedule.stop, { onEvent: observe(s, options) })(`${server.url}/cached`, {
              method: 'PURGE'
            })()
          ok(E.isRight(await purge({})))
          ok(E.isRight(await purge({ knownMethods: [...OpenTelemetry.KnownMethods, 'PURGE'] })))
          const attempts = spansOf(s).filter((span) => span.parent !== undefined)
          deepStrictEqual(
            attempts.map(({ name, error, attributes }) => ({ name, error, attributes })),
            [
              {
                // no ERROR status, no error.type: the caller gave up, the request did not fail
                name: 'GET 1',
                error: false,
                attributes: line({
                  ...httpSpan(server, '/hang'),
                  'fp_ts_retry.attempt': 1,
                  'fp_ts_retry.outcome': 'aborted',
                  'fp_ts_retry.source': 'http'
                })
              },
              {
                name: 'HTTP 1',
                error: false,
                attributes: line({
                  ...httpSpan(server, '/cached', '_OTHER'),
                  'http.request.method_original': 'PURGE',
                  'http.response.status_code': 200,
                  'fp_ts_retry.attempt': 1,
                  'fp_ts_retry.outcome': 'succeeded',
                  'fp_ts_retry.source': 'http'
                })
              },
              {
                name: 'PURGE 1',
                error: false,
                attributes: line({
                  ...httpSpan(server, '/cached', 'PURGE'),
                  'http.response.status_code': 200,
                  'fp_ts_retry.attempt': 1,
                  'fp_ts_retry.outcome': 'succeeded',
                  'fp_ts_retry.source': 'http'
                })
              }
            ]
          )
        }
      )
    })

    it('should trace each delivery of a durable run of FileEngine, by its id and definition, across a worker restart', async () => {
      const s = sdkLine.make()
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
          // the first delivery: it ends with its retry stored
          name: 'durable',
          parent: undefined,
          start: 0,
          end: 5,
          error: false,
          attributes: 'attempts=1 definition=traced run.id=job-1 source=durable',
          events: ['RetryScheduled at 5: attempt=1 delay=1', 'RunRetried at 5: delay=1']
        },
        // the restarted worker's first delivery, at 5, finds the run not due: no attempt, no span
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
          start: 1_005,
          end: 1_009,
          error: false,
          attributes: 'attempts=2 definition=traced run.id=job-1 source=durable stop_reason=succeeded',
          events: []
        }
      ])
      const points = await pointsOf(s)
      deepStrictEqual(points['fp_ts_retry.retry.delay (s)'], { 'source=durable': [1, 1] })
      const counted = points['fp_ts_retry.events ({event})']
      deepStrictEqual(
        ['RunSubmitted', 'RunDelivered', 'RunRetried', 'RunCompleted'].map(
          (tag) =>
            counted[
              `definition=traced event=${tag} source=durable${tag === 'RunCompleted' ? ' stop_reason=succeeded' : ''}`
            ]
        ),
        [1, 3, 1, 1]
      )
      strictEqual(s.open(), 0)
    })

    it('should tell apart two definitions running the same id: two spans, two RunCompleted', async () => {
      const s = sdkLine.make()
      const onEvent = observe(s)
      const clock = TestClock.make(0)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-otel-'))
      const defOf = (name: string): Durable.Definition<null, Error, string> =>
        Durable.define({
          name,
          schedule: Schedule.stop,
          payload: t.null,
          action: () => () => clock.sleep(name === 'charge' ? 3 : 7).then(() => E.right(name))
        })
      const charge = defOf('charge')
      const ship = defOf('ship')
      try {
        const engine = FileEngine.make({ dir, clock, onEvent })
        const done = (def: Durable.Definition<null, Error, string>): Promise<void> =>
          new Promise<void>((resolve) => void engine.work(def, { onDone: () => resolve() }))
        const both = Promise.all([done(charge), done(ship)])
        await engine.submit(charge, 'order-7', null)
        await engine.submit(ship, 'order-7', null)
        await drive(clock, both)
        await engine.close()
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
      deepStrictEqual(
        spansOf(s)
          .filter((span) => span.parent === undefined)
          .map(({ attributes }) => attributes)
          .sort(),
        [
          'attempts=1 definition=charge run.id=order-7 source=durable stop_reason=succeeded',
          'attempts=1 definition=ship run.id=order-7 source=durable stop_reason=succeeded'
        ]
      )
      const counted = (await pointsOf(s))['fp_ts_retry.events ({event})']
      deepStrictEqual(
        Object.entries(counted)
          .filter(([k]) => k.includes('RunCompleted'))
          .sort(),
        [
          ['definition=charge event=RunCompleted source=durable stop_reason=succeeded', 1],
          ['definition=ship event=RunCompleted source=durable stop_reason=succeeded', 1]
        ]
      )
      strictEqual(s.open(), 0)
    })

    // Regression: a run that stopped for a defect (its action rejected, a hook threw) must leave nothing behind.
    it('should end every span it began when a run stops for a defect, and keep nothing of 1,000 such runs', async () => {
      const s = sdkLine.make()
      const events: Array<Event.Event> = []
      const telemetry = observe(s)
      const onEvent = Event.all([(e) => void events.push(e), telemetry])
      const bug = (): Promise<never> => Promise.reject(new Error('bug'))
      const def = Durable.define({
        name: 'buggy',
        schedule: Schedule.fromDelays([10]),
        payload: t.null,
        action: () => bug
      })
      const kinds = ['action', 'hook', 'hedging', 'durable'] as const
      for (let i = 0; i < 1_000; i++) {
        const kind = kinds[i % kinds.length]
        const ran = TestClock.run((clock): (() => Promise<unknown>) => {
          switch (kind) {
            case 'action': {
              // the second attempt's action rejects
              let n = 0
              const action: TaskEither<string, never> = () => (++n === 1 ? Promise.resolve(E.left('down')) : bug())
              return pipe(action, retrying(Schedule.fromDelays([10]), { clock, onEvent }))
            }
            case 'hook':
              return pipe(
                TE.left('down'),
                retrying(Schedule.fromDelays([10]), {
                  clock,
                  onEvent,
                  onRetry: () => {
                    throw new Error('hook')
                  }
                })
              )
            case 'hedging':
              // the hedge rejects while the first attempt is in flight
              return hedging(Schedule.fromDelays([10]), { clock, onEvent })(
                ({ signal, index }): TaskEither<string, never> =>
                  index === 0
                    ? () => new Promise((resolve) => signal.addEventListener('abort', () => resolve(E.left('aborted'))))
                    : bug
              )
            case 'durable': {
              const controller = new AbortController()
              const stored = { id: `job-${i}`, payload: null, retry: null, outcome: null }
              return () =>
                Durable.deliver(def, `job-${i}`, stored, {
                  now: clock.now,
                  signal: controller.signal,
                  options: { onEvent }
                }).then((delivery) => E.right(delivery._tag))
            }
          }
        })
        // the runners reject with the defect; a durable delivery ends the run itself
        await ran.then(
          () => ok(kind === 'durable', kind),
          () => ok(kind !== 'durable', kind)
        )
      }
      const stops = events.filter((e): e is Event.RunStopped => e._tag === 'RunStopped')
      deepStrictEqual([stops.length, stops.filter((e) => e.reason === 'defect').length], [1_000, 1_000])
      // every span ended: the observer keeps a run exactly as long as its span is open
      strictEqual(s.open(), 0)
      const spans = spansOf(s)
      const runs = spans.filter((span) => span.parent === undefined)
      strictEqual(runs.length, 1_000)
      deepStrictEqual(
        runs.filter(
          ({ error, attributes }) =>
            !(error && attributes.includes('error.type=defect') && attributes.includes('stop_reason=defect'))
        ),
        []
      )
      const attempts = spans.filter((span) => span.parent !== undefined)
      strictEqual(attempts.length, events.filter((e) => e._tag === 'AttemptStarted').length)
      // an event of a stopped run told again (its end, its attempts' ends, its decisions) opens nothing
      for (const e of events) if (e._tag !== 'AttemptStarted' && e._tag !== 'HedgeLaunched') telemetry(e)
      deepStrictEqual([s.open(), s.finished().length], [0, spans.length])
    })

    it("should report the named budgets' tokens as a gauge, and skip a budget that holds no count", async () => {
      const s = sdkLine.make()
      const bucket = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
      observe(s, {
        budgets: {
          api: bucket,
          other: Budget.retryThrottle({ maxTokens: 4, tokenRatio: 0.5 }),
          none: { onSuccess: () => undefined, onFailure: () => true }
        }
      })
      bucket.onFailure({ latency: 0, now: 0, retries: 0, error: 'x', retrying: true })
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.budget.tokens ({token})'], {
        'budget.name=api': 9,
        'budget.name=other': 4
      })
    })

    it("should report the adaptive limits' limit and calls in flight, a keyed registry's by key", async () => {
      const s = sdkLine.make()
      const clock = TestClock.make()
      const make = (initial: number) =>
        AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 100, initial, clock })
      const api = make(20)
      const hosts = Keyed.make({ make: () => make(5), maxKeys: 2, idleAfter: 1_000, clock })
      observe(s, { adaptiveLimits: { api, hosts } })
      const held = [api.enter(), hosts.get('a').enter(), hosts.get('a').enter(), hosts.get('b').enter()]
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.adaptive_limit.limit ({call})'], {
        'adaptive_limit.name=api': 20,
        'adaptive_limit.name=hosts key=a': 5,
        'adaptive_limit.name=hosts key=b': 5
      })
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.adaptive_limit.in_flight ({call})'], {
        'adaptive_limit.name=api': 1,
        'adaptive_limit.name=hosts key=a': 2,
        'adaptive_limit.name=hosts key=b': 1
      })
      for (const p of held) if (p !== undefined && !(p instanceof Promise)) p.ignore()
      throwsTypeError(
        () => observe(s, { adaptiveLimits: { x: {} as never } }),
        /options\.adaptiveLimits\.x.*AdaptiveLimit or a Keyed registry/
      )
    })

    it("should tell a throttle's LoadShed as an event of the span active then", () => {
      const s = sdkLine.make()
      // a context manager of the test's own (synchronous `with`): the API's default one keeps no active span
      let active = ROOT_CONTEXT
      const manager: ContextManager = {
        active: () => active,
        with: (ctx, fn, thisArg, ...args) => {
          const before = active
          active = ctx
          try {
            return fn.call(thisArg, ...args)
          } finally {
            active = before
          }
        },
        bind: (_ctx, target) => target,
        enable: () => manager,
        disable: () => manager
      }
      context.setGlobalContextManager(manager)
      try {
        const throttle = AdaptiveThrottle.make({
          clock: TestClock.make(),
          random: Random.fixed(0),
          onEvent: observe(s)
        })
        throttle.request() // p = 1/2 for the next
        const span = s.tracer.startSpan('request')
        context.with(trace.setSpan(context.active(), span), () => throttle.request())
        span.end()
        deepStrictEqual(
          s.finished().map((f) => [f.name, f.events.map((e) => e.name)]),
          [['request', ['LoadShed']]]
        )
      } finally {
        context.disable()
      }
    })

    it("should report the named throttles' drop probability as a gauge, a keyed one's for each key it holds", async () => {
      const s = sdkLine.make()
      const clock = TestClock.make()
      const api = AdaptiveThrottle.make({ clock, random: Random.fixed(0.99) })
      const hosts = Keyed.make({
        make: () => AdaptiveThrottle.make({ clock, random: Random.fixed(0.99) }),
        maxKeys: 10
      })
      observe(s, { throttles: { api, hosts } })
      for (let i = 0; i < 3; i++) api.request() // refused: p = 3 / 4
      hosts.get('a.example').request()
      hosts.get('b.example').request()
      hosts.get('b.example').accept()
      deepStrictEqual((await pointsOf(s))['fp_ts_retry.throttle.drop_probability (1)'], {
        'throttle.name=api': 0.75,
        'key=a.example throttle.name=hosts': 0.5,
        'key=b.example throttle.name=hosts': 0
      })
      hosts.delete('a.example')
      await pointsOf(s)
      deepStrictEqual(hosts.keys(), ['b.example']) // read without being made again
      throwsTypeError(
        () => observe(s, { throttles: { x: {} as never } }),
        /options.throttles.x must be an AdaptiveThrottle/
      )
    })

    it('should make no attempt span for a run whose span is not recorded (sampled out, or the no-op API)', async () => {
      const s = sdkLine.make()
      const sampledOut = sdkLine.make({ sampled: false })
      const noop = OpenTelemetry.observer({ tracer: trace.getTracer('noop'), meter: metrics.getMeter('noop') })
      const onEvent = Event.all([noop, OpenTelemetry.observer({ tracer: sampledOut.tracer, meter: s.meter })])
      const { result } = await TestClock.run((clock) =>
        pipe(() => Promise.resolve(E.left('down')), retrying(Schedule.fromDelays([10]), { clock, onEvent }))
      )
      deepStrictEqual(result, E.left('down'))
      deepStrictEqual([sampledOut.finished().length, sampledOut.open()], [0, 0])
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
            const s = sdkLine.make()
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
            strictEqual(s.open(), 0)
          }
        ),
        { numRuns: 25 }
      )
    })
  })
})

const leftTag = (result: E.Either<Http.HttpError, Response>): string => (E.isLeft(result) ? result.left._tag : 'Right')

describe('the span of a durable delivery, whatever its fate (issue 33)', () => {
  /**
   * The SDK's tracer, with every span it starts kept and its `end` calls counted: the SDK itself ignores an `end`
   * after the first (and exports once), so only a count sees a second one.
   */
  const counting = (s: Sdk): { readonly tracer: Tracer; readonly started: Array<{ span: Span; ends: number }> } => {
    const started: Array<{ span: Span; ends: number }> = []
    const tracer = {
      startSpan: (name: string, options?: SpanOptions, context?: Context): Span => {
        const span = s.tracer.startSpan(name, options, context)
        const entry = { span, ends: 0 }
        const end = span.end.bind(span)
        span.end = (time) => {
          entry.ends++
          end(time)
        }
        started.push(entry)
        return span
      },
      startActiveSpan: s.tracer.startActiveSpan.bind(s.tracer)
    } as Tracer
    return { tracer, started }
  }

  /** A run's job as BullMQ hands it over, in memory: `updateData` as given, the rest as BullMQ's would. */
  const jobOf = (updateData: BullMQ.JobLike['updateData']): BullMQ.JobLike => ({
    id: 'run-1',
    data: { id: 'run-1', payload: null, retry: null, outcome: null },
    opts: { backoff: { type: 'fp-ts-retry' } },
    updateData,
    moveToDelayed: () => Promise.resolve()
  })

  const stored = (): Promise<void> => Promise.resolve()
  const refused = (): Promise<void> => Promise.reject(new Error('OOM command not allowed'))
  const gone = (): Promise<void> => Promise.reject(Object.assign(new Error('Missing key for job run-1'), { code: -1 }))

  /** How a delivery goes: its schedule, its action, the job's writes, and what aborts mid-attempt. */
  interface Fate {
    readonly fate: string
    readonly retries: number
    readonly succeeds: boolean
    readonly updateData: BullMQ.JobLike['updateData']
    readonly abort?: 'worker' | 'job'
    /** Whether the processor resolves (the job completes). */
    readonly resolves: boolean
    /** The run span's end: its stop reason, or the event it ends with. */
    readonly ends: string
  }
  const fates: ReadonlyArray<Fate> = [
    { fate: 'success', retries: 1, succeeds: true, updateData: stored, resolves: true, ends: 'stop_reason=succeeded' },
    {
      fate: 'final failure',
      retries: 0,
      succeeds: false,
      updateData: stored,
      resolves: true,
      ends: 'stop_reason=schedule'
    },
    { fate: 'retry stored', retries: 1, succeeds: false, updateData: stored, resolves: false, ends: 'RunRetried' },
    {
      fate: 'abandoned: the write of its retry given up',
      retries: 1,
      succeeds: false,
      updateData: refused,
      resolves: false,
      ends: 'RunAbandoned'
    },
    {
      fate: 'lost: its job gone from Redis',
      retries: 1,
      succeeds: false,
      updateData: gone,
      resolves: false,
      ends: 'RunAbandoned'
    },
    {
      fate: "lost lease: BullMQ's signal for the job aborts mid-attempt",
      retries: 1,
      succeeds: false,
      updateData: stored,
      abort: 'job',
      resolves: false,
      ends: 'RunAbandoned'
    },
    {
      fate: 'shutdown mid-delivery: the worker closes mid-attempt',
      retries: 1,
      succeeds: false,
      updateData: stored,
      abort: 'worker',
      resolves: false,
      ends: 'RunAbandoned'
    }
  ]

  it.each(fates)('should end every span exactly once: $fate', async (f) => {
    const s = sdk2.make()
    const { tracer, started } = counting(s)
    const worker = new AbortController()
    const job = new AbortController()
    const def = Durable.define({
      name: 'fated',
      schedule: pipe(Schedule.constant(1_000), Schedule.intersect(Schedule.recurs(f.retries))),
      payload: t.null,
      action: (_, run) => async () => {
        if (f.abort === 'worker') worker.abort()
        if (f.abort === 'job') job.abort()
        return f.succeeds ? E.right('ok') : E.left(run.signal.aborted ? new Error('aborted') : new Error('down'))
      }
    })
    const process = BullMQ.processor(def, {
      clock: TestClock.make(0),
      signal: worker.signal,
      writeRetry: Schedule.recurs(0),
      onEvent: OpenTelemetry.observer({ tracer }),
      onDone: () => undefined,
      onError: () => undefined
    })
    const resolved = await process(jobOf(f.updateData), 'token', job.signal).then(
      () => true,
      () => false
    )
    strictEqual(resolved, f.resolves)
    // the run's span and its attempt's: each started span ended once, none left open
    strictEqual(started.length, 2)
    deepStrictEqual(
      started.map(({ ends }) => ends),
      [1, 1]
    )
    deepStrictEqual(
      started.map(({ span }) => (span as unknown as { readonly ended: boolean }).ended),
      [true, true]
    )
    strictEqual(s.open(), 0)
    // exported once each, by span id
    const exported = new Map<string, number>()
    for (const span of s.finished()) {
      const id = span.spanContext().spanId
      exported.set(id, (exported.get(id) ?? 0) + 1)
    }
    deepStrictEqual(
      [...exported].sort(),
      started.map(({ span }) => [span.spanContext().spanId, 1] as [string, number]).sort()
    )
    const run = spansOf(s).find((span) => span.parent === undefined)
    ok(run !== undefined, 'no run span')
    ok(
      run.attributes.includes(f.ends) || run.events.some((e) => e.startsWith(f.ends)),
      `${run.attributes} ${JSON.stringify(run.events)}`
    )
  })
})
