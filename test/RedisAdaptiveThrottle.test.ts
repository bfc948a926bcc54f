import Redis from 'ioredis'
import * as AdaptiveThrottle from '../src/AdaptiveThrottle'
import type { Event } from '../src/Event'
import * as Random from '../src/Random'
import * as RedisAdaptiveThrottle from '../src/RedisAdaptiveThrottle'
import { killChildren, startChild, type Child } from './support/fleet'
import { withOutage } from './support/outage'
import { availability, describeWithRedis } from './support/redis'
import { deepStrictEqual, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

/** A draw that goes at any probability below 1: a throttle that counts and never drops. */
const never = Random.fixed(1 - 2 ** -53)

describe('RedisAdaptiveThrottle.make (no server needed)', () => {
  const redis: RedisAdaptiveThrottle.RedisAdaptiveThrottleOptions['redis'] = {
    evalsha: async () => 0,
    eval: async () => 0
  }
  const options = { redis, key: 'k' }

  it('should name a bad option in its error: TypeError for a wrong type, RangeError for a value out of range', () => {
    throwsTypeError(
      () => RedisAdaptiveThrottle.make({ ...options, redis: {} as never }),
      /RedisAdaptiveThrottle\.make: options\.redis must be a Redis client with evalsha and eval/
    )
    throwsTypeError(
      () => RedisAdaptiveThrottle.make({ ...options, key: '' }),
      /options\.key must be a non-empty string/
    )
    throwsRangeError(
      () => RedisAdaptiveThrottle.make({ ...options, k: 0 }),
      /options\.k must be a finite number >= 1, received 0/
    )
    throwsRangeError(
      () => RedisAdaptiveThrottle.make({ ...options, window: Infinity }),
      /options\.window must be a finite number > 0, received Infinity/
    )
    throwsRangeError(
      () => RedisAdaptiveThrottle.make({ ...options, buckets: 0.5 }),
      /options\.buckets must be a whole number in \[1, 1000\], received 0.5/
    )
    throwsRangeError(
      () => RedisAdaptiveThrottle.make({ ...options, timeout: 0 }),
      /options\.timeout must be a finite number > 0/
    )
    throwsRangeError(
      () => RedisAdaptiveThrottle.make({ ...options, fallback: 'wait' as never }),
      /options\.fallback must be 'local', 'allow' or 'refuse'/
    )
    throwsTypeError(
      () => RedisAdaptiveThrottle.make({ ...options, random: {} as never }),
      /options\.random must be a Random/
    )
  })

  it('should take a script that answers nonsense as Redis failing: the fallback answers, and says so', async () => {
    const events: Array<Event> = []
    const throttle = RedisAdaptiveThrottle.make({ ...options, fallback: 'refuse', onEvent: (e) => void events.push(e) })
    deepStrictEqual(await throttle.request(), { _tag: 'Throttled', probability: 1 })
    strictEqual(throttle.admits(), false)
    expect(events).toMatchObject([
      { _tag: 'ServiceUnavailable', source: 'throttle', service: 'adaptive throttle', fallback: 'refuse' }
    ])
  })
})

/** What a process of the fleet printed for each call: the fleet's counts after it, and the probability it was dropped at. */
type Calls = ReadonlyArray<readonly [requests: number, accepts: number, dropped: number | null]>

describeWithRedis('RedisAdaptiveThrottle on a real Redis', (server) => {
  let redis: Redis
  let n = 0
  const key = (): string => `throttle-${++n}`

  beforeAll(() => {
    redis = new Redis({ host: server().host, port: server().port })
  })
  afterAll(async () => {
    await killChildren()
    redis.disconnect()
  })

  it('should count requests and accepts in the window on the server, and forget them as it passes', async () => {
    const k = key()
    const throttle = RedisAdaptiveThrottle.make({
      redis,
      key: k,
      window: 400,
      buckets: 2,
      random: never,
      timeout: 2_000
    })
    strictEqual(await throttle.request(), undefined)
    await throttle.accept()
    strictEqual(await throttle.request(), undefined)
    await throttle.request()
    deepStrictEqual([throttle.requests, throttle.accepts], [3, 1])
    strictEqual(throttle.dropProbability(), (3 - 2) / 4)
    // another process's throttle on the same key sees the same counts
    const other = RedisAdaptiveThrottle.make({ redis, key: k, window: 400, buckets: 2, timeout: 2_000 })
    await other.refresh()
    deepStrictEqual([other.requests, other.accepts, other.dropProbability()], [3, 1, 0.25])
    // a whole window later every bucket has left it, and the key has expired
    await new Promise((resolve) => setTimeout(resolve, 450))
    await other.refresh()
    deepStrictEqual([other.requests, other.accepts], [0, 0])
    strictEqual(await redis.exists(k), 0)
  })

  describe('a fleet of four processes sharing one throttle', () => {
    const WINDOW = 60_000 // nothing leaves the window during the test
    const PREFILLED = [30, 10] as const
    const CALLS = 50
    let processes: ReadonlyArray<Child> = []
    const shared = key()

    beforeAll(async () => {
      processes = Array.from({ length: 4 }, (_, i) =>
        startChild('fleet-throttle.ts', [String(server().port), shared, String(WINDOW), '6', String(34 + i)])
      )
      await Promise.all(processes.map((p) => p.waitFor('ready', (l) => l === 'ready')))
    }, 20_000)
    afterAll(() => {
      for (const p of processes) p.process.stdin?.end()
    })

    it("should see the fleet's counts, drop at the fleet's probability, and all read the same counts after", async () => {
      // the backend has refused 20 of 30 requests: p = (30 - 2 * 10) / 31 for the next
      const filler = RedisAdaptiveThrottle.make({
        redis,
        key: shared,
        window: WINDOW,
        buckets: 6,
        random: never,
        timeout: 2_000
      })
      for (let i = 0; i < PREFILLED[0]; i++) await filler.request()
      for (let i = 0; i < PREFILLED[1]; i++) await filler.accept()
      for (const p of processes) p.process.stdin?.write(`request ${CALLS}\n`)
      const calls: ReadonlyArray<Calls> = await Promise.all(
        processes.map(
          async (p) =>
            JSON.parse((await p.waitFor('its calls', (l) => l.startsWith('calls '))).slice('calls '.length)) as Calls
        )
      )
      // one counter for the fleet: every request counted once, in one order, whichever process made it
      const seen = calls.flatMap((mine) => mine.map(([requests]) => requests)).sort((a, b) => a - b)
      deepStrictEqual(
        seen,
        Array.from({ length: 4 * CALLS }, (_, i) => PREFILLED[0] + 1 + i)
      )
      ok(
        calls.every((mine) => mine.some(([requests], i) => requests > PREFILLED[0] + 1 + i)),
        'each process saw the others’ requests'
      )
      // each drop at the fleet's probability, drawn against the counts before the request
      let expected = 0
      let dropped = 0
      for (const [requests, accepts, at] of calls.flat()) {
        strictEqual(accepts, PREFILLED[1])
        const p = AdaptiveThrottle.probability(2, requests - 1, accepts)
        expected += p
        if (at !== null) {
          dropped++
          strictEqual(at, p)
        }
      }
      // a sum of 200 independent draws: 5 standard deviations are at most 5 * sqrt(200) / 2
      ok(Math.abs(dropped - expected) < (5 * Math.sqrt(4 * CALLS)) / 2, `dropped ${dropped}, expected ${expected}`)
      // and every process reads the same counts now
      for (const p of processes) p.process.stdin?.write('refresh\n')
      const counts = await Promise.all(processes.map((p) => p.waitFor('its counts', (l) => l.startsWith('counts '))))
      deepStrictEqual(counts, Array(4).fill(`counts ${PREFILLED[0] + 4 * CALLS} ${PREFILLED[1]}`))
      deepStrictEqual(
        processes.map((p) => p.lines.filter((l) => l.startsWith('event '))),
        [[], [], [], []]
      )
    }, 20_000)
  })
})

// on a redis-server of its own, paused (withOutage starts it)
;(availability.ok ? describe : describe.skip)('RedisAdaptiveThrottle when Redis is paused', () => {
  it("should go on with this process's own counts within the bound, say so, and count nothing late", async () => {
    await withOutage('paused (SIGSTOP)', 1, async ({ clients: [client], begin, end }) => {
      const events: Array<Event> = []
      const throttle = RedisAdaptiveThrottle.make({
        redis: client,
        key: 'paused',
        random: Random.fixed(0.5),
        timeout: 100,
        onEvent: (e) => void events.push(e)
      })
      // accepted once, then refused 5 times: each went (the draw of 0.5 is below none of 0, 0, 1/4, 2/5, 1/2)
      strictEqual(await throttle.request(), undefined)
      await throttle.accept()
      for (let i = 0; i < 5; i++) strictEqual(await throttle.request(), undefined)
      strictEqual(throttle.dropProbability(), (6 - 2) / 7)
      await begin()
      const began = Date.now()
      // the local throttle counted every call: it drops as the fleet would have
      deepStrictEqual(await throttle.request(), { _tag: 'Throttled', probability: (6 - 2) / 7 })
      const took = Date.now() - began
      ok(took < 1_000, `a request took ${took} ms on a paused Redis`)
      deepStrictEqual([throttle.requests, throttle.accepts], [7, 1])
      expect(events).toMatchObject([
        { _tag: 'ServiceUnavailable', source: 'throttle', service: 'adaptive throttle', fallback: 'local' },
        { _tag: 'LoadShed', source: 'throttle', cause: 'throttled', inFlight: 6, limit: 2 }
      ])
      await end()
      // the request it gave up on never counted in Redis: the fleet had 6 before this one, not 7
      deepStrictEqual(await throttle.request(), { _tag: 'Throttled', probability: (6 - 2) / 7 })
      deepStrictEqual([throttle.requests, throttle.accepts], [7, 1])
      deepStrictEqual(
        events.map((e) => e._tag),
        ['ServiceUnavailable', 'LoadShed', 'ServiceRecovered', 'LoadShed']
      )
    })
  }, 30_000)
})
