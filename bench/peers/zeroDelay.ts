/**
 * Scenario "zero-delay retries": 10 failures then a success, with no delay between attempts: the overhead of a
 * retry itself, with nothing to hide it.
 */
import { fmtRatio, type ScenarioOptions, type ScenarioReport } from './harness'
import type { Peers } from './peers'
import { runRetryScenario } from './retryEntries'

const TARGET = 1.5

// retry-ts, cockatiel and exponential-backoff wait on a timer per retry, which CPU time does not see: they get no
// CPU-time figure (`waits`).
export const zeroDelay = (peers: Peers, options: ScenarioOptions): Promise<ScenarioReport> =>
  runRetryScenario(
    {
      title: 'Zero-delay retries',
      target: TARGET,
      job: { failures: 10, retries: 10, base: 0, withTimedSchedule: true },
      intro:
        '10 failures then a success, no delay between attempts (11 attempts per op). ' +
        `Target: ≤ ${TARGET}× the bare loop.`,
      explain: (ours, timed, met) =>
        'Per retry we step the schedule (a `RetryStatus` and a `Continue` allocated, the delay checked) and check ' +
        'the signal, budget, store and hooks; a zero delay skips the clock and the timer, and every 1,024 in a row ' +
        'the loop lets the event loop run. The clock is not read (a timeless schedule, no hooks)' +
        (timed === undefined ? '.' : `; under \`upTo\` it is, once per retry: ${fmtRatio(timed.ratio)}.`) +
        ' retry-ts, cockatiel and exponential-backoff wait on `setTimeout(0)` (about 1 ms) per retry; Effect ' +
        'goes through its scheduler between attempts.' +
        (met
          ? ''
          : ` **Missed: ${fmtRatio(ours.ratio)} against ${TARGET}×**; the loop that remains is the schedule step and its ` +
            'bookkeeping; bench/README.md has the profile and what would close it.')
    },
    peers,
    options
  )
