/**
 * `npx tsx bench/observer.ts`: what `fp-ts-retry/OpenTelemetry`'s observer costs per attempt when the application
 * has registered no OpenTelemetry SDK (`@opentelemetry/api`'s default no-op tracer and meter), beside the same runs
 * with no observer and with a plain observer that only counts. Each run makes 100 attempts that fail at once with
 * zero-delay retries, so the figure is the loop's cost, not a sleep's. Real time: it varies with the machine.
 */
import { metrics, trace } from '@opentelemetry/api'
import * as TE from 'fp-ts/TaskEither'
import { pipe } from 'fp-ts/function'
import type { Observer } from '../src/Event'
import * as OpenTelemetry from '../src/OpenTelemetry'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'

const ATTEMPTS = 100
const RUNS = 2_000
const ROUNDS = 7
const policy = Schedule.recurs(ATTEMPTS - 1)

let counted = 0
const cases: ReadonlyArray<readonly [string, Observer | undefined]> = [
  ['no observer', undefined],
  ['a counting observer', () => void counted++],
  [
    'OpenTelemetry.observer, no-op API',
    OpenTelemetry.observer({ tracer: trace.getTracer('bench'), meter: metrics.getMeter('bench') })
  ]
]

/** ns per attempt over `RUNS` runs. */
const time = async (onEvent: Observer | undefined): Promise<number> => {
  const run = pipe(TE.left('down'), retrying(policy, { onEvent }))
  const start = performance.now()
  for (let i = 0; i < RUNS; i++) await run()
  return ((performance.now() - start) * 1e6) / (RUNS * ATTEMPTS)
}

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main(): Promise<void> {
  const samples = cases.map((): Array<number> => [])
  for (let round = 0; round < ROUNDS; round++) {
    // interleaved, so that a slow moment of the machine falls on every case alike
    for (const [i, [, onEvent]] of cases.entries()) samples[i].push(await time(onEvent))
  }
  const base = median(samples[0])
  console.log(
    `| ${ATTEMPTS} attempts a run, zero-delay retries | ns per attempt (median of ${ROUNDS}) | vs no observer |`
  )
  console.log('|---|---:|---:|')
  for (const [i, [name]] of cases.entries()) {
    const ns = median(samples[i])
    console.log(`| ${name} | ${ns.toFixed(0)} | +${(ns - base).toFixed(0)} ns (${(ns / base).toFixed(2)}×) |`)
  }
}

main()
