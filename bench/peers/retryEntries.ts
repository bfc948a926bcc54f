/**
 * The entries of the runner scenarios ("success path", "zero-delay retries", "many retries"): every library
 * retrying the same flaky action with the same policy, each configured the way its documentation shows.
 */
import * as Effect3 from 'effect'
import * as backoff from 'exponential-backoff'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as RetryTs from 'retry-ts'
import * as RetryTsTask from 'retry-ts/Task'
import { retrying, Schedule } from './ours'
import { compare, fmtOurs, fmtRatio, rowsTable, type Entry, type Row, type ScenarioOptions, type ScenarioReport, type Skipped } from './harness'
import { expectRight, flaky as makeFlaky, notLoaded, type Peers, type Probe } from './peers'

export interface RetryJob {
  /** Failures before the success. */
  readonly failures: number
  /** Retries the policy allows (attempts = retries + 1). */
  readonly retries: number
  /** First delay of an exponential backoff (factor 2), in ms; 0 for no delay at all. */
  readonly base: number
  /** Called once per run, at that attempt. */
  readonly probe?: Probe
  /** Add a row for our runner with the same schedule under `upTo(1 hour)`, a schedule that reads the clock. */
  readonly withTimedSchedule?: boolean
}

export interface Entries {
  readonly entries: ReadonlyArray<Entry>
  readonly skipped: ReadonlyArray<Skipped>
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * One entry per library, the floor first. `only` restricts the list to the named entries (the floor is always in).
 */
export const retryEntries = (job: RetryJob, peers: Peers, only?: ReadonlyArray<string>): Entries => {
  // Every entry waits on a timer when it retries after a delay; retry-ts, cockatiel and exponential-backoff do
  // even for a zero delay.
  const sleeps = job.failures > 0 && job.base > 0
  const entries: Array<Entry> = []
  const skipped: Array<Skipped> = []
  const want = (name: string): boolean => only === undefined || only.includes(name)
  const { failures, retries, base } = job
  const flaky = (n: number) => makeFlaky(n, job.probe)

  // The floor: the loop a careful human writes, awaiting the same action, with the same backoff arithmetic.
  {
    const f = flaky(failures)
    const bare = async (): Promise<E.Either<Error, number>> => {
      let delay = base
      for (let retry = 0; ; retry++) {
        const result = await f.either()
        if (result._tag === 'Right' || retry === retries) return result
        if (delay > 0) await sleep(delay)
        delay *= 2
      }
    }
    entries.push({
      name: 'bare loop',
      floor: true,
      fn: () => (f.reset(), bare()),
      note: 'async loop awaiting a `TaskEither`',
      waits: sleeps
    })
  }
  if (want('bare loop, try/catch')) {
    const f = flaky(failures)
    const bare = async (): Promise<number> => {
      let delay = base
      for (let retry = 0; ; retry++) {
        try {
          return await f.throwing()
        } catch (e) {
          if (retry === retries) throw e
        }
        if (delay > 0) await sleep(delay)
        delay *= 2
      }
    }
    entries.push({
      name: 'bare loop, try/catch',
      fn: () => (f.reset(), bare()),
      note: 'the floor of the throw-based peers: same loop, a rejecting promise',
      waits: sleeps
    })
  }

  if (want('fp-ts-retry')) {
    const f = flaky(failures)
    const schedule =
      base > 0
        ? pipe(Schedule.exponential(base), Schedule.intersect(Schedule.recurs(retries)))
        : Schedule.recurs(retries)
    const action: TaskEither<Error, number> = f.either
    const run = retrying(schedule)(action)
    entries.push({ name: 'fp-ts-retry', pkg: 'fp-ts-retry', ours: true, fn: () => (f.reset(), run()), waits: sleeps })
    if (job.withTimedSchedule === true) {
      const g = flaky(failures)
      const timed = retrying(pipe(schedule, Schedule.upTo(3_600_000)))(g.either as TaskEither<Error, number>)
      entries.push({
        name: 'fp-ts-retry, with `upTo`',
        pkg: 'fp-ts-retry',
        fn: () => (g.reset(), timed()),
        note: 'the same schedule under `upTo(1 hour)`, which reads the clock: what a clock read costs here',
        waits: sleeps
      })
    }
  }

  if (want('retry-ts')) {
    const f = flaky(failures)
    const limit = RetryTs.limitRetries(retries)
    const policy = base > 0 ? RetryTs.Monoid.concat(RetryTs.exponentialBackoff(base), limit) : limit
    const action: TaskEither<Error, number> = f.either
    const run = RetryTsTask.retrying(policy, () => action, E.isLeft)
    entries.push({ name: 'retry-ts', pkg: 'retry-ts', fn: () => (f.reset(), run()), waits: failures > 0 })
  }

  if (want('effect 3')) {
    const f = flaky(failures)
    const { Effect, Schedule: S } = Effect3
    const action = Effect.tryPromise({ try: () => f.throwing(), catch: (e) => e as Error })
    // Effect's own spelling: `times` counts retries; without a schedule the retries are immediate.
    const program =
      base > 0
        ? Effect.retry(action, { schedule: S.exponential(`${base} millis`, 2), times: retries })
        : Effect.retry(action, { times: retries })
    entries.push({ name: 'effect 3', pkg: 'effect', fn: () => (f.reset(), Effect.runPromise(program)), waits: sleeps })
  }

  if (want('effect 4')) {
    if (peers.effect4 === undefined)
      skipped.push({ name: 'effect 4', pkg: 'effect4', reason: notLoaded('effect4', peers) })
    else {
      const f = flaky(failures)
      const { Effect, Schedule: S } = peers.effect4.core
      const action = Effect.tryPromise({ try: () => f.throwing(), catch: (e) => e as Error })
      const program =
        base > 0
          ? Effect.retry(action, { schedule: S.exponential(`${base} millis`, 2), times: retries })
          : Effect.retry(action, { times: retries })
      entries.push({
        name: 'effect 4',
        pkg: 'effect4',
        fn: () => (f.reset(), Effect.runPromise(program)),
        waits: sleeps
      })
    }
  }

  if (want('cockatiel')) {
    if (peers.cockatiel === undefined)
      skipped.push({ name: 'cockatiel', pkg: 'cockatiel', reason: notLoaded('cockatiel', peers) })
    else {
      const f = flaky(failures)
      const { retry, handleAll, ExponentialBackoff, noJitterGenerator } = peers.cockatiel
      // cockatiel's maxAttempts counts retries; without a backoff it waits ConstantBackoff(0), through a timer.
      const policy = retry(
        handleAll,
        base > 0
          ? {
              maxAttempts: retries,
              backoff: new ExponentialBackoff({ initialDelay: base, generator: noJitterGenerator })
            }
          : { maxAttempts: retries }
      )
      const action = (): Promise<number> => f.throwing()
      entries.push({
        name: 'cockatiel',
        pkg: 'cockatiel',
        fn: () => (f.reset(), policy.execute(action)),
        waits: failures > 0
      })
    }
  }

  if (want('p-retry')) {
    if (peers.pRetry === undefined)
      skipped.push({ name: 'p-retry', pkg: 'p-retry', reason: notLoaded('p-retry', peers) })
    else {
      const f = flaky(failures)
      const pRetry = peers.pRetry
      const options = { retries, minTimeout: base, factor: 2 }
      const action = (): Promise<number> => f.throwing()
      entries.push({ name: 'p-retry', pkg: 'p-retry', fn: () => (f.reset(), pRetry(action, options)), waits: sleeps })
    }
  }

  if (want('exponential-backoff')) {
    const f = flaky(failures)
    const options: backoff.BackoffOptions = {
      numOfAttempts: retries + 1,
      startingDelay: base,
      timeMultiple: 2,
      jitter: 'none'
    }
    const action = (): Promise<number> => f.throwing()
    entries.push({
      name: 'exponential-backoff',
      pkg: 'exponential-backoff',
      fn: () => (f.reset(), backoff.backOff(action, options)),
      note: base > 0 ? '' : 'a 0 ms delay still goes through `setTimeout`',
      waits: failures > 0
    })
  }

  return { entries, skipped }
}

/** Runs each entry once and checks it succeeds: a benchmark of a wrong answer is worthless. */
export const checkEntries = async (entries: ReadonlyArray<Entry>): Promise<void> => {
  for (const e of entries) expectRight(e.name, await e.fn())
}

/** What differs between the scenarios that retry one action: the job, the target and the words around the table. */
export interface RetryScenario {
  readonly title: string
  readonly target: number
  readonly job: RetryJob
  readonly intro: string
  /** The paragraph under the table, given our row, the `upTo` row (if measured) and whether the target was met. */
  readonly explain: (ours: Row, timed: Row | undefined, met: boolean) => string
}

/** Runs a retry scenario: every library on the same job, side by side, and the verdict against the target. */
export const runRetryScenario = async (
  scenario: RetryScenario,
  peers: Peers,
  options: ScenarioOptions
): Promise<ScenarioReport> => {
  const { title, target } = scenario
  const { entries, skipped } = retryEntries(scenario.job, peers)
  await checkEntries(entries)
  const rows = await compare(entries, { ...options, cpuTime: true })
  const ours = rows.find((r) => r.ours) as Row
  const timed = rows.find((r) => r.name.includes('upTo'))
  const met = ours.ratio <= target
  const verdict = (r: Row): string => (r.ratio <= target ? `yes (≤ ${target}×)` : `no: ${fmtRatio(r.ratio)} > ${target}×`)
  return {
    title,
    met,
    summary: `${fmtOurs(ours)} the bare loop (target ≤ ${target}×)`,
    markdown: [scenario.intro, '', rowsTable(rows, verdict, skipped), '', scenario.explain(ours, timed, met)].join('\n')
  }
}
