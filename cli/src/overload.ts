/**
 * `fp-ts-retry overload`: the overload simulation (a fleet against a server whose latency rises with load) for no
 * limit, fixed bulkheads and adaptive limits side by side, phase by phase.
 */
import * as Overload from 'fp-ts-retry/Overload'
import { duration, ms, table } from './format'

export interface OverloadReportOptions {
  readonly clients: number
  readonly workers: number
  readonly timeout: number
  readonly seed: number
  readonly phases: ReadonlyArray<Overload.Phase>
}

export interface Run {
  readonly name: string
  readonly outcome: Overload.Outcome
}

const PHASE_NAMES = ['before', 'slowdown', 'after']

const phaseName = (i: number, count: number): string => (count === 3 ? PHASE_NAMES[i] : `phase ${i + 1}`)

const whole = (x: number): string => Math.round(x).toLocaleString('en-US')

/** The table `overload` prints: one block per phase, one row per candidate. */
export const overloadReport = (runs: ReadonlyArray<Run>, options: OverloadReportOptions): string => {
  const { phases } = options
  const heading =
    `Overload: ${options.clients} clients, each behind its own limit, against a server of ${options.workers} workers ` +
    `(seed ${options.seed}).\n` +
    phases
      .map(
        (p, i) =>
          `  ${phaseName(i, phases.length)}: ${duration(p.duration)} at ${whole(p.rate)} requests/s, ` +
          `served in ${ms(p.serviceTime)} ms on average (capacity ${whole(
            (options.workers * 1_000) / p.serviceTime
          )}/s)`
      )
      .join('\n') +
    `\nA request not answered in ${duration(options.timeout)} times out; the server still serves it.` +
    '\nthroughput: answered in time per second; p99: of those, in ms; shed: refused by the limit; timed out.'
  const rows = phases.flatMap((_, i) =>
    runs.map((r) => {
      const t = r.outcome.phases[i]
      return [phaseName(i, phases.length), r.name, whole(t.throughput), ms(t.p99), whole(t.shed), whole(t.timedOut)]
    })
  )
  const body = table(['phase', 'limit', 'throughput/s', 'p99 (ms)', 'shed', 'timed out'], rows, [
    'left',
    'left',
    'right',
    'right',
    'right',
    'right'
  ])
  return `${heading}\n\n${body}`
}
