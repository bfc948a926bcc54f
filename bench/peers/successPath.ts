/**
 * Scenario "success path": the first attempt succeeds; the policy would allow 5 retries of exponential(10 ms).
 * What a retry wrapper costs on every call that needs no retry: the common case in production.
 */
import { fmtRatio, type ScenarioOptions, type ScenarioReport } from './harness'
import type { Peers } from './peers'
import { runRetryScenario } from './retryEntries'

const TARGET = 1.1

export const successPath = (peers: Peers, options: ScenarioOptions): Promise<ScenarioReport> =>
  runRetryScenario(
    {
      title: 'Success path',
      target: TARGET,
      job: { failures: 0, retries: 5, base: 10, withTimedSchedule: true },
      intro:
        'The first attempt succeeds; the policy would allow 5 retries of exponential(10 ms). ' +
        `Target: ≤ ${TARGET}× the bare loop.`,
      explain: (ours, timed, met) =>
        `What a call costs us beyond the bare loop: the wrapper's call, the loop's checks (signal, resumed run, ` +
        'budget, `onDone`) and nothing of ours allocated: a first success returns before a `Driver` is made. ' +
        'The clock is not read: `exponential ∩ recurs` never looks at the time ' +
        'and no hook or budget is set, so the run has no use for it' +
        (timed === undefined
          ? '.'
          : `; the same schedule under \`upTo\`, which must read it, costs ${fmtRatio(
              timed.ratio
            )} (the row "with \`upTo\`"): one clock read is that difference on this machine.`) +
        (met ? '' : ` **Missed: ${fmtRatio(ours.ratio)} against ${TARGET}×**; the spread of the rounds says how much of it is noise.`)
    },
    peers,
    options
  )
