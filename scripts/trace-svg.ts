/**
 * `npx tsx scripts/trace-svg.ts`: draws docs/observability-trace.svg, the picture of one run's trace in the
 * observability guide, from a real run: `retryingWithContext` on a `TestClock`, its events turned into spans by
 * `OpenTelemetry.observer` and exported by the OpenTelemetry SDK's `InMemorySpanExporter`. Every bar, gap and label
 * is read from the exported spans; nothing is drawn by hand.
 */
import { SpanStatusCode } from '@opentelemetry/api'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from '@opentelemetry/sdk-trace-base'
import * as fs from 'fs'
import * as path from 'path'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as OpenTelemetry from '../src/OpenTelemetry'
import { retryingWithContext } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'

/** A failure as a service would answer: a status, and maybe a `Retry-After` in ms. */
interface Failure {
  readonly _tag: 'StatusError'
  readonly status: number
  readonly retryInMs?: number
}

/** The story: a 503, an attempt that hangs past its timeout, a 429 asking for 600 ms, then a success. */
const script: ReadonlyArray<{ readonly after: number; readonly result: E.Either<Failure, string> }> = [
  { after: 40, result: E.left({ _tag: 'StatusError', status: 503 }) },
  { after: Infinity, result: E.right('never') },
  { after: 30, result: E.left({ _tag: 'StatusError', status: 429, retryInMs: 600 }) },
  { after: 50, result: E.right('ok') }
]

const run = async (): Promise<ReadonlyArray<ReadableSpan>> => {
  const exporter = new InMemorySpanExporter()
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('docs')
  const policy = pipe(
    Schedule.exponential(100),
    Schedule.withHint((e: Failure) => e.retryInMs, { max: 5_000 }),
    Schedule.intersect(Schedule.recurs(5))
  )
  let n = 0
  await TestClock.run((clock) =>
    pipe(
      ({ signal }: { readonly signal: AbortSignal }): TaskEither<Failure, string> => {
        const { after, result } = script[n++]
        return () =>
          after === Infinity
            ? new Promise((resolve) =>
                signal.addEventListener('abort', () => resolve(E.left({ _tag: 'StatusError', status: 0 })))
              )
            : clock.sleep(after).then(() => result)
      },
      retryingWithContext(policy, {
        clock,
        attemptTimeout: 250,
        onTimeout: (): Failure => ({ _tag: 'StatusError', status: 504 }),
        onEvent: OpenTelemetry.observer({
          tracer,
          errorType: (e) => ((e as Failure).status === 504 ? 'timeout' : OpenTelemetry.errorType(e))
        })
      })
    )
  )
  return exporter.getFinishedSpans()
}

const ms = ([s, ns]: readonly [number, number]): number => s * 1000 + ns / 1e6

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const draw = (spans: ReadonlyArray<ReadableSpan>): string => {
  const root = spans.find((s) => s.parentSpanContext === undefined)
  if (root === undefined) throw new Error('no run span')
  const attempts = spans.filter((s) => s !== root).sort((a, b) => ms(a.startTime) - ms(b.startTime))
  const t0 = ms(root.startTime)
  const t1 = ms(root.endTime)
  const [left, width, row, top] = [150, 720, 34, 40]
  const x = (t: number): number => Math.round((left + ((t - t0) / (t1 - t0)) * width) * 10) / 10
  const height = top + row * (attempts.length + 2) + 40
  const out: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${
      left + width + 40
    }" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="14" font-weight="bold">One run's trace: ${attempts.length} attempts, ${escape(
      String(root.attributes['fp_ts_retry.stop_reason'])
    )} after ${t1 - t0} ms</text>`
  ]
  const bar = (y: number, from: number, to: number, fill: string, label: string, name: string): void => {
    out.push(`<text x="10" y="${y + 15}">${escape(name)}</text>`)
    out.push(
      `<rect x="${x(from)}" y="${y}" width="${Math.max(2, x(to) - x(from))}" height="20" rx="3" fill="${fill}"/>`
    )
    out.push(`<text x="${x(to) + 6}" y="${y + 15}" fill="#333">${escape(label)}</text>`)
  }
  const runY = top
  bar(runY, t0, t1, '#9db4d6', `${root.name}: ${String(root.attributes['fp_ts_retry.stop_reason'])}`, 'run span')
  attempts.forEach((span, i) => {
    const y = top + row * (i + 1)
    const error = span.status.code === SpanStatusCode.ERROR
    const outcome = String(span.attributes['fp_ts_retry.outcome'])
    const type = span.attributes['error.type']
    const label = `${ms(span.endTime) - ms(span.startTime)} ms, ${outcome}${
      type === undefined ? '' : ` (error.type ${String(type)})`
    }`
    bar(
      y,
      ms(span.startTime),
      ms(span.endTime),
      error ? '#e07a6e' : '#6fbf73',
      label,
      `attempt ${String(span.attributes['fp_ts_retry.attempt'])}`
    )
  })
  // the sleeps: each RetryScheduled event of the run, from its time for its delay, on the run's row
  for (const event of root.events.filter((e) => e.name === 'RetryScheduled')) {
    const from = ms(event.time)
    const delay = Number(event.attributes?.['fp_ts_retry.delay']) * 1000
    const y = runY + row * (attempts.length + 1)
    out.push(
      `<line x1="${x(from)}" y1="${y + 10}" x2="${x(from + delay)}" y2="${
        y + 10
      }" stroke="#888" stroke-dasharray="4 3" stroke-width="2"/>`
    )
    out.push(
      `<text x="${(x(from) + x(from + delay)) / 2}" y="${
        y + 26
      }" text-anchor="middle" fill="#555">sleep ${delay} ms</text>`
    )
  }
  for (const event of root.events.filter((e) => e.name === 'HintIgnored')) {
    out.push(
      `<text x="${x(ms(event.time))}" y="${height - 8}" fill="#555">hint ignored at ${ms(event.time) - t0} ms</text>`
    )
  }
  out.push(`<text x="10" y="${runY + row * (attempts.length + 1) + 15}">sleeps</text>`)
  // the time axis
  const axisY = height - 24
  out.push(`<line x1="${left}" y1="${axisY}" x2="${left + width}" y2="${axisY}" stroke="#333"/>`)
  for (let t = 0; t <= t1 - t0; t += 200) {
    out.push(`<line x1="${x(t0 + t)}" y1="${axisY}" x2="${x(t0 + t)}" y2="${axisY + 4}" stroke="#333"/>`)
    out.push(`<text x="${x(t0 + t)}" y="${axisY + 16}" text-anchor="middle" fill="#333">${t} ms</text>`)
  }
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

async function main(): Promise<void> {
  const file = path.join(__dirname, '..', 'docs', 'observability-trace.svg')
  fs.writeFileSync(file, draw(await run()))
  console.log(`Wrote ${path.relative(process.cwd(), file)}.`)
}

main()
