/**
 * One vocabulary for what every module decides: the runners, the guards, the breakers, hedging, the durable
 * engines and `Http` report what happened as {@link Event}s, plain records told to one option of the same name
 * and shape everywhere, `onEvent`. A log line is `JSON.stringify(event)` (an error it carries is the one thing
 * that may not be plain JSON); `fp-ts-retry/OpenTelemetry` turns them into spans and metrics.
 *
 * **Details**
 *
 * - `at` is the time of the event on the clock of the module that reported it (ms).
 * - `run` tells the runs of one process apart: every run of a runner, every hedged call and every durable run
 *   delivered has a number of its own, taken from one counter. Durable events also carry the run's `id` and its
 *   definition's name (`definition`).
 * - `attempt` counts attempts from 1: `recurs(3)` makes up to four.
 * - `key`: the policy key (a host, a tenant) of a keyed policy's events and of its runs' events, so that one
 *   key's events can be told from another's: a policy made by `Keyed.make` with its `onEvent` tells every event
 *   with its key, a run of `retrying` given `options.key` tells its own events with it, and `Http.retryingFetch`
 *   given a keyed breaker or rate limiter tells a request's events with its authority. Absent otherwise.
 * - Every run that starts ends with exactly one `RunStopped`, its last event, whatever ended it: a defect (an
 *   action that rejects, a hook that throws) too, with reason `'defect'`.
 * - **The one rule for observers and hooks that throw**, the same in every module. An observer (`onEvent`, a
 *   breaker's and a bulkhead's too) watches, it cannot change what a run does: when it throws, its error is
 *   reported as a process warning (`ObserverWarning`; a durable worker reports it to its `onError`) and the module
 *   goes on as if it had returned. A hook the run waits on (`onRetry`, `onDone`) takes part in the run: when it throws or
 *   rejects, the call rejects with that error (a defect: `RunStopped` with reason `'defect'`, or for `onDone`, after
 *   the run's own `RunStopped`); a durable worker, which has no caller, reports it to `onError` and delivers the
 *   run again.
 *
 * @example
 * import { retrying } from 'fp-ts-retry'
 * import type { Event } from 'fp-ts-retry/Event'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const events: Array<Event> = []
 *   await TestClock.run((clock) =>
 *     pipe(TE.left('down'), retrying(Schedule.fromDelays([100]), { clock, onEvent: (e) => void events.push(e) }))
 *   )
 *   assert.deepStrictEqual(
 *     events.map((e) => `${e._tag} at ${e.at}`),
 *     ['AttemptStarted at 0', 'AttemptFailed at 0', 'RetryScheduled at 0', 'AttemptStarted at 100', 'AttemptFailed at 100', 'RunStopped at 100']
 *   )
 * }
 * main()
 *
 * @since 1.0.0
 */
import type * as model from './internal/model'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * An attempt started (`attempt` counts from 1). For a hedged call, `index` is the hedge's (0 for the first).
 * `http`: the request an `Http` attempt sends (see {@link HttpAttempt}), on the events of `source: 'http'`.
 *
 * @example
 * import type { AttemptStarted } from 'fp-ts-retry/Event'
 *
 * const event: AttemptStarted = { _tag: 'AttemptStarted', source: 'retry', run: 1, at: 0, attempt: 1 }
 *
 * @category model
 * @since 1.0.0
 */
export interface AttemptStarted {
  readonly _tag: 'AttemptStarted'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly attempt: number
  readonly id?: string | undefined
  readonly definition?: string | undefined
  readonly http?: HttpAttempt | undefined
}

/**
 * An attempt ended: it succeeded, it failed with `error` (its `Left`), or it timed out after `timeout` ms (its
 * `error` is the run's `onTimeout()`). `latency` is how long it took. `http`: for an `Http` attempt, its request
 * and, when a response came, its `statusCode` (see {@link HttpAttempt}).
 *
 * @example
 * import type { AttemptEnded } from 'fp-ts-retry/Event'
 *
 * const event: AttemptEnded = { _tag: 'AttemptFailed', source: 'retry', run: 1, at: 12, attempt: 1, latency: 12, error: 'down' }
 *
 * @category model
 * @since 1.0.0
 */
export type AttemptEnded =
  | {
      readonly _tag: 'AttemptSucceeded'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly attempt: number
      readonly latency: number
      readonly id?: string | undefined
      readonly definition?: string | undefined
      readonly http?: HttpAttempt | undefined
    }
  | {
      readonly _tag: 'AttemptFailed'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly attempt: number
      readonly latency: number
      readonly error: unknown
      readonly id?: string | undefined
      readonly definition?: string | undefined
      readonly http?: HttpAttempt | undefined
    }
  | {
      readonly _tag: 'AttemptTimedOut'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly attempt: number
      readonly latency: number
      readonly timeout: number
      readonly error: unknown
      readonly id?: string | undefined
      readonly definition?: string | undefined
      readonly http?: HttpAttempt | undefined
    }

/**
 * What an `Http` attempt sent and, once it ended, what came back: the facts OpenTelemetry's HTTP client
 * conventions require of a request's span, as plain JSON. `Http.retryingFetch` and `Http.hedgingFetch` put it on
 * their `AttemptStarted` and attempt-ended events.
 *
 * **Details**
 *
 * - `method`: the method as `fetch` sends it (`GET`, `POST`, ...: the six it normalizes in upper case, any other
 *   as given).
 * - `url`: the absolute URL, as `url.full` asks: a user name and password in it are replaced by `REDACTED`, and
 *   so are the values of the query parameters that sign a URL (`X-Amz-Signature`, `X-Amz-Credential`,
 *   `X-Amz-Security-Token`, `AWSAccessKeyId`, `Signature`, `sig`, `X-Goog-Signature`), so that a log line of the
 *   event holds no secret.
 * - `serverAddress`: the URL's host (an IPv6 address without its brackets); `serverPort`: its port, or the
 *   scheme's (80 for `http:`, 443 for `https:`).
 * - `statusCode`: on an attempt-ended event, the status of the response, when one came (a `StatusError`'s too);
 *   absent when none did (a network error, a timeout, an abort).
 *
 * @example
 * import type { HttpAttempt } from 'fp-ts-retry/Event'
 *
 * const http: HttpAttempt = { method: 'GET', url: 'https://api.example.com/users/1', serverAddress: 'api.example.com', serverPort: 443, statusCode: 503 }
 *
 * @category model
 * @since 1.0.0
 */
export interface HttpAttempt {
  readonly method: string
  readonly url: string
  readonly serverAddress: string
  readonly serverPort: number
  readonly statusCode?: number | undefined
}

/**
 * The schedule (and every guard) agreed to another attempt after `delay` ms: `attempt` is the one that failed.
 * `hint`: the delay a `Schedule.withHint` hint asked for, when it set this delay.
 *
 * @example
 * import type { RetryScheduled } from 'fp-ts-retry/Event'
 *
 * const event: RetryScheduled = { _tag: 'RetryScheduled', source: 'retry', run: 1, at: 12, attempt: 1, delay: 100 }
 *
 * @category model
 * @since 1.0.0
 */
export interface RetryScheduled {
  readonly _tag: 'RetryScheduled'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly attempt: number
  readonly delay: number
  readonly hint?: number | undefined
  readonly id?: string | undefined
  readonly definition?: string | undefined
}

/**
 * A hint of `Schedule.withHint` (a `Retry-After`) that was not a usable delay and was ignored: the decision is
 * the schedule's own. `hint` is what was seen, as plain JSON: a finite number as itself, anything else (`NaN`,
 * `Infinity`, a string, an object) as its description, so that `JSON.stringify` keeps it.
 *
 * @example
 * import type { HintIgnored } from 'fp-ts-retry/Event'
 *
 * const event: HintIgnored = { _tag: 'HintIgnored', source: 'retry', run: 1, at: 12, attempt: 1, hint: -5 }
 *
 * @category model
 * @since 1.0.0
 */
export interface HintIgnored {
  readonly _tag: 'HintIgnored'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly attempt: number
  readonly hint: unknown
  readonly id?: string | undefined
  readonly definition?: string | undefined
}

/**
 * A guard refused the retry the schedule wanted (`reason`: the guard's, as the run's stop reason).
 *
 * @example
 * import type { GuardRefused } from 'fp-ts-retry/Event'
 *
 * const event: GuardRefused = { _tag: 'GuardRefused', source: 'retry', run: 1, at: 12, attempt: 1, reason: 'budget' }
 *
 * @category model
 * @since 1.0.0
 */
export interface GuardRefused {
  readonly _tag: 'GuardRefused'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly attempt: number
  readonly reason: model.GuardReason
  readonly id?: string | undefined
  readonly definition?: string | undefined
}

/**
 * A run ended: after `attempts` attempts, `elapsed` ms after it started, for `reason` (the runner's, hedging's or
 * a durable run's stop reason).
 *
 * @example
 * import type { RunStopped } from 'fp-ts-retry/Event'
 *
 * const event: RunStopped = { _tag: 'RunStopped', source: 'retry', run: 1, at: 112, attempts: 2, elapsed: 112, reason: 'succeeded' }
 *
 * @category model
 * @since 1.0.0
 */
export interface RunStopped {
  readonly _tag: 'RunStopped'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly attempts: number
  readonly elapsed: number
  readonly reason: model.StopReason
  readonly id?: string | undefined
  readonly definition?: string | undefined
}

/**
 * A circuit breaker changed state (`source: 'breaker'`; `run` is 0): the one way a breaker tells a change, as
 * plain JSON.
 *
 * **Details**
 *
 * - `from`, `to`: the tags of the state left and of the state entered.
 * - `since`: when the new state began, in ms on the breaker's clock (its `state.since`; the change is told as it
 *   is made, so `at` is the same).
 * - `halfOpenAt`, only when `to` is `'Open'`: when the breaker will let a probe through (its `state.halfOpenAt`),
 *   or `null` when it never will (isolated, or its `halfOpenAfter` stopped), where the state holds `Infinity`,
 *   which JSON cannot.
 * - `origin`: `'local'` when this process made the change, `'store'` when it took it from the fleet's store.
 * - `name`: the breaker's, when it was given one.
 *
 * @example
 * import * as Breaker from 'fp-ts-retry/Breaker'
 * import type { BreakerStateChanged } from 'fp-ts-retry/Event'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const clock = TestClock.make(5)
 * const changes: Array<BreakerStateChanged> = []
 * const breaker = Breaker.consecutive({
 *   threshold: 1,
 *   halfOpenAfter: Schedule.constant(1_000),
 *   clock,
 *   name: 'db',
 *   onEvent: (event) => void (event._tag === 'BreakerStateChanged' && changes.push(event))
 * })
 * ;(breaker.enter() as Breaker.Permit).onFailure()
 * const opened: BreakerStateChanged = { _tag: 'BreakerStateChanged', source: 'breaker', run: 0, at: 5, from: 'Closed', to: 'Open', since: 5, halfOpenAt: 1_005, origin: 'local', name: 'db' }
 * assert.deepStrictEqual(changes, [opened])
 * breaker.reset()
 * breaker.isolate()
 * assert.strictEqual(JSON.stringify(changes[2]), '{"_tag":"BreakerStateChanged","source":"breaker","run":0,"at":5,"from":"Closed","to":"Open","since":5,"halfOpenAt":null,"origin":"local","name":"db"}')
 *
 * @category model
 * @since 1.0.0
 */
export type BreakerStateChanged =
  | {
      readonly _tag: 'BreakerStateChanged'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly from: 'Closed' | 'Open' | 'HalfOpen'
      readonly to: 'Closed' | 'HalfOpen'
      readonly since: number
      readonly origin: 'local' | 'store'
      readonly name?: string | undefined
    }
  | {
      readonly _tag: 'BreakerStateChanged'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly from: 'Closed' | 'Open' | 'HalfOpen'
      readonly to: 'Open'
      readonly since: number
      readonly halfOpenAt: number | null
      readonly origin: 'local' | 'store'
      readonly name?: string | undefined
    }

/**
 * A hedged call launched its attempt `index` (0 for the first), an attempt won, or one was aborted once another
 * won or the call ended.
 *
 * @example
 * import type { HedgeEvent } from 'fp-ts-retry/Event'
 *
 * const event: HedgeEvent = { _tag: 'HedgeLaunched', source: 'hedging', run: 3, at: 50, index: 1 }
 *
 * @category model
 * @since 1.0.0
 */
export interface HedgeEvent {
  readonly _tag: 'HedgeLaunched' | 'HedgeWon' | 'HedgeAborted'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly index: number
}

/**
 * What a durable engine did with run `id`: submitted it, delivered it to a worker, abandoned a delivery (the worker
 * closed or BullMQ cancelled the job mid-attempt, a write was given up, the run is gone from the store: nothing of
 * the delivery was stored, and the run, unless gone, is delivered again as it was), stored its retry (due at
 * `dueAt`), completed it (`reason`), found its stored record corrupt (`error`), or could not write it (`error`;
 * the write is tried again).
 *
 * @example
 * import type { DurableEvent } from 'fp-ts-retry/Event'
 *
 * const event: DurableEvent = { _tag: 'RunSubmitted', source: 'durable', run: 0, at: 0, id: 'job-1' }
 *
 * @category model
 * @since 1.0.0
 */
export type DurableEvent =
  | {
      readonly _tag: 'RunSubmitted' | 'RunDelivered' | 'RunAbandoned'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly id: string
      readonly definition?: string | undefined
    }
  | {
      readonly _tag: 'RunRetried'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly id: string
      readonly definition?: string | undefined
      readonly dueAt: number
    }
  | {
      readonly _tag: 'RunCompleted'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly id: string
      readonly definition?: string | undefined
      readonly reason: model.StopReason
    }
  | {
      readonly _tag: 'RunCorrupt' | 'WriteFailed'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly id: string
      readonly definition?: string | undefined
      readonly error: unknown
    }

/**
 * A shared service (a breaker's store, a budget or a rate limiter kept in Redis, a queue) could not be reached
 * within its bound, or failed: the module went on by its documented local rule (`fallback`, e.g. `'local'`,
 * `'allow'`, `'refuse'`) and says so; `ServiceRecovered` when it answers again.
 *
 * @example
 * import type { ServiceEvent } from 'fp-ts-retry/Event'
 *
 * const event: ServiceEvent = { _tag: 'ServiceUnavailable', source: 'breaker', run: 0, at: 5, service: 'breaker store', fallback: 'local', error: new Error('ETIMEDOUT') }
 *
 * @category model
 * @since 1.0.0
 */
export type ServiceEvent = model.ServiceEvent

/**
 * A bulkhead queued a call (every slot taken, room in the queue), refused one at once (`BulkheadRefused`: every
 * slot taken and the queue full), or saw a queued call's signal abort (`BulkheadAborted`: it left the queue); a
 * fleet's (`RedisBulkhead`) found the lease of a slot it held run out, its call still in flight
 * (`BulkheadLeaseLost`: the process stalled longer than a lease, and the slot may be another call's since).
 * `inFlight` and `queued` are the bulkhead's counts just after (`source: 'bulkhead'`; `run` is 0).
 *
 * @example
 * import type { BulkheadEvent } from 'fp-ts-retry/Event'
 *
 * const event: BulkheadEvent = { _tag: 'BulkheadRefused', source: 'bulkhead', run: 0, at: 5, inFlight: 10, queued: 100 }
 *
 * @category model
 * @since 1.0.0
 */
export interface BulkheadEvent {
  readonly _tag: 'BulkheadQueued' | 'BulkheadRefused' | 'BulkheadAborted' | 'BulkheadLeaseLost'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly inFlight: number
  readonly queued: number
}

/**
 * An adaptive concurrency limit moved (`source: 'adaptiveLimit'`): from `from` to `to` calls in flight at most, as
 * its algorithm decided from the latencies and drops it saw. `noLoadLatency` is its estimate of the latency without
 * queueing (ms; `NaN` before the first sample); `run` is 0.
 *
 * @example
 * import type { LimitChanged } from 'fp-ts-retry/Event'
 *
 * const event: LimitChanged = { _tag: 'LimitChanged', source: 'adaptiveLimit', run: 0, at: 5, from: 20, to: 18, inFlight: 20, noLoadLatency: 12 }
 *
 * @category model
 * @since 1.0.0
 */
export interface LimitChanged {
  readonly _tag: 'LimitChanged'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly from: number
  readonly to: number
  readonly inFlight: number
  readonly noLoadLatency: number
}

/**
 * A load shedder refused a call (`source: 'adaptiveLimit'` or `'throttle'`; `run` is 0). `cause`: `'full'`, the
 * limit was reached and no place was left in the queue; `'deadline'`, it waited in the queue past its deadline;
 * `'displaced'`, a call of a higher priority took its place in the queue; `'throttled'`, a client-side throttle
 * dropped it (with the probability its accepts and requests give). `priority` is the call's.
 *
 * @example
 * import type { LoadShed } from 'fp-ts-retry/Event'
 *
 * const event: LoadShed = { _tag: 'LoadShed', source: 'adaptiveLimit', run: 0, at: 5, cause: 'full', priority: 'normal', inFlight: 20, limit: 20 }
 *
 * @category model
 * @since 1.0.0
 */
export interface LoadShed {
  readonly _tag: 'LoadShed'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly cause: 'full' | 'deadline' | 'displaced' | 'throttled'
  readonly priority: string
  readonly inFlight: number
  readonly limit: number
}

/**
 * A rate limiter made a call wait `wait` ms for its token (`RateLimitWaited`, told when the token is reserved), or
 * found no token for a call that cannot wait (`RateLimitRefused`: a retry its guard refused). `source:
 * 'rateLimit'`; `run` is 0.
 *
 * @example
 * import type { RateLimitEvent } from 'fp-ts-retry/Event'
 *
 * const event: RateLimitEvent = { _tag: 'RateLimitWaited', source: 'rateLimit', run: 0, at: 5, wait: 200 }
 *
 * @category model
 * @since 1.0.0
 */
export type RateLimitEvent =
  | {
      readonly _tag: 'RateLimitWaited'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly wait: number
    }
  | {
      readonly _tag: 'RateLimitRefused'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
    }

/**
 * `Timeout.timeout` (or `timeoutSignalled`) gave up on an action after `timeout` ms (`source: 'timeout'`; `run` is
 * 0). The runner's own attempt timeouts are told as `AttemptTimedOut`.
 *
 * @example
 * import type { TimedOut } from 'fp-ts-retry/Event'
 *
 * const event: TimedOut = { _tag: 'TimedOut', source: 'timeout', run: 0, at: 1_000, timeout: 1_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface TimedOut {
  readonly _tag: 'TimedOut'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly timeout: number
}

/**
 * `Fallback.fallback` answered a call from its fallback (`source: 'fallback'`; `run` is 0), told once the fallback
 * has answered.
 *
 * **Details**
 *
 * - `reason`: the stop reason of the run whose failure the fallback answered, when it is known (a run made with
 *   `Fallback.telling`); absent for any other action.
 * - `error`: that failure (the action's `Left`).
 * - `succeeded`: whether the fallback answered a `Right` (`false` when it answered a `Left`, or rejected).
 *
 * @example
 * import type { FallbackUsed } from 'fp-ts-retry/Event'
 *
 * const event: FallbackUsed = { _tag: 'FallbackUsed', source: 'fallback', run: 0, at: 700, reason: 'breaker', error: 'circuit open', succeeded: true }
 *
 * @category model
 * @since 1.0.0
 */
export interface FallbackUsed {
  readonly _tag: 'FallbackUsed'
  readonly source: Source
  readonly run: number
  readonly at: number
  readonly key?: string | undefined
  readonly reason?: model.StopReason | undefined
  readonly error: unknown
  readonly succeeded: boolean
}

/**
 * `fp-ts-retry/Chaos` injected a fault, an outcome, a behaviour or a latency of `latency` ms into a call
 * (`source: 'chaos'`; `run` is 0), told as it injects it, before the call goes on.
 *
 * @example
 * import type { ChaosInjected } from 'fp-ts-retry/Event'
 *
 * const event: ChaosInjected = { _tag: 'ChaosInjected', source: 'chaos', run: 0, at: 0, kind: 'latency', latency: 2_000 }
 *
 * @category model
 * @since 1.0.0
 */
export type ChaosInjected =
  | {
      readonly _tag: 'ChaosInjected'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly kind: 'fault' | 'outcome' | 'behaviour'
    }
  | {
      readonly _tag: 'ChaosInjected'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly kind: 'latency'
      readonly latency: number
    }

/**
 * `Policies` took a new document (`ConfigReloaded`: the names of the pipelines it `added`, `changed` and
 * `removed`, each sorted; a document the same as the running one changes none) or refused one (`ConfigRejected`: it
 * did not decode, or a source could not read it; `error` is the message, one line per issue, and the running
 * pipelines stay as they were). `source: 'config'`; `run` is 0.
 *
 * @example
 * import type { ConfigEvent } from 'fp-ts-retry/Event'
 *
 * const event: ConfigEvent = { _tag: 'ConfigReloaded', source: 'config', run: 0, at: 0, added: [], changed: ['payments'], removed: [] }
 *
 * @category model
 * @since 1.0.0
 */
export type ConfigEvent =
  | {
      readonly _tag: 'ConfigReloaded'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly added: ReadonlyArray<string>
      readonly changed: ReadonlyArray<string>
      readonly removed: ReadonlyArray<string>
    }
  | {
      readonly _tag: 'ConfigRejected'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly error: string
    }

/**
 * The module that reported an event.
 *
 * @example
 * import type { Source } from 'fp-ts-retry/Event'
 *
 * const source: Source = 'http'
 *
 * @category model
 * @since 1.0.0
 */
export type Source = model.Source

/**
 * Everything a module of this library reports, as one union of plain records told by `_tag`.
 *
 * @example
 * import type { Event } from 'fp-ts-retry/Event'
 *
 * const line = (event: Event): string => JSON.stringify({ ...event, error: undefined })
 *
 * @category model
 * @since 1.0.0
 */
export type Event =
  | AttemptStarted
  | AttemptEnded
  | RetryScheduled
  | HintIgnored
  | GuardRefused
  | RunStopped
  | BreakerStateChanged
  | HedgeEvent
  | DurableEvent
  | ServiceEvent
  | BulkheadEvent
  | LimitChanged
  | LoadShed
  | RateLimitEvent
  | TimedOut
  | FallbackUsed
  | ChaosInjected
  | ConfigEvent

/**
 * The option every module takes to be told its events.
 *
 * @example
 * import type { Observer } from 'fp-ts-retry/Event'
 *
 * const log: Array<string> = []
 * const observer: Observer = (event) => void log.push(event._tag)
 *
 * @category model
 * @since 1.0.0
 */
export type Observer = (event: Event) => void

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

let runs = 0

/**
 * A new run number, unique in this process (see {@link Event}'s `run`).
 *
 * @example
 * import * as Event from 'fp-ts-retry/Event'
 * import * as assert from 'assert'
 *
 * assert.ok(Event.nextRun() < Event.nextRun())
 *
 * @category utils
 * @since 1.0.0
 */
export const nextRun = (): number => ++runs

/**
 * Several observers as one: each is told every event, in order.
 *
 * @example
 * import * as Event from 'fp-ts-retry/Event'
 * import * as assert from 'assert'
 *
 * const seen: Array<string> = []
 * const both = Event.all([(e) => void seen.push(`a ${e._tag}`), (e) => void seen.push(`b ${e._tag}`)])
 * both({ _tag: 'AttemptStarted', source: 'retry', run: 1, at: 0, attempt: 1 })
 * assert.deepStrictEqual(seen, ['a AttemptStarted', 'b AttemptStarted'])
 *
 * @category utils
 * @since 1.0.0
 */
export const all =
  (observers: ReadonlyArray<Observer>): Observer =>
  (event) => {
    for (const observer of observers) observer(event)
  }
