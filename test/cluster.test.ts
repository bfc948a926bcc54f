/**
 * The Redis modules on a real Redis Cluster (3 masters, 3 replicas, started by the test), through ioredis's
 * `Cluster` client: the shared breaker, budget and rate limiter, and durable runs on BullMQ with a hash-tagged
 * prefix. Failovers are in test/cluster-failover.test.ts.
 */
import * as assert from 'assert'
import { Queue } from 'bullmq'
import * as fc from 'fast-check'
import { Cluster } from 'ioredis'
import * as Breaker from '../src/Breaker'
import * as BullMQ from '../src/BullMQ'
import type * as Durable from '../src/Durable'
import * as RedisBreaker from '../src/RedisBreaker'
import * as RedisBudget from '../src/RedisBudget'
import * as RedisRateLimiter from '../src/RedisRateLimiter'
import * as Schedule from '../src/Schedule'
import * as S from './support/durable'
import { describeWithCluster } from './support/redis-cluster'
import { waitUntil } from './support/wait'
import { deepStrictEqual, ok, strictEqual, throwsTypeError } from './util'

/** Polls `done` until it holds: no time limit of its own (issue 33), jest's timeout bounds it. */
const until = (what: string, done: () => Promise<boolean>): Promise<void> => waitUntil(done, { what })

describeWithCluster('the Redis modules on a Redis Cluster', (cluster) => {
  const clients: Array<Cluster> = []
  /** A new `Cluster` client: a process of the fleet. */
  const client = (): Cluster => {
    const c = new Cluster([...cluster().startupNodes])
    clients.push(c)
    return c
  }
  afterAll(() => {
    for (const c of clients) c.disconnect()
  })

  describe('RedisBreaker.store', () => {
    it('should make every transition Breaker.memoryStore makes, on keys served by each master', async () => {
      const redis = client()
      const keys = await cluster().keysOnEveryMaster('breaker')
      let n = 0
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.oneof(
              fc.record({
                _tag: fc.constant('outcome' as const),
                version: fc.integer({ min: 0, max: 3 }),
                ok: fc.boolean(),
                window: fc.constant<Breaker.Window>({ _tag: 'count', size: 3 })
              }),
              fc.record({
                _tag: fc.constant('open' as const),
                version: fc.integer({ min: 0, max: 3 }),
                wait: fc.constant(0)
              }),
              fc.record({ _tag: fc.constant('enter' as const), probes: fc.constant(2), lease: fc.constant(600_000) }),
              fc.constant<Breaker.Transition>({ _tag: 'reset' })
            ),
            { maxLength: 20 }
          ),
          async (transitions) => {
            const key = `${keys[n % keys.length]}:${n++}`
            const memory = Breaker.memoryStore()
            const shared = RedisBreaker.store({ redis, key })
            for (const t of transitions) deepStrictEqual(await shared.apply(t), memory.apply(t))
            deepStrictEqual(await shared.read(), memory.read())
          }
        ),
        { numRuns: 15 }
      )
    })

    it('should open the breakers of two processes as one, on any master', async () => {
      const [a, b] = [client(), client()]
      for (const key of await cluster().keysOnEveryMaster('opens')) {
        const breakerOf = (redis: Cluster): Breaker.Breaker =>
          Breaker.consecutive({
            threshold: 4,
            halfOpenAfter: Schedule.constant(60_000),
            store: RedisBreaker.store({ redis, key }),
            storeTimeout: 2_000
          })
        const [one, other] = [breakerOf(a), breakerOf(b)]
        for (const breaker of [one, other, one, other]) {
          const permit = await breaker.enter()
          assert.ok(permit !== undefined, `${key}: refused before the fleet's fourth failure`)
          await permit.onFailure()
        }
        strictEqual(await one.enter(), undefined)
        strictEqual(await other.enter(), undefined)
      }
    })
  })

  describe('RedisBudget.retryThrottle', () => {
    it('should spend one bucket from two processes, on any master', async () => {
      const [a, b] = [client(), client()]
      for (const key of await cluster().keysOnEveryMaster('budget')) {
        const budgetOf = (redis: Cluster): RedisBudget.RedisRetryThrottle =>
          RedisBudget.retryThrottle({ redis, key, maxTokens: 10, tokenRatio: 0.5, timeout: 2_000, fallback: 'refuse' })
        const [one, other] = [budgetOf(a), budgetOf(b)]
        const attempt = { now: Date.now(), attempt: 1 } as never
        // a retry while tokens > 5: the fourth failure leaves 6, the fifth 5
        const answers = []
        for (const budget of [one, other, one, other, one]) answers.push(await budget.onFailure(attempt))
        deepStrictEqual(answers, [true, true, true, true, false])
        strictEqual(await other.tokens(), 5)
        await one.onSuccess(attempt)
        strictEqual(await other.tokens(), 5.5)
      }
    })
  })

  describe('RedisRateLimiter.gcra', () => {
    it('should share one rate between two processes, on any master', async () => {
      const [a, b] = [client(), client()]
      for (const key of await cluster().keysOnEveryMaster('rate')) {
        const limiterOf = (redis: Cluster) =>
          RedisRateLimiter.gcra({ redis, key, rate: 1, per: 600_000, burst: 3, timeout: 2_000, fallback: 'refuse' })
        const [one, other] = [limiterOf(a), limiterOf(b)]
        const answers = []
        for (const limiter of [one, other, one, other]) answers.push(await limiter.take())
        deepStrictEqual(answers, [true, true, true, false])
      }
    })
  })

  describe.each(['fixedWindow', 'slidingWindow'] as const)('RedisRateLimiter.%s', (name) => {
    it('should share one limit between two processes, reservations and cancels too, on any master', async () => {
      const [a, b] = [client(), client()]
      for (const key of await cluster().keysOnEveryMaster(`${name}`)) {
        const limiterOf = (redis: Cluster) =>
          RedisRateLimiter[name]({ redis, key, limit: 3, window: 600_000, timeout: 2_000, fallback: 'refuse' })
        const [one, other] = [limiterOf(a), limiterOf(b)]
        const answers = []
        for (const limiter of [one, other, one, other]) answers.push(await limiter.take())
        deepStrictEqual(answers, [true, true, true, false])
        const reservation = await one.reserve()
        ok(reservation.wait > 0, `waits ${reservation.wait}`)
        await reservation.cancel() // the last: given back, so 3 more fit before another window has passed
        const waits = [(await other.reserve()).wait, (await one.reserve()).wait, (await other.reserve()).wait]
        ok(
          waits.every((w) => w > 0 && w <= 600_000),
          `waits ${waits.join(', ')}`
        )
      }
    })
  })

  describe('BullMQ.make', () => {
    const engines: Array<Durable.Engine> = []
    afterEach(async () => {
      await Promise.all(engines.splice(0).map((e) => e.close()))
    })

    it("should fail with CROSSSLOT on BullMQ's default prefix (why the engine refuses it)", async () => {
      const queue = new Queue('plain', { connection: client() })
      try {
        await assert.rejects(queue.add('x', {}), /CROSSSLOT/)
      } finally {
        await queue.close()
      }
    })

    it('should refuse a prefix without a hash tag at once, naming the fix', () => {
      const connection = client()
      throwsTypeError(
        () => BullMQ.make({ connection }),
        /BullMQ\.make: options\.connection is a Redis Cluster and options\.prefix "bull" \(BullMQ's default\) has no hash tag.*CROSSSLOT.*prefix: '\{fp\}'/
      )
      for (const prefix of ['retries', '{}retries', 'retries{', 'retries}{']) {
        throwsTypeError(
          () => BullMQ.make({ connection, prefix }),
          new RegExp(`options\\.prefix ${JSON.stringify(prefix).replace(/[{}]/g, '\\$&')} has no hash tag`)
        )
      }
      // a tag anywhere in the prefix will do; a plain Redis needs none
      for (const prefix of ['{fp}', 'retries:{fp}', 'a{b}c']) engines.push(BullMQ.make({ connection, prefix }))
      engines.push(BullMQ.make({ connection: { host: '127.0.0.1', port: 1 }, prefix: 'retries' }))
    })

    it('should run durable runs on a hash-tagged prefix: submit, a retry, completion, as the schedule says', async () => {
      const engine = BullMQ.make({ connection: client(), prefix: '{fp}', onError: () => undefined })
      engines.push(engine)
      const record = S.newRecord()
      const def = S.definition('cluster-runs', record)
      const ids = ['run:0', 'run:1', 'run:2']
      const failures = [0, 1, 2]
      const all = S.allDone(ids.length)
      await engine.work(def, S.workOptions(record, all.then))
      await Promise.all(ids.map((id, i) => engine.submit(def, id, { failures: failures[i] })))
      await all.done
      for (const [i, id] of ids.entries()) {
        const attempts = record.attempts.get(id) ?? []
        deepStrictEqual(
          attempts.map((a) => a.previousDelay),
          S.expected(id, failures[i]).previousDelays
        )
        deepStrictEqual(record.done.get(id), [S.expected(id, failures[i]).done])
        for (let j = 1; j < attempts.length; j++) {
          assert.ok(attempts[j].start - attempts[j - 1].end >= (attempts[j].previousDelay ?? 0), `${id}: early`)
        }
      }
      // onDone is told before its job completes
      await until('the jobs to complete', async () => (await engine.pending(def)).done.length === ids.length)
      deepStrictEqual(await engine.pending(def), { pending: [], done: ids })
    }, 30_000)

    it("should wait for the replica of the prefix's master with waitForReplicas, and reject when it does not answer", async () => {
      const waiting = (replicas: number) =>
        BullMQ.make({
          connection: client(),
          prefix: '{fp}',
          waitForReplicas: { replicas, timeout: 150 },
          onError: () => undefined
        })
      const def = S.definition('replicated', S.newRecord())
      const [one, two] = [waiting(1), waiting(2)]
      engines.push(one, two)
      await one.submit(def, 'kept', { failures: 0 })
      // one replica per master: two never acknowledge
      await assert.rejects(two.submit(def, 'two', { failures: 0 }), (e) => {
        assert.ok(e instanceof BullMQ.NotReplicatedError)
        deepStrictEqual([e.id, e.acknowledged, e.replicas, e.timeout], ['two', 1, 2, 150])
        return true
      })
      // the replica of the master that took the write paused (shorter than the node timeout: no failover): a WAIT
      // sent to another node would be answered at once
      const replica = await cluster().replicaOf('{fp}')
      process.kill(replica.pid, 'SIGSTOP')
      try {
        for (const id of ['paused-1', 'paused-2']) {
          await assert.rejects(
            one.submit(def, id, { failures: 0 }),
            /0 of 1 replicas acknowledged the run within 150 ms/
          )
        }
      } finally {
        process.kill(replica.pid, 'SIGCONT')
      }
      await one.submit(def, 'resumed', { failures: 0 })
      deepStrictEqual((await one.pending(def)).pending, ['kept', 'paused-1', 'paused-2', 'resumed', 'two'])
    })
  })
})
