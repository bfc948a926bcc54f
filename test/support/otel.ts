/**
 * The OpenTelemetry SDK lines `fp-ts-retry/OpenTelemetry` is tested against, behind one interface: a real SDK's
 * tracer and meter, what it exported, and which of its spans are still open. The 2.x line is here (the
 * repository's `@opentelemetry/sdk-trace-base` and `@opentelemetry/sdk-metrics` 2.x, on `@opentelemetry/api`
 * 1.9); the 3.x line is in `./otel-sdk3`, a package of its own, since 3.x asks for `@opentelemetry/api` 1.10 as a
 * peer, which the 2.x line refuses.
 */
import type { Meter, Tracer } from '@opentelemetry/api'
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor
} from '@opentelemetry/sdk-trace-base'
import * as fs from 'fs'
import * as path from 'path'

/** A span as an exporter receives it: the fields the tests read, common to both lines. */
export interface FinishedSpan {
  readonly name: string
  readonly kind: number
  readonly spanContext: () => { readonly spanId: string }
  readonly parentSpanContext?: { readonly spanId: string } | undefined
  readonly startTime: readonly [number, number]
  readonly endTime: readonly [number, number]
  readonly status: { readonly code: number }
  readonly attributes: Readonly<Record<string, unknown>>
  readonly events: ReadonlyArray<{
    readonly name: string
    readonly time: readonly [number, number]
    readonly attributes?: Readonly<Record<string, unknown>> | undefined
  }>
}

/** A metric's points as a reader collects them: a histogram's value as its count and sum. */
export interface CollectedMetric {
  readonly name: string
  readonly unit: string
  readonly points: ReadonlyArray<{
    readonly attributes: Readonly<Record<string, unknown>>
    readonly value: number | { readonly count: number; readonly sum: number }
  }>
}

/** One SDK, set up as an application would: a tracer provider with its span processors, a meter provider. */
export interface Sdk {
  readonly tracer: Tracer
  readonly meter: Meter
  /** The spans ended, in the order they ended. */
  readonly finished: () => ReadonlyArray<FinishedSpan>
  /** How many spans were started and are not ended yet. */
  readonly open: () => number
  readonly collect: () => Promise<ReadonlyArray<CollectedMetric>>
}

/**
 * How a fresh SDK is set up: `sampled: false` for the AlwaysOff sampler; `temporality: 'delta'` for a reader that
 * asks every instrument for delta temporality (the default is cumulative, as the SDK's).
 */
export interface SdkOptions {
  readonly sampled?: boolean
  readonly temporality?: 'cumulative' | 'delta'
}

/** An SDK line: its packages and their versions, and a fresh SDK of it. */
export interface SdkLine {
  readonly line: string
  readonly versions: Readonly<Record<string, string>>
  readonly make: (options?: SdkOptions) => Sdk
}

/** The version of the package `name` as `resolve` finds it: its package.json, above its entry point. */
export const versionOf = (name: string, resolve: (name: string) => string): string => {
  for (let dir = path.dirname(resolve(name)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json')
    if (!fs.existsSync(file)) continue
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { readonly name?: string; readonly version?: string }
    if (json.name === name && json.version !== undefined) return json.version
  }
  throw new Error(`no package.json of ${name}`)
}

/** A span processor that keeps the ids of the spans started and not yet ended. */
export const openSpans = (): {
  readonly processor: {
    readonly onStart: (span: { readonly spanContext: () => { readonly spanId: string } }) => void
    readonly onEnd: (span: { readonly spanContext: () => { readonly spanId: string } }) => void
    readonly forceFlush: () => Promise<void>
    readonly shutdown: () => Promise<void>
  }
  readonly count: () => number
} => {
  const ids = new Set<string>()
  return {
    processor: {
      onStart: (span) => void ids.add(span.spanContext().spanId),
      onEnd: (span) => void ids.delete(span.spanContext().spanId),
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve()
    },
    count: () => ids.size
  }
}

/** What a reader collected, as plain data: the same shape from both lines. */
export const plainMetrics = (
  scopeMetrics: ReadonlyArray<{ readonly metrics: ReadonlyArray<unknown> }>
): ReadonlyArray<CollectedMetric> =>
  scopeMetrics.flatMap((scope) =>
    scope.metrics.map((metric) => {
      const { descriptor, dataPoints } = metric as {
        readonly descriptor: { readonly name: string; readonly unit: string }
        readonly dataPoints: ReadonlyArray<{
          readonly attributes: Readonly<Record<string, unknown>>
          readonly value: number | { readonly count: number; readonly sum?: number }
        }>
      }
      return {
        name: descriptor.name,
        unit: descriptor.unit,
        points: dataPoints.map(({ attributes, value }) => ({
          attributes,
          value: typeof value === 'number' ? value : { count: value.count, sum: value.sum ?? 0 }
        }))
      }
    })
  )

class Reader2 extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The 2.x line: `@opentelemetry/sdk-trace-base` and `@opentelemetry/sdk-metrics` 2.x. */
export const sdk2: SdkLine = {
  line: '2.x',
  versions: Object.fromEntries(
    ['@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-metrics'].map((name) => [
      name,
      versionOf(name, require.resolve)
    ])
  ),
  make: ({ sampled = true, temporality = 'cumulative' } = {}) => {
    const exporter = new InMemorySpanExporter()
    const open = openSpans()
    const tracer = new BasicTracerProvider({
      ...(sampled ? {} : { sampler: new AlwaysOffSampler() }),
      spanProcessors: [open.processor, new SimpleSpanProcessor(exporter)]
    }).getTracer('test')
    const reader = new Reader2({
      aggregationTemporalitySelector: () =>
        temporality === 'delta' ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE
    })
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test')
    return {
      tracer,
      meter,
      finished: () => exporter.getFinishedSpans(),
      open: open.count,
      collect: async () => plainMetrics((await reader.collect()).resourceMetrics.scopeMetrics)
    }
  }
}
