/**
 * Scenario "zero-delay retries": 10 failures then a success, with no delay between attempts: the overhead of a
 * retry itself, with nothing to hide it.
 */
import { compare, fmtOurs, fmtRatio, rowsTable, type Row, type ScenarioOptions, type ScenarioReport } from './harness'
import type { Peers } from './peers'
import { checkEntries, retryEntries } from './retryEntries'

const TARGET = 1.5

export const zeroDelay = async (peers: Peers, options: ScenarioOptions): Promise<ScenarioReport> => {
  const { entries, skipped } = retryEntries({ failures: 10, retries: 10, base: 0, withTimedSchedule: true }, peers)
  await checkEntries(entries)
  // retry-ts, cockatiel and exponential-backoff wait on a timer per retry, which CPU time does not see: they
  // get no CPU-time figure (`waits`).
  const rows = await compare(entries, { ...options, cpuTime: true })
  const ours = rows.find((r) => r.ours) as Row
  const timed = rows.find((r) => r.name.includes('upTo'))
  const met = ours.ratio <= TARGET
  const verdict = (r: Row): string =>
    r.ratio <= TARGET ? `yes (≤ ${TARGET}×)` : `no: ${fmtRatio(r.ratio)} > ${TARGET}×`
  return {
    title: 'Zero-delay retries',
    met,
    summary: `${fmtOurs(ours)} the bare loop (target ≤ ${TARGET}×)`,
    markdown: [
      '10 failures then a success, no delay between attempts (11 attempts per op). ' +
        `Target: ≤ ${TARGET}× the bare loop.`,
      '',
      rowsTable(rows, verdict, skipped),
      '',
      'Per retry we step the schedule (a `RetryStatus` and a `Continue` allocated, the delay checked) and check ' +
        'the signal, budget, store and hooks; a zero delay skips the clock and the timer, and every 1,024 in a row ' +
        'the loop lets the event loop run. The clock is not read (a timeless schedule, no hooks)' +
        (timed === undefined ? '.' : `; under \`upTo\` it is, once per retry: ${fmtRatio(timed.ratio)}.`) +
        ' retry-ts, cockatiel and exponential-backoff wait on `setTimeout(0)` (about 1 ms) per retry; Effect ' +
        'goes through its scheduler between attempts.' +
        (met
          ? ''
          : ` **Missed: ${fmtRatio(
              ours.ratio
            )} against ${TARGET}×**; the loop that remains is the schedule step and its ` +
            'bookkeeping; bench/README.md has the profile and what would close it.')
    ].join('\n')
  }
}
