/**
 * The OpenTelemetry SDK 3.x line (`@opentelemetry/sdk-trace` and `@opentelemetry/sdk-metrics` 3.x, on
 * `@opentelemetry/api` 1.10), resolved from this folder's own node_modules: see `../otel`. In 3.x the tracer
 * provider is `TracerProvider` (`BasicTracerProvider` and `@opentelemetry/sdk-trace-base` are gone) and a
 * `SimpleSpanProcessor` takes its exporter in an options record.
 */
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { AlwaysOffSampler, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { openSpans, plainMetrics, type SdkLine, versionOf } from '../otel'

class Reader3 extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export const sdk3: SdkLine = {
  line: '3.x',
  versions: Object.fromEntries(
    ['@opentelemetry/api', '@opentelemetry/sdk-trace', '@opentelemetry/sdk-metrics'].map((name) => [
      name,
      versionOf(name, require.resolve)
    ])
  ),
  make: ({ sampled = true, temporality = 'cumulative' } = {}) => {
    const exporter = new InMemorySpanExporter()
    const open = openSpans()
    const tracer = new TracerProvider({
      ...(sampled ? {} : { sampler: new AlwaysOffSampler() }),
      spanProcessors: [open.processor, new SimpleSpanProcessor({ exporter })]
    }).getTracer('test')
    const reader = new Reader3({
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
