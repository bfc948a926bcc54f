/**
 * `npm run bench:breaker`: calls per second through a breaker shared by a fleet (`RedisBreaker.store`, which keeps
 * the state and the count of outcomes in Redis) beside a local one, for each policy, and the Redis round trips a
 * call costs. Issue 20 asks that a shared breaker add at most one round trip per call when its local copy is stale,
 * none when it is fresh; bench/RESULTS.md keeps the table between the `breaker` markers.
 *
 * `Breaker.protect` of an action that answers at once, 16 calls in flight, on a throwaway redis-server on loopback:
 * real time, which varies with the machine, so each row is timed in several rounds (rows in rotating order) and the
 * median kept; read the ratios, taken within one run. The failing rows fail one call in 10, which none of the
 * policies opens on (the run checks that every breaker is still closed at the end).
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import Redis from 'ioredis'
import * as os from 'os'
import * as Breaker from '../src/Breaker'
import * as RedisBreaker from '../src/RedisBreaker'
import * as Schedule from '../src/Schedule'
import { startRedis } from '../test/support/redis'
import { counting, throughput } from './redis-calls'
import { RESULTS, writeSection } from './results'

const ROUNDS = 3
const ROW_MS = 600
const CONCURRENCY = 16
const FAIL_EVERY = 10

const halfOpenAfter = Schedule.constant(1_000)

const POLICIES: ReadonlyArray<readonly [string, (options: Breaker.BreakerOptions) => Breaker.Breaker]> = [
  ['`consecutive({ threshold: 5 })`', (options) => Breaker.consecutive({ ...options, threshold: 5 })],
  ['`count({ size: 100, failureRate: 0.5 })`', (options) => Breaker.count({ ...options, size: 100, failureRate: 0.5 })],
  [
    '`sampling({ window: 10_000, minThroughput: 100, failureRate: 0.5 })`',
    (options) => Breaker.sampling({ ...options, window: 10_000, minThroughput: 100, failureRate: 0.5 })
  ]
]

/** How a row's breaker keeps its state: in this process, or in Redis with a fresh or a stale local copy. */
const PLACES = [
  { name: 'local', staleness: undefined },
  { name: 'in Redis, fresh copy (`staleness: 60_000`)', staleness: 60_000 },
  { name: 'in Redis, stale copy (`staleness: 0`)', staleness: 0 }
] as const

interface Row {
  readonly policy: number
  readonly place: (typeof PLACES)[number]
  readonly failing: boolean
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US')
const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const main = async (): Promise<void> => {
  const server = await startRedis()
  const redis = new Redis({ host: server.host, port: server.port })
  let keys = 0
  try {
    const rows: ReadonlyArray<Row> = POLICIES.flatMap((_, policy) =>
      [false, true].flatMap((failing) => PLACES.map((place) => ({ policy, place, failing })))
    )
    /** Times one row with a breaker of its own (a key of its own): calls per second, round trips per call. */
    const time = async ({ policy, place, failing }: Row): Promise<readonly [number, number]> => {
      const { client, trips } = counting(redis)
      const store =
        place.staleness === undefined
          ? undefined
          : RedisBreaker.store({ redis: client, key: `bench-breaker-${++keys}` })
      const breaker = POLICIES[policy][1]({ halfOpenAfter, store, staleness: place.staleness })
      let calls = 0
      const action: TaskEither<string, number> = () =>
        Promise.resolve(failing && ++calls % FAIL_EVERY === 0 ? E.left('503') : E.right(1))
      const call = pipe(
        action,
        Breaker.protect(breaker, () => 'open')
      )
      const result = await throughput(call, trips, { ms: ROW_MS, concurrency: CONCURRENCY })
      if (breaker.state._tag !== 'Closed') throw new Error(`bench:breaker: ${POLICIES[policy][0]} opened`)
      return result
    }
    const timings = rows.map(() => ({ perSecond: [] as Array<number>, trips: [] as Array<number> }))
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < rows.length; k++) {
        const i = (k + round * 5) % rows.length
        const [perSecond, trips] = await time(rows[i])
        timings[i].perSecond.push(perSecond)
        timings[i].trips.push(trips)
      }
      console.log(`round ${round + 1} of ${ROUNDS} done`)
    }
    const perSecond = timings.map((t) => median(t.perSecond))
    const local = (row: Row): number =>
      perSecond[rows.findIndex((r) => r.policy === row.policy && r.failing === row.failing && r.place === PLACES[0])]
    const section = [
      '## A breaker shared through Redis: calls per second beside a local one',
      '',
      `\`npm run bench:breaker\`: \`Breaker.protect\` of an action that answers at once, ${CONCURRENCY} calls in flight, ` +
        `each row ${ROW_MS} ms in each of ${ROUNDS} rounds (the median kept), on a throwaway redis-server on loopback; ` +
        `Node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)} at the end. ` +
        'Real time: the figures vary with the machine, the ratios much less. "Against local" divides by the local ' +
        `breaker of the same policy and outcomes; "failing" rows fail one call in ${FAIL_EVERY}, which opens none of ` +
        'them. The round trips per call are counted, not timed: they follow the table of `Breaker.Store`.',
      '',
      '| policy | breaker | outcomes | calls per second | against local | Redis round trips per call |',
      '| --- | --- | --- | ---: | ---: | ---: |',
      ...rows.map((row, i) => {
        const ratio = perSecond[i] / local(row)
        return `| ${POLICIES[row.policy][0]} | ${row.place.name} | ${row.failing ? 'failing' : 'healthy'} | ${n(
          perSecond[i]
        )} | ${ratio.toFixed(2)}× | ${median(timings[i].trips).toFixed(2)} |`
      })
    ].join('\n')
    writeSection(RESULTS, 'breaker', section)
    console.log(`\n${section}\n\nWritten to bench/RESULTS.md.`)
  } finally {
    redis.disconnect()
    await server.stop()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
