/**
 * `fp-ts-retry simulate`: what a schedule does over many sampled runs of failures, retry by retry.
 */
import * as Random from 'fp-ts-retry/Random'
import * as Schedule from 'fp-ts-retry/Schedule'
import * as Driver from 'fp-ts-retry/Driver'
import { ms, table } from './format'

export interface SampleOptions {
  /** How many runs to sample. */
  readonly runs: number
  /** The most retries to follow in a run (for schedules that never stop). */
  readonly retries: number
  /** The seed of the one `Random.seeded` all runs draw from, one after the other. */
  readonly seed: number
  /** How long each attempt takes, in ms: time limits such as `maxElapsed` count it. */
  readonly attemptDuration: number
  /** The error every step sees (what `retryOn` / `neverRetryOn` match), if any. */
  readonly input?: unknown
}

/** The delays of retry `retry` (from 1) across the runs that made it. */
export interface RetryRow {
  readonly retry: number
  /** How many runs made this retry. */
  readonly reached: number
  readonly min: number
  readonly median: number
  readonly p95: number
  readonly max: number
  /** When the retry starts, from the start of the first attempt: median and 95th percentile. */
  readonly startMedian: number
  readonly startP95: number
}

export interface Sample {
  readonly runs: number
  readonly rows: ReadonlyArray<RetryRow>
  /** How many runs stopped by themselves within `retries` retries. */
  readonly stopped: number
}

/** The nearest-rank percentile `p` (0 to 1) of sorted values. */
const percentile = (sorted: Float64Array, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]

/** Samples `runs` runs of `schedule` with `Driver.delays`, and summarises each retry. */
export const sample = (schedule: Schedule.Schedule<unknown>, options: SampleOptions): Sample => {
  const random = Random.seeded(options.seed)
  const delays: Array<Array<number>> = Array.from({ length: options.retries }, () => [])
  const starts: Array<Array<number>> = Array.from({ length: options.retries }, () => [])
  let stopped = 0
  for (let run = 0; run < options.runs; run++) {
    const ds = Driver.delays(schedule, {
      random,
      limit: options.retries + 1,
      attemptDuration: options.attemptDuration,
      input: options.input
    })
    if (ds.length <= options.retries) stopped++
    let elapsed = 0
    for (let k = 0; k < Math.min(ds.length, options.retries); k++) {
      elapsed += options.attemptDuration + ds[k]
      delays[k].push(ds[k])
      starts[k].push(elapsed)
    }
  }
  const rows: Array<RetryRow> = []
  for (let k = 0; k < options.retries && delays[k].length > 0; k++) {
    const d = Float64Array.from(delays[k]).sort()
    const s = Float64Array.from(starts[k]).sort()
    rows.push({
      retry: k + 1,
      reached: d.length,
      min: d[0],
      median: percentile(d, 0.5),
      p95: percentile(d, 0.95),
      max: d[d.length - 1],
      startMedian: percentile(s, 0.5),
      startP95: percentile(s, 0.95)
    })
  }
  return { runs: options.runs, rows, stopped }
}

const percent = (part: number, whole: number): string => `${Math.round((part / whole) * 100)}%`

/**
 * The table `simulate` prints, with a heading and a line on how the runs end; `why` says why a schedule that
 * made no retry stopped, when the config can tell (its `retryOn` / `neverRetryOn`).
 */
export const sampleReport = (name: string, result: Sample, options: SampleOptions, why?: string): string => {
  const heading =
    `${name}\n${result.runs} sampled runs (seed ${options.seed}), each attempt taking ${ms(
      options.attemptDuration
    )} ms; ` + 'delays and start times in ms'
  if (result.rows.length === 0)
    return `${heading}\n\nNo retry: the schedule stops at the first failure${why === undefined ? '' : `: ${why}`}.`
  const body = table(
    ['retry', 'runs', 'min', 'median', 'p95', 'max', 'starts at (median)', 'starts at (p95)'],
    result.rows.map((r) => [
      String(r.retry),
      percent(r.reached, result.runs),
      ms(r.min),
      ms(r.median),
      ms(r.p95),
      ms(r.max),
      ms(r.startMedian),
      ms(r.startP95)
    ]),
    ['right', 'right', 'right', 'right', 'right', 'right', 'right', 'right']
  )
  const last = result.rows[result.rows.length - 1].retry
  const ending =
    result.stopped === result.runs
      ? `Every run stops by itself within ${last} ${last === 1 ? 'retry' : 'retries'} (${last + 1} attempts).`
      : result.stopped === 0
      ? `No run stops within ${options.retries} retries: the table is cut there (--retries).`
      : `${percent(result.stopped, result.runs)} of the runs stop within ${
          options.retries
        } retries; the others go on (--retries).`
  return `${heading}\n\n${body}\n\n${ending}`
}
