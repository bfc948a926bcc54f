/**
 * Scenario "zero-delay retries": 10 failures then a success, with no delay between attempts: the overhead of a
 * retry itself, with nothing to hide it.
 */
import { compare, fmtRatio, rowsTable, type Row, type ScenarioOptions, type ScenarioReport } from './harness'
import type { Peers } from './peers'
import { checkEntries, retryEntries } from './retryEntries'

const TARGET = 1.5

export const zeroDelay = async (peers: Peers, options: ScenarioOptions): Promise<ScenarioReport> => {
  const { entries, skipped } = retryEntries({ failures: 10, retries: 10, base: 0, withTimedSchedule: true }, peers)
  await checkEntries(entries)
  // No CPU-time column: retry-ts, cockatiel and exponential-backoff wait on a timer per retry, which CPU time
  // does not see.
  const rows = await compare(entries, options)
  const ours = rows.find((r) => r.ours) as Row
  const verdict = (r: Row): string => (r.ratio <= TARGET ? `yes (≤ ${TARGET}×)` : `no: ${fmtRatio(r.ratio)} > ${TARGET}×`)
  return {
    title: 'Zero-delay retries',
    met: ours.ratio <= TARGET,
    summary: `${fmtRatio(ours.ratio)} the bare loop (target ≤ ${TARGET}×)`,
    markdown: [
      '10 failures then a success, no delay between attempts (11 attempts per op). ' +
        `Target: ≤ ${TARGET}× the bare loop.`,
      '',
      rowsTable(rows, verdict, skipped)
    ].join('\n')
  }
}
