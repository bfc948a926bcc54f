/**
 * Durable retries on BullMQ, for many workers on one Redis: the `Durable.Engine` on a BullMQ queue per definition,
 * a processor for teams with their own `Worker`, and a backoff strategy for teams on BullMQ's own retry path.
 *
 * Every decision is made by `Durable.deliver` (on the `Driver`), and every write follows the same durable step, so
 * runs behave here exactly as on `FileEngine.make`. The run's `RetryState` lives in the job's data; the delay is exactly the schedule's,
 * through BullMQ's delayed jobs (not its built-in backoff types), rounded up to a whole millisecond.
 *
 * bullmq and ioredis are optional peer dependencies: they are loaded when a function of this module first needs
 * them, never on import, so a program that never calls it installs neither.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import { pipe } from 'fp-ts/function'
 *
 * const notify = Durable.define({
 *   name: 'notify',
 *   // cap first, then jitter: capped retries jittered after the cap do not land in step
 *   schedule: pipe(Schedule.exponential(1_000), Schedule.capped(60_000), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(10))),
 *   payload: t.type({ user: t.string }),
 *   action: (payload, run) => TE.right(`notified ${payload.user} (key ${run.id})`)
 * })
 *
 * // needs a Redis server: defined, not called here
 * export async function service(outcomes: Array<string>) {
 *   const engine = BullMQ.engine({ connection: { host: '127.0.0.1', port: 6379 } })
 *   await engine.work(notify, { concurrency: 16, onDone: ({ id, result, reason }) => void outcomes.push(`${id} ${result._tag} ${reason}`) })
 *   await engine.submit(notify, 'user-7:welcome', { user: 'user-7' })
 * }
 *
 * @since 0.2.0
 */
import type * as Bull from 'bullmq'
import * as E from 'fp-ts/Either'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import * as Driver from './Driver'
import * as Durable from './Durable'
import {
  DEFAULT_KEEP_DONE,
  DEFAULT_WRITE_RETRY,
  HOOK_RETRY_DELAY,
  checkDefinition,
  checkId,
  decodeState,
  defaultRandom,
  durationAtLeast,
  attemptSignals,
  checkWorkOptions,
  encodePayload,
  optionsObject,
  positiveCount,
  reportError,
  restoreState,
  step
} from './internal/durable'
import { fromBullId, toBullId } from './internal/ids'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type * as Random from './Random'
import { RetryStateCodec } from './RetryState'
import type { Json, Schedule } from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Where Redis is: host and port (and any other ioredis option), or an ioredis instance, which BullMQ shares and
 * duplicates for its blocking connections.
 *
 * @example
 * import type { Connection } from 'fp-ts-retry/BullMQ'
 *
 * const local: Connection = { host: '127.0.0.1', port: 6379 }
 *
 * @category model
 * @since 0.2.0
 */
export type Connection =
  | { readonly host: string; readonly port: number; readonly [option: string]: unknown }
  | { readonly duplicate: (...args: never) => unknown; readonly options: object }

/**
 * Options of {@link engine}.
 *
 * **Details**
 *
 * - `connection`: see {@link Connection}. `prefix`: BullMQ's key prefix (default `'bull'`).
 * - `keepDone`: how long a done job (its id) is kept, in ms, so that submitting the id again starts nothing
 *   (default 24 hours). BullMQ removes old jobs when others complete, so an id may be remembered longer.
 * - `lockDuration` (default 30 s) and `stalledInterval` (default 30 s): BullMQ's. A worker that dies leaves its
 *   jobs active until its lock expires; the next stalled check (by any worker) delivers them again. Their sum is
 *   about the longest an attempt in flight at a crash waits to run again. The lock is renewed while an attempt
 *   runs, so `lockDuration` need not exceed the attempts, only the longest pause of a worker's event loop.
 *   `maxStalledCount` is set so high that a job that stalls again and again still runs to the end its schedule
 *   gives it: the schedule, not BullMQ, decides when to give up.
 * - `writeRetry`: when a run's state or outcome cannot be stored (`updateData` fails), the write, not the attempt,
 *   is made again after this schedule's delays, each failure reported to `onError` (see {@link ProcessorOptions}).
 *
 * @example
 * import type { EngineOptions } from 'fp-ts-retry/BullMQ'
 *
 * const options: EngineOptions = { connection: { host: 'redis.internal', port: 6379 }, prefix: 'retries', keepDone: 7 * 24 * 3600_000 }
 *
 * @category model
 * @since 0.2.0
 */
export interface EngineOptions {
  readonly connection: Connection
  readonly prefix?: string | undefined
  readonly keepDone?: number | undefined
  readonly lockDuration?: number | undefined
  readonly stalledInterval?: number | undefined
  readonly writeRetry?: Schedule<unknown> | undefined
}

/**
 * What {@link processor} needs of a BullMQ job: a `Job` is one.
 *
 * @example
 * import type { JobLike } from 'fp-ts-retry/BullMQ'
 *
 * const idOf = (job: JobLike): string | undefined => job.id
 *
 * @category model
 * @since 0.2.0
 */
export interface JobLike {
  readonly id?: string | undefined
  readonly data: unknown
  readonly opts?: { readonly backoff?: number | { readonly type: string } | undefined } | undefined
  updateData(data: Durable.StoredRun): Promise<void>
  moveToDelayed(timestamp: number, token?: string): Promise<void>
}

/**
 * What {@link submit} needs of a BullMQ queue: a `Queue` is one.
 *
 * @example
 * import type { QueueLike } from 'fp-ts-retry/BullMQ'
 *
 * const added: Array<string> = []
 * const inMemory: QueueLike = { add: async (_, __, options) => void added.push(options.jobId) }
 *
 * @category model
 * @since 0.2.0
 */
export interface QueueLike {
  add(name: string, data: Durable.StoredRun, options: JobOptions): Promise<unknown>
}

/**
 * The options {@link submit} and the engine give each job: its id, how long it is kept once done, and BullMQ's
 * retry path with the backoff of {@link workerOptions}, unlimited: the schedule decides, not `attempts`.
 *
 * **Details**
 *
 * A failure that the schedule retries goes through BullMQ's own failure path, which delays the job and fetches
 * the next one in one step, with the delay the stored state says. A delivery that fails for a reason of its own
 * (a lost connection) is delivered again a second later instead of failing the job.
 *
 * @example
 * import type { JobOptions } from 'fp-ts-retry/BullMQ'
 *
 * const options: JobOptions = {
 *   jobId: 'a',
 *   removeOnComplete: { age: 86_400 },
 *   attempts: Number.MAX_SAFE_INTEGER,
 *   backoff: { type: 'fp-ts-retry' },
 *   stackTraceLimit: 1
 * }
 *
 * @category model
 * @since 0.2.0
 */
export interface JobOptions {
  readonly jobId: string
  readonly removeOnComplete: { readonly age: number }
  readonly attempts: number
  readonly backoff: { readonly type: 'fp-ts-retry' }
  readonly stackTraceLimit: number
}

/**
 * Options of {@link processor}: the worker's options, and a signal for the worker's shutdown (the signal of the
 * attempts aborts with it, and with BullMQ's own signal for the job).
 *
 * **Details**
 *
 * - `writeRetry`: when the job's data cannot be updated (`updateData` rejects), the write, not the attempt, is
 *   made again after this schedule's delays, each failure reported to `onError`; the decided retry or outcome waits
 *   in memory meanwhile. Default: from 100 ms, doubling, capped at 30 s, then equal jitter, without end.
 *   **Gotcha**: a schedule that stops (or a worker that closes) fails the delivery, which BullMQ delivers again a
 *   second later, as stored: its last attempt may then be made again.
 * - `clock` (default `Clock.live`): the time runs are decided in (epoch ms, as BullMQ's) and the waits between
 *   failed writes.
 *
 * @example
 * import type { ProcessorOptions } from 'fp-ts-retry/BullMQ'
 *
 * const shutdown = new AbortController()
 * const options: ProcessorOptions<Error, string> = { signal: shutdown.signal, onDone: () => undefined }
 *
 * @category model
 * @since 0.2.0
 */
export interface ProcessorOptions<E, A> extends Omit<Durable.WorkOptions<E, A>, 'concurrency'> {
  readonly signal?: AbortSignal | undefined
  readonly writeRetry?: Schedule<unknown> | undefined
  readonly clock?: Clock | undefined
}

/**
 * What {@link backoffStrategy} needs of a job: a BullMQ `Job` (or `MinimalJob`) is one.
 *
 * @example
 * import type { BackoffJob } from 'fp-ts-retry/BullMQ'
 *
 * const fake: BackoffJob = { id: 'a', data: {}, processedOn: 0, updateData: async () => undefined }
 *
 * @category model
 * @since 0.2.0
 */
export interface BackoffJob {
  readonly id?: string | undefined
  readonly data: unknown
  readonly processedOn?: number | undefined
  updateData(data: never): Promise<void>
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * The BullMQ job id of a run id: any non-empty string maps to a distinct id BullMQ accepts (`%` and `:` escaped,
 * `%i` before what would read as an integer). Queue names are mapped alike.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(BullMQ.jobId('order-17'), 'order-17')
 * assert.strictEqual(BullMQ.jobId('user:7'), 'user%3A7')
 * assert.strictEqual(BullMQ.jobId('42'), '%i42')
 *
 * @category utils
 * @since 0.2.0
 */
export const jobId = (id: string): string => toBullId(checkId('BullMQ.jobId', id))

/** The backoff type of the jobs {@link submit} adds: delays each retry until the due time its error carries. */
const BACKOFF_TYPE: JobOptions['backoff']['type'] = 'fp-ts-retry'

/** What the processor throws to have BullMQ delay a job until `dueAt` (a retry, or a delivery before it was due). */
class DueLater extends Error {
  constructor(readonly dueAt: number) {
    const at = Math.ceil(dueAt)
    super(`fp-ts-retry: due at ${Number.isFinite(at) ? new Date(at).toISOString() : String(at)}`)
    this.name = 'DueLater'
    // BullMQ stores the stack with the job at each failure: the message is enough.
    this.stack = this.message
  }
}

/** A {@link DueLater}, without the cost of capturing a stack that is thrown away (one per retry). */
const dueLater = (dueAt: number): DueLater => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return new DueLater(dueAt)
  } finally {
    Error.stackTraceLimit = limit
  }
}

/**
 * The worker options {@link engine} uses, for teams with their own `Worker` running {@link processor}: no limit
 * on stalls, so that the schedule, not BullMQ, decides when a run gives up; and the backoff strategy the jobs of
 * {@link submit} name, which delays a retry until its stored due time (rounded up to a whole ms), and a delivery
 * that failed for a reason of its own (a lost connection) by a second.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as assert from 'assert'
 *
 * // new Worker(queueName, BullMQ.processor(def, options), { connection, ...BullMQ.workerOptions })
 * assert.strictEqual(BullMQ.workerOptions.maxStalledCount, Number.MAX_SAFE_INTEGER)
 * assert.strictEqual(typeof BullMQ.workerOptions.settings.backoffStrategy, 'function')
 *
 * @category utils
 * @since 0.2.0
 */
export const workerOptions: {
  readonly maxStalledCount: number
  readonly settings: { readonly backoffStrategy: (attemptsMade: number, type?: string, err?: Error) => number }
} = {
  maxStalledCount: Number.MAX_SAFE_INTEGER,
  settings: {
    backoffStrategy: (_, __, err) =>
      err instanceof DueLater ? Math.max(0, Math.ceil(err.dueAt) - Date.now()) : HOOK_RETRY_DELAY
  }
}

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

let loaded: typeof Bull | undefined

/** bullmq, loaded on first use: an optional peer dependency. */
const bull = (where: string): typeof Bull => {
  if (loaded !== undefined) return loaded
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when used: an optional peer
    loaded = require('bullmq') as typeof Bull
    return loaded
  } catch (e) {
    throw new Error(`${where}: the optional peer dependency bullmq is not installed (npm install bullmq ioredis)`, {
      cause: e
    })
  }
}

const jobOptions = (id: string, keepDone: number): JobOptions => ({
  jobId: toBullId(id),
  removeOnComplete: { age: Math.ceil(keepDone / 1000) },
  attempts: Number.MAX_SAFE_INTEGER,
  backoff: { type: BACKOFF_TYPE },
  // BullMQ keeps a stack per failure: the latest is enough
  stackTraceLimit: 1
})

/**
 * Adds a run to a queue of your own, as {@link engine}'s `submit` does: the job's data is a `Durable.StoredRun`,
 * its id {@link jobId}`(id)`; idempotent by id while the job is pending or kept (`keepDone`, default 24 hours).
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const def = Durable.define({ name: 'n', schedule: Schedule.recurs(1), payload: t.number, action: () => TE.right(0) })
 *   const added: Array<unknown> = []
 *   const queue: BullMQ.QueueLike = { add: async (name, data, options) => void added.push([name, data, options.jobId]) }
 *   await BullMQ.submit(queue, def, 'a:1', 5)
 *   assert.deepStrictEqual(added, [['n', { id: 'a:1', payload: 5, retry: null, outcome: null }, 'a%3A1']])
 * }
 * main()
 *
 * @category interpreters
 * @since 0.2.0
 */
export const submit = async <P, E, A>(
  queue: QueueLike,
  def: Durable.Definition<P, E, A>,
  id: string,
  payload: P,
  options: { readonly keepDone?: number | undefined } = {}
): Promise<void> => {
  const where = 'BullMQ.submit'
  checkDefinition(where, def)
  checkId(where, id)
  const keepDone = durationAtLeast(
    where,
    'options.keepDone',
    0,
    optionsObject(where, 'options', options).keepDone ?? DEFAULT_KEEP_DONE
  )
  const data: Durable.StoredRun = {
    id,
    payload: encodePayload(where, def.payload, payload),
    retry: null,
    outcome: null
  }
  await queue.add(def.name, data, jobOptions(id, keepDone))
}

/**
 * The processor of a definition's jobs, for a `Worker` of your own: `new Worker(queue, BullMQ.processor(def,
 * options), { connection, ...BullMQ.workerOptions })`. What {@link engine}'s workers run.
 *
 * **Details**
 *
 * Each delivery of a job goes through `Durable.deliver`, then:
 *
 * - delivered before its stored `dueAt`: delayed again until then (rounded up to a whole ms), no attempt;
 * - a failure the schedule retries: the new state is stored in the job's data (`updateData`), the job is delayed
 *   until the new `dueAt`, and `onRetry` is called (BullMQ's failure path delays the job once the processor has
 *   thrown: after `onRetry`): state first, so that a crash between the two writes leaves a job that is delivered
 *   early and delayed again, never retried early;
 * - done: the outcome is stored (when `onDone` is set), `onDone` is called, and the job completes with the stored
 *   outcome as its return value. A worker killed after `onDone` and before completing calls it again, with the
 *   stored outcome.
 * - a failed `updateData` is made again (`writeRetry` of {@link ProcessorOptions}), never the attempt.
 *
 * A job added by {@link submit} (or `engine`'s) is delayed through BullMQ's failure path: the processor throws,
 * and the backoff strategy of {@link workerOptions} answers the wait until the due time, so BullMQ delays the job
 * and fetches the next in one step (its `attemptsMade` counts the failed attempts and the deliveries that came
 * early; `failedReason` says when the job is due). So the `Worker` must have {@link workerOptions}: without its
 * backoff strategy, BullMQ cannot delay these jobs. A job added otherwise is delayed with `moveToDelayed`.
 *
 * The function takes BullMQ's signal (its third parameter), so the attempt's signal also aborts when BullMQ
 * cancels the job.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const def = Durable.define({ name: 'echo', schedule: Schedule.recurs(1), payload: t.string, action: (s: string) => TE.right(s) })
 *   const process = BullMQ.processor(def, { onDone: () => undefined })
 *   // a job as BullMQ hands it over, in memory
 *   let data: unknown = { id: 'e-1', payload: 'hi', retry: null, outcome: null }
 *   const job: BullMQ.JobLike = { id: 'e-1', data, updateData: async (d) => void (data = d), moveToDelayed: async () => undefined }
 *   // it completes with the stored outcome as its return value
 *   const returned = (await process(job, 'token')) as { result: unknown; reason: string }
 *   assert.deepStrictEqual([returned.result, returned.reason], [{ _tag: 'Right', right: { json: 'hi' } }, 'succeeded'])
 *   assert.deepStrictEqual(data, { id: 'e-1', payload: 'hi', retry: null, outcome: returned })
 * }
 * main()
 *
 * @category interpreters
 * @since 0.2.0
 */
export const processor = <P, E, A>(
  def: Durable.Definition<P, E, A>,
  options: ProcessorOptions<E, A> = {}
): ((job: JobLike, token?: string, signal?: AbortSignal) => Promise<Json>) => {
  const where = 'BullMQ.processor'
  checkDefinition(where, def)
  const o = optionsObject(where, 'options', options)
  validate.services(where, 'options', { clock: o.clock })
  const clock = o.clock ?? LiveClock.live
  const writeRetry =
    o.writeRetry === undefined ? DEFAULT_WRITE_RETRY : validate.schedule(where, 'options.writeRetry', o.writeRetry)
  const signals = attemptSignals(o.signal)
  return async (job, token, signal) => {
    const { DelayedError } = bull(where)
    const attempt = signals(signal)
    const data = job.data as { readonly id?: unknown } | null
    const id =
      data !== null && typeof data === 'object' && typeof data.id === 'string' ? data.id : fromBullId(job.id ?? '')
    // Jobs added by submit take BullMQ's failure path, which delays the job and fetches the next in one step;
    // others (added by hand) are delayed with moveToDelayed.
    const backoff = job.opts?.backoff
    const viaFailure = typeof backoff === 'object' && backoff.type === BACKOFF_TYPE
    try {
      const delivery = await Durable.deliver(def, id, job.data, { now: clock.now, signal: attempt.signal, options: o })
      const end = await step(
        delivery,
        {
          saveRetry: (run) => job.updateData(run),
          saveOutcome: (run) => job.updateData(run),
          // BullMQ's failure path delays the job once the processor throws, below; a job added otherwise is moved.
          later: (dueAt) => (viaFailure ? undefined : job.moveToDelayed(Math.ceil(dueAt), token)),
          // Returning completes the job.
          finish: () => Promise.resolve()
        },
        { id, clock, signal: attempt.signal, writeRetry, onError: o.onError }
      )
      switch (end._tag) {
        case 'Later':
          throw viaFailure ? dueLater(end.dueAt) : new DelayedError()
        case 'Abandoned':
          // The worker is closing, and BullMQ records no failure then: leave the job due at once, explicitly.
          await job.moveToDelayed(clock.now(), token)
          throw new DelayedError()
        case 'Done':
          return delivery._tag === 'Done' ? delivery.outcome : null
      }
    } finally {
      attempt.release()
    }
  }
}

/**
 * The `Durable.Engine` on BullMQ: a queue per definition name, workers that run {@link processor}, the run's state
 * in the job's data.
 *
 * **Details**
 *
 * - `submit` adds a job whose id is {@link jobId}`(id)`: BullMQ ignores an id it holds, pending or done (kept for
 *   `keepDone`), so a run is submitted once.
 * - `work` starts a BullMQ `Worker` with `concurrency` (default 1), `lockDuration`, `stalledInterval` and
 *   {@link workerOptions}; its `close` aborts the attempts' signal and waits for them.
 * - `close` closes the workers and queues made by this engine (not an ioredis instance you passed).
 * - Queue names are the definitions' names, mapped as ids are (no `:`).
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 *
 * const resize = Durable.define({ name: 'resize', schedule: Schedule.exponential(500), payload: t.string, action: (url: string) => TE.right(url) })
 *
 * // needs a Redis server: defined, not called here
 * export async function worker() {
 *   const engine = BullMQ.engine({ connection: { host: '127.0.0.1', port: 6379 }, lockDuration: 10_000 })
 *   const working = await engine.work(resize, { concurrency: 4 })
 *   await engine.submit(resize, 'img-1', 'https://example.com/1.png')
 *   process.once('SIGTERM', () => void working.close().then(() => engine.close()))
 * }
 *
 * @category constructors
 * @since 0.2.0
 */
export const engine = (options: EngineOptions): Durable.Engine => {
  const where = 'BullMQ.engine'
  validate.object(where, 'options', options)
  const { connection, prefix } = options
  if (connection === null || typeof connection !== 'object') {
    throw new TypeError(
      `${where}: options.connection must be { host, port } or an ioredis instance, received ${showValue(connection)}`
    )
  }
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '')) {
    throw new TypeError(`${where}: options.prefix must be a non-empty string, received ${showValue(prefix)}`)
  }
  const keepDone = durationAtLeast(where, 'options.keepDone', 0, options.keepDone ?? DEFAULT_KEEP_DONE)
  const lockDuration = durationAtLeast(where, 'options.lockDuration', 1, options.lockDuration ?? 30_000)
  const stalledInterval = durationAtLeast(where, 'options.stalledInterval', 1, options.stalledInterval ?? 30_000)
  const { writeRetry } = options
  if (writeRetry !== undefined) validate.schedule(where, 'options.writeRetry', writeRetry)
  const base = { connection: connection as Bull.ConnectionOptions, ...(prefix === undefined ? {} : { prefix }) }
  const queues = new Map<string, Bull.Queue>()
  const workers = new Set<Durable.Worker>()
  let closed = false

  const checkOpen = (what: string): void => {
    if (closed) throw new Error(`${where}: ${what}: the engine is closed`)
  }

  const queueOf = (name: string): Bull.Queue => {
    let queue = queues.get(name)
    if (queue === undefined) {
      queue = new (bull(where).Queue)(toBullId(name), base)
      queue.on('error', (e) => reportError(undefined, e, { queue: name }))
      queues.set(name, queue)
    }
    return queue
  }

  return {
    submit: async (def, id, payload) => {
      checkOpen('submit')
      checkDefinition(`${where}: submit`, def)
      checkId(`${where}: submit`, id)
      await submit(queueOf(def.name) as unknown as QueueLike, def, id, payload, { keepDone })
    },
    work: async (def, workOptions) => {
      checkOpen('work')
      checkDefinition(`${where}: work`, def)
      const o = checkWorkOptions(`${where}: work`, workOptions)
      const concurrency = positiveCount(`${where}: work`, 'options.concurrency', o.concurrency ?? 1)
      const shutdown = new AbortController()
      const run = processor(def, { ...o, signal: shutdown.signal, writeRetry })
      const worker = new (bull(where).Worker)(toBullId(def.name), (job, token, signal) => run(job, token, signal), {
        ...base,
        concurrency,
        lockDuration,
        stalledInterval,
        ...workerOptions
      })
      worker.on('error', (e) => reportError(o.onError, e, { queue: def.name }))
      await worker.waitUntilReady()
      const handle: Durable.Worker = {
        close: async () => {
          workers.delete(handle)
          shutdown.abort()
          await worker.close()
        }
      }
      workers.add(handle)
      return handle
    },
    close: async () => {
      closed = true
      await Promise.all([...workers].map((w) => w.close()))
      await Promise.all([...queues.values()].map((q) => q.close()))
      queues.clear()
    }
  }
}

/**
 * Where {@link backoffStrategy} keeps a run's `RetryState` in the job's data.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(BullMQ.STATE_KEY, 'fpTsRetryState')
 *
 * @category utils
 * @since 0.2.0
 */
export const STATE_KEY = 'fpTsRetryState'

/**
 * A BullMQ custom backoff strategy, for teams on BullMQ's own retry path: `settings: { backoffStrategy:
 * BullMQ.backoffStrategy({ payments: schedule }) }` on the `Worker`, and `{ attempts: Number.MAX_SAFE_INTEGER,
 * backoff: { type: 'payments' } }` on the jobs, so that the schedule, not `attempts`, decides when to give up.
 *
 * **Details**
 *
 * - The schedule of the job's `backoff.type` is fed the job's error; its delay is BullMQ's wait, rounded up to a
 *   whole ms; when it stops, the strategy answers `-1` and BullMQ fails the job.
 * - The run's `RetryState` is stored in the job's data (an object) under {@link STATE_KEY} before BullMQ delays
 *   the job, so the jitter and the schedule's state carry over from worker to worker. The run starts when its
 *   first attempt was processed (`processedOn`). A stored state that does not decode, or one of another schedule,
 *   fails the job (`-1`).
 * - `random(jobId)`: called at a job's first failure (default: `Random.seeded` with a random seed).
 * - This path has BullMQ's limits: a job promoted early (`promote()`, a stalled job) runs early, as the processor
 *   is yours. {@link engine} and {@link processor} check the due time on every delivery.
 * - A `type` with no schedule is a `RangeError` naming it.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const strategy = BullMQ.backoffStrategy({ payments: Schedule.fromDelays([100, 200]) }, { random: () => Random.seeded(1) })
 *   let data: Record<string, unknown> = { amount: 10 }
 *   const job = { id: 'p-1', processedOn: Date.now(), get data() { return data }, updateData: async (d: Record<string, unknown>) => void (data = d) }
 *   assert.strictEqual(await strategy(1, 'payments', new Error('503'), job), 100)
 *   assert.strictEqual(await strategy(2, 'payments', new Error('503'), job), 200)
 *   assert.strictEqual(await strategy(3, 'payments', new Error('503'), job), -1) // the schedule stops: BullMQ fails the job
 *   assert.strictEqual(data.amount, 10)
 * }
 * main()
 *
 * @category constructors
 * @since 0.2.0
 */
export const backoffStrategy = (
  schedules: Readonly<Record<string, Schedule<Error>>>,
  options: { readonly random?: ((jobId: string) => Random.Random) | undefined } = {}
): ((attemptsMade: number, type?: string, err?: Error, job?: BackoffJob) => Promise<number>) => {
  const where = 'BullMQ.backoffStrategy'
  if (schedules === null || typeof schedules !== 'object') {
    throw new TypeError(
      `${where}: schedules must be an object of schedules by backoff type, received ${String(schedules)}`
    )
  }
  for (const [type, schedule] of Object.entries(schedules)) {
    validate.schedule(where, `schedules.${type}`, schedule)
  }
  const o = optionsObject(where, 'options', options)
  const random = o.random ?? defaultRandom
  return async (_attemptsMade, type, err, job) => {
    const schedule =
      type !== undefined && Object.prototype.hasOwnProperty.call(schedules, type) ? schedules[type] : undefined
    if (schedule === undefined) {
      throw new RangeError(
        `${where}: no schedule for the backoff type ${showValue(type)}; known: ${Object.keys(schedules).join(', ')}`
      )
    }
    const data = job?.data
    if (job === undefined || data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw new TypeError(
        `${where}: the job's data must be an object, to hold the retry state, received ${showValue(data)}`
      )
    }
    const now = Date.now()
    const stored = (data as Record<string, unknown>)[STATE_KEY]
    let driver: Driver.Driver<Error>
    if (stored === undefined || stored === null) {
      driver = Driver.make(schedule, { start: job.processedOn ?? now, random: random(job.id ?? '') })
    } else {
      // as Durable.deliver reads a stored state: one that does not decode or is not its schedule's fails the job
      const state = decodeState(stored)
      if (E.isLeft(state)) return -1
      const restored = restoreState(schedule, state.right)
      if (E.isLeft(restored)) return -1
      driver = restored.right
    }
    const delay = driver.advance(err ?? new Error('unknown'), now)
    if (delay < 0) return -1
    await job.updateData({ ...data, [STATE_KEY]: RetryStateCodec.encode(driver.snapshot()) } as never)
    return Math.ceil(delay)
  }
}
