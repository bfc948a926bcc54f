/**
 * `fp-ts-retry compare`: the contention simulation (the AWS "Exponential Backoff and Jitter" model) for the
 * given schedules over a range of client counts.
 */
import * as Contention from 'fp-ts-retry/Contention'
import { plusMinus, table } from './format'

export interface CompareReportOptions {
  readonly runs: number
  readonly seed: number
  readonly network: Contention.Network
}

/** The table `compare` prints: one block per client count, then the leaders. */
export const compareReport = (rows: ReadonlyArray<Contention.Comparison>, options: CompareReportOptions): string => {
  const heading =
    'Contention (the AWS "Exponential Backoff and Jitter" model): clients racing to update one row.\n' +
    `${options.runs} runs per row (seed ${options.seed}); each message takes |Normal(${options.network.mean}, ${options.network.sd})| ms.\n` +
    'calls: writes the server received (the work); time: when the last client finished (ms); mean ± standard error.'
  const anyGaveUp = rows.some((r) => r.gaveUp.mean > 0)
  const body = table(
    ['clients', 'schedule', 'calls', 'time (ms)', ...(anyGaveUp ? ['gave up'] : [])],
    rows.map((r) => [
      String(r.clients),
      r.name,
      plusMinus(r.calls.mean, r.calls.standardError, 1),
      plusMinus(r.time.mean, r.time.standardError, 0),
      ...(anyGaveUp ? [plusMinus(r.gaveUp.mean, r.gaveUp.standardError, 1)] : [])
    ]),
    ['right', 'left', 'right', 'right', 'right']
  )
  const leaders = Contention.leaders(rows)
    .map((l) => `  ${l.clients} clients: least work ${l.leastWork}; first to finish ${l.firstToFinish}`)
    .join('\n')
  // A schedule whose clients give up does less work by leaving it undone: say so beside the leaders.
  const caveat = anyGaveUp
    ? '\n  (where clients gave up, fewer calls and an earlier finish include the writes never made)'
    : ''
  return `${heading}\n\n${body}\n\nLowest means:\n${leaders}${caveat}`
}
