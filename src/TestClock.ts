/**
 * A `Clock` whose time moves only when a test says so: every sleep is recorded and none waits for real.
 *
 * @since 0.1.0
 */
import type { Task } from 'fp-ts/Task'
import type { Clock, SleepKind } from './Clock'
import { onAbort } from './internal/abort'
import { clockOn, type Sleepers, type Wakeable } from './internal/sleepers'
import { showValue } from './internal/show'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A `Clock` for tests.
 *
 * **Details**
 *
 * - `now()` starts at the time given to {@link make} and changes only through `advance` and `runAll`.
 * - `sleep(ms, signal, kind)` records the sleep in `timers` and waits until the clock is moved past its wake-up
 *   time. `sleep(0)` is recorded and resolves at once (the runners never ask for one: a zero delay skips the
 *   clock); an aborted signal wakes its sleeper at once.
 * - `sleeps` lists the `ms` of the backoffs and of the sleeps that name no kind (`'user'`), in the order they
 *   were asked: the delays a retry test checks, without the attempts' timeouts, the hedges' delays, the durable
 *   runs' due times, the rate limiters' waits or the latencies `Chaos` injects, which `sleepsOf(kind)` and `timers`
 *   list.
 * - `next(kind)` moves time to the next pending timer of `kind` (any kind when omitted), waking it and every
 *   earlier one in order; when none is pending yet, it first waits, on the real event loop, until one is (the
 *   work may be waiting on real I/O), for up to `options.within` real ms (default 2,000), then rejects naming
 *   the kind and what is pending.
 * - `advance(ms)` moves time forward by `ms`, waking the due sleepers one at a time in order of their wake-up
 *   time (ties in the order they went to sleep), and lets each run before moving on, so a sleeper that goes back
 *   to sleep within the window is woken again.
 * - `runAll()` moves time forward until no sleeper is left. It throws if it wakes more than `maxWakes` sleepers
 *   (default 1,000,000): a schedule that never stops would otherwise loop forever.
 * - Both first let pending promise jobs settle (one turn of the event loop), so the natural test works: start the
 *   run, `await clock.runAll()`, then `await` the result. After each wake they let the woken work run: until it
 *   goes back to sleep, when it does so through promise jobs alone, else for one turn of the event loop. Work
 *   that waits on real I/O is not waited for.
 * - Calls of `advance` and `runAll` take turns, in the order they were made, each starting where the one
 *   before left the clock: `Promise.all([clock.advance(100), clock.advance(100)])` moves time by 200, and
 *   time never goes back.
 * - All the sleeps on one `AbortSignal` share one 'abort' listener, as with `Clock.live`.
 * - `pending` is the number of sleepers still waiting; `pendingTimers` their kinds and wake-up times, in order.
 *
 * @example
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const woken = clock.sleep(1000).then(() => clock.now())
 *   await clock.runAll()
 *   assert.strictEqual(await woken, 1000)
 *   assert.deepStrictEqual(clock.sleeps, [1000])
 * }
 * main()
 *
 * @category model
 * @since 0.1.0
 */
export interface TestClock extends Clock {
  readonly sleep: (ms: number, signal?: AbortSignal, kind?: SleepKind) => Promise<void>
  readonly advance: (ms: number) => Promise<void>
  readonly runAll: (maxWakes?: number) => Promise<void>
  readonly next: (kind?: SleepKind, options?: { readonly within?: number | undefined }) => Promise<void>
  readonly sleeps: ReadonlyArray<number>
  readonly sleepsOf: (kind: SleepKind) => ReadonlyArray<number>
  readonly timers: ReadonlyArray<Timer>
  readonly pending: number
  readonly pendingTimers: ReadonlyArray<PendingTimer>
}

/**
 * A sleep a {@link TestClock} was asked for: what it is for, how long, and the time it was asked at.
 *
 * @example
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const slept = clock.sleep(2_000, undefined, 'timeout')
 *   await clock.runAll()
 *   await slept
 *   const timers: ReadonlyArray<TestClock.Timer> = clock.timers
 *   assert.deepStrictEqual(timers, [{ kind: 'timeout', ms: 2_000, at: 0 }])
 * }
 * main()
 *
 * @category model
 * @since 1.0.0
 */
export interface Timer {
  readonly kind: SleepKind
  readonly ms: number
  readonly at: number
}

/**
 * A sleep still waiting on a {@link TestClock}: what it is for and when it wakes.
 *
 * @example
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as assert from 'assert'
 *
 * const clock = TestClock.make()
 * void clock.sleep(100, undefined, 'backoff')
 * const pending: ReadonlyArray<TestClock.PendingTimer> = clock.pendingTimers
 * assert.deepStrictEqual(pending, [{ kind: 'backoff', wake: 100 }])
 *
 * @category model
 * @since 1.0.0
 */
export interface PendingTimer {
  readonly kind: SleepKind
  readonly wake: number
}

interface Sleeper extends PendingTimer {
  /** What its wake-up resumes: a promise's `resolve`, or a run of the runner, which sleeps on the clock itself. */
  readonly waker: Wakeable | (() => void)
}

/** Wakes what a sleeper waits for: a run of the runner goes on at once, in the job that wakes it. */
const wakeUp = (waker: Wakeable | (() => void)): void => {
  if (typeof waker === 'function') waker()
  else waker.wake()
}

/** The kinds `sleeps` lists: the retries' delays and the user's own sleeps. */
const isDelay = (kind: SleepKind): boolean => kind === 'backoff' || kind === 'user'

// setImmediate runs after every queued promise job, including those queued by those jobs.
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

// Node runs process.nextTick callbacks only once the promise job queue is empty, so a tick queued from a
// promise job fires when every queued promise job, and every job those queue, has run: the same guarantee as
// `settle` for work made of promise jobs only, without a turn of the event loop. Call it only from a promise
// job (after an `await`): queued from plain synchronous code, the tick would run before the promise jobs.
const drainPromiseJobs = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve))

/** Wakes between two full turns of the event loop, so that a long `runAll` does not starve timers and I/O. */
const TURN_EVERY = 1024

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A new test clock reading `start` (default `0`) ms.
 *
 * @example
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { retrying } from 'fp-ts-retry'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const run = pipe(TE.left('boom'), retrying(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3))), { clock }))()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Left', left: 'boom' })
 *   assert.deepStrictEqual(clock.sleeps, [100, 200, 400])
 *   assert.strictEqual(clock.now(), 700)
 * }
 * main()
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (start = 0): TestClock => {
  let time = validate.finite('TestClock.make', 'start', start)
  const sleeps: Array<number> = []
  const timers: Array<Timer> = []
  // Sorted by wake-up time, then by the order of going to sleep.
  const sleepers: Array<Sleeper> = []

  // Sleepers ever inserted: tells `wakeNext` whether the work it woke has gone back to sleep.
  let fellAsleep = 0

  const insert = (sleeper: Sleeper): void => {
    fellAsleep++
    let lo = 0
    let hi = sleepers.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (sleepers[mid].wake <= sleeper.wake) lo = mid + 1
      else hi = mid
    }
    sleepers.splice(lo, 0, sleeper)
  }

  /** Records a sleep asked for; whether it waits (not a zero sleep, nor one whose signal has aborted). */
  const record = (ms: number, signal: AbortSignal | undefined, kind: SleepKind): boolean => {
    if (isDelay(kind)) sleeps.push(ms)
    timers.push({ kind, ms, at: time })
    return ms !== 0 && signal?.aborted !== true
  }

  /** Waits for the clock to pass `wake`, or for `signal` to abort. */
  const wait = (
    kind: SleepKind,
    wake: number,
    signal: AbortSignal | undefined,
    waker: Wakeable | (() => void)
  ): void => {
    // Without a signal there is nothing to clean up on a wake: no closures to allocate.
    if (signal === undefined) return insert({ kind, wake, waker })
    // One listener per signal, however many sleeps share it (see internal/abort).
    const unsubscribe = onAbort(signal, () => {
      const i = sleepers.indexOf(sleeper)
      if (i >= 0) sleepers.splice(i, 1)
      // woken in a job, as a promise's continuation would be, so that the sleeps on one signal go on in order
      if (typeof waker === 'function') waker()
      else queueMicrotask(() => waker.wake())
    })
    const sleeper: Sleeper = {
      kind,
      wake,
      waker: () => {
        unsubscribe()
        wakeUp(waker)
      }
    }
    insert(sleeper)
  }

  const sleep = (ms: number, signal?: AbortSignal, kind: SleepKind = 'user'): Promise<void> => {
    ms = validate.duration('TestClock.sleep', 'ms', ms) // -0 becomes 0
    if (!KINDS.has(kind)) throw new TypeError(`TestClock.sleep: kind must be a SleepKind, received ${showValue(kind)}`)
    if (!record(ms, signal, kind)) return Promise.resolve()
    return new Promise<void>((resolve) => wait(kind, time + ms, signal, resolve))
  }

  // The runner's backoffs, while `sleep` is the clock's own: a run sleeps with no promise, and is woken itself.
  const backoffs: Sleepers = {
    promised: sleep,
    sleep: (ms, signal, waker) => {
      ms = validate.duration('TestClock.sleep', 'ms', ms)
      if (record(ms, signal, 'backoff')) wait('backoff', time + ms, signal, waker)
      else queueMicrotask(() => wakeUp(waker))
    }
  }

  let wakes = 0

  // Waking the next sleeper lets the work it resumes run. That work nearly always goes back to sleep through
  // promise jobs alone (a retry: attempt, decide, sleep), so draining them is enough and keeps a test of many
  // retries fast. When it has not gone back to sleep (it finished, or it waits on a timer, a tick or I/O), a full
  // turn of the event loop lets it go as far as it can, as before every wake. In three steps, so that the loops of
  // `advance` and `runAll` wake with no async call of their own per wake (a test of many retries spends its time
  // there): `wakeEarliest()`, then `await drainPromiseJobs()` (from a promise job: after their first `await`),
  // then `await settle()` if `mustSettle`.

  /** Wakes the earliest sleeper: answers the count of sleeps before, for `mustSettle`. */
  const wakeEarliest = (): number => {
    const sleeper = sleepers.shift() as Sleeper
    if (sleeper.wake > time) time = sleeper.wake
    const asleep = fellAsleep
    wakeUp(sleeper.waker)
    return asleep
  }

  /** Once the woken work's promise jobs are drained: whether it needs a turn of the event loop. */
  const mustSettle = (asleep: number): boolean => {
    wakes++
    return fellAsleep === asleep || wakes % TURN_EVERY === 0
  }

  const wakeNext = async (): Promise<void> => {
    const asleep = wakeEarliest()
    await drainPromiseJobs()
    if (mustSettle(asleep)) await settle()
  }

  // `advance` and `runAll` run one at a time, in the order they were called: each starts from where the one
  // before left the clock. Run side by side, each would compute its target from the time it started with, and
  // the last to finish would set the time back (two concurrent `advance(100)` ended at 100, not 200).
  let queue: Promise<unknown> = Promise.resolve()
  const serialised = <A>(task: () => Promise<A>): Promise<A> => {
    const result = queue.then(task)
    queue = result.catch(() => undefined)
    return result
  }

  const advanceNow = async (ms: number): Promise<void> => {
    const target = time + ms
    await settle()
    while (sleepers.length > 0 && sleepers[0].wake <= target) {
      const asleep = wakeEarliest()
      await drainPromiseJobs()
      if (mustSettle(asleep)) await settle()
    }
    time = target
    await settle()
  }

  const runAllNow = async (maxWakes: number): Promise<void> => {
    let woken = 0
    await settle()
    while (sleepers.length > 0) {
      if (woken++ === maxWakes) {
        throw new Error(`TestClock.runAll: woke ${maxWakes} sleepers and more are waiting; does a schedule never stop?`)
      }
      const asleep = wakeEarliest()
      await drainPromiseJobs()
      if (mustSettle(asleep)) await settle()
    }
  }

  const advance = async (ms: number): Promise<void> => {
    validate.duration('TestClock.advance', 'ms', ms)
    return serialised(() => advanceNow(ms))
  }

  const runAll = async (maxWakes = 1_000_000): Promise<void> => {
    validate.count('TestClock.runAll', 'maxWakes', maxWakes)
    return serialised(() => runAllNow(maxWakes))
  }

  const nextNow = async (kind: SleepKind | undefined, within: number): Promise<void> => {
    const index = (): number =>
      kind === undefined ? (sleepers.length > 0 ? 0 : -1) : sleepers.findIndex((s) => s.kind === kind)
    await settle()
    const deadline = performance.now() + within
    // None yet: the work may be waiting on real I/O (a loopback server), so wait for it on the real event loop.
    while (index() < 0) {
      if (performance.now() >= deadline) {
        const waiting = sleepers.map((s) => `${s.kind} at ${s.wake}`).join(', ') || 'none'
        throw new Error(
          `TestClock.next: no ${kind ?? 'timer'} became pending within ${within} ms of real time (pending: ${waiting})`
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    const target = sleepers[index()]
    while (sleepers.includes(target)) await wakeNext()
  }

  const next = async (kind?: SleepKind, options: { readonly within?: number | undefined } = {}): Promise<void> => {
    if (kind !== undefined && !KINDS.has(kind))
      throw new TypeError(`TestClock.next: kind must be a SleepKind, received ${showValue(kind)}`)
    const within = validate.duration('TestClock.next', 'options.within', options.within ?? 2_000)
    return serialised(() => nextNow(kind, within))
  }

  const clock: TestClock = {
    now: () => time,
    sleep,
    advance,
    runAll,
    next,
    sleeps,
    sleepsOf: (kind) => timers.filter((t) => t.kind === kind).map((t) => t.ms),
    timers,
    get pending() {
      return sleepers.length
    },
    get pendingTimers() {
      return sleepers.map(({ kind, wake }) => ({ kind, wake }))
    }
  }
  clockOn(clock, backoffs)
  // for `run`: wakes the first timer if one is still pending once the work has settled, waiting for none
  wakeFirst.set(clock, () =>
    serialised(async () => {
      await settle()
      if (sleepers.length > 0) await wakeNext()
    })
  )
  return clock
}

/** Each clock's way to wake its first timer without waiting for one (see {@link run}). */
const wakeFirst = new WeakMap<TestClock, () => Promise<void>>()

/**
 * Options of {@link run}.
 *
 * **Details**
 *
 * - `start` (default `0`): the clock's first reading.
 * - `quiet` (default `0`): real milliseconds the program must have been still (no timer asked, none woken, not
 *   settled) before time jumps. `0` jumps as soon as the program's promise jobs and one turn of the event loop are
 *   done, which is right for a program that waits on nothing but the clock. For one that waits on real I/O (a
 *   loopback server), give the I/O that long to answer before a pending timer (an attempt's timeout) is fired.
 * - `within` (default 2,000): real milliseconds the program may wait with no timer pending (on I/O, or on nothing
 *   at all) before `run` rejects, naming what it saw.
 * - `maxWakes` (default 1,000,000): the most timers woken, as in `runAll`.
 *
 * @example
 * import type { RunOptions } from 'fp-ts-retry/TestClock'
 *
 * const overLoopback: RunOptions = { quiet: 20 }
 *
 * @category model
 * @since 1.0.0
 */
export interface RunOptions {
  readonly start?: number | undefined
  readonly quiet?: number | undefined
  readonly within?: number | undefined
  readonly maxWakes?: number | undefined
}

/**
 * What {@link run} answers: the program's result, and the clock it ran on (its `now()` is the end time, its
 * `sleeps` the delays, its `timers` every sleep asked).
 *
 * @example
 * import type { Ran } from 'fp-ts-retry/TestClock'
 *
 * const describe = (ran: Ran<string>): string => `${ran.result} at ${ran.clock.now()} ms`
 *
 * @category model
 * @since 1.0.0
 */
export interface Ran<A> {
  readonly result: A
  readonly clock: TestClock
}

const realPause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1))

/**
 * Runs a program on a new {@link TestClock} whose time moves by itself: whenever the program is waiting on
 * nothing but the clock, time jumps to its next timer (Effect's `TestClock.adjust` done for you; Go's
 * `testing/synctest`). A test of a run with retries, timeouts, hedges and a breaker reads as what it checks.
 *
 * **Details**
 *
 * - `program(clock)` makes the task to run, on that clock; `run` answers its result and the clock, once the task
 *   has settled, and rejects with the task's rejection.
 * - Timers wake in order of their wake-up time, one at a time, each given its promise jobs and a turn of the
 *   event loop before the next (see `advance`). A program that waits on real I/O: see `options.quiet`.
 *
 * @example
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { retryingWithContext } from 'fp-ts-retry'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   // each attempt hangs until its 2 s timeout, the third answers at once
 *   let calls = 0
 *   const call = ({ signal }: { signal: AbortSignal }): TE.TaskEither<string, string> =>
 *     ++calls < 3 ? () => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ _tag: 'Left', left: 'aborted' }))) : TE.right('ok')
 *   const policy = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(5)))
 *   const { result, clock } = await TestClock.run((clock) => pipe(call, retryingWithContext(policy, { clock, attemptTimeout: 2_000, onTimeout: () => 'timeout' })))
 *   assert.deepStrictEqual(result, { _tag: 'Right', right: 'ok' })
 *   assert.deepStrictEqual([clock.sleeps, clock.sleepsOf('timeout'), clock.now()], [[100, 200], [2_000, 2_000, 2_000], 4_300])
 * }
 * main()
 *
 * @category utils
 * @since 1.0.0
 */
export const run = async <A>(program: (clock: TestClock) => Task<A>, options: RunOptions = {}): Promise<Ran<A>> => {
  const where = 'TestClock.run'
  validate.callable(where, 'program', program)
  validate.object(where, 'options', options)
  const quiet = validate.duration(where, 'options.quiet', options.quiet ?? 0)
  const within = validate.duration(where, 'options.within', options.within ?? 2_000)
  const maxWakes = validate.count(where, 'options.maxWakes', options.maxWakes ?? 1_000_000)
  const clock = make(options.start ?? 0)
  const task = validate.callable(where, 'program(clock)', program(clock))
  let settled = false
  const running = Promise.resolve()
    .then(task)
    .finally(() => {
      settled = true
    })
  running.catch(() => undefined) // read below
  let wakes = 0
  let idleSince = performance.now()
  while (!settled) {
    await settle()
    if (settled) break
    if (clock.pending === 0) {
      // Waiting on something other than the clock: real I/O, a real timer, or nothing at all.
      if (performance.now() - idleSince > within) {
        throw new Error(`${where}: the program waited ${within} ms of real time with no timer pending on its clock`)
      }
      await realPause()
      continue
    }
    if (quiet > 0) {
      let seen = clock.timers.length
      let since = performance.now()
      while (!settled && performance.now() - since < quiet) {
        await realPause()
        if (clock.timers.length !== seen) [seen, since] = [clock.timers.length, performance.now()]
      }
      if (settled || clock.pending === 0) continue
    }
    if (wakes++ === maxWakes) {
      throw new Error(`${where}: woke ${maxWakes} timers and more are waiting; does a schedule never stop?`)
    }
    // the timer may have gone while the program settled (a response came, its timeout was cleared): wake the
    // first one still pending, if any, and look again
    await (wakeFirst.get(clock) as () => Promise<void>)()
    idleSince = performance.now()
  }
  return { result: await running, clock }
}

/** Every `SleepKind`, and nothing else: the record's type fails to compile when the two differ. */
const KINDS: ReadonlySet<string> = new Set(
  Object.keys({
    backoff: true,
    timeout: true,
    hedge: true,
    due: true,
    throttle: true,
    chaos: true,
    user: true
  } satisfies Record<SleepKind, true>)
)
