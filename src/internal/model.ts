// The plain types of the schedule core, in one module that imports nothing of the project's, so that `Schedule`,
// `Driver`, `RetryState`, `RetryStatus` and the internal modules all depend on it and never on each other for a
// type. The public modules re-export each one under its documented name (`Schedule.Schedule`,
// `RetryState.RetryState`, ...): read the documentation there. Its declarations ship (lib/internal/model.d.ts), as
// the public ones refer to them: so no internal marker here, which `stripInternal` would take to the import below.

import type { Option } from 'fp-ts/Option'

/** Plain JSON data (`Schedule.Json`). */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** A source of uniform draws in `[0, 1)`: the shape of `Random.Random`. */
export interface Random {
  readonly next: () => number
}

/** Where a run of retries stands (`RetryStatus.RetryStatus`). */
export interface RetryStatus {
  readonly iterNumber: number
  readonly elapsed: number
  readonly cumulativeDelay: number
  readonly previousDelay: Option<number>
}

/** `Schedule.Continue`. */
export interface Continue<S = Json> {
  readonly _tag: 'Continue'
  readonly delay: number
  readonly state: S
}

/** `Schedule.Done`. */
export interface Done {
  readonly _tag: 'Done'
}

/** `Schedule.Decision`. */
export type Decision<S = Json> = Continue<S> | Done

/** `Schedule.StepContext`. */
export interface StepContext<In> {
  readonly input: In
  readonly status: RetryStatus
  readonly now: number
  readonly dueAt: number
  readonly random: Random
}

/** `Schedule.TimeLimit`. */
export type TimeLimit =
  | { readonly _tag: 'Elapsed'; readonly ms: number }
  | { readonly _tag: 'CumulativeDelay'; readonly ms: number }
  | { readonly _tag: 'Unknown' }

/** `Schedule.ScheduleEvent`. */
export type ScheduleEvent =
  | { readonly _tag: 'HintIgnored'; readonly hint: unknown }
  | { readonly _tag: 'HintUsed'; readonly hint: number }

/** `Schedule.Cursor`. */
export interface Cursor<In> {
  readonly input: In
  readonly now: number
  readonly dueAt: number
  readonly random: Random
  readonly iterNumber: number
  readonly elapsed: number
  readonly cumulativeDelay: number
  readonly context: () => StepContext<In>
  readonly report: (event: ScheduleEvent) => void
}

/** `Schedule.Stepper`. */
export interface Stepper<In> {
  readonly next: (cursor: Cursor<In>) => number
  readonly state: () => Json
}

/** `Schedule.Schedule`. */
export interface Schedule<in In> {
  readonly description: string
  readonly initial: Json
  readonly step: (state: Json, context: StepContext<In>) => Decision
  readonly stepper: (state: Json) => Stepper<In>
  readonly isState: (state: Json) => boolean
  readonly readsTime: boolean
  readonly timeLimits: ReadonlyArray<TimeLimit>
}

/** `RetryState.RetryState`. */
export interface RetryState {
  readonly schedule: string
  readonly scheduleState: Json
  readonly iterNumber: number
  readonly cumulativeDelay: number
  readonly previousDelay: number | null
  readonly startedAt: number
  readonly dueAt: number
  readonly random: ReadonlyArray<number> | null
}

/**
 * The stop reasons a guard gives when it refuses a retry: the budget's, the breaker's, a rate limiter's, a
 * bulkhead's, and a load shedder's (an adaptive limit or a client-side throttle).
 */
export type GuardReason = 'budget' | 'breaker' | 'rateLimit' | 'bulkhead' | 'shed'

/**
 * Why a run stopped: its action succeeded, failed in a way not to retry, its schedule stopped, a guard (the
 * budget, the breaker, ...) refused the retry, it was aborted, or a defect ended it (the action rejected or threw,
 * a hook or a guard threw).
 */
export type StopReason = 'succeeded' | 'failed' | 'schedule' | 'aborted' | 'defect' | GuardReason

/** What a durable worker's `onError` is told (`Durable.WorkerError`): the error, and the run or queue it concerns. */
export interface WorkerError {
  readonly error: unknown
  readonly id?: string | undefined
  readonly queue?: string | undefined
}

/** A closed period's outcomes, as a breaker's window counts them (`Breaker.Tally`). */
export interface Tally {
  readonly outcomes: number
  readonly failures: number
}

/** Which outcomes a breaker's window keeps (`Breaker.Window`). */
export type Window =
  | { readonly _tag: 'consecutive' }
  | { readonly _tag: 'count'; readonly size: number }
  | { readonly _tag: 'sampling'; readonly duration: number; readonly buckets: number }

/** What the Redis modules need of a client (`RedisBudget.RedisClient`): ioredis's `evalsha` and `eval`. */
export interface RedisClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
}

/** What a sleep is for (`Clock.SleepKind`). */
export type SleepKind = 'backoff' | 'timeout' | 'hedge' | 'due' | 'throttle' | 'chaos' | 'user'

/** The time and the sleeps (`Clock.Clock`). */
export interface Clock {
  readonly now: () => number
  readonly sleep: (ms: number, signal?: AbortSignal, kind?: SleepKind) => Promise<void>
}

/** Who reported an event (`Event.Source`): the module, in the words of the stop reasons where they meet. */
export type Source =
  | 'retry'
  | 'hedging'
  | 'http'
  | 'breaker'
  | 'durable'
  | 'budget'
  | 'rateLimit'
  | 'bulkhead'
  | 'adaptiveLimit'
  | 'throttle'
  | 'timeout'
  | 'fallback'
  | 'chaos'
  | 'config'

/** A shared service's outage and recovery (`Event.ServiceEvent`). */
export type ServiceEvent =
  | {
      readonly _tag: 'ServiceUnavailable'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly service: string
      readonly fallback: string
      readonly error: unknown
    }
  | {
      readonly _tag: 'ServiceRecovered'
      readonly source: Source
      readonly run: number
      readonly at: number
      readonly key?: string | undefined
      readonly service: string
    }
