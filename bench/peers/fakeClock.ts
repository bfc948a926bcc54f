/**
 * Scenario "fake-clock test": the real time one unit test takes to run 50 retries of exponential(100 ms, ×2)
 * capped at 60 s (about 42 minutes of virtual time) on a test clock.
 *
 * One "test" is everything a test body does: make or install the clock, start the run, drive the clock to the
 * end, await the result, and uninstall. Libraries that sleep with the global `setTimeout` (p-retry, cockatiel,
 * exponential-backoff, retry-ts) run under @sinonjs/fake-timers, as their users test them; Effect uses its own
 * `TestClock`; we use ours. The floor is a hand-written retry loop under @sinonjs/fake-timers.
 */
import FakeTimers from '@sinonjs/fake-timers'
import * as Effect3 from 'effect'
import * as backoff from 'exponential-backoff'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import { retrying, Schedule, TestClock } from './ours'
import * as RetryTs from 'retry-ts'
import * as RetryTsTask from 'retry-ts/Task'
import {
  compare,
  fmtOurs,
  fmtRatio,
  rowsTable,
  type Entry,
  type Row,
  type ScenarioOptions,
  type ScenarioReport,
  type Skipped
} from './harness'
import { expectRight, flaky, notLoaded, type Peers } from './peers'

const RETRIES = 50
const BASE = 100
const CAP = 60_000
const TARGET = 0.4

/** The virtual time a run takes: the sum of its 50 delays (2,502,300 ms). */
const TOTAL = Array.from({ length: RETRIES }, (_, i) => Math.min(BASE * 2 ** i, CAP)).reduce((a, b) => a + b, 0)

/** Runs `start` under fake `setTimeout`/`clearTimeout`, driving them with `runAllAsync`. */
const underFakeTimers = async <A>(start: () => Promise<A>, check: (now: number) => void): Promise<A> => {
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })
  try {
    const run = start()
    await clock.runAllAsync()
    check(clock.now)
    return await run
  } finally {
    clock.uninstall()
  }
}

const virtualTime = (name: string) => (now: number) => {
  if (now !== TOTAL) throw new Error(`${name}: the run took ${now} ms of virtual time, expected ${TOTAL}`)
}

export const fakeClock = async (peers: Peers, options: ScenarioOptions): Promise<ScenarioReport> => {
  const entries: Array<Entry> = []
  const skipped: Array<Skipped> = []

  {
    const f = flaky(RETRIES)
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
    const bare = async (): Promise<E.Either<Error, number>> => {
      let delay = BASE
      for (let retry = 0; ; retry++) {
        const result = await f.either()
        if (result._tag === 'Right' || retry === RETRIES) return result
        await sleep(delay)
        delay = Math.min(delay * 2, CAP)
      }
    }
    const check = virtualTime('bare loop')
    entries.push({
      name: 'bare loop under fake-timers',
      floor: true,
      fn: () => (f.reset(), underFakeTimers(bare, check)),
      note: '`install`, a hand-written loop sleeping with `setTimeout`, `runAllAsync`, `uninstall`'
    })
  }

  {
    const f = flaky(RETRIES)
    const schedule = pipe(
      Schedule.exponential(BASE),
      Schedule.capped(CAP),
      Schedule.intersect(Schedule.recurs(RETRIES))
    )
    const action: TaskEither<Error, number> = f.either
    entries.push({
      name: 'fp-ts-retry',
      pkg: 'fp-ts-retry',
      ours: true,
      fn: async () => {
        f.reset()
        const clock = TestClock.make()
        const run = retrying(schedule, { clock })(action)()
        await clock.runAll()
        virtualTime('fp-ts-retry')(clock.now())
        return run
      },
      note: '`TestClock.make`, `retrying(schedule, { clock })`, `runAll`'
    })
  }

  if (peers.pRetry === undefined) skipped.push({ name: 'p-retry', pkg: 'p-retry', reason: notLoaded('p-retry', peers) })
  else {
    const f = flaky(RETRIES)
    const pRetry = peers.pRetry
    const opts = { retries: RETRIES, minTimeout: BASE, maxTimeout: CAP, factor: 2 }
    const action = (): Promise<number> => f.throwing()
    const check = virtualTime('p-retry')
    entries.push({
      name: 'p-retry under fake-timers',
      pkg: 'p-retry',
      fn: () => (f.reset(), underFakeTimers(() => pRetry(action, opts), check))
    })
  }

  {
    const f = flaky(RETRIES)
    const policy = RetryTs.Monoid.concat(
      RetryTs.capDelay(CAP, RetryTs.exponentialBackoff(BASE)),
      RetryTs.limitRetries(RETRIES)
    )
    const action: TaskEither<Error, number> = f.either
    const run = RetryTsTask.retrying(policy, () => action, E.isLeft)
    const check = virtualTime('retry-ts')
    entries.push({
      name: 'retry-ts under fake-timers',
      pkg: 'retry-ts',
      fn: () => (f.reset(), underFakeTimers(run, check))
    })
  }

  if (peers.cockatiel === undefined)
    skipped.push({ name: 'cockatiel', pkg: 'cockatiel', reason: notLoaded('cockatiel', peers) })
  else {
    const f = flaky(RETRIES)
    const { retry, handleAll, ExponentialBackoff, noJitterGenerator } = peers.cockatiel
    const policy = retry(handleAll, {
      maxAttempts: RETRIES,
      backoff: new ExponentialBackoff({ initialDelay: BASE, maxDelay: CAP, generator: noJitterGenerator })
    })
    const action = (): Promise<number> => f.throwing()
    const check = virtualTime('cockatiel')
    entries.push({
      name: 'cockatiel under fake-timers',
      pkg: 'cockatiel',
      fn: () => (f.reset(), underFakeTimers(() => policy.execute(action), check))
    })
  }

  {
    const f = flaky(RETRIES)
    const opts: backoff.BackoffOptions = {
      numOfAttempts: RETRIES + 1,
      startingDelay: BASE,
      maxDelay: CAP,
      timeMultiple: 2,
      jitter: 'none'
    }
    const action = (): Promise<number> => f.throwing()
    const check = virtualTime('exponential-backoff')
    entries.push({
      name: 'exponential-backoff under fake-timers',
      pkg: 'exponential-backoff',
      fn: () => (f.reset(), underFakeTimers(() => backoff.backOff(action, opts), check))
    })
  }

  {
    const f = flaky(RETRIES)
    const { Effect, Schedule: S, TestClock: TC, TestContext, Fiber } = Effect3
    const program = Effect.retry(Effect.tryPromise({ try: () => f.throwing(), catch: (e) => e as Error }), {
      schedule: S.exponential(`${BASE} millis`, 2).pipe(S.union(S.spaced(`${CAP} millis`))),
      times: RETRIES
    })
    const test = Effect.gen(function* () {
      const fiber = yield* Effect.fork(program)
      yield* TC.adjust(`${TOTAL} millis`)
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(TestContext.TestContext))
    entries.push({
      name: 'effect 3 `TestClock`',
      pkg: 'effect',
      fn: () => (f.reset(), Effect.runPromise(test)),
      note: '`fork`, `TestClock.adjust(total)`, `join`, with `TestContext`'
    })
  }

  if (peers.effect4 === undefined)
    skipped.push({ name: 'effect 4', pkg: 'effect4', reason: notLoaded('effect4', peers) })
  else {
    const f = flaky(RETRIES)
    const { Effect, Schedule: S, Fiber } = peers.effect4.core
    const TC = peers.effect4.testing.TestClock
    const program = Effect.retry(Effect.tryPromise({ try: () => f.throwing(), catch: (e) => e as Error }), {
      schedule: S.min([S.exponential(`${BASE} millis`, 2), S.spaced(`${CAP} millis`)]),
      times: RETRIES
    })
    const test = Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(program)
      yield* TC.adjust(`${TOTAL} millis`)
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(TC.layer()))
    entries.push({
      name: 'effect 4 `TestClock`',
      pkg: 'effect4',
      fn: () => (f.reset(), Effect.runPromise(test)),
      note: '`forkChild`, `TestClock.adjust(total)`, `join`, with `TestClock.layer()`'
    })
  }

  for (const e of entries) expectRight(e.name, await e.fn())
  const rows = await compare(entries, { ...options, cpuTime: true })
  return report(rows, skipped)
}

const report = (rows: ReadonlyArray<Row>, skipped: ReadonlyArray<Skipped>): ScenarioReport => {
  const ours = rows.find((r) => r.ours) as Row
  const met = ours.ratio <= TARGET
  return {
    title: 'Fake-clock test',
    met,
    summary: `${fmtOurs(ours)} the fake-timers floor per test (target ≤ ${TARGET}×)`,
    markdown: [
      `${RETRIES} retries of exponential(${BASE} ms, ×2) capped at ${CAP / 1000} s (${(TOTAL / 60_000).toFixed(1)} ` +
        `minutes of virtual time), the real time of one test. Target: ≤ ${TARGET}× the fake-timers floor.`,
      '',
      rowsTable(
        rows,
        (r) => (r.ratio <= TARGET ? `yes (≤ ${TARGET}×)` : `no: ${fmtRatio(r.ratio)} > ${TARGET}×`),
        skipped
      ),
      '',
      'The floor pays a turn of the event loop (`setImmediate`) per timer, in `runAllAsync`. Our `TestClock` ' +
        'wakes a sleeper and drains the promise jobs (a `process.nextTick` queued from a promise job runs once ' +
        'they are all done); if the woken run has gone back to sleep, which a retry does through promise jobs ' +
        'alone, it moves on. It takes a full turn of the event loop only before the first wake, after a wake ' +
        'whose work did not go back to sleep (the last of a run) and every 1,024 wakes.' +
        (met
          ? ''
          : ` **Missed in wall time: ${fmtRatio(ours.ratio)} against ${TARGET}×**` +
            (ours.cpuRatio !== undefined && ours.cpuRatio <= TARGET
              ? ` but met in CPU time (${fmtRatio(ours.cpuRatio)}): the difference is time the process spent ` +
                'descheduled on this shared machine, which wall time counts and CPU time does not.'
              : ' and in CPU time. What remains per wake is the run itself: a driver step, a sleep (a promise and a sorted ' +
                'insert) and the drain; the two full turns per test could go only by dropping the guarantee that ' +
                'work waiting on a tick or an immediate runs before the clock moves on.'))
    ].join('\n')
  }
}
