/**
 * Scenario "zero-delay retries": 10 failures then a success, with no delay between attempts: the overhead of a
 * retry itself, with nothing to hide it.
 */
import { fmtRatio, type ScenarioOptions, type ScenarioReport } from './harness'
import type { Peers } from './peers'
import { runRetryScenario } from './retryEntries'

const TARGET = 1.2

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
        "Per retry the loop asks the run's `Driver` (made at the first failure) for the delay: `advance` steps the " +
        "schedule's stepper in place, checks the delay and counts the retry, allocating nothing; then the loop " +
        'checks the signal, the budget, the breaker and the `onRetry` hook. A zero delay skips the clock and the ' +
        'timer, and once a millisecond has passed since the event loop last turned (checked every 64 retries) the loop lets it turn. The clock is not read (a timeless schedule, no hooks)' +
        (timed === undefined ? '.' : `; under \`upTo\` it is, once per retry: ${fmtRatio(timed.ratio)}.`) +
        ' retry-ts, cockatiel and exponential-backoff wait on `setTimeout(0)` (about 1 ms) per retry; Effect ' +
        'goes through its scheduler between attempts.' +
        (met
          ? ''
          : ` **Missed: ${fmtRatio(ours.ratio)} against ${TARGET}×**: what remains per retry is the driver's step ` +
            "and the loop's checks, on top of the await the bare loop also pays; bench/README.md lists what was " +
            'tried.')
    },
    peers,
    options
  )
