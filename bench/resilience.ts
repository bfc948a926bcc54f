/**
 * `npm run bench:resilience`: hedging against a long latency tail, and breakers and budgets through an outage, on
 * simulated dependencies under a `TestClock`. Prints both tables and writes them into bench/RESULTS.md between the
 * `resilience` markers (the file's other sections are left as they are).
 *
 * The first two run on virtual time with seeded draws: their figures are exact and the same on every run and machine.
 *
 * 1. Tail latency. A dependency whose latency is log-normal (median 10 ms, sigma 0.25), 1% of calls 50 times
 *    slower. The same calls (the same first-attempt latencies) with no hedging and with `hedging` at the
 *    dependency's measured p95 and elsewhere: p50 / p99 / p99.9 of a call, and the attempts it costs.
 * 2. An outage. 100 calls per second for 90 s; the dependency fails every call started from 30 s to 60 s. The
 *    same traffic with no retries, retries alone, with a token bucket, with a breaker, with both: calls that
 *    reach the dependency during the outage, and how long after it comes back calls keep failing.
 * 3. The CPU per attempt of `Budget.adaptive` with a latency percentile, at 1,000 and 20,000 attempts per window:
 *    real time, the one table that varies with the machine. `tsx bench/resilience.ts adaptive` runs it alone.
 * 4. A breaker and a rate limiter shared through Redis: calls per second beside local ones, and the round trips a
 *    call costs, on a throwaway redis-server. `tsx bench/resilience.ts shared` prints it (real time; not written).
 */
import { counting, throughput as timed } from './redis-calls'
import { RESULTS, writeSection } from './results'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import Redis from 'ioredis'
import * as os from 'os'
import * as Breaker from '../src/Breaker'
import * as Budget from '../src/Budget'
import { hedging, type HedgeContext } from '../src/Hedging'
import * as Random from '../src/Random'
import * as RateLimiter from '../src/RateLimiter'
import * as RedisBreaker from '../src/RedisBreaker'
import * as RedisRateLimiter from '../src/RedisRateLimiter'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { startRedis } from '../test/support/redis'

// -------------------------------------------------------------------------------------
// shared
// -------------------------------------------------------------------------------------

/** Nearest rank: the `ceil(p / 100 · n)`-th smallest. */
const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]

const ms = (x: number): string => (x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'))
const n = (x: number): string => x.toLocaleString('en-US')
const ratio = (x: number): string =>
  x >= 10 ? `${x.toFixed(0)}×` : x >= 0.1 ? `${x.toFixed(2)}×` : `1/${Math.round(1 / x).toLocaleString('en-US')}`

// -------------------------------------------------------------------------------------
// 1. tail latency
// -------------------------------------------------------------------------------------

const MEDIAN = 10
const SIGMA = 0.25
const SLOW_SHARE = 0.01
const SLOW_FACTOR = 50
const CALLS = 20_000
const BATCH = 2_000
/** Attempts drawn per call: enough for every strategy below. */
const MAX_ATTEMPTS = 3

/** One latency of the dependency: log-normal around MEDIAN, 1% of them SLOW_FACTOR times slower. */
const drawLatency = (random: Random.Random): number => {
  // Box-Muller: a standard normal from two uniform draws (1 - u keeps the logarithm finite).
  const z = Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next())
  const latency = MEDIAN * Math.exp(SIGMA * z)
  return random.next() < SLOW_SHARE ? latency * SLOW_FACTOR : latency
}

interface Strategy {
  readonly name: string
  readonly schedule: Schedule.Schedule<unknown>
}

interface TailRow {
  readonly strategy: Strategy
  readonly p50: number
  readonly p99: number
  readonly p999: number
  readonly attemptsPerCall: number
}

/** Runs every call with `strategy`, in concurrent batches on one TestClock; attempt `i` of call `c` takes `latencies[c][i]`. */
const measureTail = async (strategy: Strategy, latencies: ReadonlyArray<ReadonlyArray<number>>): Promise<TailRow> => {
  const clock = TestClock.make()
  const durations: Array<number> = []
  let attempts = 0
  const hedged = hedging(strategy.schedule, { clock })
  for (let first = 0; first < latencies.length; first += BATCH) {
    const started = clock.now()
    const calls = latencies.slice(first, first + BATCH).map((drawn) =>
      pipe(
        ({ signal, index }: HedgeContext): TaskEither<never, number> =>
          async () => {
            attempts++
            await clock.sleep(drawn[index], signal)
            return E.right(index)
          },
        hedged
      )().then(() => durations.push(clock.now() - started))
    )
    await clock.runAll()
    await Promise.all(calls)
  }
  const sorted = durations.sort((a, b) => a - b)
  return {
    strategy,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    attemptsPerCall: attempts / latencies.length
  }
}

const tailLatency = async (): Promise<{ readonly section: string; readonly rows: ReadonlyArray<TailRow> }> => {
  // The dependency's own percentiles, from a pilot sample of single attempts (another seed).
  const pilotRandom = Random.seeded(1)
  const pilot = Array.from({ length: 200_000 }, () => drawLatency(pilotRandom)).sort((a, b) => a - b)
  const p50 = percentile(pilot, 50)
  const p95 = percentile(pilot, 95)
  const p99 = percentile(pilot, 99)
  const random = Random.seeded(2)
  const latencies = Array.from({ length: CALLS }, () => Array.from({ length: MAX_ATTEMPTS }, () => drawLatency(random)))
  const hedges = (delay: number, count: number): Schedule.Schedule<unknown> =>
    pipe(Schedule.constant(delay), Schedule.intersect(Schedule.recurs(count)))
  const strategies: ReadonlyArray<Strategy> = [
    { name: 'no hedging', schedule: Schedule.stop },
    { name: `\`hedging(constant(p95))\`, 1 hedge (${ms(p95)} ms)`, schedule: hedges(p95, 1) },
    { name: `\`hedging(constant(p95))\`, 2 hedges`, schedule: hedges(p95, 2) },
    { name: `\`hedging(constant(p99))\`, 1 hedge (${ms(p99)} ms)`, schedule: hedges(p99, 1) },
    { name: `\`hedging(constant(p50))\`, 1 hedge (${ms(p50)} ms)`, schedule: hedges(p50, 1) }
  ]
  const rows: Array<TailRow> = []
  for (const strategy of strategies) {
    const row = await measureTail(strategy, latencies)
    console.log(
      `${strategy.name}: p50 ${ms(row.p50)}, p99 ${ms(row.p99)}, p99.9 ${ms(
        row.p999
      )} ms; ${row.attemptsPerCall.toFixed(3)} attempts per call`
    )
    rows.push(row)
  }
  const base = rows[0]
  const p95Row = rows[1]
  const lines = [
    '### Tail latency: hedging',
    '',
    `A simulated dependency: each attempt takes a log-normal time (median ${MEDIAN} ms, sigma ${SIGMA}), and ` +
      `${
        SLOW_SHARE * 100
      }% of attempts take ${SLOW_FACTOR} times as long (another replica is not slow at the same time: ` +
      `each attempt draws its own). Its percentiles, from 200,000 single attempts: p50 ${ms(p50)} ms, p95 ${ms(
        p95
      )} ms, ` +
      `p99 ${ms(p99)} ms. ${n(CALLS)} calls, each with the same first-attempt latency under every strategy, on a ` +
      '`TestClock` (exact, seeded). Attempts per call counts every attempt launched, losers included (they are aborted ' +
      'when the winner answers).',
    '',
    '| strategy | p50 (ms) | p99 (ms) | p99.9 (ms) | p99 vs none | p99.9 vs none | attempts per call | extra load |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.strategy.name} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.p999)} | ` +
        `${r === base ? '–' : `${ratio(base.p99 / r.p99)} shorter`} | ` +
        `${r === base ? '–' : `${ratio(base.p999 / r.p999)} shorter`} | ${r.attemptsPerCall.toFixed(3)} | ` +
        `+${((r.attemptsPerCall - 1) * 100).toFixed(1)}% |`
    ),
    '',
    '**The guidance, reproduced.** "The Tail at Scale" (Dean and Barroso, CACM 2013) advises deferring the hedge until ' +
      'the request has been outstanding longer than the 95th-percentile latency, which "limits the additional load to ' +
      "approximately 5%\" while shortening the tail; gRPC's `hedgingDelay` and Polly's `Delay` are that deferral. " +
      'Side by side:',
    '',
    '| | extra load | the tail |',
    '| --- | ---: | --- |',
    '| Dean and Barroso: hedge at p95 | about +5% | "substantially shortened"; in their BigTable example (a 10 ms delay), p99.9 1,800 ms → 74 ms (24×) for +2% requests |',
    `| here: \`hedging(constant(p95))\`, 1 hedge | +${((p95Row.attemptsPerCall - 1) * 100).toFixed(1)}% | ` +
      `p99 ${ms(base.p99)} → ${ms(p95Row.p99)} ms (${ratio(base.p99 / p95Row.p99)}), p99.9 ${ms(base.p999)} → ` +
      `${ms(p95Row.p999)} ms (${ratio(base.p999 / p95Row.p999)}) |`,
    '',
    `Hedging earlier buys a little more tail for much more load: at the median, p99.9 is ${ms(
      rows[4].p999
    )} ms instead ` +
      `of ${ms(p95Row.p999)} ms, for +${((rows[4].attemptsPerCall - 1) * 100).toFixed(0)}% attempts instead of ` +
      `+${((p95Row.attemptsPerCall - 1) * 100).toFixed(
        0
      )}%. Hedging later (p99) is cheaper still and keeps most of the ` +
      'gain. A second hedge adds nothing here: once the first has removed the slow tail, what is left is two slow ' +
      'attempts in a row (1 call in 10,000).'
  ]
  return { section: lines.join('\n'), rows }
}

// -------------------------------------------------------------------------------------
// 2. an outage
// -------------------------------------------------------------------------------------

const RATE_GAP = 10 // ms between calls: 100 calls per second
const DURATION = 90_000
const OUTAGE_START = 30_000
const OUTAGE_END = 60_000
const DEPENDENCY_LATENCY = 10

interface Protection {
  readonly name: string
  readonly retries: boolean
  readonly budget?: () => Budget.RetryBudget
  readonly breaker?: (clock: TestClock.TestClock) => Breaker.Breaker
}

interface OutageRow {
  readonly protection: Protection
  readonly total: number
  readonly duringOutage: number
  readonly failed: number
  readonly recovery: number
  readonly refused: number
}

const retryPolicy = pipe(Schedule.exponential(100), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(3)))
const halfOpenAfter = pipe(Schedule.exponential(1_000), Schedule.capped(5_000))
const bucket = (): Budget.RetryBudget => Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })

const protections: ReadonlyArray<Protection> = [
  { name: 'no retries', retries: false },
  { name: 'retries alone', retries: true },
  { name: 'retries + budget', retries: true, budget: bucket },
  {
    name: 'retries + breaker',
    retries: true,
    breaker: (clock) => Breaker.consecutive({ threshold: 5, halfOpenAfter, clock })
  },
  {
    name: 'retries + budget + breaker',
    retries: true,
    budget: bucket,
    breaker: (clock) => Breaker.consecutive({ threshold: 5, halfOpenAfter, clock })
  }
]

const measureOutage = async (protection: Protection): Promise<OutageRow> => {
  const clock = TestClock.make()
  const starts: Array<number> = []
  const dependency: TaskEither<string, string> = async () => {
    const start = clock.now()
    starts.push(start)
    await clock.sleep(DEPENDENCY_LATENCY)
    return start >= OUTAGE_START && start < OUTAGE_END ? E.left('503') : E.right('ok')
  }
  const breaker = protection.breaker?.(clock)
  const wrapped =
    breaker === undefined
      ? dependency
      : pipe(
          dependency,
          Breaker.protect(breaker, () => 'circuit open')
        )
  const call = protection.retries
    ? pipe(wrapped, retrying(retryPolicy, { clock, random: Random.seeded(3), budget: protection.budget?.(), breaker }))
    : wrapped
  let failed = 0
  let lastFailure = -Infinity
  const calls: Array<Promise<void>> = []
  const traffic = async (): Promise<void> => {
    for (let t = 0; t < DURATION; t += RATE_GAP) {
      calls.push(
        call().then((result) => {
          if (result._tag === 'Right') return
          failed++
          lastFailure = Math.max(lastFailure, clock.now())
        })
      )
      await clock.sleep(RATE_GAP)
    }
  }
  const sent = traffic()
  await clock.runAll(10_000_000)
  await sent
  await Promise.all(calls)
  return {
    protection,
    total: starts.length,
    duringOutage: starts.filter((t) => t >= OUTAGE_START && t < OUTAGE_END).length,
    failed,
    recovery: Math.max(0, lastFailure - OUTAGE_END),
    refused: breaker?.metrics.rejections ?? 0
  }
}

const outage = async (): Promise<{ readonly section: string; readonly rows: ReadonlyArray<OutageRow> }> => {
  const rows: Array<OutageRow> = []
  for (const protection of protections) {
    const row = await measureOutage(protection)
    console.log(
      `${protection.name}: ${n(row.duringOutage)} calls during the outage, ${n(row.total)} in all, ${n(
        row.failed
      )} failed, ` + `failing until ${ms(row.recovery)} ms after`
    )
    rows.push(row)
  }
  const base = rows[0]
  const lines = [
    '### An outage of 30 s: retries, a budget, a breaker',
    '',
    `${n(DURATION / RATE_GAP)} calls, one every ${RATE_GAP} ms for ${
      DURATION / 1000
    } s, to a dependency that answers in ` +
      `${DEPENDENCY_LATENCY} ms and fails every attempt started from ${OUTAGE_START / 1000} s to ${
        OUTAGE_END / 1000
      } s. ` +
      'Retries: `pipe(exponential(100), fullJitter, intersect(recurs(3)))` (3 retries, 4 attempts). Budget: ' +
      '`retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })`. Breaker: `consecutive({ threshold: 5, halfOpenAfter: ' +
      "pipe(exponential(1_000), capped(5_000)) })`, inside the retry (`Breaker.protect` on each attempt, and the runner's " +
      '`breaker` option). On a `TestClock`, seeded: exact. **Recovery** is how long after the dependency comes back the ' +
      'last call fails.',
    '',
    '| protection | calls to the dependency during the outage | vs no retries | calls to the dependency in all | calls that failed | attempts refused by the breaker | recovery (ms) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.protection.name} | ${n(r.duringOutage)} | ${ratio(r.duringOutage / base.duringOutage)} | ${n(
          r.total
        )} | ` + `${n(r.failed)} | ${r.protection.breaker === undefined ? '–' : n(r.refused)} | ${ms(r.recovery)} |`
    ),
    '',
    'Retries alone multiply the load on a dependency that is down by the attempts per call (4×). A token bucket ' +
      'brings it back to about one attempt per call: it cannot refuse a first attempt. A breaker stops the calls ' +
      'themselves: after the 5 failures that open it, only its probes reach the dependency, one per half-open wait ' +
      '(1, 2, 4, 5, 5, ... s: 7 probes in 30 s). Its price is the recovery: calls fail fast until the first probe ' +
      'after the dependency is back (here the one due at about 62.1 s), at most one wait (5 s) later. With the breaker ' +
      'the budget has nothing left to do. The arithmetic is in ' +
      '[docs/breakers-and-hedging.md](../docs/breakers-and-hedging.md).'
  ]
  return { section: lines.join('\n'), rows }
}

// -------------------------------------------------------------------------------------
// 3. the adaptive budget's cost per attempt
// -------------------------------------------------------------------------------------

/** Attempts per window measured; each is timed over ADAPTIVE_TIMED attempts once its window is full, best of 3. */
const ADAPTIVE_WINDOWS = [1_000, 20_000] as const
const ADAPTIVE_TIMED = 100_000

/**
 * CPU per attempt (ms) of `Budget.adaptive` with `maxLatencyPercentile`, in a window that holds `size` attempts
 * (one per ms), every other attempt a failure (each failure asks for the percentile). Real time, unlike the rest.
 */
const adaptiveCost = (size: number): number => {
  const random = Random.seeded(7)
  // drawn and built beforehand, so that only the budget is timed
  const attempts: ReadonlyArray<Budget.BudgetAttempt> = Array.from({ length: size + ADAPTIVE_TIMED }, (_, t) =>
    t % 2 === 0
      ? { latency: drawLatency(random), now: t, retries: 0, error: undefined, retrying: false }
      : { latency: drawLatency(random), now: t, retries: 0, error: 'e', retrying: true }
  )
  const budget = Budget.adaptive({
    window: size,
    minSuccessRate: 0,
    minSamples: 1,
    maxLatencyPercentile: { percentile: 99, ms: 1_000 }
  })
  const feed = (from: number, to: number): void => {
    for (let t = from; t < to; t++) {
      if (t % 2 === 0) budget.onSuccess(attempts[t])
      else budget.onFailure(attempts[t])
    }
  }
  feed(0, size) // fill the window
  const began = performance.now()
  feed(size, size + ADAPTIVE_TIMED)
  return (performance.now() - began) / ADAPTIVE_TIMED
}

const adaptive = (): string => {
  const rows = ADAPTIVE_WINDOWS.map((size) => {
    const cost = Math.min(adaptiveCost(size), adaptiveCost(size), adaptiveCost(size))
    console.log(`adaptive, ${n(size)} attempts per window: ${(cost * 1000).toFixed(2)} µs per attempt`)
    return `| ${n(size)} | ${(cost * 1000).toFixed(2)} |`
  })
  return [
    "### `Budget.adaptive`'s cost per attempt",
    '',
    '`adaptive({ maxLatencyPercentile: { percentile: 99, ms: 1_000 } })` told of ' +
      `${n(ADAPTIVE_TIMED)} attempts once its window is full, one per ms, every other one a failure (each failure ` +
      'reads the p99); best of 3. CPU time, so unlike the tables above it varies with the machine. The window is kept in two ' +
      'heaps split at the percentile: the cost grows with the logarithm of the window (it was a sort of the whole ' +
      'window per failure: 0.11 ms per attempt at 1,000, 2.5 ms at 20,000).',
    '',
    '| attempts per window | µs per attempt |',
    '| ---: | ---: |',
    ...rows
  ].join('\n')
}

// -------------------------------------------------------------------------------------
// 4. a breaker and a rate limiter shared through Redis
// -------------------------------------------------------------------------------------

/** How long each row is timed (real ms), and the calls in flight at once. */
const SHARED_MS = 1_000
const SHARED_CONCURRENCY = 16

/** Calls per second of `call`, SHARED_CONCURRENCY at a time for SHARED_MS, and the round trips per call. */
const throughput = (call: () => Promise<unknown>, trips: () => number): Promise<readonly [number, number]> =>
  timed(call, trips, { ms: SHARED_MS, concurrency: SHARED_CONCURRENCY })

/**
 * Calls per second through `Breaker.protect` of an action that succeeds at once, with the breaker's state in this
 * process (`memoryStore`), in Redis with a fresh local copy (`staleness` longer than the run: no round trip while
 * closed) and with a stale one (`staleness: 0`: one round trip a call); and through `RateLimiter.throttle` of a
 * limiter that always has a token, local and in Redis. Real time on a throwaway redis-server on loopback: it varies
 * with the machine. `tsx bench/resilience.ts shared` prints it.
 */
const shared = async (): Promise<string> => {
  const server = await startRedis()
  const redis = new Redis({ host: server.host, port: server.port })
  try {
    const ok: TaskEither<never, number> = () => Promise.resolve(E.right(1))
    const none = (): number => 0
    const viaBreaker = (breaker: Breaker.Breaker) =>
      pipe(
        ok,
        Breaker.protect(breaker, () => 'open')
      )
    const breakerIn = (staleness: number) => {
      const { client, trips } = counting(redis)
      const store = RedisBreaker.store({ redis: client, key: `bench-breaker-${staleness}` })
      return [viaBreaker(Breaker.consecutive({ threshold: 5, halfOpenAfter, store, staleness })), trips] as const
    }
    const wide = { rate: 1e9, per: 1_000, burst: 1e6 } // a token always there: the cost of asking, not of waiting
    const limited = counting(redis)
    const rows: ReadonlyArray<readonly [string, readonly [number, number]]> = [
      [
        'breaker, local (`memoryStore`)',
        await throughput(viaBreaker(Breaker.consecutive({ threshold: 5, halfOpenAfter })), none)
      ],
      ['breaker in Redis, fresh local copy (`staleness: 60_000`)', await throughput(...breakerIn(60_000))],
      ['breaker in Redis, stale local copy (`staleness: 0`)', await throughput(...breakerIn(0))],
      [
        'rate limiter, local (`RateLimiter.gcra`)',
        await throughput(pipe(ok, RateLimiter.throttle(RateLimiter.gcra(wide))), none)
      ],
      [
        'rate limiter in Redis (`RedisRateLimiter.gcra`)',
        await throughput(
          pipe(ok, RateLimiter.throttle(RedisRateLimiter.gcra({ redis: limited.client, key: 'bench-rate', ...wide }))),
          limited.trips
        )
      ]
    ]
    const local = new Map([
      ['breaker', rows[0][1][0]],
      ['rate', rows[3][1][0]]
    ])
    return [
      `### Shared through Redis: calls per second (${SHARED_CONCURRENCY} in flight, ${SHARED_MS / 1000} s a row)`,
      '',
      `Node ${process.version}, a throwaway redis-server on loopback, load average ${os.loadavg()[0].toFixed(1)}.`,
      '',
      '| through | calls per second | against local | Redis round trips per call |',
      '| --- | ---: | ---: | ---: |',
      ...rows.map(([name, [perSecond, trips]]) => {
        const base = local.get(name.startsWith('breaker') ? 'breaker' : 'rate') ?? perSecond
        return `| ${name} | ${n(Math.round(perSecond))} | ${ratio(perSecond / base)} | ${trips.toFixed(2)} |`
      })
    ].join('\n')
  } finally {
    redis.disconnect()
    await server.stop()
  }
}

// -------------------------------------------------------------------------------------
// main
// -------------------------------------------------------------------------------------

const main = async (): Promise<void> => {
  // `tsx bench/resilience.ts adaptive`: that table alone, printed, bench/RESULTS.md left as it is
  if (process.argv.includes('adaptive')) return void console.log(`\n${adaptive()}`)
  // `tsx bench/resilience.ts shared`: the breaker and the rate limiter shared through Redis, printed (real time)
  if (process.argv.includes('shared')) return void console.log(`\n${await shared()}`)
  const began = performance.now()
  const tail = await tailLatency()
  const down = await outage()
  const section = [
    '## Resilience: hedging, breakers and budgets',
    '',
    'Both runs are simulations on virtual time (`TestClock`, seeded draws), using the library itself ' +
      '(`hedging`, `Breaker.consecutive` and `Breaker.protect`, `Budget.retryThrottle`, `retrying`): every figure is exact ' +
      'and the same on every machine. Regenerate with `npm run bench:resilience` ' +
      `(${Math.round((performance.now() - began) / 1000)} s).`,
    '',
    tail.section,
    '',
    down.section,
    '',
    adaptive()
  ].join('\n')
  writeSection(RESULTS, 'resilience', section)
  console.log(`\n${section}\n\nWritten to bench/RESULTS.md.`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
