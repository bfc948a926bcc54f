/**
 * What the durable engines (`FileEngine`, `BullMQ`) and `Durable.deliver` share: the durable step around
 * `deliver` (what each answer makes an engine store, and in which order; what a storage error does), the restore
 * of a stored state, the default random, the checks of their options, the report of a hook's error, a signal that
 * follows two others.
 *
 * Not a foundation (`internal/`): it builds on the public core (the `Driver`, the guards, the schedule), and only
 * the durable modules import it (see `.dependency-cruiser.cjs`).
 *
 * @internal
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type * as t from 'io-ts'
import type { Clock } from '../Clock'
import * as Driver from '../Driver'
import type * as Event from '../Event'
import * as Decision from '../Decision'
import type * as Guard from '../Guard'
import type { StopReason, WorkerError } from '../internal/model'
import * as Random from '../Random'
import { RetryStateCodec, type RetryState } from '../RetryState'
import * as Schedule from '../Schedule'
import type { Json } from '../Schedule'
import { noop, onAbort } from '../internal/abort'
import { JsonCodec } from '../internal/json'
import { showValue } from '../internal/show'
import * as validate from '../internal/validate'

/** How long a run waits before its `onDone` is called again, after the hook threw. */
export const HOOK_RETRY_DELAY = 1_000

/** How long a done run's id is remembered, so that submitting it again starts nothing: 24 hours. */
export const DEFAULT_KEEP_DONE = 24 * 60 * 60 * 1_000

/** What a hook's error is reported to: `onError` if given, else a process warning (it never crashes the worker). */
export const reportError = (
  onError: ((failure: WorkerError) => void) | undefined,
  error: unknown,
  about: { readonly id?: string | undefined; readonly queue?: string | undefined }
): void => {
  if (onError !== undefined) {
    try {
      onError({ error, ...about })
      return
    } catch (e) {
      error = e
    }
  }
  const text = error instanceof Error ? error.stack ?? error.message : String(error)
  const what = about.id !== undefined ? `run ${JSON.stringify(about.id)}` : `queue ${JSON.stringify(about.queue ?? '')}`
  process.emitWarning(`fp-ts-retry: ${what}: ${text}`, 'DurableRunWarning')
}

/**
 * Tells `onEvent` of a durable run's event: an observer that throws is reported to `onError` (as a hook's error
 * is), never thrown into the run, so that watching a run cannot change what it does.
 */
export const tell = (
  onEvent: Event.Observer | undefined,
  onError: ((failure: WorkerError) => void) | undefined,
  event: Event.Event & { readonly id?: string | undefined }
): void => {
  if (onEvent === undefined) return
  try {
    onEvent(event)
  } catch (e) {
    reportError(onError, e, { id: event.id })
  }
}

/** How long `close` waits before it forces, by default: 10 s. */
export const DEFAULT_CLOSE_DEADLINE = 10_000

/** The `deadline` of `close`'s options, checked. */
export const closeDeadline = (where: string, options: { readonly deadline?: number | undefined } | undefined): number =>
  durationAtLeast(
    where,
    'options.deadline',
    0,
    optionsObject(where, 'options', options).deadline ?? DEFAULT_CLOSE_DEADLINE
  )

/**
 * `promise`, or after `ms` of real time (a deadline protects a process from a server that does not answer, whatever
 * clock its runs use) a rejection with `error()`. The timer never keeps the process alive. Not `internal/service`'s
 * `within`, which bounds a shared service's call on the run's clock.
 */
export const withinRealTime = <A>(promise: Promise<A>, ms: number, error: () => Error): Promise<A> =>
  // One promise, not a race and its finally: each write of a run's state goes through here.
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(error()), ms)
    timer.unref()
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })

/**
 * Closes gracefully within `deadline` ms, else forces: `graceful()` is awaited until the deadline, then `force()`
 * (whose own wait is bounded by the same deadline again). Resolves either way; what failed is reported.
 */
export const closeWithin = async (
  deadline: number,
  graceful: () => Promise<unknown>,
  force: () => Promise<unknown>,
  report: (error: unknown) => void
): Promise<void> => {
  const late = new Error('closing took longer than its deadline')
  try {
    await withinRealTime(graceful(), deadline, () => late)
    return
  } catch (e) {
    if (e !== late) report(e)
  }
  try {
    await withinRealTime(force(), deadline, () => late)
  } catch (e) {
    report(e)
  }
}

/** A duration in ms, `>= min`. */
export const durationAtLeast = (where: string, name: string, min: number, value: unknown): number =>
  validate.atLeast(where, name, min, value as number)

/** The options object itself, checked: an object or undefined. */
export const optionsObject = <O extends object>(where: string, name: string, value: O | undefined): Partial<O> => {
  return value === undefined ? {} : validate.object(where, name, value)
}

/**
 * A payload as a run stores it, encoded by its codec; a `TypeError` naming it unless the codec accepts it and its
 * encoding is plain JSON (`NaN` would be stored as `null`, `undefined` not at all), so that a run never fails as
 * `PayloadInvalid` for what its submit took.
 */
export const encodePayload = <P>(where: string, codec: t.Type<P, Json, unknown>, payload: P): Json => {
  if (!codec.is(payload)) {
    throw new TypeError(`${where}: payload must be a ${codec.name}, received ${showValue(payload)}`)
  }
  const encoded = codec.encode(payload)
  if (!JsonCodec.is(encoded)) {
    throw new TypeError(`${where}: payload encodes to ${showValue(encoded)}, which is not plain JSON`)
  }
  return encoded
}

/** What {@link checkWorkOptions} checks of a worker's options. */
interface WorkerHooks {
  readonly onDone?: unknown
  readonly onRetry?: unknown
  readonly onError?: unknown
  readonly onEvent?: unknown
  readonly random?: unknown
  readonly budget?: unknown
  readonly guards?: unknown
}

/**
 * The options of a worker (`work`), checked where they are given: each hook a function, the budget a budget, so
 * that a bad one is an error naming it, not a run that fails at its first attempt.
 */
export const checkWorkOptions = <O extends WorkerHooks>(where: string, value: O | undefined): Partial<O> => {
  const o = optionsObject(where, 'options', value)
  for (const hook of ['onDone', 'onRetry', 'onError', 'onEvent', 'random'] as const) {
    if (o[hook] !== undefined) validate.callable(where, `options.${hook}`, o[hook])
  }
  validate.services(where, 'options', { budget: o.budget })
  Decision.guardsOf(where, { guards: o.guards as ReadonlyArray<Guard.Guard> | undefined })
  return o
}

/**
 * A signal per attempt that aborts when the worker's does (or the attempt's own `extra`, such as BullMQ's for a
 * job): one listener on the worker's signal for all the attempts in flight, so that a worker of concurrency 32
 * does not trip Node's warning of more than 10 listeners on one signal. An attempt with only its own `extra` (a
 * signal per job) takes it as it is: a controller and two links per delivery cost more than the rest of the step.
 */
export const attemptSignals =
  (worker: AbortSignal | undefined) =>
  (extra?: AbortSignal): { readonly signal: AbortSignal; readonly release: () => void } => {
    if (worker === undefined && extra !== undefined) return { signal: extra, release: noop }
    const controller = new AbortController()
    const abort = (): void => controller.abort()
    if (worker?.aborted === true || extra?.aborted === true) controller.abort()
    // internal/abort: one listener per signal, whatever the number of attempts in flight.
    const unlinkWorker = worker === undefined ? undefined : onAbort(worker, abort)
    const unlinkExtra = extra === undefined ? undefined : onAbort(extra, abort)
    return {
      signal: controller.signal,
      release: () => {
        unlinkWorker?.()
        unlinkExtra?.()
      }
    }
  }

/** The check every engine makes of a definition it is handed. */
export const checkDefinition = (where: string, def: unknown): void => {
  const d = def as { readonly name?: unknown; readonly action?: unknown; readonly payload?: unknown } | null
  if (d === null || typeof d !== 'object' || typeof d.name !== 'string' || typeof d.action !== 'function') {
    throw new TypeError(`${where}: def must be a Definition (from Durable.define), received ${String(def)}`)
  }
}

/** The check every engine makes of a run's id: any non-empty string. */
export const checkId = (where: string, id: unknown): string => {
  if (typeof id === 'string' && id !== '') return id
  throw new TypeError(`${where}: id must be a non-empty string, received ${showValue(id)}`)
}

// -------------------------------------------------------------------------------------
// a stored run
// -------------------------------------------------------------------------------------

/** io-ts errors as `path: value` lines, one per path, at most 20. */
export const errorLines = (errors: t.Errors): ReadonlyArray<string> => {
  const lines = errors.map((e) => {
    const keys = e.context
      .map((c) => c.key)
      .filter((k) => k !== '')
      .join('.')
    return `${keys === '' ? '(root)' : keys}: ${showValue(e.value, 60)}`
  })
  return [...new Set(lines)].slice(0, 20)
}

/** The generator of a run when the worker gives none: seeded at random, so that its state can be stored. */
export const defaultRandom = (): Random.Random => Random.seeded(Math.floor(Math.random() * 0x100000000))

/**
 * A stored retry state, decoded; `Left` with what did not decode. Checked with `is` first: it accepts exactly what
 * `decode` accepts (every part of the codec is the identity on what it accepts, so a state that passes decodes to
 * itself), and allocates nothing, where `decode` builds a context per field at every delivery. Only a bad state
 * pays for the decoder, and for its error lines.
 */
export const decodeState = (json: unknown): E.Either<ReadonlyArray<string>, RetryState> =>
  RetryStateCodec.is(json) ? E.right(json) : pipe(RetryStateCodec.decode(json), E.mapLeft(errorLines))

/**
 * The `Driver` of a stored state: `Left(ScheduleMismatch)` for a state of another schedule, `Left(lines)` for one
 * its schedule cannot read (any other `Left` of `Driver.restore`, or a throw): a state that is not its own.
 */
export const restoreState = <In>(
  schedule: Schedule.Schedule<In>,
  state: RetryState,
  onEvent?: (event: Schedule.ScheduleEvent) => void
): E.Either<Driver.ScheduleMismatch | ReadonlyArray<string>, Driver.Driver<In>> => {
  let restored: E.Either<unknown, Driver.Driver<In>>
  try {
    restored = Driver.restore(schedule, state, undefined, onEvent)
  } catch (e) {
    return E.left([`scheduleState: ${describeError(e)}`])
  }
  if (E.isRight(restored)) return E.right(restored.right)
  // `unknown`, not the declared union: any error but a mismatch is a state its schedule does not recognise.
  const error = restored.left
  return E.left(error instanceof Driver.ScheduleMismatch ? error : [`scheduleState: ${describeError(error)}`])
}

/** An error as one line, whatever was thrown. */
export const describeError = (error: unknown): string => {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : showValue(error)
  } catch {
    return 'a value that cannot be shown'
  }
}

// -------------------------------------------------------------------------------------
// the durable step
// -------------------------------------------------------------------------------------

/**
 * How a failed write of a run's state or outcome is retried (the write, never the attempt): from 100 ms,
 * doubling, capped at 30 s, then equal jitter (cap first, so that workers sharing a full disk do not retry in
 * step), without end.
 */
export const DEFAULT_WRITE_RETRY: Schedule.Schedule<unknown> = pipe(
  Schedule.exponential(100),
  Schedule.capped(30_000),
  Schedule.equalJitter
)

/** `Durable.Delivery`, as far as the step reads it (the step cannot import the public module: no cycle). */
export type Answer<R> =
  | { readonly _tag: 'NotDue'; readonly dueAt: number }
  | {
      readonly _tag: 'Retry'
      readonly run: R
      readonly state: RetryState
      readonly dueAt: number
      readonly notify: () => Promise<void>
    }
  | {
      readonly _tag: 'Done'
      readonly run: R | null
      readonly outcome: Json | null
      readonly reason: StopReason
      readonly notify: () => Promise<void>
    }
  | { readonly _tag: 'Abandoned' }

/** What an engine stores, and how it delivers a run again. */
export interface Store<R> {
  /** Stores a retry's run (its new state is `state`). */
  readonly saveRetry: (run: R, state: RetryState) => Promise<void>
  /** Stores a done run's outcome. */
  readonly saveOutcome: (run: R, outcome: Json) => Promise<void>
  /** Has the run delivered again at `dueAt` (a timer, a delayed job). */
  readonly later: (dueAt: number) => void | Promise<void>
  /** Marks the run done, once its `onDone` has returned. */
  readonly finish: () => Promise<void>
}

/** What the step needs of the worker. */
export interface StepContext {
  readonly id: string
  /** The definition's name, told with every event (two definitions may run the same id). */
  readonly definition?: string | undefined
  readonly clock: Clock
  /** The worker's: a write retried while it closes is given up. */
  readonly signal: AbortSignal
  readonly writeRetry: Schedule.Schedule<unknown>
  readonly onError: ((failure: WorkerError) => void) | undefined
  /** Told `RunRetried`, `RunCompleted` and each `WriteFailed`, with the delivery's `run` number. */
  readonly onEvent?: Event.Observer | undefined
  readonly run?: number | undefined
  /** Whether a write's error says that the run is gone from the store: no write can succeed, none is made again. */
  readonly gone?: ((error: unknown) => boolean) | undefined
}

/** Tells the step's observer of a durable event of this run, now. */
const tellRun = (
  context: StepContext,
  event:
    | { readonly _tag: 'RunRetried'; readonly dueAt: number }
    | { readonly _tag: 'RunCompleted'; readonly reason: StopReason }
    | { readonly _tag: 'WriteFailed'; readonly error: unknown }
    | { readonly _tag: 'RunAbandoned' }
): void => {
  if (context.onEvent === undefined) return
  const base = {
    source: 'durable' as const,
    run: context.run ?? 0,
    at: context.clock.now(),
    id: context.id,
    definition: context.definition
  }
  tell(context.onEvent, context.onError, { ...base, ...event })
}

/** How a step ended: the run is due again at `dueAt`, is done, or was abandoned (the worker closed mid-attempt). */
export type StepEnd = { readonly _tag: 'Later'; readonly dueAt: number } | { readonly _tag: 'Done' | 'Abandoned' }

/** Calls a hook; its error goes to `onError`. `false` when it threw. */
export const notify = async (context: StepContext, hook: () => Promise<void>): Promise<boolean> => {
  try {
    await hook()
    return true
  } catch (e) {
    reportError(context.onError, e, { id: context.id })
    return false
  }
}

/**
 * Writes until the write succeeds, each failure reported and followed by a wait of `writeRetry`: the decision it
 * stores stays in memory meanwhile, so a full disk or a lost connection never runs an attempt again. Rejects with
 * the last error when `writeRetry` stops or the worker closes (the engine then delivers the run again as stored),
 * or at once when the run is `gone` from the store.
 */
export const persist = async (context: StepContext, write: () => Promise<void>): Promise<void> => {
  let driver: Driver.Driver<unknown> | undefined
  for (;;) {
    try {
      return await write()
    } catch (e) {
      reportError(context.onError, e, { id: context.id })
      tellRun(context, { _tag: 'WriteFailed', error: e })
      const now = context.clock.now()
      driver ??= Driver.make(context.writeRetry, { start: now, random: defaultRandom() })
      const delay = context.signal.aborted || context.gone?.(e) === true ? -1 : driver.advance(e, now)
      if (delay < 0) throw e
      await context.clock.sleep(delay, context.signal, 'backoff')
      if (context.signal.aborted) throw e
    }
  }
}

/**
 * The durable step: what an engine does with an answer of `Durable.deliver`, in this order. `NotDue`: deliver it
 * again when due. `Retry`: store the state, then have it delivered at `dueAt`, then `onRetry`: a crash between
 * two of them leaves a run delivered early and found `NotDue`, never retried early. `Done`: store the outcome,
 * then `onDone` (when it throws, the run is delivered again in a second, and repeats its stored outcome), then
 * mark the run done. Every write goes through {@link persist}. `RunRetried` is told once the retry is stored
 * and its delay set (on BullMQ, set as the processor throws, right after), `RunCompleted` once the run is marked
 * done (on BullMQ, as the processor returns), `WriteFailed` at each failed write, `RunAbandoned` when the step
 * ends otherwise (`Abandoned`, or a write or a delay that failed for good: the step then rejects with its error).
 */
export const step = async <R>(answer: Answer<R>, store: Store<R>, context: StepContext): Promise<StepEnd> => {
  // A delivery that ends neither stopped nor retried (the worker closed mid-attempt, a write given up or the run gone
  // from the store) says so: a run's observers (its span) would otherwise wait for an end that never comes.
  try {
    const end = await stepOf(answer, store, context)
    if (end._tag === 'Abandoned') tellRun(context, { _tag: 'RunAbandoned' })
    return end
  } catch (e) {
    tellRun(context, { _tag: 'RunAbandoned' })
    throw e
  }
}

const stepOf = async <R>(answer: Answer<R>, store: Store<R>, context: StepContext): Promise<StepEnd> => {
  switch (answer._tag) {
    case 'NotDue':
      await store.later(answer.dueAt)
      return { _tag: 'Later', dueAt: answer.dueAt }
    case 'Abandoned':
      return answer
    case 'Retry':
      await persist(context, () => store.saveRetry(answer.run, answer.state))
      await store.later(answer.dueAt)
      tellRun(context, { _tag: 'RunRetried', dueAt: answer.dueAt })
      await notify(context, answer.notify)
      return { _tag: 'Later', dueAt: answer.dueAt }
    case 'Done': {
      const { run, outcome } = answer
      if (run !== null && outcome !== null) await persist(context, () => store.saveOutcome(run, outcome))
      if (!(await notify(context, answer.notify))) {
        const dueAt = context.clock.now() + HOOK_RETRY_DELAY
        await store.later(dueAt)
        return { _tag: 'Later', dueAt }
      }
      await persist(context, store.finish)
      tellRun(context, { _tag: 'RunCompleted', reason: answer.reason })
      return { _tag: 'Done' }
    }
  }
}
