/**
 * Failovers on a real Redis Cluster (3 masters, 3 replicas, started by the test): a master killed by pid, its
 * replica promoted. The shared policies stay bounded and fall back, then recover; durable runs on BullMQ retry no
 * earlier than due; and what a failover loses of the runs `submit` acknowledged is measured, without and with
 * `waitForReplicas`. Each test kills another master.
 */
import * as assert from 'assert'
import * as E from 'fp-ts/Either'
import * as TE from 'fp-ts/TaskEither'
import * as t from 'io-ts'
import { Cluster } from 'ioredis'
import * as Breaker from '../src/Breaker'
import * as BullMQ from '../src/BullMQ'
import * as Durable from '../src/Durable'
import type * as Event from '../src/Event'
import * as RedisBreaker from '../src/RedisBreaker'
import * as RedisBudget from '../src/RedisBudget'
import * as RedisRateLimiter from '../src/RedisRateLimiter'
import * as Schedule from '../src/Schedule'
import { command, describeWithCluster, type Failover, type RedisCluster } from './support/redis-cluster'
import { deepStrictEqual, ok, strictEqual } from './util'

/** The policies' bound on each Redis call, ms. */
const TIMEOUT = 100

/**
 * How much longer than {@link TIMEOUT} a call may take on a loaded machine (real time: the failover is real). A
 * call the timeout did not bound would wait for the failover, seconds.
 */
const SLACK = 900

/** Cluster clients and engines for a describe's tests, closed after them. */
const resources = (
  cluster: () => RedisCluster
): {
  readonly client: () => Cluster
  readonly engine: (options: Omit<BullMQ.EngineOptions, 'connection'>) => Durable.Engine
} => {
  const clients: Array<Cluster> = []
  const engines: Array<Durable.Engine> = []
  const client = (): Cluster => {
    const c = new Cluster([...cluster().startupNodes])
    c.on('error', () => undefined)
    clients.push(c)
    return c
  }
  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close({ deadline: 1_000 })))
    // QUIT, answered: a socket merely disconnected closes up to 2 s later, after the tests
    await Promise.all(clients.map((c) => (c.status === 'end' ? undefined : c.quit().catch(() => c.disconnect()))))
  }, 20_000)
  return {
    client,
    engine: (options) => {
      const e = BullMQ.make({ connection: client(), ...options })
      engines.push(e)
      return e
    }
  }
}

/** The tags of keys served by each master, one per test: each test fails another master over. */
const tagsOnEveryMaster = (cluster: () => RedisCluster): ReadonlyArray<string> => {
  const tags: Array<string> = []
  beforeAll(async () => {
    tags.push(...(await cluster().keysOnEveryMaster('tag')).map((key) => `{${key}}`))
  })
  return tags
}

describeWithCluster('a failover on a Redis Cluster', (cluster) => {
  const { client, engine } = resources(cluster)
  const tags = tagsOnEveryMaster(cluster)

  it('should keep the breaker, budget and rate limiter bounded, on their fallback, told, and recovered after the promotion', async () => {
    const tag = tags[0]
    const redis = client()
    const events: Array<Event.Event> = []
    const onEvent = (event: Event.Event): void => void events.push(event)
    const breaker = Breaker.consecutive({
      threshold: 1_000,
      halfOpenAfter: Schedule.constant(60_000),
      store: RedisBreaker.store({ redis, key: `${tag}:breaker` }),
      storeTimeout: TIMEOUT,
      onEvent
    })
    const budget = RedisBudget.retryThrottle({
      redis,
      key: `${tag}:budget`,
      maxTokens: 1_000,
      tokenRatio: 1,
      timeout: TIMEOUT,
      onEvent
    })
    const limiter = RedisRateLimiter.gcra({
      redis,
      key: `${tag}:rate`,
      rate: 1_000,
      per: 1_000,
      burst: 1_000,
      timeout: TIMEOUT,
      onEvent
    })
    const attempt = { latency: 1, now: 0, retries: 0, error: 'x', retrying: true }
    /** One call of each policy; resolves with the longest of them, ms. */
    const calls = async (): Promise<number> => {
      const timed = async (call: () => Promise<unknown>): Promise<number> => {
        const from = Date.now()
        await call()
        return Date.now() - from
      }
      const took = await Promise.all([
        timed(async () => {
          const permit = await breaker.enter()
          ok(permit !== undefined, 'the breaker refused a call')
          await permit.onFailure()
        }),
        timed(async () => ok(await budget.onFailure(attempt), 'the budget refused a retry')),
        timed(async () => ok(await limiter.take(), 'the limiter refused a call'))
      ])
      return Math.max(...took)
    }
    await calls()
    deepStrictEqual(events, [])
    let failover: Failover | undefined
    let failed = false
    const failing = cluster()
      .failover(tag)
      .then(
        (f) => (failover = f),
        (e) => ((failed = true), Promise.reject(e))
      )
    const during: Array<number> = []
    while (failover === undefined && !failed) during.push(await calls())
    await failing
    const longest = Math.max(...during)
    ok(longest <= TIMEOUT + SLACK, `a call took ${longest} ms during the failover`)
    const unavailable = events.filter((e) => e._tag === 'ServiceUnavailable').map((e) => e.source)
    deepStrictEqual([...unavailable].sort(), ['breaker', 'budget', 'rateLimit'])
    // the promoted replica answers: each policy recovers, its store's state is the fleet's again
    const from = Date.now()
    while (events.filter((e) => e._tag === 'ServiceRecovered').length < 3) {
      ok(Date.now() - from < 10_000, 'no recovery 10 s after the promotion')
      await calls()
    }
    deepStrictEqual(events.map((e) => `${e._tag} ${e.source}`).sort(), [
      'ServiceRecovered breaker',
      'ServiceRecovered budget',
      'ServiceRecovered rateLimit',
      'ServiceUnavailable breaker',
      'ServiceUnavailable budget',
      'ServiceUnavailable rateLimit'
    ])
    assert.ok(failover !== undefined)
    // eslint-disable-next-line no-console
    console.log(`failover of ${tag}: ${failover.took} ms, ${during.length} rounds of calls, the longest ${longest} ms`)
  }, 60_000)

  it('should retry a durable run no earlier than due across a failover', async () => {
    const tag = tags[1]
    const errors: Array<unknown> = []
    const onError = ({ error }: Durable.WorkerError): void => void errors.push(error)
    const e = engine({ prefix: tag, onError })
    const DELAY = 3_000
    const attempts: Array<number> = []
    let done: (reason: string) => void = () => undefined
    const ended = new Promise<string>((resolve) => (done = resolve))
    const retried = Durable.define({
      name: 'retried',
      schedule: Schedule.intersect(Schedule.recurs(1))(Schedule.constant(DELAY)),
      payload: t.null,
      action: () => async () => {
        attempts.push(Date.now())
        return attempts.length === 1 ? E.left('first') : E.right('second')
      }
    })
    await e.work(retried, { onDone: ({ reason }) => done(reason), onError })
    await e.submit(retried, 'across', null)
    while (attempts.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    // the retry is due during the failover or just after it
    await cluster().failover(tag)
    deepStrictEqual(await ended, 'succeeded')
    strictEqual(attempts.length, 2)
    const after = attempts[1] - attempts[0]
    ok(after >= DELAY, `the retry came ${after} ms after the attempt, due ${DELAY} ms after`)
    // eslint-disable-next-line no-console
    console.log(`a retry due ${DELAY} ms after its attempt, across a failover: made ${after} ms after`)
  }, 60_000)
})

/** Runs submitted but never worked: they wait in their queue, where a test counts them. */
const waiting = Durable.define({
  name: 'waiting',
  schedule: Schedule.recurs(0),
  payload: t.number,
  action: () => TE.right(0)
})

/**
 * Submits `runs` runs of {@link waiting} on `engine`, 20 at a time, and kills the master of `tag` the moment the
 * last submit has settled, then waits for its replica to take over. With `cutOff`, the replica is cut off first: paused
 * (SIGSTOP) and its link closed by the master (`CLIENT KILL TYPE replica`), as a replica behind a network partition
 * or far behind; it resumes right after the kill, and is promoted without what it missed. Answers the ids
 * acknowledged (`submit` resolved), those lost (not in the queue after the promotion), and the submits' errors.
 */
const submitThroughFailover = async (
  cluster: RedisCluster,
  engine: Durable.Engine,
  tag: string,
  runs: number,
  cutOff: boolean
): Promise<{
  readonly acknowledged: ReadonlyArray<string>
  readonly lost: ReadonlyArray<string>
  readonly errors: ReadonlyArray<unknown>
}> => {
  const acknowledged: Array<string> = []
  const errors: Array<unknown> = []
  let kill: () => void = () => undefined
  const killed = new Promise<void>((resolve) => (kill = resolve))
  const failover = cluster.failover(tag, killed)
  const replica = await cluster.replicaOf(tag)
  if (cutOff) {
    process.kill(replica.pid, 'SIGSTOP')
    await command((await cluster.masterOf(tag)).port, 'CLIENT', 'KILL', 'TYPE', 'replica')
  }
  try {
    let next = 0
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < runs) {
          const id = `run-${next++}`
          try {
            await engine.submit(waiting, id, 0)
            acknowledged.push(id)
          } catch (e) {
            // not acknowledged: the run may or may not be kept, and is not counted
            errors.push(e)
          }
        }
      })
    )
    kill()
    // the master is killed in the continuation of `killed`, before this turn of the event loop ends
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    if (cutOff) process.kill(replica.pid, 'SIGCONT')
  }
  await failover
  // the client learns the new master on its first failures: ask until it answers
  for (;;) {
    try {
      const { pending } = await engine.pending(waiting)
      const kept = new Set(pending)
      return { acknowledged, lost: acknowledged.filter((id) => !kept.has(id)), errors }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

describeWithCluster('what a failover loses of the runs submit acknowledged', (cluster) => {
  const { engine } = resources(cluster)
  const tags = tagsOnEveryMaster(cluster)
  const report = (
    what: string,
    { acknowledged, lost }: { acknowledged: ReadonlyArray<string>; lost: ReadonlyArray<string> }
  ) =>
    // eslint-disable-next-line no-console
    console.log(`${what}: ${lost.length} of ${acknowledged.length} acknowledged runs lost in the failover`)

  it('should measure the loss without waitForReplicas, the master killed right after the acknowledgements', async () => {
    const tag = tags[0]
    const measured = await submitThroughFailover(
      cluster(),
      engine({ prefix: tag, onError: () => undefined }),
      tag,
      1_000,
      false
    )
    report('no WAIT, replica in sync', measured)
    deepStrictEqual(measured.errors, [])
  }, 60_000)

  it('should lose the runs acknowledged while the replica was cut off, without waitForReplicas', async () => {
    const tag = tags[1]
    const measured = await submitThroughFailover(
      cluster(),
      engine({ prefix: tag, onError: () => undefined }),
      tag,
      100,
      true
    )
    report('no WAIT, replica cut off', measured)
    deepStrictEqual([measured.acknowledged.length, measured.lost.length, measured.errors], [100, 100, []])
  }, 60_000)

  it('should acknowledge no run while the replica is cut off, with waitForReplicas: nothing acknowledged is lost', async () => {
    const tag = tags[2]
    const e = engine({ prefix: tag, waitForReplicas: { replicas: 1, timeout: 200 }, onError: () => undefined })
    const measured = await submitThroughFailover(cluster(), e, tag, 20, true)
    report('WAIT, replica cut off', measured)
    deepStrictEqual([measured.acknowledged, measured.lost], [[], []])
    strictEqual(measured.errors.length, 20)
    for (const error of measured.errors) ok(error instanceof BullMQ.NotReplicatedError, String(error))
    // the promoted replica has no replica of its own (its master is dead): nothing is acknowledged until one joins
    await assert.rejects(e.submit(waiting, 'after', 0), BullMQ.NotReplicatedError)
  }, 60_000)
})
