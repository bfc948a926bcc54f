/**
 * A `Clock` whose time moves only when a test says so: every sleep is recorded and none waits for real.
 *
 * @since 0.1.0
 */
import type { Clock } from './Clock'
import { onAbort } from './internal/abort'
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
 * - `sleep(ms)` records `ms` in `sleeps` and waits until the clock is moved past its wake-up time.
 *   `sleep(0)` is recorded and resolves at once (the runners never ask for one: a zero delay skips the clock); an
 *   aborted signal wakes its sleeper at once.
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
 * - `pending` is the number of sleepers still waiting.
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
  readonly advance: (ms: number) => Promise<void>
  readonly runAll: (maxWakes?: number) => Promise<void>
  readonly sleeps: ReadonlyArray<number>
  readonly pending: number
}

interface Sleeper {
  readonly wake: number
  readonly resolve: () => void
}

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

  const sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    ms = validate.duration('TestClock.sleep', 'ms', ms) // -0 becomes 0
    sleeps.push(ms)
    if (ms === 0 || signal?.aborted) return Promise.resolve()
    // Without a signal there is nothing to clean up on a wake: no closures to allocate.
    if (signal === undefined) return new Promise<void>((resolve) => insert({ wake: time + ms, resolve }))
    return new Promise<void>((resolve) => {
      // One listener per signal, however many sleeps share it (see internal/abort).
      const unsubscribe = onAbort(signal, () => {
        const i = sleepers.indexOf(sleeper)
        if (i >= 0) sleepers.splice(i, 1)
        resolve()
      })
      const sleeper: Sleeper = {
        wake: time + ms,
        resolve: () => {
          unsubscribe()
          resolve()
        }
      }
      insert(sleeper)
    })
  }

  let wakes = 0

  // Wakes the next sleeper and lets the work it resumes run. That work nearly always goes back to sleep
  // through promise jobs alone (a retry: attempt, decide, sleep), so draining them is enough and keeps a test
  // of many retries fast. When it has not gone back to sleep (it finished, or it waits on a timer, a tick or
  // I/O), a full turn of the event loop lets it go as far as it can, as before every wake.
  // Called from `advance` and `runAll` after their first `await`, so from a promise job.
  const wakeNext = async (): Promise<void> => {
    const sleeper = sleepers.shift() as Sleeper
    if (sleeper.wake > time) time = sleeper.wake
    const asleep = fellAsleep
    sleeper.resolve()
    await drainPromiseJobs()
    wakes++
    if (fellAsleep === asleep || wakes % TURN_EVERY === 0) await settle()
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
    while (sleepers.length > 0 && sleepers[0].wake <= target) await wakeNext()
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
      await wakeNext()
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

  return {
    now: () => time,
    sleep,
    advance,
    runAll,
    sleeps,
    get pending() {
      return sleepers.length
    }
  }
}
