/**
 * What the engines of `Durable` and `BullMQ` share besides `Durable.deliver`: the checks of their options, the
 * report of a hook's error, a signal that follows two others.
 *
 * @internal
 */
import type * as t from 'io-ts'
import { onAbort } from './abort'
import type { Json } from '../Schedule'
import { JsonCodec } from './json'
import { showValue } from './show'
import * as validate from './validate'

/** How long a run waits before its `onDone` is called again, after the hook threw. */
export const HOOK_RETRY_DELAY = 1_000

/** How long a done run's id is remembered, so that submitting it again starts nothing: 24 hours. */
export const DEFAULT_KEEP_DONE = 24 * 60 * 60 * 1_000

/** What a hook's error is reported to: `onError` if given, else a process warning (it never crashes the worker). */
export const reportError = (
  onError: ((error: unknown, id: string) => void) | undefined,
  error: unknown,
  id: string
): void => {
  if (onError !== undefined) {
    try {
      onError(error, id)
      return
    } catch (e) {
      error = e
    }
  }
  const text = error instanceof Error ? error.stack ?? error.message : String(error)
  process.emitWarning(`fp-ts-retry: run ${JSON.stringify(id)}: ${text}`, 'DurableRunWarning')
}

/** A whole number `>= 1`. */
export const positiveCount = (where: string, name: string, value: unknown): number => {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value
  throw new RangeError(`${where}: ${name} must be a whole number >= 1, received ${String(value)}`)
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
  readonly random?: unknown
  readonly budget?: unknown
}

/**
 * The options of a worker (`work`), checked where they are given: each hook a function, the budget a budget, so
 * that a bad one is an error naming it, not a run that fails at its first attempt.
 */
export const checkWorkOptions = <O extends WorkerHooks>(where: string, value: O | undefined): Partial<O> => {
  const o = optionsObject(where, 'options', value)
  for (const hook of ['onDone', 'onRetry', 'onError', 'random'] as const) {
    if (o[hook] !== undefined) validate.callable(where, `options.${hook}`, o[hook])
  }
  validate.services(where, 'options', { budget: o.budget })
  return o
}

/**
 * A signal per attempt that aborts when the worker's does (or the attempt's own `extra`, such as BullMQ's for a
 * job): one listener on the worker's signal for all the attempts in flight, so that a worker of concurrency 32
 * does not trip Node's warning of more than 10 listeners on one signal.
 */
export const attemptSignals =
  (worker: AbortSignal | undefined) =>
  (extra?: AbortSignal): { readonly signal: AbortSignal; readonly release: () => void } => {
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
