/**
 * The plots, as Vega-Lite specifications rendered to SVG by vega in Node (no browser). vega and vega-lite are
 * loaded only when a plot is asked for: loading them takes longer than a whole `simulate` without `--svg`.
 */
import * as fs from 'fs'
import type * as Contention from 'fp-ts-retry/Contention'
import type * as Overload from 'fp-ts-retry/Overload'
import type { RetryRow } from './sample'

/** A Vega-Lite specification: plain JSON. */
export type Spec = { readonly [key: string]: unknown }

const FONT = 'Helvetica, Arial, sans-serif'

const config = {
  font: FONT,
  view: { stroke: '#ddd' },
  axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12 },
  title: { fontSize: 14, subtitleFontSize: 11, subtitleColor: '#555', anchor: 'start' }
}

/** The delay band of a schedule over its retries: min to max shaded, the median and the 95th percentile as lines. */
export const delayBandSpec = (name: string, runs: number, rows: ReadonlyArray<RetryRow>): Spec => ({
  $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
  title: {
    text: `Delay before each retry, over ${runs} sampled runs`,
    subtitle: [name.length > 110 ? `${name.slice(0, 107)}...` : name, 'shaded: min to max']
  },
  width: 560,
  height: 300,
  config,
  data: { values: rows.map((r) => ({ retry: r.retry, min: r.min, max: r.max, median: r.median, p95: r.p95 })) },
  encoding: { x: { field: 'retry', type: 'quantitative', title: 'retry', axis: { tickMinStep: 1, format: 'd' } } },
  layer: [
    {
      mark: { type: 'area', opacity: 0.25, color: '#4c78a8' },
      encoding: { y: { field: 'min', type: 'quantitative', title: 'delay (ms)' }, y2: { field: 'max' } }
    },
    {
      transform: [{ fold: ['median', 'p95'], as: ['statistic', 'delay'] }],
      mark: { type: 'line', point: true, strokeWidth: 2 },
      encoding: {
        y: { field: 'delay', type: 'quantitative' },
        color: {
          field: 'statistic',
          type: 'nominal',
          title: null,
          scale: { domain: ['median', 'p95'], range: ['#1f4e79', '#e45756'] },
          legend: { orient: 'top-left' }
        },
        strokeDash: {
          field: 'statistic',
          type: 'nominal',
          scale: {
            domain: ['median', 'p95'],
            range: [
              [1, 0],
              [6, 3]
            ]
          },
          title: null
        }
      }
    }
  ]
})

/** Calls and completion time against the number of clients, one line per schedule, on log scales. */
export const contentionSpec = (rows: ReadonlyArray<Contention.Comparison>, runs: number): Spec => {
  const values = rows.map((r) => ({ schedule: r.name, clients: r.clients, calls: r.calls.mean, time: r.time.mean }))
  const panel = (field: 'calls' | 'time', title: string): Spec => ({
    width: 330,
    height: 260,
    mark: { type: 'line', point: true, strokeWidth: 2 },
    encoding: {
      x: { field: 'clients', type: 'quantitative', title: 'clients', axis: { tickMinStep: 1 } },
      y: { field, type: 'quantitative', title, scale: { type: 'log' } },
      color: { field: 'schedule', type: 'nominal', title: 'schedule', sort: null }
    }
  })
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: {
      text: 'Contention: clients racing to update one row',
      subtitle: `means over ${runs} runs per point (AWS "Exponential Backoff and Jitter" model); log scales`
    },
    config,
    data: { values },
    hconcat: [
      panel('calls', 'calls: writes received (work)'),
      panel('time', 'time until the last client is done (ms)')
    ],
    resolve: { scale: { color: 'shared' } }
  }
}

/** The overload runs over time, one line per limit: throughput, p99 latency and the fleet's limit, stacked. */
export const overloadSpec = (
  runs: ReadonlyArray<{ readonly name: string; readonly outcome: Overload.Outcome }>,
  subtitle: string
): Spec => {
  const values = runs.flatMap((r) =>
    r.outcome.series.map((i) => ({
      limit: r.name,
      t: i.start / 1_000,
      throughput: i.throughput,
      p99: i.p99 > 0 ? i.p99 : null,
      fleet: i.limit
    }))
  )
  const panel = (field: 'throughput' | 'p99' | 'fleet', title: string, log: boolean): Spec => ({
    width: 620,
    height: 150,
    mark: { type: 'line', strokeWidth: 2, interpolate: 'step-after' },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'time (s)' },
      y: { field, type: 'quantitative', title, ...(log ? { scale: { type: 'log' } } : {}) },
      color: { field: 'limit', type: 'nominal', title: 'limit', sort: null }
    }
  })
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: 'Overload: a fleet against a server that slows down', subtitle },
    config,
    data: { values },
    vconcat: [
      panel('throughput', 'answered in time (/s)', false),
      panel('p99', 'p99 latency (ms, log)', true),
      panel('fleet', "the fleet's limit (in flight)", false)
    ],
    resolve: { scale: { color: 'shared' } }
  }
}

interface VegaLite {
  readonly compile: (spec: never) => { readonly spec: unknown }
}
interface Vega {
  readonly parse: (spec: never) => unknown
  readonly View: new (runtime: never, options: { readonly renderer: 'none' }) => {
    readonly toSVG: () => Promise<string>
  }
}

const load = async <M>(name: string): Promise<M> => {
  const module = (await import(name)) as { readonly default?: M }
  return (module.default ?? module) as M
}

/** Renders a Vega-Lite specification to an SVG document. */
export const renderSvg = async (spec: Spec): Promise<string> => {
  const vl = await load<VegaLite>('vega-lite')
  const vega = await load<Vega>('vega')
  const compiled = vl.compile(spec as never).spec
  const view = new vega.View(vega.parse(compiled as never) as never, { renderer: 'none' })
  return view.toSVG()
}

/** Renders and writes an SVG file. */
export const writeSvg = async (file: string, spec: Spec): Promise<void> => {
  const svg = await renderSvg(spec)
  fs.writeFileSync(file, svg)
}
