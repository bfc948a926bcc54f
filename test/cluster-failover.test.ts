/**
 * One failover on a real Redis Cluster (3 masters, 3 replicas, started by the test): the master that serves one hash
 * tag killed by pid, its replica promoted. Everything the file asserts runs on that master through that one failover
 * (started once, in `beforeAll`; the tests read what it measured): the shared policies stay bounded and fall back,
 * then recover; a durable run on BullMQ retries no earlier than due and no later than the failover allows; and what
 * a failover loses of the runs `submit` acknowledged, replica in sync, replica cut off, and with `waitForReplicas`.
 *
 * The order: the durable run's first attempt (its retry stored and replicated, due 4 s later); 1,000 submits, replica
 * in sync; the replica cut off right after their last acknowledgement (paused with SIGSTOP, its link closed by the
 * master: a partition, or a replica far behind), which leaves it with what a kill at that moment would; 100 submits
 * without and 20 with `waitForReplicas`; the kill, the replica resumed and promoted without what it missed.
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
import { command, describeWithCluster, type ClusterNode, type Failover } from './support/redis-cluster'
import { deepStrictEqual, ok, strictEqual } from './util'

/** The policies' bound on each Redis call, ms. */
const TIMEOUT = 100

/**
 * How much longer than {@link TIMEOUT} a call may take on a loaded machine (real time: the failover is real). A
 * call the timeout did not bound would wait for the failover, seconds.
 */
const SLACK = 900

/** The durable run's retry is due this long after its first attempt, ms: during the failover. */
const DELAY = 4_000

/**
 * How late the retry may start after the later of its due time and the end of the failover, ms: the engine's wake-up
 * tries every 100 ms, and the rest is a loaded machine's. Without the wake-up, BullMQ's worker blocked 10 s more.
 */
const AFTER_FAILOVER = 1_000

/** Runs submitted but never worked: they wait in their queue, where a test counts them. */
const waiting = (name: string): Durable.Definition<number, unknown, number> =>
  Durable.define({ name, schedule: Schedule.recurs(0), payload: t.number, action: () => TE.right(0) })

const inSync = waiting('in-sync')
const cutOff = waiting('cut-off')
const guarded = waiting('guarded')

/** What one batch of submits came to: the ids acknowledged (`submit` resolved), those lost, and the errors. */
interface Loss {
  readonly acknowledged: ReadonlyArray<string>
  readonly lost: ReadonlyArray<string>
  readonly errors: ReadonlyArray<unknown>
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once `check()` answers true, checked every 10 ms, within 10 s. */
const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  const deadline = Date.now() + 10_000
  while (!(await check())) {
    ok(Date.now() < deadline, `timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** `promise`, or a failure naming `what` after `ms`: a wait of the scenario that does not end fails, not hangs. */
const within = <A>(what: string, ms: number, promise: Promise<A>): Promise<A> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms).unref())
  ])

/** Submits `runs` runs of `def`, 20 at a time; the ids acknowledged, and the errors. */
const submitAll = async (
  engine: Durable.Engine,
  def: Durable.Definition<number, unknown, number>,
  runs: number
): Promise<{ acknowledged: Array<string>; errors: Array<unknown> }> => {
  const acknowledged: Array<string> = []
  const errors: Array<unknown> = []
  let next = 0
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < runs) {
        const id = `run-${next++}`
        try {
          await engine.submit(def, id, 0)
          acknowledged.push(id)
        } catch (e) {
          // not acknowledged: the run may or may not be kept, and is not counted
          errors.push(e)
        }
      }
    })
  )
  return { acknowledged, errors }
}

/** The replication offset `node` has processed (a replica's), or sent (a master's). */
const offsetOf = async (node: ClusterNode): Promise<number> => {
  const role = (await command(node.port, 'ROLE')) as ReadonlyArray<unknown>
  return Number(role[0] === 'master' ? role[1] : role[4])
}

describeWithCluster('a failover on a Redis Cluster', (cluster) => {
  const clients: Array<Cluster> = []
  const engines: Array<Durable.Engine> = []
  const client = (): Cluster => {
    const c = new Cluster([...cluster().startupNodes])
    c.on('error', () => undefined)
    clients.push(c)
    return c
  }
  const engine = (options: Omit<BullMQ.EngineOptions, 'connection'>): Durable.Engine => {
    const e = BullMQ.make({ connection: client(), ...options })
    engines.push(e)
    return e
  }
  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close({ deadline: 1_000 })))
    // QUIT, answered: a socket merely disconnected closes up to 2 s later, after the tests
    await Promise.all(clients.map((c) => (c.status === 'end' ? undefined : c.quit().catch(() => c.disconnect()))))
  }, 20_000)

  /** What the failover did, and what each part measured through it. */
  let failover: Failover
  let tag: string
  const policies = {
    before: [] as ReadonlyArray<Event.Event>,
    events: [] as Array<Event.Event>,
    during: [] as Array<number>,
    recovered: false
  }
  const durable = { attempts: [] as Array<number>, reason: '', failedOverAt: 0 }
  const loss: { inSync?: Loss; cutOff?: Loss; guarded?: Loss; after?: unknown } = {}

  beforeAll(async () => {
    tag = `{${(await cluster().keysOnEveryMaster('tag'))[0]}}`
    const master = await cluster().masterOf(tag)
    const replica = await cluster().replicaOf(tag)

    // the shared policies, one call each per round
    const redis = client()
    const onEvent = (event: Event.Event): void => void policies.events.push(event)
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
    policies.before = [...policies.events]

    // the durable run: its first attempt fails, its retry is due DELAY later
    const d = engine({ prefix: tag, onError: () => undefined })
    let done: (reason: string) => void = () => undefined
    const ended = new Promise<string>((resolve) => (done = resolve))
    const retried = Durable.define({
      name: 'retried',
      schedule: Schedule.intersect(Schedule.recurs(1))(Schedule.constant(DELAY)),
      payload: t.null,
      action: () => async () => {
        durable.attempts.push(Date.now())
        return durable.attempts.length === 1 ? E.left('first') : E.right('second')
      }
    })
    await d.work(retried, { onDone: ({ reason }) => done(reason), onError: () => undefined })
    await d.submit(retried, 'across', null)
    // the retry stored and delayed, the marker that tells its due time taken by the waiting worker (BullMQ's keys),
    // and all of it on the replica: the promoted replica has no marker left to wake the worker
    await until('the retry to be delayed and its marker taken', async () => {
      const [delayed, marker] = await Promise.all([
        command(master.port, 'ZCARD', `${tag}:retried:delayed`),
        command(master.port, 'EXISTS', `${tag}:retried:marker`)
      ])
      return delayed === 1 && marker === 0
    })
    const written = await offsetOf(master)
    await until('the replica to have the retry', async () => (await offsetOf(replica)) >= written)

    // 1,000 runs acknowledged with the replica in sync; then the replica cut off at once
    const plain = engine({ prefix: tag, onError: () => undefined })
    const wait = engine({ prefix: tag, waitForReplicas: { replicas: 1, timeout: 50 }, onError: () => undefined })
    const synced = await submitAll(plain, inSync, 1_000)
    process.kill(replica.pid, 'SIGSTOP')
    let killed: () => void = () => undefined
    const failing = cluster().failover(tag, new Promise<void>((resolve) => (killed = resolve)))
    try {
      await command(master.port, 'CLIENT', 'KILL', 'TYPE', 'replica')
      const unreplicated = await submitAll(plain, cutOff, 100)
      const refused = await submitAll(wait, guarded, 20)
      // the retry must be due after the kill: its attempt is made on the promoted replica, not lost with the master
      ok(Date.now() < durable.attempts[0] + DELAY - 500, `the submits took too long: the retry is due before the kill`)
      killed()
      // the master is killed in the continuation of `killed`, before this turn of the event loop ends
      await new Promise((resolve) => setImmediate(resolve))
      Object.assign(loss, { synced, unreplicated, refused })
    } finally {
      process.kill(replica.pid, 'SIGCONT')
    }
    // the policies, called round after round through the failover
    let over = false
    let failed = false
    const finished = failing.then(
      (f) => {
        durable.failedOverAt = Date.now()
        over = true
        failover = f
      },
      (e) => ((failed = true), Promise.reject(e))
    )
    while (!over && !failed) policies.during.push(await calls())
    await finished
    // the promoted replica answers: each policy recovers, its store's state is the fleet's again
    const from = Date.now()
    while (policies.events.filter((e) => e._tag === 'ServiceRecovered').length < 3 && Date.now() - from < 10_000)
      await calls()

    // what the promoted replica kept of each batch: the client learns the new master on its first failures
    const lostOf = async (
      def: Durable.Definition<number, unknown, number>,
      batch: { acknowledged: Array<string>; errors: Array<unknown> }
    ): Promise<Loss> => {
      for (const from = Date.now(); ; ) {
        try {
          const kept = new Set((await plain.pending(def)).pending)
          return { ...batch, lost: batch.acknowledged.filter((id) => !kept.has(id)) }
        } catch (e) {
          if (Date.now() - from > 10_000) throw e
          await sleep(100)
        }
      }
    }
    const batches = loss as unknown as Record<'synced' | 'unreplicated' | 'refused', Parameters<typeof lostOf>[1]>
    loss.inSync = await lostOf(inSync, batches.synced)
    loss.cutOff = await lostOf(cutOff, batches.unreplicated)
    loss.guarded = await lostOf(guarded, batches.refused)
    // the promoted replica has no replica of its own (its master is dead): nothing is acknowledged until one joins
    loss.after = await wait.submit(guarded, 'after', 0).then(
      () => undefined,
      (e: unknown) => e
    )
    durable.reason = await within('the durable run to end', 15_000, ended)
  }, 60_000)

  it('should keep the breaker, budget and rate limiter bounded, on their fallback, told, and recovered after the promotion', () => {
    deepStrictEqual(policies.before, [])
    const longest = Math.max(...policies.during)
    ok(longest <= TIMEOUT + SLACK, `a call took ${longest} ms during the failover`)
    deepStrictEqual(policies.events.map((e) => `${e._tag} ${e.source}`).sort(), [
      'ServiceRecovered breaker',
      'ServiceRecovered budget',
      'ServiceRecovered rateLimit',
      'ServiceUnavailable breaker',
      'ServiceUnavailable budget',
      'ServiceUnavailable rateLimit'
    ])
    // eslint-disable-next-line no-console
    console.log(
      `failover of ${tag}: ${failover.took} ms, ${policies.during.length} rounds of calls, the longest ${longest} ms`
    )
  })

  it('should retry a durable run no earlier than due, and no later than the failover makes it', () => {
    deepStrictEqual(durable.reason, 'succeeded')
    strictEqual(durable.attempts.length, 2)
    const [first, second] = durable.attempts
    const due = first + DELAY
    ok(second >= due, `the retry came ${second - first} ms after the attempt, due ${DELAY} ms after`)
    // late by the failover (when it ends after the due time), not by a wait of BullMQ's after it
    const bound = Math.max(due, durable.failedOverAt) + AFTER_FAILOVER
    ok(
      second <= bound,
      `the retry came ${second - due} ms after its due time, ${second - durable.failedOverAt} ms after the ` +
        `failover (${failover.took} ms) ended, more than ${AFTER_FAILOVER} ms after the later of the two`
    )
    // eslint-disable-next-line no-console
    console.log(
      `a retry due ${DELAY} ms after its attempt, across a failover of ${failover.took} ms that ended ` +
        `${durable.failedOverAt - due} ms after the due time: made ${second - first} ms after its attempt, ` +
        `${second - due} ms late`
    )
  })

  const report = (what: string, { acknowledged, lost }: Loss): void =>
    // eslint-disable-next-line no-console
    console.log(`${what}: ${lost.length} of ${acknowledged.length} acknowledged runs lost in the failover`)

  it('should measure the loss without waitForReplicas, the replica in sync until right after the acknowledgements', () => {
    assert.ok(loss.inSync !== undefined)
    report('no WAIT, replica in sync', loss.inSync)
    deepStrictEqual([loss.inSync.acknowledged.length, loss.inSync.errors], [1_000, []])
  })

  it('should lose the runs acknowledged while the replica was cut off, without waitForReplicas', () => {
    assert.ok(loss.cutOff !== undefined)
    report('no WAIT, replica cut off', loss.cutOff)
    deepStrictEqual([loss.cutOff.acknowledged.length, loss.cutOff.lost.length, loss.cutOff.errors], [100, 100, []])
  })

  it('should acknowledge no run while the replica is cut off, with waitForReplicas: nothing acknowledged is lost', () => {
    assert.ok(loss.guarded !== undefined)
    report('WAIT, replica cut off', loss.guarded)
    deepStrictEqual([loss.guarded.acknowledged, loss.guarded.lost], [[], []])
    strictEqual(loss.guarded.errors.length, 20)
    for (const error of loss.guarded.errors) ok(error instanceof BullMQ.NotReplicatedError, String(error))
    ok(loss.after instanceof BullMQ.NotReplicatedError, String(loss.after))
  })
})
