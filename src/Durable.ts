/**
 * Durable retries: runs of an action that survive a restart and, with a shared engine, a fleet of workers.
 *
 * A {@link Definition} names a kind of run: its schedule, the codec of its payload (plain JSON) and its action.
 * An {@link Engine} stores the runs submitted to it and has workers make their attempts when due:
 * `FileEngine.make` (module `fp-ts-retry/FileEngine`) for one machine, `BullMQ.make` (module
 * `fp-ts-retry/BullMQ`) for many workers on Redis. Every engine makes its decisions through {@link deliver}, one
 * step built on the `Driver`, so every engine decides alike: the same attempts, delays and outcome for the same
 * definition, seed and failures.
 *
 * This module loads neither bullmq nor ioredis.
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as FileEngine from 'fp-ts-retry/FileEngine'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as E from 'fp-ts/Either'
 * import * as t from 'io-ts'
 * import { pipe } from 'fp-ts/function'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * const sendInvoice = Durable.define({
 *   name: 'send-invoice',
 *   schedule: pipe(Schedule.exponential(10), Schedule.intersect(Schedule.recurs(5))),
 *   payload: t.type({ invoice: t.number }),
 *   // fails twice, then succeeds: the attempt number comes from the run's status
 *   action: (payload, run) => () =>
 *     Promise.resolve(run.status.iterNumber < 2 ? E.left('busy') : E.right(`sent ${payload.invoice} as ${run.id}`))
 * })
 *
 * async function main() {
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-'))
 *   const engine = FileEngine.make({ dir })
 *   const done = new Promise<string>((resolve) =>
 *     engine.work(sendInvoice, { onDone: ({ id, result, status, reason }) => resolve(`${id}: ${JSON.stringify(result)} after ${status.iterNumber + 1} attempts (${reason})`) })
 *   )
 *   await engine.submit(sendInvoice, 'invoice-42', { invoice: 42 })
 *   assert.strictEqual(await done, 'invoice-42: {"_tag":"Right","right":"sent 42 as invoice-42"} after 3 attempts (succeeded)')
 *   await engine.close()
 *   fs.rmSync(dir, { recursive: true, force: true })
 * }
 * main()
 *
 * @since 1.0.0
 */
import * as E from 'fp-ts/Either'
import * as O from 'fp-ts/Option'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as t from 'io-ts'
import type { RetryBudget } from './Budget'
import * as Decision from './Decision'
import * as Driver from './Driver'
import * as Event from './Event'
import * as Guard from './Guard'
import {
  decodeState,
  defaultRandom,
  describeError,
  errorLines,
  reportError,
  restoreState,
  tell
} from './durable/shared'
import { isPromise } from './internal/promise'
import { showValue } from './internal/show'
import { JsonCodec } from './internal/json'
import * as validate from './internal/validate'
import type * as Random from './Random'
import type * as model from './internal/model'
import type { StopReason } from './internal/model'
import { RetryStateCodec, type RetryState } from './RetryState'
import * as RetryStatus from './RetryStatus'
import type { Json, Schedule } from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What an attempt is told about its run: the run's id (the idempotency key to hand downstream), its retry status
 * (`iterNumber + 1` is the attempt's number) and a signal that aborts when the worker closes.
 *
 * @example
 * import type { RunContext } from 'fp-ts-retry/Durable'
 *
 * const headers = (run: RunContext) => ({ 'Idempotency-Key': run.id, 'X-Attempt': String(run.status.iterNumber + 1) })
 *
 * @category model
 * @since 1.0.0
 */
export interface RunContext {
  readonly id: string
  readonly status: RetryStatus.RetryStatus
  readonly signal: AbortSignal
}

/**
 * A kind of durable run: see {@link define}.
 *
 * **Details**
 *
 * - `name` names the queue (or the store's folder): definitions that share a name share their runs, so a worker
 *   meets runs stored by another version of the definition.
 * - `errorCodec` and `valueCodec` store the outcome of a run while its `onDone` is pending, so that a repeated
 *   `onDone` sees the same outcome (see {@link WorkOptions}).
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import * as assert from 'assert'
 *
 * const ping: Durable.Definition<string, string, number> = Durable.define({
 *   name: 'ping',
 *   schedule: Schedule.recurs(3),
 *   payload: t.string,
 *   action: (host: string) => TE.right(host.length)
 * })
 * assert.strictEqual(ping.name, 'ping')
 *
 * @category model
 * @since 1.0.0
 */
export interface Definition<P, E, A> {
  readonly name: string
  readonly schedule: Schedule<E>
  readonly payload: t.Type<P, Json, unknown>
  readonly action: (payload: P, run: RunContext) => TaskEither<E, A>
  readonly errorCodec: t.Type<E, Json, unknown>
  readonly valueCodec: t.Type<A, Json, unknown>
}

/**
 * The argument of {@link define}: a {@link Definition} whose outcome codecs are optional.
 *
 * @example
 * import type { DefinitionOptions } from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 *
 * const options: DefinitionOptions<number, Error, void> = {
 *   name: 'refund',
 *   schedule: Schedule.exponential(1000),
 *   payload: t.number,
 *   action: () => TE.right(undefined)
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface DefinitionOptions<P, E, A> {
  readonly name: string
  readonly schedule: Schedule<E>
  readonly payload: t.Type<P, Json, unknown>
  readonly action: (payload: P, run: RunContext) => TaskEither<E, A>
  readonly errorCodec?: t.Type<E, Json, unknown> | undefined
  readonly valueCodec?: t.Type<A, Json, unknown> | undefined
}

/**
 * What a worker does besides the attempts: hooks, a shared budget, how many runs at once, where draws come from.
 *
 * **Details**
 *
 * - `onDone({ id, result, status, reason })`: once per run, at least once: the outcome is stored before the hook is
 *   called, and a worker killed after the hook and before the run is marked done calls it again, with the same
 *   outcome (decoded from the store: an `Error` without a codec comes back as an `Error` of the same name and
 *   message). A `Left` is the last error, or a {@link RunError} when the run could not go on. When it throws, the
 *   error goes to `onError` and the hook is called again a second later.
 * - `onRetry({ id, error, status, delay })`: once the retry's state is stored; `status` is the one the schedule
 *   decided with. Its errors go to `onError`.
 * - `budget`: a shared {@link RetryBudget} (for a fleet: `RedisBudget.retryThrottle`), told of every attempt; a
 *   refusal ends the run with reason `'budget'`. Its answers may be promises. When it throws or rejects, a failed
 *   attempt ends the run as a {@link Defect} (never an early retry); a successful one stays a success, and the
 *   error goes to `onError`.
 * - `guards`: more `Guard.Guard`s, told of every attempt after the budget (a rate limiter): the one that refuses
 *   ends the run with its reason.
 * - `concurrency`: how many attempts the worker makes at once (default 1).
 * - `random(id)`: called once per run, at its first failure; the generator's state is then stored with the run, so
 *   a resumed run draws what an uninterrupted one would. Default: `Random.seeded` with a random seed.
 * - `onError({ error, id, queue })`: where a hook's error goes; default: a process warning. A worker never crashes
 *   on one.
 * - `onEvent(event)`: told, as `Event.Event`s with `source: 'durable'` and the run's `id`, of each delivery
 *   (`RunDelivered`), each attempt (`AttemptStarted`, then `AttemptSucceeded` or `AttemptFailed` with its
 *   latency), the decision (`RunStopped` with the attempts made and the stop reason), a stored record found
 *   damaged (`RunCorrupt`), each failed write (`WriteFailed`), a retry stored (`RunRetried`, with `dueAt`), a
 *   run marked done (`RunCompleted`), and a delivery that ends otherwise, with nothing stored (`RunAbandoned`: the
 *   worker closed or the job was cancelled mid-attempt, a write given up, the run gone). Each delivery has a `run` number of its own; the `id` ties a run's
 *   deliveries together, across workers and restarts. Default: the engine's `onEvent`. An observer that throws is
 *   reported to `onError`, never thrown into the run.
 *
 * @example
 * import type { WorkOptions } from 'fp-ts-retry/Durable'
 * import * as Random from 'fp-ts-retry/Random'
 *
 * const log: Array<string> = []
 * const options: WorkOptions<Error, string> = {
 *   concurrency: 8,
 *   random: () => Random.seeded(42),
 *   onRetry: ({ id, error, status, delay }) => void log.push(`${id}: attempt ${status.iterNumber + 1} failed (${error.message}), next in ${delay} ms`),
 *   onDone: ({ id, result, reason }) => void log.push(`${id}: ${result._tag} (${reason})`)
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface WorkOptions<E, A> {
  readonly onDone?: ((done: RunDone<E, A>) => void | Promise<void>) | undefined
  readonly onRetry?: ((retried: RunRetried<E>) => void | Promise<void>) | undefined
  readonly budget?: RetryBudget | undefined
  readonly guards?: ReadonlyArray<Guard.Guard> | undefined
  readonly concurrency?: number | undefined
  readonly random?: ((id: string) => Random.Random) | undefined
  readonly onError?: ((failure: WorkerError) => void) | undefined
  readonly onEvent?: Event.Observer | undefined
}

/**
 * What a durable run's `onDone` is told: the run's `id`, its final `Either` (the last error, or a
 * {@link RunError} when it could not go on), a status and why it ended.
 *
 * @example
 * import type { RunDone } from 'fp-ts-retry/Durable'
 *
 * const line = ({ id, result, reason }: RunDone<Error, string>): string => `${id}: ${result._tag} (${reason})`
 *
 * @category model
 * @since 1.0.0
 */
export interface RunDone<E, A> {
  readonly id: string
  readonly result: E.Either<E | RunError, A>
  readonly status: RetryStatus.RetryStatus
  readonly reason: StopReason
}

/**
 * What a durable run's `onRetry` is told once its retry is stored: the run's `id`, the error, the status the
 * schedule decided with and the delay.
 *
 * @example
 * import type { RunRetried } from 'fp-ts-retry/Durable'
 *
 * const line = ({ id, error, delay }: RunRetried<Error>): string => `${id}: ${error.message}, next in ${delay} ms`
 *
 * @category model
 * @since 1.0.0
 */
export interface RunRetried<E> {
  readonly id: string
  readonly error: E
  readonly status: RetryStatus.RetryStatus
  readonly delay: number
}

/**
 * What `onError` is told: an error a worker met and went on from (a hook that threw, a write that failed, a lost
 * connection), with the `id` of the run it concerns, or the `queue` (a definition's name) when it concerns no
 * single run.
 *
 * @example
 * import type { WorkerError } from 'fp-ts-retry/Durable'
 *
 * const line = ({ error, id, queue }: WorkerError): string => `${id ?? queue ?? 'engine'}: ${String(error)}`
 *
 * @category model
 * @since 1.0.0
 */
export type WorkerError = model.WorkerError

/**
 * A worker started by {@link Engine}'s `work`: `close()` stops it taking runs, aborts the signal of the attempts
 * in flight and resolves once they have ended, or once `deadline` ms have passed (see {@link CloseOptions}).
 *
 * @example
 * import type { Worker } from 'fp-ts-retry/Durable'
 *
 * const stopAll = (workers: ReadonlyArray<Worker>) => Promise.all(workers.map((w) => w.close({ deadline: 5_000 })))
 *
 * @category model
 * @since 1.0.0
 */
export interface Worker {
  readonly close: (options?: CloseOptions) => Promise<void>
}

/**
 * How long a `close` waits, in ms, before it forces.
 *
 * **Details**
 *
 * - `deadline` (default 10 s): `close` resolves by then, whatever the attempts in flight or the server do. What
 *   is forced is the engine's: on BullMQ, `Worker.close(true)` (the jobs in flight are left active, and delivered
 *   again after `lockDuration` and the next stalled check) and the connections disconnected; on files, the
 *   attempts that ignore their signal are left to end on their own. At least once: an attempt cut off by the
 *   deadline may run again.
 *
 * @example
 * import type { CloseOptions } from 'fp-ts-retry/Durable'
 *
 * // Kubernetes gives a pod 30 s between SIGTERM and SIGKILL: close within 20
 * const options: CloseOptions = { deadline: 20_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface CloseOptions {
  readonly deadline?: number | undefined
}

/**
 * What {@link Engine}'s `pending(def)` finds, to reconcile what was submitted with what finished: the ids of the
 * runs of `def.name` still pending (waiting, due later or in flight), and the ids of the done runs the engine
 * still remembers (for `keepDone`). An id submitted and in neither list was lost (for example by a Redis without
 * persistence that restarted): submit it again.
 *
 * @example
 * import type { Pending } from 'fp-ts-retry/Durable'
 *
 * const lost = (submitted: ReadonlyArray<string>, found: Pending): ReadonlyArray<string> =>
 *   submitted.filter((id) => !found.pending.includes(id) && !found.done.includes(id))
 *
 * @category model
 * @since 1.0.0
 */
export interface Pending {
  readonly pending: ReadonlyArray<string>
  readonly done: ReadonlyArray<string>
}

/**
 * Where runs are stored and worked: the file store (`FileEngine.make`) or a queue (`BullMQ.make`).
 *
 * **Details**
 *
 * - `submit(def, id, payload)` stores a run; it is idempotent by id: submitting an id that is pending, or done
 *   and still remembered (see the engine's `keepDone`), starts no second run. An id is any non-empty string. A
 *   payload its codec refuses (`codec.is`), or whose encoding is not plain JSON, is a `TypeError`.
 * - `work(def, options)` starts a worker for the runs of `def.name`: it makes every attempt when due, as
 *   {@link deliver} decides, and calls the hooks of {@link WorkOptions}.
 * - `pending(def)`: the ids of the runs of `def.name` still pending, and of the done ones still remembered (see
 *   {@link Pending}), sorted.
 * - `close(options)` closes the engine's workers and connections, forcing after `options.deadline` (see
 *   {@link CloseOptions}).
 * - Every engine gives at least once, never exactly once: an attempt in flight when a worker dies runs again.
 *   Make the action idempotent, with `run.id` as the idempotency key downstream.
 *
 * @example
 * import type { Engine } from 'fp-ts-retry/Durable'
 *
 * const drain = async (engine: Engine) => {
 *   await engine.close()
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface Engine {
  readonly submit: <P, E, A>(def: Definition<P, E, A>, id: string, payload: P) => Promise<void>
  readonly work: <P, E, A>(def: Definition<P, E, A>, options?: WorkOptions<E, A>) => Promise<Worker>
  readonly pending: <P, E, A>(def: Definition<P, E, A>) => Promise<Pending>
  readonly close: (options?: CloseOptions) => Promise<void>
}

/**
 * A run whose payload its codec does not decode (a submit that bypassed the codec, or a codec that changed).
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as assert from 'assert'
 *
 * const e = new Durable.PayloadInvalid('job-1', ['amount: "ten"'])
 * assert.strictEqual(e._tag, 'PayloadInvalid')
 *
 * @category model
 * @since 1.0.0
 */
export class PayloadInvalid extends Error {
  /**
   * The tag that tells this error apart in a {@link RunError}.
   *
   * @since 1.0.0
   */
  readonly _tag = 'PayloadInvalid'
  constructor(
    /** The run. */
    readonly id: string,
    /** What did not decode, as `path: value`. */
    readonly errors: ReadonlyArray<string>
  ) {
    super(`Durable: the payload of run ${JSON.stringify(id)} does not decode (${errors.join('; ')})`)
    this.name = 'PayloadInvalid'
  }
}

/**
 * A run whose stored data is damaged: its record (`'not a run'`), its retry state (`'not a RetryState'`: it does
 * not decode, or its schedule does not recognise it) or its stored outcome (`'not an outcome'`).
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as assert from 'assert'
 *
 * const e = new Durable.CorruptRun('job-1', 'not a RetryState', ['iterNumber: -1'])
 * assert.match(e.message, /iterNumber: -1/)
 *
 * @category model
 * @since 1.0.0
 */
export class CorruptRun extends Error {
  /**
   * The tag that tells this error apart in a {@link RunError}.
   *
   * @since 1.0.0
   */
  readonly _tag = 'CorruptRun'
  constructor(
    /** The run. */
    readonly id: string,
    /** Which part is damaged. */
    readonly reason: 'not a run' | 'not a RetryState' | 'not an outcome',
    /** What did not decode, as `path: value`. */
    readonly errors: ReadonlyArray<string>
  ) {
    super(`Durable: the stored data of run ${JSON.stringify(id)} is ${reason} (${errors.join('; ')})`)
    this.name = 'CorruptRun'
  }
}

/**
 * A run whose action threw or rejected instead of answering a `Left`, whose schedule threw, or whose budget threw
 * or rejected when told of a failure: a defect, not a failure, so it is not retried (as in the runner).
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as assert from 'assert'
 *
 * const e = new Durable.Defect('job-1', new TypeError('x is undefined'))
 * assert.ok(e.error instanceof TypeError)
 *
 * @category model
 * @since 1.0.0
 */
export class Defect extends Error {
  /**
   * The tag that tells this error apart in a {@link RunError}.
   *
   * @since 1.0.0
   */
  readonly _tag = 'Defect'
  constructor(
    /** The run. */
    readonly id: string,
    /** What was thrown. */
    readonly error: unknown
  ) {
    super(`Durable: the attempt of run ${JSON.stringify(id)} threw: ${describeError(error)}`)
    this.name = 'Defect'
  }
}

/**
 * What makes a run impossible to go on with. Each ends the run through `onDone` with a `Left`, reason `'failed'`
 * and no attempt (a {@link Defect} after the attempt that threw), while the worker goes on with other runs.
 *
 * **Details**
 *
 * - {@link PayloadInvalid}: the payload does not decode with the definition's codec.
 * - `Driver.ScheduleMismatch`: the stored state belongs to another schedule (the definition changed while the run
 *   waited). Its status is the stored one.
 * - {@link CorruptRun}: the stored record, retry state or outcome does not decode, or the stored state is not
 *   one its schedule recognises.
 * - {@link Defect}: the action threw or rejected, or the schedule threw.
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 *
 * const explain = (e: Durable.RunError): string => {
 *   switch (e._tag) {
 *     case 'PayloadInvalid': return `bad payload: ${e.errors.join(', ')}`
 *     case 'ScheduleMismatch': return `stored by ${e.found}, not ${e.expected}`
 *     case 'CorruptRun': return `damaged: ${e.reason}`
 *     case 'Defect': return `bug: ${String(e.error)}`
 *   }
 * }
 *
 * @category model
 * @since 1.0.0
 */
export type RunError = PayloadInvalid | Driver.ScheduleMismatch | CorruptRun | Defect

/**
 * A run as an engine stores it: plain JSON.
 *
 * **Details**
 *
 * - `id`: the id it was submitted with.
 * - `payload`: the payload, encoded by the definition's codec.
 * - `retry`: the `RetryState` of the retry that is due (`RetryState.RetryStateCodec`), `null` before the first
 *   failure.
 * - `outcome`: the outcome stored before `onDone` is called, `null` until then.
 * - `error` (optional): the error of the retried failure, encoded by the definition's `errorCodec`, kept while the
 *   run has guards: a success after it tells them of it, as the runner does, so that a budget refunds what that
 *   retry cost. Absent or `null` otherwise (a record stored before it existed reads as `null`).
 *
 * @example
 * import type { StoredRun } from 'fp-ts-retry/Durable'
 *
 * const fresh: StoredRun = { id: 'job-1', payload: { amount: 10 }, retry: null, outcome: null }
 *
 * @category model
 * @since 1.0.0
 */
export interface StoredRun {
  readonly id: string
  readonly payload: Json
  readonly retry: Json | null
  readonly outcome: Json | null
  readonly error?: Json | null | undefined
}

/**
 * What {@link deliver} asks the engine to do with a run it was handed.
 *
 * **Details**
 *
 * - `NotDue`: the run was delivered before its stored `dueAt` (a crash between two writes, a stalled job
 *   recovered, a `promote()`): delay it until `dueAt` again, without an attempt.
 * - `Retry`: the attempt failed and the schedule retries: store `run` (its `state` is the new retry state)
 *   first, then delay the run until `dueAt`, then call `notify` (the `onRetry` hook).
 * - `Done`: the run is over. Store `run` when it is not `null` (it holds the outcome, `outcome`), then call
 *   `notify` (the `onDone` hook), then mark the run done. When `notify` rejects, keep the run and deliver it again
 *   later: its stored outcome is repeated.
 * - `Abandoned`: the worker closed during the attempt, whose failure may be the abort's: leave the run as it is,
 *   due now.
 *
 * @example
 * import type { Delivery } from 'fp-ts-retry/Durable'
 *
 * const describe = (d: Delivery): string =>
 *   d._tag === 'NotDue' || d._tag === 'Retry' ? `due at ${d.dueAt}` : d._tag
 *
 * @category model
 * @since 1.0.0
 */
export type Delivery =
  | { readonly _tag: 'NotDue'; readonly dueAt: number }
  | {
      readonly _tag: 'Retry'
      readonly run: StoredRun
      readonly state: RetryState
      readonly dueAt: number
      readonly delay: number
      readonly notify: () => Promise<void>
    }
  | {
      readonly _tag: 'Done'
      readonly run: StoredRun | null
      readonly outcome: Json | null
      readonly reason: StopReason
      readonly notify: () => Promise<void>
    }
  | { readonly _tag: 'Abandoned' }

/**
 * What {@link deliver} needs from the engine: the time (epoch ms, the clock `dueAt` is stored in), the worker's
 * signal and the worker's options; `run`, the number of the delivery's events (default: `Event.nextRun()`), when
 * the engine tells events of its own about the same delivery.
 *
 * @example
 * import type { DeliveryContext } from 'fp-ts-retry/Durable'
 *
 * const context: DeliveryContext<Error, string> = { now: Date.now, signal: new AbortController().signal, options: {} }
 *
 * @category model
 * @since 1.0.0
 */
export interface DeliveryContext<E, A> {
  readonly now: () => number
  readonly signal: AbortSignal
  readonly options: WorkOptions<E, A>
  readonly run?: number | undefined
}

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

const isPlainJson = (value: unknown): value is Json => {
  try {
    return JSON.stringify(value) !== undefined
  } catch {
    return false
  }
}

/**
 * The outcome codec used when a definition gives none: JSON values as they are, an `Error` as its name and
 * message (decoded to an `Error` of the same name and message), `undefined` as such, anything else as its text.
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as assert from 'assert'
 *
 * const stored = Durable.plainCodec.encode(new RangeError('too big'))
 * const back = Durable.plainCodec.decode(JSON.parse(JSON.stringify(stored)))
 * assert.ok(back._tag === 'Right' && back.right instanceof Error && back.right.name === 'RangeError')
 * assert.deepStrictEqual(Durable.plainCodec.decode(Durable.plainCodec.encode({ sent: true })), { _tag: 'Right', right: { sent: true } })
 *
 * @category codecs
 * @since 1.0.0
 */
export const plainCodec: t.Type<unknown, Json, unknown> = new t.Type<unknown, Json, unknown>(
  'Plain',
  (_): _ is unknown => true,
  (u, c) => {
    if (u !== null && typeof u === 'object' && !Array.isArray(u)) {
      const o = u as Record<string, unknown>
      if ('json' in o) return t.success(o.json)
      if (o.undefined === true) return t.success(undefined)
      const error = o.error as Record<string, unknown> | undefined
      if (
        error !== null &&
        typeof error === 'object' &&
        typeof error.name === 'string' &&
        typeof error.message === 'string'
      ) {
        const e = new Error(error.message)
        e.name = error.name
        return t.success(e)
      }
    }
    return t.failure(u, c, 'not a stored value')
  },
  (a): Json => {
    if (a instanceof Error) return { error: { name: a.name, message: a.message } }
    if (a === undefined) return { undefined: true }
    if (isPlainJson(a)) return { json: JSON.parse(JSON.stringify(a)) as Json }
    return { json: describeError(a) }
  }
)

const StatusJson = t.type({
  iterNumber: t.number,
  elapsed: t.number,
  cumulativeDelay: t.number,
  previousDelay: t.union([t.number, t.null])
})

const StopReasonCodec = t.keyof({
  succeeded: null,
  failed: null,
  schedule: null,
  aborted: null,
  defect: null,
  budget: null,
  breaker: null,
  rateLimit: null,
  bulkhead: null,
  shed: null
} satisfies Record<StopReason, null>)

const Strings = t.readonlyArray(t.string)

const RunErrorJson = t.union([
  t.type({ _tag: t.literal('PayloadInvalid'), errors: Strings }),
  t.type({ _tag: t.literal('ScheduleMismatch'), expected: t.string, found: t.string }),
  t.type({
    _tag: t.literal('CorruptRun'),
    reason: t.keyof({ 'not a run': null, 'not a RetryState': null, 'not an outcome': null }),
    errors: Strings
  }),
  t.type({ _tag: t.literal('Defect'), error: t.unknown })
])

const OutcomeJson = t.type({
  result: t.union([
    t.type({ _tag: t.literal('Right'), right: t.unknown }),
    t.type({ _tag: t.literal('Left'), left: t.unknown }),
    t.type({ _tag: t.literal('RunError'), error: RunErrorJson })
  ]),
  status: StatusJson,
  reason: StopReasonCodec
})

const isRunError = (e: unknown): e is RunError =>
  e instanceof PayloadInvalid || e instanceof Driver.ScheduleMismatch || e instanceof CorruptRun || e instanceof Defect

const encodeRunError = (e: RunError): Json => {
  switch (e._tag) {
    case 'PayloadInvalid':
      return { _tag: e._tag, errors: [...e.errors] }
    case 'ScheduleMismatch':
      return { _tag: e._tag, expected: e.expected, found: e.found }
    case 'CorruptRun':
      return { _tag: e._tag, reason: e.reason, errors: [...e.errors] }
    case 'Defect':
      return { _tag: e._tag, error: plainCodec.encode(e.error) }
  }
}

const decodeRunError = (id: string, e: t.TypeOf<typeof RunErrorJson>): RunError => {
  switch (e._tag) {
    case 'PayloadInvalid':
      return new PayloadInvalid(id, e.errors)
    case 'ScheduleMismatch':
      return new Driver.ScheduleMismatch(e.expected, e.found)
    case 'CorruptRun':
      return new CorruptRun(id, e.reason, e.errors)
    case 'Defect': {
      const error = plainCodec.decode(e.error)
      return new Defect(id, E.isRight(error) ? error.right : e.error)
    }
  }
}

interface Outcome<E, A> {
  readonly result: E.Either<E | RunError, A>
  readonly status: RetryStatus.RetryStatus
  readonly reason: StopReason
}

const encodeOutcome = <P, E, A>(def: Definition<P, E, A>, outcome: Outcome<E, A>): Json => {
  const { result, status, reason } = outcome
  return {
    result: E.isRight(result)
      ? { _tag: 'Right', right: def.valueCodec.encode(result.right) }
      : isRunError(result.left)
      ? { _tag: 'RunError', error: encodeRunError(result.left) }
      : { _tag: 'Left', left: def.errorCodec.encode(result.left) },
    status: {
      iterNumber: status.iterNumber,
      elapsed: status.elapsed,
      cumulativeDelay: status.cumulativeDelay,
      previousDelay: O.isSome(status.previousDelay) ? status.previousDelay.value : null
    },
    reason
  }
}

const decodeOutcome = <P, E, A>(def: Definition<P, E, A>, id: string, json: unknown): Outcome<E, A> => {
  const corrupt = (errors: t.Errors): Outcome<E, A> => ({
    result: E.left(new CorruptRun(id, 'not an outcome', errorLines(errors))),
    status: RetryStatus.initial,
    reason: 'failed'
  })
  const decoded = OutcomeJson.decode(json)
  if (E.isLeft(decoded)) return corrupt(decoded.left)
  const { result, status, reason } = decoded.right
  let either: E.Either<E | RunError, A>
  if (result._tag === 'Right') {
    const value = def.valueCodec.decode(result.right)
    if (E.isLeft(value)) return corrupt(value.left)
    either = E.right(value.right)
  } else if (result._tag === 'Left') {
    const error = def.errorCodec.decode(result.left)
    if (E.isLeft(error)) return corrupt(error.left)
    either = E.left(error.right)
  } else {
    either = E.left(decodeRunError(id, result.error))
  }
  return {
    result: either,
    status: {
      iterNumber: status.iterNumber,
      elapsed: status.elapsed,
      cumulativeDelay: status.cumulativeDelay,
      previousDelay: O.fromNullable(status.previousDelay)
    },
    reason
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const isCodec = (value: unknown): boolean =>
  value !== null &&
  typeof value === 'object' &&
  typeof (value as t.Mixed).decode === 'function' &&
  typeof (value as t.Mixed).encode === 'function'

/**
 * Defines a kind of durable run: its name, schedule, payload codec and action.
 *
 * **Details**
 *
 * - `name`: a non-empty string; it names the queue (or the store's folder). Definitions that share a name share
 *   their runs: a worker meets runs stored by another version of the definition, and ends those it cannot go on
 *   with through `onDone` with a {@link RunError} (a payload that no longer decodes, a state of another schedule).
 * - `payload`: an io-ts codec whose output is plain JSON: job data stays JSON.
 * - `action(payload, run)`: one attempt. `run.id` is the idempotency key to hand downstream; `run.status` the
 *   retry status (`iterNumber` = retries made, `previousDelay` the schedule's delay exactly); `run.signal` aborts
 *   when the worker closes.
 * - `errorCodec`, `valueCodec` (default {@link plainCodec}): how an outcome is stored while its `onDone` is
 *   pending.
 * - A bad argument is a `TypeError` naming it.
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * // what BullMQ and pg-boss users ask for, each a line of the schedule: a cap, then jitter (so that capped retries
 * // do not land in step), a deadline, no retry for some errors
 * const schedule = pipe(
 *   Schedule.exponential(1_000),
 *   Schedule.capped(60_000),
 *   Schedule.fullJitter,
 *   Schedule.upTo(3_600_000),
 *   Schedule.whileInput((e: { status: number }) => e.status >= 500)
 * )
 * const charge = Durable.define({
 *   name: 'charge',
 *   schedule,
 *   payload: t.type({ customer: t.string, cents: t.number }),
 *   action: (payload, run) => TE.right(`charged ${payload.cents} with key ${run.id}`)
 * })
 * assert.strictEqual(charge.schedule, schedule)
 *
 * @category constructors
 * @since 1.0.0
 */
export const define = <P, E, A>(options: DefinitionOptions<P, E, A>): Definition<P, E, A> => {
  const where = 'Durable.define'
  validate.object(where, 'options', options)
  const { name, schedule, payload, action, errorCodec, valueCodec } = options
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`${where}: name must be a non-empty string, received ${showValue(name)}`)
  }
  validate.schedule(where, 'schedule', schedule)
  if (!isCodec(payload)) throw new TypeError(`${where}: payload must be an io-ts codec, received ${String(payload)}`)
  if (typeof action !== 'function')
    throw new TypeError(`${where}: action must be a function, received ${String(action)}`)
  if (errorCodec !== undefined && !isCodec(errorCodec)) {
    throw new TypeError(`${where}: errorCodec must be an io-ts codec, received ${String(errorCodec)}`)
  }
  if (valueCodec !== undefined && !isCodec(valueCodec)) {
    throw new TypeError(`${where}: valueCodec must be an io-ts codec, received ${String(valueCodec)}`)
  }
  return {
    name,
    schedule,
    payload,
    action,
    errorCodec: errorCodec ?? (plainCodec as t.Type<E, Json, unknown>),
    valueCodec: valueCodec ?? (plainCodec as t.Type<A, Json, unknown>)
  }
}

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

const noop = (): Promise<void> => Promise.resolve()

/** Reads a stored record; `undefined` when it is not one. */
const readRun = (stored: unknown): StoredRun | undefined => {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return undefined
  const o = stored as Record<string, unknown>
  if (!('payload' in o)) return undefined
  return {
    id: typeof o.id === 'string' ? o.id : '',
    payload: o.payload as Json,
    retry: (o.retry ?? null) as Json | null,
    outcome: (o.outcome ?? null) as Json | null,
    ...(o.error === undefined || o.error === null ? {} : { error: o.error as Json })
  }
}

/** The status a stored state holds, at `now`. */
const statusOfState = (state: RetryState, now: number): RetryStatus.RetryStatus => ({
  iterNumber: state.iterNumber,
  elapsed: now - state.startedAt,
  cumulativeDelay: state.cumulativeDelay,
  previousDelay: O.fromNullable(state.previousDelay)
})

/**
 * One delivery of a stored run to a worker: the one step every engine takes, built on the `Driver`, so that
 * every engine decides alike. It makes at most one attempt and answers what to store and when the run is due
 * again (see {@link Delivery}).
 *
 * **Details**
 *
 * In order:
 *
 * 1. A run with a stored outcome (its `onDone` did not finish): `Done`, repeating that outcome, no attempt.
 * 2. A stored retry state that does not decode: `Done` with a {@link CorruptRun}, no attempt (as for a state
 *    its schedule does not recognise, at step 4).
 * 3. A run delivered before its stored `dueAt`: `NotDue`, no attempt. So no retry starts earlier than its
 *    schedule, whatever delivered the run early.
 * 4. A state of another schedule (`Driver.ScheduleMismatch`) or a payload that does not decode
 *    ({@link PayloadInvalid}): `Done` with that error, no attempt.
 * 5. The attempt, with the run's status; its end is the time a delay counts from, as in the runner. A success
 *    is `Done` (`'succeeded'`). A failure goes to the `Driver` (made at the first failure, with `random(id)`,
 *    starting when that first attempt started; restored from the state after), then to the budget: `Done` when
 *    the schedule stops (`'schedule'`) or the budget refuses (`'budget'`), else `Retry`.
 *
 * Every `Done` that ends with `onDone` set carries the outcome to store first. `RunError`s end with reason
 * `'failed'`.
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const def = Durable.define({ name: 'n', schedule: Schedule.fromDelays([100, 200]), payload: t.number, action: () => TE.left('down') })
 *   let now = 1_000
 *   const context = { now: () => now, signal: new AbortController().signal, options: { random: () => Random.seeded(1) } }
 *   // an engine's loop, with an in-memory store
 *   let stored: unknown = { id: 'job-1', payload: 7, retry: null, outcome: null }
 *   const dueTimes: Array<number> = []
 *   for (;;) {
 *     const d = await Durable.deliver(def, 'job-1', stored, context)
 *     if (d._tag !== 'Retry') break
 *     stored = d.run
 *     dueTimes.push(d.dueAt)
 *     now = d.dueAt + 5 // delivered 5 ms late
 *   }
 *   assert.deepStrictEqual(dueTimes, [1_100, 1_305])
 *   // delivered early: no attempt
 *   now = 0
 *   assert.deepStrictEqual(await Durable.deliver(def, 'job-1', stored, context), { _tag: 'NotDue', dueAt: 1_305 })
 * }
 * main()
 *
 * @category interpreters
 * @since 1.0.0
 */
export const deliver = async <P, E, A>(
  def: Definition<P, E, A>,
  id: string,
  stored: unknown,
  context: DeliveryContext<E, A>
): Promise<Delivery> => {
  const { options, signal } = context
  const run = readRun(stored)
  const { onDone, onEvent } = options
  // One decision per delivery, from the stored run: the runner's (the driver, the guards, the events).
  let driver: Driver.Driver<E> | undefined
  const policy: Decision.Policy<E> = {
    schedule: def.schedule,
    guards: Decision.guardsOf('Durable.deliver', options),
    // read only when a fresh driver is made, at a run's first failure
    get random() {
      return (options.random ?? defaultRandom)(id)
    },
    // an observer that throws is reported, never thrown into the run
    onEvent: onEvent === undefined ? undefined : (event) => tell(onEvent, options.onError, event),
    source: 'durable',
    id,
    definition: def.name,
    run: onEvent === undefined ? 0 : context.run ?? Event.nextRun(),
    onGuardError: (e) => reportError(options.onError, e, { id })
  }
  let decision: Decision.Decision<E> | undefined = undefined
  /** The decision of a delivery that ends before its attempt: `attempts` made before, the run's start. */
  const before = (attempts: number, start: number): Decision.Decision<E> => {
    const d = new Decision.Decision<E>(policy, start)
    d.attempts = attempts
    return d
  }
  /** Ends the run with `outcome` (told once, unless repeated), and what to store. */
  const settle = (run: StoredRun, outcome: Outcome<E, A>, ended: Decision.Decision<E> | undefined): Delivery => {
    if (ended !== undefined) {
      if (E.isLeft(outcome.result) && outcome.result.left instanceof CorruptRun)
        ended.emit({ _tag: 'RunCorrupt', ...ended.base(context.now()), id, error: outcome.result.left })
      ended.end(outcome.reason, context.now())
    }
    if (onDone === undefined) return { _tag: 'Done', run: null, outcome: null, reason: outcome.reason, notify: noop }
    const encoded = ended === undefined ? null : encodeOutcome(def, outcome)
    return {
      _tag: 'Done',
      run: encoded === null ? null : { id: run.id, payload: run.payload, retry: run.retry, outcome: encoded },
      outcome: encoded ?? run.outcome,
      reason: outcome.reason,
      notify: async () => onDone({ id, result: outcome.result, status: outcome.status, reason: outcome.reason })
    }
  }
  const fail = (
    run: StoredRun,
    error: RunError,
    status: RetryStatus.RetryStatus,
    ended: Decision.Decision<E>
  ): Delivery =>
    settle(run, { result: E.left(error), status, reason: error instanceof Defect ? 'defect' : 'failed' }, ended)

  if (onEvent !== undefined)
    tell(onEvent, options.onError, {
      _tag: 'RunDelivered',
      source: 'durable',
      run: policy.run ?? 0,
      at: context.now(),
      id,
      definition: def.name
    })

  if (run === undefined) {
    const record: StoredRun = { id, payload: null, retry: null, outcome: null }
    const error = new CorruptRun(id, 'not a run', [`(root): ${showValue(stored, 60)}`])
    return fail(record, error, RetryStatus.initial, before(0, context.now()))
  }
  // 1. a repeated onDone
  if (run.outcome !== null) return settle(run, decodeOutcome(def, id, run.outcome), undefined)
  // 2. the stored state
  let state: RetryState | undefined
  if (run.retry !== null) {
    const decoded = decodeState(run.retry)
    if (E.isLeft(decoded)) {
      const error = new CorruptRun(id, 'not a RetryState', decoded.left)
      return fail(run, error, RetryStatus.initial, before(0, context.now()))
    }
    state = decoded.right
    // 3. delivered early
    if (state.dueAt > context.now()) return { _tag: 'NotDue', dueAt: state.dueAt }
  }
  // 4. the schedule and the payload
  if (state !== undefined) {
    // the restored driver tells the schedule's events (an ignored hint) as the run's, as the runner's does
    const restored = restoreState(def.schedule, state, (event) => decision?.scheduleEvent(event))
    if (E.isLeft(restored)) {
      const error = restored.left
      const status = statusOfState(state, context.now())
      return fail(
        run,
        error instanceof Driver.ScheduleMismatch ? error : new CorruptRun(id, 'not a RetryState', error),
        status,
        before(state.iterNumber, state.startedAt)
      )
    }
    driver = restored.right
  }
  const payload = def.payload.decode(run.payload)
  if (E.isLeft(payload)) {
    const status = state === undefined ? RetryStatus.initial : statusOfState(state, context.now())
    const error = new PayloadInvalid(id, errorLines(payload.left))
    return fail(run, error, status, before(status.iterNumber, state?.startedAt ?? context.now()))
  }
  // 5. the attempt
  const started = context.now()
  const d = new Decision.Decision(policy, driver?.start ?? started, driver, lastErrorOf(def, run))
  decision = d
  const status = driver === undefined ? RetryStatus.initial : driver.statusAt(started)
  d.begin(started)
  let result: E.Either<E, A>
  try {
    result = await def.action(payload.right, { id, status, signal })()
  } catch (e) {
    if (signal.aborted) return abandoned(d, { _tag: 'Left', left: e }, started, context.now())
    return fail(run, new Defect(id, e), status, d)
  }
  const ended = context.now()
  // the worker closed mid-attempt: the run is delivered again as stored, its attempt told
  if (signal.aborted && E.isLeft(result)) return abandoned(d, result, started, ended)
  let verdict: Decision.Verdict
  try {
    const decided = d.decide(result, ended)
    verdict = isPromise(decided) ? await decided : decided
  } catch (e) {
    // Not a fresh attempt a second later (an early retry, forever while the budget is down): a defect.
    return fail(run, new Defect(id, e), driver?.status ?? status, d)
  }
  if (typeof verdict === 'string') {
    const end = verdict === 'succeeded' ? (driver ?? d.driver).statusAt(ended) : d.driver.status
    return settle(run, { result, status: end, reason: verdict }, d)
  }
  const error = (result as E.Left<E>).left
  const next = d.driver.snapshot()
  const decided = d.driver.status
  const { onRetry } = options
  return {
    _tag: 'Retry',
    run: storedRetry(run, RetryStateCodec.encode(next) as unknown as Json, errorToStore(def, policy, error)),
    state: next,
    dueAt: next.dueAt,
    delay: verdict,
    notify: onRetry === undefined ? noop : async () => onRetry({ id, error, status: decided, delay: verdict })
  }
}

/** A run with its next retry state, and the error of its failure when the run keeps it. */
const storedRetry = (run: StoredRun, retry: Json, error: Json | null): StoredRun => {
  const { id, payload, outcome } = run
  return error === null ? { id, payload, retry, outcome } : { id, payload, retry, outcome, error }
}

/** A delivery the worker's close cut short: its attempt is told, the run is delivered again as stored. */
const abandoned = <E>(
  d: Decision.Decision<E>,
  result: E.Either<unknown, unknown>,
  started: number,
  ended: number
): Delivery => {
  d.attemptEnded(result, d.attempts, ended - started, ended)
  return { _tag: 'Abandoned' }
}

/**
 * The error of a retried failure as the run stores it, for the guards to be told with the success after it (a
 * budget refunds what that retry cost): only when the run has guards, and only as plain JSON through the
 * definition's error codec.
 */
const errorToStore = <P, E, A>(def: Definition<P, E, A>, policy: Decision.Policy<E>, error: E): Json | null => {
  if (policy.guards === undefined || policy.guards.length === 0) return null
  try {
    const encoded = def.errorCodec.encode(error)
    return JsonCodec.is(encoded) ? encoded : null
  } catch {
    return null
  }
}

/** The error of the stored run's last failure, decoded; `undefined` when none was stored or it does not decode. */
const lastErrorOf = <P, E, A>(def: Definition<P, E, A>, run: StoredRun): E | undefined => {
  if (run.error === undefined || run.error === null) return undefined
  const decoded = def.errorCodec.decode(run.error)
  return E.isRight(decoded) ? decoded.right : undefined
}
