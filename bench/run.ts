/**
 * `npm run bench`: fp-ts-retry side by side with its peers, every scenario in this one process, and the
 * "peers" section of bench/RESULTS.md rewritten with the results (other sections are left alone).
 *
 *   npm run bench                        all scenarios, then RESULTS.md
 *   npm run bench -- --quick             fewer rounds (a smoke run; its numbers are not written)
 *   npm run bench -- --only stepping,fake-clock
 *   npm run bench -- --no-write          print only
 *
 * Scenarios: success, zero-delay, stepping, many, fake-clock, pending, adaptive. See bench/README.md for what each measures and
 * how it stays fair.
 */
import * as path from 'path'
import { fakeClock } from './peers/fakeClock'
import { adaptiveLimit } from './peers/limits'
import {
  machine,
  table,
  versionOf,
  writeSection,
  type Machine,
  type ScenarioOptions,
  type ScenarioReport
} from './peers/harness'
import { manyRetries } from './peers/manyRetries'
import { loadPeers, type Peers } from './peers/peers'
import { pendingRuns } from './peers/pendingRuns'
import { scheduleStepping } from './peers/scheduleStepping'
import { successPath } from './peers/successPath'
import { zeroDelay } from './peers/zeroDelay'

interface Scenario {
  readonly key: string
  readonly target: string
  readonly run: (peers: Peers, quick: boolean, log: (line: string) => void) => Promise<ScenarioReport>
}

/** Rounds and time per entry: enough for stable medians on a busy 2-core machine, under ~5 minutes in all. */
const options = (quick: boolean, full: ScenarioOptions, log: (line: string) => void): ScenarioOptions =>
  quick ? { rounds: 2, minCpuTimeMs: 10, log } : { ...full, log }

const scenarios: ReadonlyArray<Scenario> = [
  {
    key: 'success',
    target: '≤ 1.1× the bare loop',
    run: (peers, quick, log) => successPath(peers, options(quick, { rounds: 20, minCpuTimeMs: 20 }, log))
  },
  {
    key: 'zero-delay',
    target: '≤ 1.2× the bare loop',
    run: (peers, quick, log) => zeroDelay(peers, options(quick, { rounds: 20, minCpuTimeMs: 20 }, log))
  },
  {
    key: 'stepping',
    target: '`Driver.delays` ≤ 2× the bare loop',
    run: (peers, quick, log) => scheduleStepping(peers, options(quick, { rounds: 20, minCpuTimeMs: 20 }, log))
  },
  {
    key: 'many',
    target: 'completes, ≤ 1.3× the bare loop per attempt, heap after GC within 1 MB',
    run: (peers, quick, log) => manyRetries(peers, { rounds: quick ? 1 : 3, log })
  },
  {
    key: 'fake-clock',
    target: '≤ 0.4× the fake-timers floor',
    run: (peers, quick, log) => fakeClock(peers, options(quick, { rounds: 6, minCpuTimeMs: 40 }, log))
  },
  {
    key: 'pending',
    target: "heap per pending run ≤ 1.2× the hand loop's, without and with a signal per run",
    run: (peers, quick, log) => pendingRuns(peers, { rounds: quick ? 1 : 2, log })
  },
  {
    key: 'adaptive',
    target: '`AdaptiveLimit.protect` ≤ 1.2× `Bulkhead.protect`; ≤ 2 KB per key, no growth with samples',
    run: (_peers, quick, log) => adaptiveLimit(options(quick, { rounds: 20, minCpuTimeMs: 20 }, log))
  }
]

const PEERS = [
  'fp-ts-retry',
  'retry-ts',
  'fp-ts',
  'effect',
  'effect4',
  'cockatiel',
  'p-retry',
  'exponential-backoff',
  '@sinonjs/fake-timers',
  'mitata'
]

const render = (
  m: Machine,
  loadAfter: string,
  peers: Peers,
  reports: ReadonlyArray<readonly [Scenario, ScenarioReport]>,
  seconds: number
): string =>
  [
    '## Side by side with the peers (`npm run bench`)',
    '',
    `Measured ${m.date} on ${m.cpu}, ${m.cores} cores, Node ${m.node}, ${m.platform}; the run took ${seconds.toFixed(
      0
    )} s.`,
    '',
    `**Noise.** The machine is shared: load average ${m.load} (1 / 5 / 15 min) at the start, ${loadAfter} at the end, ` +
      'on 2 cores, with other work running. Absolute times move by 2× between rounds; read the ratios, which ' +
      'are taken within each round (every library measured seconds apart, in rotating order), and their spread ' +
      '(min – max over the rounds). For libraries that do not wait on a timer, the "CPU time" column repeats ' +
      "the measurement with the process's CPU time, which does not count the time the process was descheduled " +
      "(but counts the garbage collector's helper threads). The verdicts use wall time. The two figures can " +
      "disagree by more than a ratio's distance to its target, and a ratio within about 0.1× of its target has " +
      'landed on both sides of it in successive runs: such a verdict is not settled by one run.',
    '',
    '| scenario | target | fp-ts-retry | met? |',
    '|---|---|---|---|',
    ...reports.map(([s, r]) => `| ${r.title} | ${s.target} | ${r.summary} | ${r.met ? 'yes' : '**no**'} |`),
    '',
    'Versions: ' +
      PEERS.map((p) => `${p === 'effect4' ? 'effect (4.x, as `effect4`)' : p} ${versionOf(p)}`).join(', ') +
      '.',
    ...(peers.failed.length > 0
      ? ['', `**Failed to load on Node ${process.version}:** ${peers.failed.join('; ')}.`]
      : [
          '',
          `cockatiel 4 and p-retry 9 declare \`engines.node >= 22\`; both load and pass every check on Node ${process.version}.`
        ]),
    '',
    'How to read the tables: "median / op" is the median over rounds of mitata\'s median time of one op; ' +
      '"ratio to bare" is the median over rounds of the ratio to the bare loop measured in the same round. ' +
      'Every entry is checked to return the right result before it is timed. Method and fairness rules: ' +
      '[bench/README.md](README.md).',
    ...reports.flatMap(([, r]) => ['', `### ${r.title}`, '', r.markdown])
  ].join('\n')

const main = async (): Promise<void> => {
  const args = process.argv.slice(2)
  const quick = args.includes('--quick')
  const onlyAt = args.indexOf('--only')
  const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',') : undefined
  const unknown = only?.filter((k) => !scenarios.some((s) => s.key === k)) ?? []
  if (unknown.length > 0) {
    throw new RangeError(
      `bench: unknown scenario ${unknown.join(', ')}; known: ${scenarios.map((s) => s.key).join(', ')}`
    )
  }
  const write = !args.includes('--no-write') && !quick && only === undefined
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
    throw new Error('bench: run node with --expose-gc (npm run bench does)')
  }
  const started = performance.now()
  const m = machine()
  console.log(`${m.cpu}, ${m.cores} cores, Node ${m.node}, load ${m.load}`)
  const peers = await loadPeers()
  for (const failure of peers.failed) console.log(`failed to load: ${failure}`)
  const reports: Array<readonly [Scenario, ScenarioReport]> = []
  for (const scenario of scenarios.filter((s) => only === undefined || only.includes(s.key))) {
    console.log(`\n# ${scenario.key}`)
    const report = await scenario.run(peers, quick, (line) => console.log(line))
    console.log(`\n${report.markdown}\n\n=> ${report.summary}: ${report.met ? 'met' : 'MISSED'}`)
    reports.push([scenario, report])
  }
  const seconds = (performance.now() - started) / 1000
  if (write) {
    const file = path.join(__dirname, 'RESULTS.md')
    writeSection(file, 'peers', render(m, machine().load, peers, reports, seconds))
    console.log(`\nwrote the peers section of ${path.relative(process.cwd(), file)} (${seconds.toFixed(0)} s)`)
  } else {
    console.log(
      `\n${table(
        ['scenario', 'fp-ts-retry', 'met?'],
        reports.map(([, r]) => [r.title, r.summary, r.met ? 'yes' : 'no'])
      )}`
    )
    console.log(
      `\n(not written: ${quick ? '--quick' : only !== undefined ? '--only' : '--no-write'}; ${seconds.toFixed(0)} s)`
    )
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
