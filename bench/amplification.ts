/**
 * `npm run bench:amplification`: seed 003's retry storm, measured on three real HTTP services on loopback (the
 * edge client calls A, A calls B, B calls C; every caller retries 3 times with no delay; C always answers 503),
 * without budgets and with a budget per caller. Prints a table and writes it into bench/RESULTS.md between the
 * `amplification` markers (the file's other sections are left as they are).
 *
 * The counts are exact (requests go one at a time); the times are wall-clock and vary from run to run.
 */
import { RESULTS, writeSection } from './results'
import * as Budget from '../src/Budget'
import { startChain, type Calls } from '../test/support/chain'

const REQUESTS = 100
const RETRIES = 3

interface Scenario {
  readonly name: string
  readonly budget?: () => Budget.RetryBudget
  /** The calls expected at A, B and C for `REQUESTS` requests, from the arithmetic in docs/budgets.md. */
  readonly expected: Calls
}

const attempts = RETRIES + 1
const scenarios: ReadonlyArray<Scenario> = [
  {
    name: 'none',
    expected: { a: REQUESTS * attempts, b: REQUESTS * attempts ** 2, c: REQUESTS * attempts ** 3 }
  },
  {
    name: '`retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })`',
    budget: () => Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 }),
    expected: { a: REQUESTS + 3, b: REQUESTS + 6, c: REQUESTS + 9 }
  },
  {
    name: '`adaptive({ window: 60_000, minSuccessRate: 0.5, minSamples: 10 })`',
    budget: () => Budget.adaptive({ window: 60_000, minSuccessRate: 0.5, minSamples: 10 }),
    expected: { a: REQUESTS + 7, b: REQUESTS + 14, c: REQUESTS + 21 }
  }
]

interface Row {
  readonly scenario: Scenario
  readonly calls: Calls
  readonly ms: number
}

const measure = async (scenario: Scenario): Promise<Row> => {
  const chain = await startChain({ retries: RETRIES, budget: scenario.budget })
  const start = performance.now()
  try {
    for (let i = 0; i < REQUESTS; i++) await chain.request()
    return { scenario, calls: chain.calls(), ms: performance.now() - start }
  } finally {
    await chain.close()
  }
}

const n = (x: number): string => x.toLocaleString('en-US')

const same = (a: Calls, b: Calls): boolean => a.a === b.a && a.b === b.b && a.c === b.c

const report = (rows: ReadonlyArray<Row>): string => {
  const lines = [
    '## Amplification: retries through a chain of three services',
    '',
    `Three \`node:http\` services on loopback: the edge client calls A, A calls B, B calls C, and C always answers 503. ` +
      `Every caller (the client, A, B) uses \`Http.retryingFetch(Schedule.recurs(${RETRIES}))\`: ${RETRIES} retries, ` +
      `${attempts} attempts, no delay; with a budget, each caller has its own. ${REQUESTS} requests to A, one at a time. ` +
      'The counts are exact and match the arithmetic of [docs/budgets.md](../docs/budgets.md) (**expected**); the ' +
      'times are wall-clock on the machine that ran it. Regenerate with `npm run bench:amplification`.',
    '',
    '| budget per caller | calls at A | calls at B | calls at C | C calls per request | expected at C | time (ms) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.scenario.name} | ${n(r.calls.a)} | ${n(r.calls.b)} | ${n(r.calls.c)} | ${(r.calls.c / REQUESTS).toFixed(
          2
        )} | ` +
        `${n(r.scenario.expected.c)}${same(r.calls, r.scenario.expected) ? '' : ' (differs!)'} | ${n(
          Math.round(r.ms)
        )} |`
    ),
    '',
    `Without budgets every request to A becomes ${attempts} × ${attempts} × ${attempts} = ${
      attempts ** 3
    } calls at C. ` +
      'With a budget per caller, each caller adds a fixed allowance of retries in all (3 for the token bucket, 7 for ' +
      'the adaptive guard), after which it makes one attempt per call: the layers add their allowances instead of ' +
      'multiplying their attempts.'
  ]
  return lines.join('\n')
}

const main = async (): Promise<void> => {
  const rows: Array<Row> = []
  for (const scenario of scenarios) {
    const row = await measure(scenario)
    console.log(`${scenario.name}: A ${row.calls.a}, B ${row.calls.b}, C ${row.calls.c} in ${Math.round(row.ms)} ms`)
    rows.push(row)
  }
  const section = report(rows)
  writeSection(RESULTS, 'amplification', section)
  console.log(`\n${section}\n\nWritten to bench/RESULTS.md.`)
  if (rows.some((r) => !same(r.calls, r.scenario.expected))) process.exitCode = 1
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
