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
 *   const engine = BullMQ.make({ connection: { host: '127.0.0.1', port: 6379 } })
 *   await engine.work(notify, { concurrency: 16, onDone: ({ id, result, reason }) => void outcomes.push(`${id} ${result._tag} ${reason}`) })
 *   await engine.submit(notify, 'user-7:welcome', { user: 'user-7' })
 * }
 *
 * @since 1.0.0
 */
import type * as Bull from 'bullmq'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import * as Durable from './Durable'
import * as Event from './Event'
import {
  DEFAULT_KEEP_DONE,
  DEFAULT_WRITE_RETRY,
  HOOK_RETRY_DELAY,
  checkDefinition,
  checkId,
  durationAtLeast,
  attemptSignals,
  checkWorkOptions,
  closeDeadline,
  closeWithin,
  encodePayload,
  optionsObject,
  reportError,
  step,
  tell,
  withinRealTime
} from './durable/shared'
import { checkClusterPrefix, replicationOptions, waitForReplicas, waker, type Replication } from './durable/cluster'
import { fromBullId, toBullId } from './internal/ids'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
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
 * @since 1.0.0
 */
export type Connection =
  | { readonly host: string; readonly port: number; readonly [option: string]: unknown }
  | { readonly duplicate: (...args: never) => unknown; readonly options: object }

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `connection`: see {@link Connection}. `prefix`: BullMQ's key prefix (default `'bull'`).
 * - `keepDone`: how long a done job (its id) is kept, in ms, so that submitting the id again starts nothing
 *   (default 24 hours). BullMQ removes old jobs when others complete, so an id may be remembered longer.
 * - `lockDuration` (default 30 s) and `stalledInterval` (default 30 s): BullMQ's. A worker that dies leaves its
 *   jobs active until its lock expires; the next stalled check (by any worker) delivers them again. Their sum is
 *   about the longest an attempt in flight at a crash waits to run again. The lock is renewed while an attempt
 *   runs, so `lockDuration` need not exceed the attempts, only the longest pause of a worker's event loop **and
 *   the longest Redis outage you ride out**: a lock cannot be renewed while Redis is down, so an outage longer
 *   than `lockDuration` lets the jobs in flight stall. Each is then delivered again (one more stalled cycle, up
 *   to `stalledInterval` later, plus ioredis's reconnect delay, up to 20 s by BullMQ's default): its attempt may
 *   run again, or its `onDone` be called again with the stored outcome (at least once). `maxStalledCount` is set
 *   so high that a job that stalls again and again still runs to the end its schedule gives it: the schedule,
 *   not BullMQ, decides when to give up.
 * - `writeRetry`: when a run's state or outcome cannot be stored (`updateData` fails or takes longer than
 *   `timeout`), the write, not the attempt, is made again after this schedule's delays, each failure reported to
 *   `onError` (see {@link ProcessorOptions}); except when the run's job is gone (a Redis without persistence that
 *   restarted): that run ends, reported as {@link RunLost}, and its slot takes the next job.
 * - `timeout` (default 5 s): the longest the engine waits on Redis for one call of its own: `submit`, `pending`,
 *   each write of a run's state or outcome, the check of the server's settings. A `submit` that times out
 *   rejects; the run may have been stored all the same (ioredis sends it once Redis is back): submitting the id
 *   again is safe, it starts no second run. BullMQ's own calls (fetching and delaying jobs) wait for Redis to
 *   come back; `close` is bounded by its `deadline` (see `Durable.CloseOptions`: forced after it, by
 *   `Worker.disconnect` and `Queue.disconnect`, and resolved within 1 s more).
 * - `onError`: where the engine's own errors go (a queue's connection errors, the warning on the server's
 *   settings), with the queue's name; default: a process warning. A worker's go to its own `onError`, with the
 *   `id` of the run when BullMQ names its job (a lock it could not renew, a job or its lock missing).
 * - `onEvent`: told `RunSubmitted` for each `submit` that resolves, and the events of the runs of every worker
 *   with no `onEvent` of its own (see `Durable.WorkOptions`).
 * - `waitForReplicas` (default none): `{ replicas, timeout }`: after each run's job is written, `submit` sends
 *   `WAIT replicas timeout` (to the master that took the write, on a Cluster) and rejects with a
 *   {@link NotReplicatedError} when fewer replicas acknowledged it in time. Redis replicates asynchronously: without
 *   it, a run acknowledged by `submit` just before its master dies may be missing from the replica that takes over.
 *   `timeout` must be less than the engine's `timeout`; the connection waits meanwhile (other commands queue behind
 *   `WAIT`). Only the submit waits: a lost write of a run's later state repeats an attempt, which the at-least-once
 *   contract allows.
 *
 * **Redis Cluster.** Give an ioredis `Cluster` as `connection` and a `prefix` with a hash tag, e.g. `'{fp}'`: BullMQ's
 * scripts use several keys of a queue at once, which a Cluster refuses (`CROSSSLOT`) unless they hash to one slot.
 * `make` throws a `TypeError` naming the fix when the prefix (BullMQ's default `'bull'` included) has none. Every
 * queue of the engine is then served by one master; engines with other tags spread the load. After a failover a
 * retry due meanwhile starts once the new master answers: after each error of a worker (a wait that failed with its
 * master) the engine sets the queue's marker again, which BullMQ's worker would otherwise wait up to 10 s for.
 *
 * **Gotcha: "nothing lost" needs a Redis that keeps what it acknowledged.** A run is stored once `submit`
 * resolves, as long as Redis keeps its writes: with AOF on (`appendonly yes`, with `appendfsync always`, or
 * `everysec` at the risk of the last second's writes if the machine fails) and `maxmemory-policy noeviction`
 * (any other policy may evict a run's job under memory pressure). A Redis without persistence that restarts
 * loses every run it held, with nothing reported. The engine reads these settings (`CONFIG GET`) when it first
 * uses a queue or starts a worker (so an engine that only works checks too) and reports a
 * {@link RedisSettingsWarning} to `onError` when they do not hold (nothing when `CONFIG` is disabled, as on some
 * managed services: check their persistence yourself). To reconcile what you
 * submitted with what finished, `engine.pending(def)` lists the runs still pending and the done ones remembered.
 *
 * @example
 * import type { EngineOptions } from 'fp-ts-retry/BullMQ'
 *
 * const options: EngineOptions = { connection: { host: 'redis.internal', port: 6379 }, prefix: 'retries', keepDone: 7 * 24 * 3600_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface EngineOptions {
  readonly connection: Connection
  readonly prefix?: string | undefined
  readonly keepDone?: number | undefined
  readonly lockDuration?: number | undefined
  readonly stalledInterval?: number | undefined
  readonly writeRetry?: Schedule<unknown> | undefined
  readonly timeout?: number | undefined
  readonly onError?: ((failure: Durable.WorkerError) => void) | undefined
  readonly onEvent?: Event.Observer | undefined
  readonly waitForReplicas?: { readonly replicas: number; readonly timeout: number } | undefined
}

/**
 * What the engine reports to `onError` when the Redis it uses may lose acknowledged runs: AOF off
 * (`appendonly no`) or a `maxmemory-policy` that evicts keys. `setting` and `value` name what was found.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as assert from 'assert'
 *
 * const warning = new BullMQ.RedisSettingsWarning('appendonly', 'no')
 * assert.match(warning.message, /appendonly is "no"/)
 *
 * @category model
 * @since 1.0.0
 */
export class RedisSettingsWarning extends Error {
  constructor(
    /** The setting that does not hold. */
    readonly setting: 'appendonly' | 'maxmemory-policy',
    /** Its value on the server. */
    readonly value: string
  ) {
    super(
      `BullMQ.make: Redis's ${setting} is ${JSON.stringify(value)}: runs acknowledged by submit may be lost ` +
        (setting === 'appendonly'
          ? 'when Redis restarts (set appendonly yes, with appendfsync always or everysec)'
          : 'when Redis evicts keys under memory pressure (set maxmemory-policy noeviction)')
    )
    this.name = 'RedisSettingsWarning'
  }
}

/**
 * What a worker reports to `onError` (with the run's `id`) when a run's job is gone from Redis as its state is
 * written: removed by hand, evicted, or lost by a Redis without persistence that restarted. No write can succeed,
 * so none is made again: the delivery ends there, its slot given back to the next job, and the run is not done
 * (submit its id again to run it again). BullMQ's own error follows (`Missing key for job`), with the same `id`.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as assert from 'assert'
 *
 * const lost = new BullMQ.RunLost('order-17', new Error('Missing key for job order-17. updateData'))
 * assert.strictEqual(lost.id, 'order-17')
 * assert.match(lost.message, /order-17/)
 *
 * @category model
 * @since 1.0.0
 */
export class RunLost extends Error {
  constructor(
    /** The run's id. */
    readonly id: string,
    /** BullMQ's error. */
    override readonly cause: unknown
  ) {
    super(`BullMQ: the job of run ${JSON.stringify(id)} is gone from Redis: the run is lost (submit it again)`)
    this.name = 'RunLost'
  }
}

/** BullMQ's error code for a job whose key is missing (`ErrorCode.JobNotExist`). */
const JOB_NOT_EXIST = -1

/**
 * What `submit` rejects with when `waitForReplicas` is set (see {@link EngineOptions}) and fewer replicas than
 * asked acknowledged the run's write within its timeout: the run is stored on the master, but a failover may lose
 * it. Submitting the id again is safe (it starts no second run) and waits for the replicas again.
 *
 * @example
 * import * as BullMQ from 'fp-ts-retry/BullMQ'
 * import * as assert from 'assert'
 *
 * const error = new BullMQ.NotReplicatedError('order-17', 0, 1, 500)
 * assert.match(error.message, /0 of 1 replicas acknowledged/)
 *
 * @category model
 * @since 1.0.0
 */
export class NotReplicatedError extends Error {
  constructor(
    /** The run's id. */
    readonly id: string,
    /** The replicas that acknowledged the write in time. */
    readonly acknowledged: number,
    /** The replicas asked for. */
    readonly replicas: number,
    /** The `WAIT` timeout, ms. */
    readonly timeout: number
  ) {
    super(
      `BullMQ.make: submit of ${JSON.stringify(id)}: ${acknowledged} of ${replicas} replicas acknowledged the run ` +
        `within ${timeout} ms, so a failover may lose it (submitting the id again is safe: it starts no second run)`
    )
    this.name = 'NotReplicatedError'
  }
}

/** The default of {@link EngineOptions}' `timeout`: the longest the engine waits on Redis for one call. */
const DEFAULT_TIMEOUT = 5_000

/** How long a forced close may take, after `close`'s deadline. */
const FORCE_WAIT = 1_000

/**
 * What {@link processor} needs of a BullMQ job: a `Job` is one.
 *
 * @example
 * import type { JobLike } from 'fp-ts-retry/BullMQ'
 *
 * const idOf = (job: JobLike): string | undefined => job.id
 *
 * @category model
 * @since 1.0.0
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
 * const inMemory: QueueLike = { add: async (_name, _data, options) => void added.push(options.jobId) }
 *
 * @category model
 * @since 1.0.0
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
 * @since 1.0.0
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
 *   in memory meanwhile. Default: from 100 ms, doubling, capped at 30 s, then equal jitter, without end. A job
 *   gone from Redis is not written again: the delivery ends, reported to `onError` as {@link RunLost}.
 *   **Gotcha**: a schedule that stops (or a worker that closes) fails the delivery, which BullMQ delivers again a
 *   second later, as stored: its last attempt may then be made again.
 * - `clock` (default `Clock.live`): the time runs are decided in (epoch ms, as BullMQ's) and the waits between
 *   failed writes.
 * - `timeout` (default 5 s, real time): a write (`updateData`) that takes longer counts as failed (and is made
 *   again on `writeRetry`), so that a Redis that does not answer never holds a delivery longer.
 *
 * @example
 * import type { ProcessorOptions } from 'fp-ts-retry/BullMQ'
 *
 * const shutdown = new AbortController()
 * const options: ProcessorOptions<Error, string> = { signal: shutdown.signal, onDone: () => undefined }
 *
 * @category model
 * @since 1.0.0
 */
export interface ProcessorOptions<E, A> extends Omit<Durable.WorkOptions<E, A>, 'concurrency'> {
  readonly signal?: AbortSignal | undefined
  readonly writeRetry?: Schedule<unknown> | undefined
  readonly clock?: Clock | undefined
  readonly timeout?: number | undefined
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
 * @since 1.0.0
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
 * The worker options {@link make} uses, for teams with their own `Worker` running {@link processor}: no limit
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
 * @since 1.0.0
 */
export const workerOptions: {
  readonly maxStalledCount: number
  readonly settings: { readonly backoffStrategy: (attemptsMade: number, type?: string, err?: Error) => number }
} = {
  maxStalledCount: Number.MAX_SAFE_INTEGER,
  settings: {
    backoffStrategy: (_attemptsMade, _type, err) =>
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

/**
 * BullMQ's errors about one job, as it words them (a lock it could not renew, a job or its lock missing, held by
 * another worker, in another state): the job's id is in the message only. Each pattern is anchored on both ends,
 * around a command that has no space, so that a job id with spaces or dots is read whole.
 */
const JOB_ERRORS: ReadonlyArray<RegExp> = [
  /^could not renew lock for job (.+)$/s,
  /^Missing (?:key|lock) for job (.+)\. \S+$/s,
  /^Lock mismatch for job (.+)\. Cmd \S+ from \S*$/s,
  /^Job (.+) is not in the \S* state\. \S+$/s
]

/** What a worker's error concerns: the run (by its id) when BullMQ names its job, else the queue. */
const aboutJob = (error: unknown, queue: string): { readonly id?: string; readonly queue: string } => {
  const message = error instanceof Error ? error.message : ''
  for (const pattern of JOB_ERRORS) {
    const job = pattern.exec(message)?.[1]
    if (job !== undefined) return { id: fromBullId(job), queue }
  }
  return { queue }
}

/** Waits for `replicas` to acknowledge what `queue`'s connection wrote (the run of `id`); rejects when they do not. */
const replicated = async (queue: Bull.Queue, id: string, prefix: string, { replicas, timeout }: Replication) => {
  const acknowledged = await waitForReplicas(await queue.backend.client, prefix, replicas, timeout)
  if (acknowledged < replicas) throw new NotReplicatedError(id, acknowledged, replicas, timeout)
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
 * Adds a run to a queue of your own, as {@link make}'s `submit` does: the job's data is a `Durable.StoredRun`,
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
 * @since 1.0.0
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
 * options), { connection, ...BullMQ.workerOptions })`. What {@link make}'s workers run.
 *
 * **Details**
 *
 * Each delivery of a job goes through `Durable.deliver`, then:
 *
 * - delivered before its stored `dueAt`: delayed again until then (rounded up to a whole ms), no attempt;
 * - a failure the schedule retries: the new state is stored in the job's data (`updateData`), the job is delayed
 *   until the new `dueAt`, and `onRetry` is called (BullMQ's failure path delays the job once the processor has
 *   thrown: after `onRetry`): state first, so that a crash between the two writes leaves a job that is delivered
 *   early and delayed again, never retried early. A retry already due once its state is stored (a delay of 0, or
 *   shorter than the write took) is not delayed: it is made at once, in the same delivery, as stored (a crash
 *   during it delivers the job again with that state), sparing the two round trips that delay the job and fetch
 *   it again. **Gotcha**: so a run whose retries are all due at once (a schedule of zero delays) keeps its worker's
 *   slot until it ends, where BullMQ would send each retry behind the jobs waiting;
 * - done: the outcome is stored (when `onDone` is set), `onDone` is called, and the job completes with the stored
 *   outcome as its return value. A worker killed after `onDone` and before completing calls it again, with the
 *   stored outcome.
 * - a failed `updateData` is made again (`writeRetry` of {@link ProcessorOptions}), never the attempt; a job gone
 *   from Redis (BullMQ's `Missing key for job`) ends the delivery, reported as {@link RunLost}.
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
 * **Gotcha**: a `Worker` of your own blocks up to 10 s after a wait that failed (its master died, a Cluster failed
 * over) before it fetches a delayed job that fell due meanwhile; the workers of {@link make} do not (see
 * {@link EngineOptions}, Redis Cluster).
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
 * @since 1.0.0
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
  const timeout = durationAtLeast(where, 'options.timeout', 1, o.timeout ?? DEFAULT_TIMEOUT)
  if (o.onEvent !== undefined) validate.callable(where, 'options.onEvent', o.onEvent)
  const { onError, onEvent } = o
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
    const write = (run: Durable.StoredRun): Promise<void> =>
      withinRealTime(
        job.updateData(run).catch((e: unknown) => {
          throw (e as { readonly code?: unknown } | null)?.code === JOB_NOT_EXIST ? new RunLost(id, e) : e
        }),
        timeout,
        () => new Error(`${where}: updateData took longer than ${timeout} ms`)
      )
    try {
      let stored: unknown = job.data
      for (;;) {
        // One number for the delivery's events, told by deliver and by the step.
        const run = onEvent === undefined ? 0 : Event.nextRun()
        const context = { now: clock.now, signal: attempt.signal, options: o, run }
        const delivery = await Durable.deliver(def, id, stored, context)
        let again = false
        const end = await step(
          delivery,
          {
            saveRetry: write,
            saveOutcome: write,
            later: (dueAt) => {
              // A retry due by the time its state is stored (a delay shorter than the write, or none) is made at
              // once, below: delaying the job (BullMQ moves a job due now to the wait list without fetching the
              // next one) and fetching it again would be two round trips more.
              if (delivery._tag === 'Retry' && dueAt <= clock.now()) {
                again = true
                return undefined
              }
              // BullMQ's failure path delays the job once the processor throws, below; a job added otherwise is
              // moved.
              return viaFailure ? undefined : job.moveToDelayed(Math.ceil(dueAt), token)
            },
            // Returning completes the job.
            finish: () => Promise.resolve()
          },
          {
            id,
            clock,
            signal: attempt.signal,
            writeRetry,
            onError,
            onEvent,
            run,
            definition: def.name,
            gone: (e) => e instanceof RunLost
          }
        )
        switch (end._tag) {
          case 'Later':
            if (!again) throw viaFailure ? dueLater(end.dueAt) : new DelayedError()
            // the run as stored: the retry's state, written above
            if (delivery._tag === 'Retry' && !attempt.signal.aborted) {
              stored = delivery.run
              continue
            }
            // the worker closes: no attempt now, the retry left due at once, as an abandoned one is
            await job.moveToDelayed(clock.now(), token)
            throw new DelayedError()
          case 'Abandoned':
            // The worker is closing, and BullMQ records no failure then: leave the job due at once, explicitly.
            await job.moveToDelayed(clock.now(), token)
            throw new DelayedError()
          case 'Done':
            return delivery._tag === 'Done' ? delivery.outcome : null
        }
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
 *   {@link workerOptions}; its `close({ deadline })` aborts the attempts' signal and waits for them, forcing
 *   after the deadline (default 10 s; see `Durable.CloseOptions`).
 * - `pending(def)`: the ids of the jobs of `def.name` waiting, delayed or active, and of the completed ones
 *   still kept (`keepDone`).
 * - `close({ deadline })` closes the workers and queues made by this engine (not an ioredis instance you passed),
 *   within `deadline` + 1 s, whether Redis answers or not.
 * - How long each call may wait while Redis is down: `submit` and `pending` at most `timeout` (then they reject);
 *   a worker's `close` and `close` at most `deadline` + 1 s; a run's write at most `timeout` per try, retried on
 *   `writeRetry`. Attempts are not made meanwhile: BullMQ fetches no job.
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
 *   const engine = BullMQ.make({ connection: { host: '127.0.0.1', port: 6379 }, lockDuration: 10_000 })
 *   const working = await engine.work(resize, { concurrency: 4 })
 *   await engine.submit(resize, 'img-1', 'https://example.com/1.png')
 *   process.once('SIGTERM', () => void working.close().then(() => engine.close()))
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: EngineOptions): Durable.Engine => {
  const where = 'BullMQ.make'
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
  checkClusterPrefix(where, connection, prefix)
  const keepDone = durationAtLeast(where, 'options.keepDone', 0, options.keepDone ?? DEFAULT_KEEP_DONE)
  const lockDuration = durationAtLeast(where, 'options.lockDuration', 1, options.lockDuration ?? 30_000)
  const stalledInterval = durationAtLeast(where, 'options.stalledInterval', 1, options.stalledInterval ?? 30_000)
  const { writeRetry } = options
  if (writeRetry !== undefined) validate.schedule(where, 'options.writeRetry', writeRetry)
  const timeout = durationAtLeast(where, 'options.timeout', 1, options.timeout ?? DEFAULT_TIMEOUT)
  const { onError, onEvent } = options
  if (onError !== undefined) validate.callable(where, 'options.onError', onError)
  if (onEvent !== undefined) validate.callable(where, 'options.onEvent', onEvent)
  const replication = replicationOptions(where, options.waitForReplicas, timeout)
  const base = { connection: connection as Bull.ConnectionOptions, ...(prefix === undefined ? {} : { prefix }) }
  const queues = new Map<string, Bull.Queue>()
  const workers = new Set<Durable.Worker>()
  let closed = false
  let checked = false

  const late = (what: string) => (): Error =>
    new Error(`${where}: ${what} took longer than ${timeout} ms (is Redis reachable?)`)

  /**
   * Warns when the server may lose acknowledged runs (see the gotcha of EngineOptions); once per engine, through
   * the client of its first queue or worker (an engine that only works submits nothing, and is warned all the same).
   */
  const checkServer = async (connected: Promise<unknown>, name: string): Promise<void> => {
    if (checked) return
    checked = true
    let settings: ReadonlyArray<unknown>
    try {
      // an ioredis client (IRedisClient does not declare config)
      const client = (await withinRealTime(connected, timeout, late('connecting'))) as {
        readonly config: (op: 'GET', key: string) => Promise<unknown>
      }
      settings = await withinRealTime(
        Promise.all([client.config('GET', 'appendonly'), client.config('GET', 'maxmemory-policy')]),
        timeout,
        late('CONFIG GET')
      )
    } catch {
      // CONFIG disabled or renamed (managed services), or no answer: nothing to say about settings not read.
      return
    }
    const value = (reply: unknown): string | undefined =>
      Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined
    const [appendonly, policy] = settings.map(value)
    if (appendonly !== undefined && appendonly !== 'yes')
      reportError(onError, new RedisSettingsWarning('appendonly', appendonly), { queue: name })
    if (policy !== undefined && policy !== 'noeviction')
      reportError(onError, new RedisSettingsWarning('maxmemory-policy', policy), { queue: name })
  }

  const checkOpen = (what: string): void => {
    if (closed) throw new Error(`${where}: ${what}: the engine is closed`)
  }

  const queueOf = (name: string): Bull.Queue => {
    let queue = queues.get(name)
    if (queue === undefined) {
      queue = new (bull(where).Queue)(toBullId(name), base)
      queue.on('error', (e) => reportError(onError, e, { queue: name }))
      queues.set(name, queue)
      void checkServer(queue.backend.client, name)
    }
    return queue
  }

  return {
    submit: async (def, id, payload) => {
      checkOpen('submit')
      checkDefinition(`${where}: submit`, def)
      checkId(`${where}: submit`, id)
      const queue = queueOf(def.name)
      const added = submit(queue as unknown as QueueLike, def, id, payload, { keepDone }).then(() =>
        replication === undefined ? undefined : replicated(queue, id, prefix ?? 'bull', replication)
      )
      await withinRealTime(added, timeout, late(`submit of ${JSON.stringify(id)}`))
      tell(onEvent, onError, {
        _tag: 'RunSubmitted',
        source: 'durable',
        run: 0,
        at: Date.now(),
        id,
        definition: def.name
      })
    },
    pending: async (def) => {
      checkOpen('pending')
      checkDefinition(`${where}: pending`, def)
      const queue = queueOf(def.name)
      const [pending, done] = await withinRealTime(
        Promise.all([
          queue.getRanges(['wait', 'prioritized', 'delayed', 'active', 'waiting-children'], 0, -1, true),
          queue.getRanges(['completed'], 0, -1, true)
        ]),
        timeout,
        late('pending')
      )
      const ids = (jobIds: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(jobIds.map(fromBullId))].sort()
      return { pending: ids(pending), done: ids(done) }
    },
    work: async (def, workOptions) => {
      checkOpen('work')
      checkDefinition(`${where}: work`, def)
      const o = checkWorkOptions(`${where}: work`, workOptions)
      const concurrency = validate.positiveCount(`${where}: work`, 'options.concurrency', o.concurrency ?? 1)
      const shutdown = new AbortController()
      const run = processor(def, { ...o, onEvent: o.onEvent ?? onEvent, signal: shutdown.signal, writeRetry, timeout })
      // Two parameters: BullMQ makes an AbortController per job for a processor that takes its signal, and no one
      // cancels the jobs of this Worker (it is the engine's own); the attempts abort with `shutdown`.
      const worker = new (bull(where).Worker)(toBullId(def.name), (job, token) => run(job, token), {
        ...base,
        concurrency,
        lockDuration,
        stalledInterval,
        ...workerOptions
      })
      // a failed wait leaves BullMQ's worker blocked up to 10 s on a marker gone with the old master: set it again
      const wake = waker({ client: worker.backend.client, keys: worker.keys, timeout, signal: shutdown.signal })
      worker.on('error', (e) => {
        reportError(o.onError, e, aboutJob(e, def.name))
        wake()
      })
      void checkServer(worker.backend.client, def.name)
      await worker.waitUntilReady()
      const handle: Durable.Worker = {
        close: async (closeOptions) => {
          const deadline = closeDeadline(`${where}: close`, closeOptions)
          workers.delete(handle)
          shutdown.abort()
          // Worker.close(true) after a graceful close returns the same promise: disconnecting is what forces.
          await closeWithin(
            deadline,
            () => worker.close(),
            () => withinRealTime(worker.disconnect(), FORCE_WAIT, late('disconnecting')),
            (e) => reportError(o.onError, e, { queue: def.name })
          )
        }
      }
      workers.add(handle)
      return handle
    },
    close: async (closeOptions) => {
      const deadline = closeDeadline(`${where}: close`, closeOptions)
      closed = true
      // Side by side: a worker has connections of its own, so each is bounded by the deadline, not their sum.
      await Promise.all([
        ...[...workers].map((w) => w.close({ deadline })),
        ...[...queues].map(([name, q]) =>
          closeWithin(
            deadline,
            () => q.close(),
            () => withinRealTime(q.disconnect(), FORCE_WAIT, late('disconnecting')),
            (e) => reportError(onError, e, { queue: name })
          )
        )
      ])
      queues.clear()
    }
  }
}
