import * as assert from 'assert'
import * as fc from 'fast-check'
import Redis from 'ioredis'
import * as Breaker from '../src/Breaker'
import * as RedisBreaker from '../src/RedisBreaker'
import { killChildren, startChild, type Child } from './support/fleet'
import { describeWithRedis } from './support/redis'
import { deepStrictEqual, strictEqual } from './util'

describe('RedisBreaker.store (no server needed)', () => {
  it('should name a bad client or key in its error', () => {
    assert.throws(
      () => RedisBreaker.store({ redis: {} as never, key: 'k' }),
      /RedisBreaker\.store: options\.redis must be a Redis client/
    )
    assert.throws(
      () => RedisBreaker.store({ redis: { evalsha: async () => 0, eval: async () => 0 }, key: '' }),
      /RedisBreaker\.store: options\.key must be a non-empty string, received ""/
    )
  })
})

/** Transitions that do not depend on the time: waits of 0 or never, leases too long to run out. */
const transitionArbitrary: fc.Arbitrary<Breaker.Transition> = fc.oneof(
  fc.record({
    _tag: fc.constant('open' as const),
    version: fc.integer({ min: 0, max: 6 }),
    wait: fc.constantFrom(0, null)
  }),
  fc.record({
    _tag: fc.constant('enter' as const),
    probes: fc.integer({ min: 1, max: 3 }),
    lease: fc.constant(600_000)
  }),
  fc.record({
    _tag: fc.constant('probed' as const),
    version: fc.integer({ min: 0, max: 6 }),
    permit: fc.integer({ min: 1, max: 6 }).map(String),
    ok: fc.boolean(),
    probes: fc.integer({ min: 1, max: 3 }),
    wait: fc.constantFrom(0, null)
  }),
  fc.constant<Breaker.Transition>({ _tag: 'isolate' }),
  fc.constant<Breaker.Transition>({ _tag: 'reset' })
)

describeWithRedis('RedisBreaker.store on a real Redis', (server) => {
  let redis: Redis
  let n = 0
  const key = (): string => `breaker-${++n}`

  beforeAll(() => {
    redis = new Redis({ host: server().host, port: server().port })
  })
  afterAll(async () => {
    await killChildren()
    redis.disconnect()
  })

  it('should make every transition Breaker.memoryStore makes, answering the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(transitionArbitrary, { maxLength: 30 }), async (transitions) => {
        const memory = Breaker.memoryStore()
        const shared = RedisBreaker.store({ redis, key: key() })
        for (const t of transitions) deepStrictEqual(await shared.apply(t), memory.apply(t))
        deepStrictEqual(await shared.read(), memory.read())
      }),
      { numRuns: 40 }
    )
  })

  it('should load its script again when the server has forgotten it (NOSCRIPT)', async () => {
    const store = RedisBreaker.store({ redis, key: key() })
    await store.apply({ _tag: 'isolate' })
    await redis.script('FLUSH')
    deepStrictEqual(await store.read(), { _tag: 'Open', version: 1, halfOpenIn: null })
  })

  describe('four processes sharing one breaker (threshold 5, halfOpenAfter 400 ms, 2 probes, lease 800 ms)', () => {
    const shared = key()
    const THRESHOLD = 5
    const HALF_OPEN_AFTER = 400
    const LEASE = 800
    let processes: Array<Child> = []
    let ids = 0

    const start = (): Child =>
      startChild('fleet-breaker.ts', [
        String(server().port),
        shared,
        String(THRESHOLD),
        String(HALF_OPEN_AFTER),
        '2',
        String(LEASE)
      ])

    beforeAll(async () => {
      processes = Array.from({ length: 4 }, start)
      await Promise.all(processes.map((p) => p.waitFor('ready', (l) => l === 'ready')))
    }, 20_000)

    /** Sends a command to a process; resolves with its answer (the words after the id). */
    const send = async (p: Child, command: string): Promise<ReadonlyArray<string>> => {
      const id = String(++ids)
      p.process.stdin?.write(`${id} ${command}\n`)
      const line = await p.waitFor(`${command} (${id})`, (l) => l.startsWith(`${id} `))
      return line.split(' ').slice(1)
    }
    const outcome = async (p: Child, command: string): Promise<string> => (await send(p, command))[0]
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

    it('should open for the whole fleet at the threshold: the calls after it, in any process, are refused', async () => {
      // Each process counts its own calls' outcomes (the policy is local); the state they lead to is the fleet's.
      for (let i = 0; i < THRESHOLD; i++) strictEqual(await outcome(processes[0], 'fail'), 'left')
      deepStrictEqual(await Promise.all(processes.map((p) => outcome(p, 'ok'))), [
        'refused',
        'refused',
        'refused',
        'refused'
      ])
    }, 20_000)

    it('should send exactly the allowed probes in all while half-open, and give up those of a killed process after the lease', async () => {
      await sleep(HALF_OPEN_AFTER + 50)
      // every process asks at once: two probes go, in the whole fleet
      const answers = processes.map((p) => send(p, 'hang'))
      const called = await Promise.all(
        processes.map((p, i) =>
          Promise.race([p.waitFor('a probe', (l) => l.endsWith(' called')).then(() => i), answers[i].then(() => -1)])
        )
      )
      const probing = called.filter((i) => i >= 0)
      strictEqual(probing.length, 2)
      // the probing processes die: their permits hold the circuit half-open until the lease runs out
      for (const i of probing) {
        processes[i].process.kill('SIGKILL')
        await processes[i].exited
      }
      const alive = processes.filter((_, i) => !probing.includes(i))
      strictEqual(await outcome(alive[0], 'ok'), 'refused')
      await sleep(LEASE + 50)
      // two successful probes close the circuit for everyone
      deepStrictEqual([await outcome(alive[0], 'ok'), await outcome(alive[1], 'ok')], ['right', 'right'])
      processes = [...alive, start(), start()]
      await Promise.all(processes.map((p) => p.waitFor('ready', (l) => l === 'ready')))
      deepStrictEqual(await Promise.all(processes.map((p) => outcome(p, 'state'))), [
        'Closed',
        'Closed',
        'Closed',
        'Closed'
      ])
    }, 20_000)

    it('isolate() in one process should open the circuit for all, past halfOpenAfter, and reset() close it', async () => {
      strictEqual(await outcome(processes[0], 'isolate'), 'done')
      await sleep(HALF_OPEN_AFTER + 50)
      deepStrictEqual(await Promise.all(processes.map((p) => outcome(p, 'ok'))), [
        'refused',
        'refused',
        'refused',
        'refused'
      ])
      strictEqual(await outcome(processes[3], 'reset'), 'done')
      deepStrictEqual(await Promise.all(processes.map((p) => outcome(p, 'ok'))), ['right', 'right', 'right', 'right'])
    }, 20_000)

    it('with Redis paused (SIGSTOP), calls should go on locally within the bound and say so, then recover', async () => {
      const pid = server().pid
      const from = processes.map((p) => p.lines.length)
      process.kill(pid, 'SIGSTOP')
      try {
        for (let round = 0; round < 3; round++) {
          const answers = await Promise.all(processes.map((p) => send(p, 'ok')))
          for (const [result, took] of answers) {
            strictEqual(result, 'right')
            // the bound (100 ms) and a little for a busy machine: never the client's own reconnect delays
            assert.ok(Number(took) < 400, `a call waited ${took} ms on a paused Redis`)
          }
        }
        for (const [i, p] of processes.entries())
          await p.waitFor('ServiceUnavailable', (l) => l === 'event ServiceUnavailable', from[i])
      } finally {
        process.kill(pid, 'SIGCONT')
      }
      // once Redis answers again (the commands queued meanwhile are answered first), the store is back
      for (const [i, p] of processes.entries()) {
        for (;;) {
          await send(p, 'ok')
          if (p.lines.slice(from[i]).includes('event ServiceRecovered')) break
          await sleep(50)
        }
      }
      for (const p of processes) p.process.stdin?.end()
      deepStrictEqual(
        (await Promise.all(processes.map((p) => p.exited))).map((e) => e.code),
        [0, 0, 0, 0]
      )
    }, 20_000)
  })
})
