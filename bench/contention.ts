/**
 * `npm run bench:contention`: the AWS "Exponential Backoff and Jitter" contention simulation at 10, 20, 50 and
 * 100 clients, for the article's five strategies and Polly's decorrelated jitter V2, compared with the article
 * simulator's reference means, then the AWS SDKs' standard retries 2.0 against 2.1 (`Contention.awsRetries`), in a
 * table of their own with the clients that gave up. Prints the tables and writes them into bench/RESULTS.md between the
 * `<!-- contention:start -->` and `<!-- contention:end -->` markers (the rest of the file is left as it is).
 *
 * Usage: `npm run bench:contention [-- --runs 400]` (default 200 runs per schedule and client count).
 */
import * as os from 'os'
import * as Contention from '../src/Contention'
import * as Schedule from '../src/Schedule'
import { RESULTS, writeSection } from './results'

const CLIENTS = [10, 20, 50, 100]

const runsArg = process.argv.indexOf('--runs')
const runs = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : 200
if (!Number.isInteger(runs) || runs < 100) {
  console.error(`--runs must be a whole number >= 100, received ${process.argv[runsArg + 1]}`)
  process.exit(2)
}

const candidates: ReadonlyArray<Contention.Candidate> = [
  ...Contention.awsStrategies(5, 2000),
  { name: 'Polly V2, median 5 ms', schedule: Schedule.decorrelatedJitterV2(5, 2000) },
  { name: 'Polly V2, median 10 ms', schedule: Schedule.decorrelatedJitterV2(10, 2000) }
]

const started = process.hrtime.bigint()
const rows = Contention.compare({ candidates, clients: CLIENTS, runs, seed: 0 })
// Apart: an SDK's 3 attempts and quota make clients give up, which would lead "least work" for the wrong reason.
const awsRows = Contention.compare({ candidates: Contention.awsRetries(), clients: CLIENTS, runs, seed: 0 })
const seconds = Number(process.hrtime.bigint() - started) / 1e9
const leaders = Contention.leaders(rows)

const fmt = (x: number, digits = 0): string => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const pm = (e: Contention.Estimate, digits: number): string => `${fmt(e.mean, digits)} ± ${fmt(e.standardError, digits)}`

/**
 * Distance from a reference figure in standard errors: the figure is itself a mean of 100 runs, printed truncated,
 * so its own standard error is about ours · √(runs / 100) and its true value lies in [figure, figure + 1).
 */
const z = (e: Contention.Estimate, figure: number): string => {
  const score = (e.mean - (figure + 0.5)) / (e.standardError * Math.sqrt(1 + runs / 100))
  return `${score >= 0 ? '+' : '−'}${Math.abs(score).toFixed(1)}`
}

const lines: Array<string> = []
const out = (line = ''): void => {
  lines.push(line)
}

out('## Contention: the AWS "Exponential Backoff and Jitter" model')
out()
out(
  `${runs} seeded runs per schedule and client count (run i uses \`Random.seeded(i)\` for every schedule), ` +
    `\`Contention.compare\` from fp-ts-retry; mean ± standard error. Model: every client wants one successful ` +
    'write to one row under optimistic concurrency; read, then write; each one-way message takes |Normal(10, 2)| ms. ' +
    '**calls**: writes the server received (the work); **time**: when the last successful reply reached its client ' +
    '(completion). base 5 ms, cap 2000 ms. Regenerate with `npm run bench:contention`.'
)
out()
out(
  'The schedules: `none` = `forever`; `exponential` = `pipe(exponential(10), capped(2000))` (the article ' +
    'computes `min(cap, base · 2^attempt)` from attempt 1, so its first delay is 2 · base = 10 ms); ' +
    '`full jitter` / `equal jitter` = that, then `fullJitter` / `equalJitter`; `decorrelated` = ' +
    '`decorrelatedJitter(5, 2000)`; Polly V2 = `decorrelatedJitterV2(median, 2000)`.'
)
out()
for (const clients of CLIENTS) {
  out(`### ${clients} clients`)
  out()
  out('| schedule | calls | time (ms) | reference calls (z) | reference time (z) |')
  out('| --- | ---: | ---: | ---: | ---: |')
  for (const row of rows.filter((r) => r.clients === clients)) {
    const ref = Contention.reference.find((f) => f.strategy === row.name && f.clients === clients)
    out(
      `| ${row.name} | ${pm(row.calls, 1)} | ${pm(row.time, 0)} | ` +
        `${ref === undefined ? '' : `${fmt(ref.calls)} (${z(row.calls, ref.calls)})`} | ` +
        `${ref === undefined ? '' : `${fmt(ref.time)} (${z(row.time, ref.time)})`} |`
    )
  }
  const leader = leaders.find((l) => l.clients === clients)
  if (leader !== undefined) {
    out()
    out(`Least work: **${leader.leastWork}**. First to finish: **${leader.firstToFinish}**.`)
  }
  out()
}

// The findings, computed from the figures above rather than written in advance.
const at = (name: string, clients: number): Contention.Comparison => {
  const found = rows.find((r) => r.name === name && r.clients === clients)
  if (found === undefined) throw new Error(`no row for ${name} at ${clients} clients`)
  return found
}
const lowest = (clients: number, of: (r: Contention.Comparison) => number, except: string): string =>
  rows
    .filter((r) => r.clients === clients && r.name !== except)
    .reduce((best, r) => (of(r) < of(best) ? r : best)).name
const percent = (a: number, b: number): string => `${a >= b ? '+' : '−'}${fmt((Math.abs(a - b) / b) * 100)}%`
out('### Summary')
out()
out('| clients | least work | first to finish | first to finish among the schedules that back off |')
out('| ---: | --- | --- | --- |')
for (const { clients, leastWork, firstToFinish } of leaders) {
  out(`| ${clients} | ${leastWork} | ${firstToFinish} | ${lowest(clients, (r) => r.time.mean, 'none')} |`)
}
out()
out(
  "- The z columns compare each mean with the article simulator's published figure, counting the standard " +
    'error of both (the figure is one batch of 100 runs): |z| below 3 is agreement.'
)
out(
  '- Polly V2 against full jitter (calls, time): ' +
    CLIENTS.map((clients) => {
      const full = at('full jitter', clients)
      const v5 = at('Polly V2, median 5 ms', clients)
      const v10 = at('Polly V2, median 10 ms', clients)
      return (
        `${clients} clients: median 5 ms ${percent(v5.calls.mean, full.calls.mean)}, ${percent(v5.time.mean, full.time.mean)}; ` +
        `median 10 ms ${percent(v10.calls.mean, full.calls.mean)}, ${percent(v10.time.mean, full.time.mean)}`
      )
    }).join('. ') +
    '.'
)
out()
out('### The AWS SDKs\' standard retries: 2.0 against 2.1')
out()
out(
  '`Contention.awsRetries()`, on the same seeds. **backoff**: the version\'s schedule alone, retrying forever ' +
    '(2.0: `Schedule.awsRetries20`, `min(u · 1 s · 2^(n−1), 20 s)`; 2.1: `Schedule.awsRetries21()`, ' +
    '`u · min(50 ms · 2^(n−1), 20 s)`: a conflict is no throttle). **SDK**: as the SDKs ship it, 3 attempts and ' +
    'the version\'s quota (`Budget.awsRetries20`: 5 tokens a retry; `Budget.awsRetries21`: 14) shared by the ' +
    'clients of a run. **gave up**: clients out of attempts or of quota. **time**: when the last successful ' +
    'write\'s reply arrived.'
)
out()
out('| clients | schedule | calls | time (ms) | gave up |')
out('| ---: | --- | ---: | ---: | ---: |')
for (const row of awsRows) {
  out(`| ${row.clients} | ${row.name} | ${pm(row.calls, 1)} | ${pm(row.time, 0)} | ${pm(row.gaveUp, 1)} |`)
}
out()
const aws = (name: string, clients: number): Contention.Comparison => {
  const found = awsRows.find((r) => r.name === name && r.clients === clients)
  if (found === undefined) throw new Error(`no row for ${name} at ${clients} clients`)
  return found
}
out(
  '- 2.1 against 2.0, backoff alone (calls, time): ' +
    CLIENTS.map((clients) => {
      const [v20, v21] = [aws('AWS 2.0 backoff', clients), aws('AWS 2.1 backoff', clients)]
      return `${clients} clients ${percent(v21.calls.mean, v20.calls.mean)}, ${percent(v21.time.mean, v20.time.mean)}`
    }).join('; ') +
    '.'
)
out(
  '- As shipped (clients that gave up, 2.0 → 2.1): ' +
    CLIENTS.map((clients) => {
      const [v20, v21] = [aws('AWS 2.0 SDK', clients), aws('AWS 2.1 SDK', clients)]
      return `${clients} clients ${fmt(v20.gaveUp.mean, 1)} → ${fmt(v21.gaveUp.mean, 1)}`
    }).join('; ') +
    '.'
)
out()
out(
  `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}. ` +
    `${(rows.length + awsRows.length) * runs} simulations in ${seconds.toFixed(1)} s.`
)

const section = lines.join('\n')
console.log(section)

writeSection(RESULTS, 'contention', section)
console.log('\nWrote the contention section of bench/RESULTS.md.')
