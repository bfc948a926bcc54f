import * as assert from 'assert'
import { DelayedError, Queue, Worker } from 'bullmq'
import { getEventListeners } from 'events'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as t from 'io-ts'
import Redis from 'ioredis'
import * as os from 'os'
import * as path from 'path'
import * as BullMQ from '../src/BullMQ'
import * as Durable from '../src/Durable'
import * as FileEngine from '../src/FileEngine'
import * as Driver from '../src/Driver'
import * as RetryState from '../src/RetryState'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import * as S from './support/durable'
import { killChildren, startChild } from './support/fleet'
import { describeWithRedis } from './support/redis'
import { drive, waitUntil } from './support/wait'
import { deepStrictEqual, throwsRangeError, throwsTypeError } from './util'

/** Polls `done` until it holds: no time limit of its own (issue 33: 10 s of real time), jest's timeout bounds it. */
const until = (what: string, done: () => Promise<boolean>): Promise<void> => waitUntil(done, { what })

const deferred = <A>(): { promise: Promise<A>; resolve: (a: A) => void } => {
  let resolve: (a: A) => void = () => undefined
  const promise = new Promise<A>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * A job in memory, as `BullMQ.processor` sees one: a fresh run of `id` (payload `null`); `stored()` is its data as
 * `updateData` last wrote it (after `beforeWrite`, which may wait or throw), `delayed` the times given to
 * `moveToDelayed`.
 */
const memoryJob = (
  id: string,
  beforeWrite: () => Promise<void> = () => Promise.resolve()
): { readonly job: BullMQ.JobLike; readonly stored: () => Durable.StoredRun; readonly delayed: Array<number> } => {
  let data: Durable.StoredRun = { id, payload: null, retry: null, outcome: null }
  const delayed: Array<number> = []
  const job: BullMQ.JobLike = {
    id,
    get data() {
      return data
    },
    updateData: async (d) => {
      await beforeWrite()
      data = d
    },
    moveToDelayed: async (at) => void delayed.push(at)
  }
  return { job, stored: () => data, delayed }
}

/**
 * The engines' `onError` in these tests: the test servers run without persistence (the house rule for a test's
 * server), so every engine warns of it once (`RedisSettingsWarning`, tested on its own below); any other error is
 * rethrown, and so reported as a process warning that a passing run must not print.
 */
const expectedWarnings = ({ error }: Durable.WorkerError): void => {
  if (!(error instanceof BullMQ.RedisSettingsWarning)) throw error
}

describe('BullMQ (no server needed)', () => {
  it('should check the options of engine, naming the bad one', () => {
    assert.throws(
      () => BullMQ.make({ connection: null as never }),
      /BullMQ\.make: options\.connection must be \{ host, port \} or an ioredis instance, received null/
    )
    assert.throws(
      () => BullMQ.make({ connection: { host: 'h', port: 1 }, prefix: '' }),
      /BullMQ\.make: options\.prefix must be a non-empty string/
    )
    assert.throws(
      () => BullMQ.make({ connection: { host: 'h', port: 1 }, lockDuration: 0 }),
      /BullMQ\.make: options\.lockDuration must be a finite number >= 1, received 0/
    )
    assert.throws(() => BullMQ.jobId(''), /BullMQ\.jobId: id must be a non-empty string, received ""/)
    const replicas = (waitForReplicas: unknown, timeout?: number) => () =>
      BullMQ.make({ connection: { host: 'h', port: 1 }, waitForReplicas: waitForReplicas as never, timeout })
    throwsTypeError(replicas(1), /options\.waitForReplicas must be an object, received 1/)
    throwsRangeError(
      replicas({ replicas: 0, timeout: 10 }),
      /options\.waitForReplicas\.replicas must be a whole number >= 1, received 0/
    )
    // WAIT 0 would wait without end
    throwsRangeError(
      replicas({ replicas: 1, timeout: 0 }),
      /options\.waitForReplicas\.timeout must be a finite number >= 1, received 0/
    )
    throwsRangeError(
      replicas({ replicas: 1, timeout: 5_000 }),
      /options\.waitForReplicas\.timeout must be less than options\.timeout \(5000 ms\), which bounds the whole submit, received 5000/
    )
    replicas({ replicas: 1, timeout: 5_000 }, 5_001)()
  })

  it('should map ids to job ids BullMQ accepts', () => {
    deepStrictEqual(['order-17', 'user:7', '42', '%'].map(BullMQ.jobId), ['order-17', 'user%3A7', '%i42', '%25'])
  })

  // Regression (issue 18, defect 1, on BullMQ): an updateData that failed failed the delivery, and BullMQ delivered
  // the job again a second later: the attempt ran again, early, and a success ran twice.
  it('processor should retry a failing updateData on writeRetry, never the attempt', async () => {
    for (const succeed of [false, true]) {
      const clock = TestClock.make(0)
      const attempts: Array<number> = []
      const def = Durable.define({
        name: 'w',
        schedule: Schedule.exponential(3_600_000),
        payload: t.null,
        action: () => () => {
          attempts.push(clock.now())
          return Promise.resolve(succeed ? E.right('ok') : E.left('down'))
        }
      })
      const errors: Array<string> = []
      const done: Array<string> = []
      const process = BullMQ.processor(def, {
        clock,
        writeRetry: Schedule.constant(250),
        onError: ({ error: e }) => void errors.push((e as Error).message),
        onDone: ({ result }) => void done.push(JSON.stringify(result))
      })
      let writes = 0
      const { job, stored, delayed } = memoryJob('w-1', async () => {
        if (++writes <= 2) throw new Error(`Connection is closed (${writes})`)
      })
      const delivered = drive(
        clock,
        process(job, 'token').then(
          (value) => ({ value }),
          (error: unknown) => ({ error })
        )
      )
      const end = await delivered
      deepStrictEqual(attempts, [0])
      deepStrictEqual(errors, ['Connection is closed (1)', 'Connection is closed (2)'])
      deepStrictEqual(clock.sleeps, [250, 250])
      if (succeed) {
        deepStrictEqual(done, ['{"_tag":"Right","right":"ok"}'])
        assert.ok('value' in end && stored().outcome === end.value)
      } else {
        assert.ok('error' in end && end.error instanceof DelayedError)
        deepStrictEqual(delayed, [3_600_000])
        assert.ok(stored().retry !== null)
      }
    }
  })

  it('processor should make a retry due once its state is stored at once, after that state; delay it when not due or when the worker closes', async () => {
    // the delay, how long each write takes, and whether the worker closes as the first retry is decided: due at
    // once (no delay), due by the time the write ends, not due yet, due at once but the worker closes
    const cases = [
      { delay: 0, write: 0, closes: false, atOnce: true },
      { delay: 10, write: 25, closes: false, atOnce: true },
      { delay: 10, write: 5, closes: false, atOnce: false },
      { delay: 0, write: 0, closes: true, atOnce: false }
    ]
    for (const { delay, write, closes, atOnce } of cases) {
      const clock = TestClock.make(1_000)
      // each attempt: when it started, and the retry state stored when it started (null before the first failure)
      const attempts: Array<[number, number | null]> = []
      const { job, stored, delayed } = memoryJob('n-1', async () => {
        if (write > 0) await clock.sleep(write)
      })
      const storedIterNumber = (): number | null => {
        const retry = stored().retry as { readonly iterNumber: number } | null
        return retry === null ? null : retry.iterNumber
      }
      const def = Durable.define({
        name: 'n',
        schedule: pipe(Schedule.constant(delay), Schedule.intersect(Schedule.recurs(2))),
        payload: t.null,
        action: () => () => {
          attempts.push([clock.now(), storedIterNumber()])
          return Promise.resolve(attempts.length < 3 ? E.left('503') : E.right('200'))
        }
      })
      const retried: Array<number> = []
      const shutdown = new AbortController()
      const process = BullMQ.processor(def, {
        clock,
        signal: shutdown.signal,
        onRetry: ({ delay: d }) => {
          retried.push(d)
          if (closes) shutdown.abort()
        }
      })
      const end = await drive(
        clock,
        process(job, 'token').then(
          (value) => ({ value }),
          (error: unknown) => ({ error })
        )
      )
      if (atOnce) {
        // one delivery: each retry after its state was stored and once due, none delayed
        assert.ok('value' in end)
        deepStrictEqual(attempts, [
          [1_000, null],
          [1_000 + write, 1],
          [1_000 + 2 * write, 2]
        ])
        deepStrictEqual(retried, [delay, delay])
      } else {
        // not due yet, or the worker closes: delayed (here through moveToDelayed: the job names no backoff) until
        // the retry is due, no second attempt
        assert.ok('error' in end && end.error instanceof DelayedError)
        deepStrictEqual([attempts, delayed], [[[1_000, null]], [1_000 + delay]])
      }
      deepStrictEqual(delayed.length, atOnce ? 0 : 1)
    }
  })

  it("processor should abort an attempt with BullMQ's signal for its job or the worker's, and leave no listener on either", async () => {
    const cases = [
      { aborts: 'job', worker: false },
      { aborts: 'job', worker: true },
      { aborts: 'worker', worker: true },
      { aborts: 'none', worker: true },
      { aborts: 'none', worker: false }
    ] as const
    for (const { aborts, worker } of cases) {
      const started = deferred<void>()
      const def = Durable.define({
        name: 'a',
        schedule: Schedule.recurs(1),
        payload: t.null,
        action: (_, run) => () =>
          new Promise<E.Either<string, string>>((resolve) => {
            started.resolve()
            if (aborts === 'none') resolve(E.right('ok'))
            else run.signal.addEventListener('abort', () => resolve(E.left('aborted')), { once: true })
          })
      })
      const shutdown = new AbortController()
      const bull = new AbortController()
      const process = BullMQ.processor(def, worker ? { signal: shutdown.signal } : {})
      const { job, stored, delayed } = memoryJob('a-1')
      const delivery = process(job, 'token', bull.signal).then(
        (value) => ({ value }),
        (error: unknown) => ({ error })
      )
      await started.promise
      if (aborts === 'job') bull.abort()
      if (aborts === 'worker') shutdown.abort()
      const end = await delivery
      const what = `${aborts} aborts, worker signal: ${worker}`
      if (aborts === 'none') assert.ok('value' in end, what)
      else {
        // abandoned: due at once, as stored, no retry recorded
        assert.ok('error' in end && end.error instanceof DelayedError, what)
        deepStrictEqual([delayed.length, stored().retry], [1, null])
      }
      deepStrictEqual(
        [getEventListeners(bull.signal, 'abort').length, getEventListeners(shutdown.signal, 'abort').length],
        [0, 0]
      )
    }
  })
})

// One server for the file: each test has keys of its own (a prefix each); the faults make servers of their own.
describeWithRedis('BullMQ on a real Redis', (server) => {
  describe('the engine', () => {
    let n = 0
    /** A fresh key prefix per test: tests share the server, never a queue. */
    const prefix = (): string => `t${++n}`
    const engines: Array<Durable.Engine> = []
    const closers: Array<() => Promise<unknown>> = []
    const engine = (p: string, extra: Partial<BullMQ.EngineOptions> = {}): Durable.Engine => {
      const e = BullMQ.make({
        connection: { host: server().host, port: server().port },
        prefix: p,
        lockDuration: 800,
        stalledInterval: 300,
        onError: expectedWarnings,
        ...extra
      })
      engines.push(e)
      return e
    }
    const queue = (p: string, name: string): Queue => {
      const q = new Queue(name, { connection: { host: server().host, port: server().port }, prefix: p })
      closers.push(() => q.close())
      return q
    }
    const dirs: Array<string> = []

    afterEach(async () => {
      await Promise.all(engines.splice(0).map((e) => e.close()))
      await Promise.all(closers.splice(0).map((close) => close()))
      await killChildren()
      for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
    })

    it('should make, for the same definition seeded, the attempts and delays FileEngine.make makes', async () => {
      const failures = [0, 1, 2, 3, -1, 4, 2, 1, 0, -1]
      const ids = failures.map((k, i) => `job:${i}/${k}`)
      const run = async (e: Durable.Engine): Promise<S.Record> => {
        const record = S.newRecord()
        const def = S.definition('same', record)
        const all = S.allDone(ids.length)
        await e.work(def, S.workOptions(record, all.then))
        await Promise.all(ids.map((id, i) => e.submit(def, id, { failures: failures[i] })))
        await all.done
        return record
      }
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-bullmq-'))
      dirs.push(dir)
      const file = FileEngine.make({ dir })
      engines.push(file)
      const [onFiles, onBullMQ] = await Promise.all([run(file), run(engine(prefix()))])
      for (const [i, id] of ids.entries()) {
        const seen = (r: S.Record) => (r.attempts.get(id) ?? []).map((a) => [a.n, a.previousDelay])
        deepStrictEqual(seen(onBullMQ), seen(onFiles))
        deepStrictEqual(
          seen(onBullMQ),
          S.expected(id, failures[i]).previousDelays.map((d, j) => [j + 1, d])
        )
        deepStrictEqual(onBullMQ.done.get(id), onFiles.done.get(id))
        deepStrictEqual(onBullMQ.done.get(id), [S.expected(id, failures[i]).done])
        const attempts = onBullMQ.attempts.get(id) ?? []
        for (let j = 1; j < attempts.length; j++) {
          assert.ok(
            attempts[j].start - attempts[j - 1].end >= (attempts[j].previousDelay ?? 0),
            `${id}: attempt ${j + 1} early`
          )
        }
      }
    }, 30_000)

    it('should start no second run for an id that is pending or done, on an ioredis connection too', async () => {
      const redis = new Redis({ host: server().host, port: server().port, maxRetriesPerRequest: null })
      closers.push(() => redis.quit())
      const e = engine(prefix(), { connection: redis })
      const record = S.newRecord()
      const def = S.definition('idem', record)
      await e.submit(def, '42', { failures: 1 })
      await e.submit(def, '42', { failures: -1 })
      const first = deferred<void>()
      const second = deferred<void>()
      await e.work(
        def,
        S.workOptions(record, (id) => (id === '42' ? first.resolve() : second.resolve()))
      )
      await first.promise
      await e.submit(def, '42', { failures: 0 })
      await e.submit(def, 'user:7', { failures: 0 })
      await second.promise
      deepStrictEqual(record.done.get('42'), [{ result: 'ok 2', iterNumber: 1, reason: 'succeeded' }])
      deepStrictEqual(record.done.get('user:7'), [{ result: 'ok 1', iterNumber: 0, reason: 'succeeded' }])
    })

    const slowRetry = (name: string, starts: Array<number>, ends: Array<number>) =>
      Durable.define({
        name,
        schedule: Schedule.fromDelays([300]),
        payload: t.null,
        action: () => async () => {
          starts.push(Date.now())
          ends.push(Date.now())
          return starts.length === 1 ? E.left('first fails') : E.right('second succeeds')
        }
      })

    it('should delay again, without an attempt, a job promoted before its dueAt', async () => {
      const p = prefix()
      const e = engine(p)
      const starts: Array<number> = []
      const ends: Array<number> = []
      const def = slowRetry('promoted', starts, ends)
      const q = queue(p, 'promoted')
      const done = deferred<void>()
      await e.work(def, {
        concurrency: 4,
        onRetry: ({ id }) => {
          // once the job is delayed (the hook runs just before), promote it at once, as an operator's click would
          void q.getJob(BullMQ.jobId(id)).then(async (job) => {
            while ((await job?.getState()) !== 'delayed') await new Promise((resolve) => setTimeout(resolve, 2))
            await job?.promote()
          })
        },
        onDone: () => done.resolve()
      })
      await e.submit(def, 'p', null)
      await done.promise
      deepStrictEqual(starts.length, 2)
      assert.ok(starts[1] - ends[0] >= 300, `retried after ${starts[1] - ends[0]} ms`)
    })

    // what a worker killed between updateData and the delay leaves: the new state, the job waiting
    it.each([
      ["added by submit (delayed through BullMQ's failure path)", true],
      ['added by hand (delayed with moveToDelayed)', false]
    ])('should not retry early a job whose state was stored and the job not delayed: %s', async (_, bySubmit) => {
      const p = prefix()
      const starts: Array<number> = []
      const def = slowRetry('crashed', starts, [])
      const driver = Driver.make(def.schedule, { start: Date.now() })
      driver.advance('first fails', Date.now())
      const state = driver.snapshot()
      const data = { id: 'c', payload: null, retry: RetryState.RetryStateCodec.encode(state), outcome: null }
      const q = queue(p, 'crashed')
      if (bySubmit) {
        // the options of submit, with the stored state in the data
        let options: BullMQ.JobOptions | undefined
        await BullMQ.submit({ add: async (_name, _data, o) => void (options = o) }, def, 'c', null)
        await q.add('crashed', data, options)
      } else {
        await q.add('crashed', data, { jobId: 'c' })
      }
      const done = deferred<void>()
      await engine(p).work(def, { onDone: () => done.resolve() })
      await done.promise
      deepStrictEqual(starts.length, 1)
      assert.ok(starts[0] >= state.dueAt, `attempted ${state.dueAt - starts[0]} ms early`)
    })

    it('should end jobs it cannot go on with through onDone with a typed error, and go on with the others', async () => {
      const p = prefix()
      const record = S.newRecord()
      const def = S.definition('bad', record)
      const q = queue(p, 'bad')
      const other = RetryState.RetryStateCodec.encode(RetryState.start(Schedule.recurs(9), 0))
      const jobs: ReadonlyArray<[string, unknown]> = [
        ['corrupt', { id: 'corrupt', payload: { failures: 0 }, retry: { schedule: 5 }, outcome: null }],
        ['mismatch', { id: 'mismatch', payload: { failures: 0 }, retry: other, outcome: null }],
        ['payload', { id: 'payload', payload: { failures: 'zero' }, retry: null, outcome: null }],
        ['not-a-run', 'just a string'],
        ['good', { id: 'good', payload: { failures: 0 }, retry: null, outcome: null }]
      ]
      for (const [id, data] of jobs) await q.add('bad', data, { jobId: id })
      const seen = new Map<string, unknown>()
      const all = S.allDone(jobs.length)
      await engine(p).work(def, {
        onDone: ({ id, result, reason }) => {
          seen.set(
            id,
            E.isLeft(result) ? [typeof result.left === 'string' ? result.left : result.left._tag, reason] : result.right
          )
          all.then(id)
        }
      })
      await all.done
      deepStrictEqual(Object.fromEntries(seen), {
        corrupt: ['CorruptRun', 'failed'],
        mismatch: ['ScheduleMismatch', 'failed'],
        payload: ['PayloadInvalid', 'failed'],
        'not-a-run': ['CorruptRun', 'failed'],
        good: 'ok 1'
      })
      deepStrictEqual([...record.attempts.keys()], ['good'])
      // onDone comes before the job completes: wait until the last one has
      await until('every job to complete', async () => (await q.getJobCounts('completed')).completed === jobs.length)
      deepStrictEqual(await q.getJobCounts('completed', 'failed', 'delayed', 'wait', 'active'), {
        completed: 5,
        failed: 0,
        delayed: 0,
        wait: 0,
        active: 0
      })
    })

    it('killed with SIGKILL after onDone and before the job completes, should repeat onDone with the same outcome', async () => {
      const p = prefix()
      const def = S.definition('kill-done', S.newRecord())
      await engine(p).submit(def, 'k', { failures: 2 })
      const killed = startChild('fleet-worker.ts', [String(server().port), p, 'kill-done', 'kill-in-onDone', '1'])
      deepStrictEqual((await killed.exited).signal, 'SIGKILL')
      const next = startChild('fleet-worker.ts', [String(server().port), p, 'kill-done', 'work', '1'])
      await next.waitFor('onDone again', (l) => l.startsWith('done '))
      const doneLines = [...killed.lines, ...next.lines]
        .filter((l) => l.startsWith('done '))
        .map((l) => l.split(' ').slice(2).join(' '))
      deepStrictEqual(doneLines, [
        'k {"_tag":"Right","right":"ok 3"} 2 succeeded',
        'k {"_tag":"Right","right":"ok 3"} 2 succeeded'
      ])
      deepStrictEqual([...killed.lines, ...next.lines].filter((l) => l.startsWith('start ')).length, 3)
    }, 30_000)

    it('should run a job that stalls more than once to the end its schedule gives it', async () => {
      const p = prefix()
      const def = S.definition('stalls', S.newRecord())
      await engine(p).submit(def, 's', { failures: 1 })
      // two workers killed while attempt 1 is in flight: the job stalls twice (BullMQ's default limit is once)
      for (let kill = 0; kill < 2; kill++) {
        const worker = startChild('fleet-worker.ts', [String(server().port), p, 'stalls', 'work', '1'])
        await worker.waitFor('attempt 1 to start', (l) => l.startsWith('start ') && l.split(' ')[3] === '1')
        worker.process.kill('SIGKILL')
        await worker.exited
      }
      const last = startChild('fleet-worker.ts', [String(server().port), p, 'stalls', 'work', '1'])
      const done = await last.waitFor('the run to end', (l) => l.startsWith('done '))
      deepStrictEqual(done.split(' ').slice(2).join(' '), 's {"_tag":"Right","right":"ok 2"} 1 succeeded')
    }, 30_000)

    it('processor should serve a Worker of ones own', async () => {
      const p = prefix()
      const record = S.newRecord()
      const def = S.definition('own', record)
      const connection = { host: server().host, port: server().port }
      const q = queue(p, 'own')
      const done = deferred<void>()
      const worker = new Worker(
        'own',
        BullMQ.processor(
          def,
          S.workOptions(record, () => done.resolve())
        ),
        { connection, prefix: p, ...BullMQ.workerOptions }
      )
      closers.push(() => worker.close())
      await BullMQ.submit(q, def, 'o', { failures: 2 })
      await done.promise
      deepStrictEqual(record.done.get('o'), [S.expected('o', 2).done])
      deepStrictEqual(
        (record.attempts.get('o') ?? []).map((a) => a.previousDelay),
        [...S.expected('o', 2).previousDelays]
      )
    })

    it('should abort the attempts in flight when a worker closes, and leave their jobs due', async () => {
      const p = prefix()
      const e = engine(p)
      const started = deferred<void>()
      let attempts = 0
      const def = Durable.define({
        name: 'closing',
        schedule: Schedule.recurs(3),
        payload: t.null,
        action: (_, run) => () =>
          new Promise<E.Either<string, string>>((resolve) => {
            attempts++
            if (attempts > 1) return resolve(E.right('second'))
            started.resolve()
            run.signal.addEventListener('abort', () => resolve(E.left('aborted')))
          })
      })
      const worker = await e.work(def)
      await e.submit(def, 'x', null)
      await started.promise
      await worker.close()
      const done = deferred<unknown>()
      await e.work(def, { onDone: ({ result, status }) => done.resolve([result, status.iterNumber]) })
      deepStrictEqual(await done.promise, [E.right('second'), 0])
    })

    // Issue 27, Redis faults 4: BullMQ's lock errors reached onError with the queue's name only, not the run's id.
    it("should report BullMQ's lock errors with the id of the run they concern", async () => {
      const p = prefix()
      const id = 'user:7. a b' // a job id with a dot and spaces, read whole from BullMQ's message
      const started = deferred<void>()
      const release = deferred<void>()
      const def = Durable.define({
        name: 'locks',
        schedule: Schedule.recurs(0),
        payload: t.null,
        action: () => async () => {
          started.resolve()
          await release.promise
          return E.right('ok')
        }
      })
      const errors: Array<Durable.WorkerError> = []
      const e = engine(p)
      await e.work(def, { onError: (failure) => void errors.push(failure) })
      await e.submit(def, id, null)
      await started.promise
      // the lock lost, as after a pause longer than lockDuration
      const redis = new Redis(server().port, server().host)
      closers.push(() => redis.quit())
      deepStrictEqual(await redis.del(`${p}:locks:${BullMQ.jobId(id)}:lock`), 1)
      const lockErrors = (): Array<Durable.WorkerError> => errors.filter(({ error }) => /lock/i.test(String(error)))
      await until('the renewal to fail', async () => lockErrors().some(({ error }) => /renew/.test(String(error))))
      release.resolve()
      await until('the completion to fail', async () =>
        lockErrors().some(({ error }) => /Missing lock/.test(String(error)))
      )
      deepStrictEqual(
        lockErrors().map((failure) => ({ id: failure.id, queue: failure.queue })),
        lockErrors().map(() => ({ id, queue: 'locks' }))
      )
    })

    it('should accept the definition types of Durable.define in submit and work', async () => {
      const e = engine(prefix())
      const def = Durable.define({
        name: 'types',
        schedule: Schedule.recurs(1),
        payload: t.string,
        action: (s: string) => TE.right(s.length)
      })
      const done = deferred<number>()
      await e.work(def, { onDone: ({ result }) => done.resolve(E.isRight(result) ? result.right : -1) })
      await e.submit(def, 'x', 'four')
      deepStrictEqual(await done.promise, 4)
    })
  })

  describe('BullMQ.make: events, and Redis faults (a redis-server killed, paused, restarted by pid)', () => {
    const engines: Array<Durable.Engine> = []
    const servers: Array<S.OwnRedis> = []
    const dirs: Array<string> = []
    afterEach(async () => {
      for (const s of servers) s.resume()
      await Promise.all(engines.splice(0).map((e) => e.close({ deadline: 1_000 })))
      await Promise.all(servers.splice(0).map((s) => s.kill()))
      for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
    })
    let n = 0
    const engine = (port: number, extra: Partial<BullMQ.EngineOptions> = {}): Durable.Engine => {
      const e = BullMQ.make({
        connection: { host: '127.0.0.1', port },
        prefix: `f${++n}`,
        onError: expectedWarnings,
        ...extra
      })
      engines.push(e)
      return e
    }
    const def = Durable.define({
      name: 'faults',
      schedule: Schedule.fromDelays([50]),
      payload: t.number,
      action: (k: number, run) => TE.fromEither(run.status.iterNumber < k ? E.left('down') : E.right('ok'))
    })

    it('should tell the durable events of a run, with its id, through the engine and the worker', async () => {
      const events: Array<string> = []
      const e = engine(server().port, { onEvent: (ev) => void events.push(ev._tag) })
      const done = deferred<void>()
      await e.work(def, { onDone: () => done.resolve() })
      await e.submit(def, 'job-1', 1)
      await done.promise
      await until('RunCompleted', async () => events.includes('RunCompleted'))
      deepStrictEqual(events, [
        'RunSubmitted',
        'RunDelivered',
        'AttemptStarted',
        'AttemptFailed',
        'RetryScheduled',
        'RunRetried',
        'RunDelivered',
        'AttemptStarted',
        'AttemptSucceeded',
        'RunStopped',
        'RunCompleted'
      ])
    })

    // Issue 20, Redis faults 4: a Redis without persistence that restarts loses acknowledged runs, with nothing said.
    it('should warn of appendonly no, say nothing when CONFIG is disabled, and keep every acknowledged run through kill -9 with AOF', async () => {
      const warnings: Array<string> = []
      const onError = ({ error, queue }: Durable.WorkerError): void =>
        void warnings.push(`${queue}: ${(error as Error).name} ${(error as BullMQ.RedisSettingsWarning).setting}`)
      // the shared test server runs with no persistence
      await engine(server().port, { onError }).submit(def, 'a', 0)
      await until('the warning', async () => warnings.length > 0)
      deepStrictEqual(warnings, ['faults: RedisSettingsWarning appendonly'])
      // CONFIG renamed away, as on managed services: no check, no failure
      warnings.length = 0
      const port = await S.freePort()
      const noConfig = await S.startOwnRedis(port, [
        '--save',
        '',
        '--appendonly',
        'no',
        '--rename-command',
        'CONFIG',
        '""'
      ])
      servers.push(noConfig)
      const quiet = engine(port, { onError })
      await quiet.submit(def, 'b', 0)
      deepStrictEqual(await quiet.pending(def), { pending: ['b'], done: [] })
      // AOF, fsync always: kill -9, restart on the same folder, and every acknowledged run is still pending
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-aof-'))
      dirs.push(dir)
      const aofPort = await S.freePort()
      const args = ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir]
      const aof = await S.startOwnRedis(aofPort, args)
      const durable = engine(aofPort, { onError, prefix: 'aof' })
      const ids = ['r1', 'r2', 'user:3', '42']
      for (const id of ids) await durable.submit(def, id, 0)
      await aof.kill()
      servers.push(await S.startOwnRedis(aofPort, args))
      // a new engine, as a restarted service would make
      deepStrictEqual(await engine(aofPort, { onError, prefix: 'aof' }).pending(def), {
        pending: [...ids].sort(),
        done: []
      })
      deepStrictEqual(warnings, [])
    }, 30_000)

    // Issue 27, Redis faults 3: the settings were read when a queue was first used, so an engine that only works
    // (another service submits) never read them, and never warned.
    it('should warn of appendonly no an engine that only works, never submits', async () => {
      const warnings: Array<string> = []
      const onError = ({ error, queue }: Durable.WorkerError): void =>
        void warnings.push(`${queue}: ${(error as Error).name} ${(error as BullMQ.RedisSettingsWarning).setting}`)
      await engine(server().port, { onError }).work(def, {})
      await until('the warning', async () => warnings.length > 0)
      deepStrictEqual(warnings, ['faults: RedisSettingsWarning appendonly'])
    })

    // Issue 27, Redis faults 2: after Redis restarted empty, the state write of the run in flight failed with
    // "Missing key for job" and was made again without end: its worker's slot stayed taken, and a run submitted and
    // acknowledged after the restart was never attempted (25 s measured, concurrency 1).
    it('should give back the slot of a run whose job is gone after Redis restarted empty, and report it by id', async () => {
      const port = await S.freePort()
      const args = ['--save', '', '--appendonly', 'no']
      const first = await S.startOwnRedis(port, args)
      servers.push(first)
      const started = deferred<void>()
      const release = deferred<void>()
      const attempted: Array<string> = []
      const def = Durable.define({
        name: 'vanishing',
        schedule: Schedule.recurs(0),
        payload: t.null,
        action: (_: null, run) => async () => {
          attempted.push(run.id)
          if (run.id === 'lost') {
            started.resolve()
            await release.promise
          }
          return E.right('ok')
        }
      })
      const errors: Array<Durable.WorkerError> = []
      const done: Array<string> = []
      const e = engine(port)
      await e.work(def, {
        concurrency: 1,
        onError: (failure) => void errors.push(failure),
        onDone: ({ id }) => void done.push(id)
      })
      await e.submit(def, 'lost', null)
      await started.promise
      await first.kill()
      servers.splice(servers.indexOf(first), 1, await S.startOwnRedis(port, args))
      release.resolve()
      await e.submit(def, 'after', null)
      const submitted = Date.now()
      await until('the run submitted after the restart to be attempted', async () => attempted.includes('after'))
      const ms = Date.now() - submitted
      assert.ok(ms < 5_000, `attempted ${ms} ms after its submit`)
      await until('its onDone', async () => done.includes('after'))
      deepStrictEqual(done, ['after'])
      const lost = errors.filter(({ error }) => error instanceof BullMQ.RunLost)
      deepStrictEqual(
        lost.map(({ error, id }) => [(error as BullMQ.RunLost).id, id]),
        [['lost', 'lost']]
      )
      // BullMQ's own errors about the lost job name it too
      deepStrictEqual(
        errors.filter(({ error }) => /Missing key/.test(String(error))).every(({ id }) => id === 'lost'),
        true
      )
    }, 30_000)

    // Issue 20, Redis faults 5: with Redis down, the documented SIGTERM shutdown never finished, and submit hung.
    it('should bound submit by timeout and close by its deadline while Redis is paused (SIGSTOP)', async () => {
      const port = await S.freePort()
      const paused = await S.startOwnRedis(port, ['--save', '', '--appendonly', 'no'])
      servers.push(paused)
      const errors: Array<unknown> = []
      const e = BullMQ.make({
        connection: { host: '127.0.0.1', port },
        prefix: 'paused',
        timeout: 300,
        onError: ({ error }) => void errors.push(error)
      })
      const working = await e.work(def, { onError: () => undefined })
      await e.submit(def, 'before', 0)
      paused.pause()
      let started = Date.now()
      await assert.rejects(e.submit(def, 'during', 0), /BullMQ\.make: submit of "during" took longer than 300 ms/)
      const submitMs = Date.now() - started
      started = Date.now()
      await working.close({ deadline: 300 })
      await e.close({ deadline: 300 })
      const closeMs = Date.now() - started
      assert.ok(submitMs < 1_000, `submit took ${submitMs} ms`)
      // deadline + the forced disconnect's bound (1 s), each of the worker's and the queues' side by side
      assert.ok(closeMs < 2 * (300 + 1_000), `close took ${closeMs} ms`)
      // and it says so, rather than hang or end in silence
      assert.ok(
        errors.some((error) => /closing took longer than its deadline/.test(String(error))),
        errors.map(String).join('\n')
      )
    }, 30_000)
  })
})
