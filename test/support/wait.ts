/**
 * Waits on events, for tests that mix a `TestClock` with real I/O: `TestClock.runAll` lets promise jobs settle,
 * not sockets, so a test waits until the run has gone to sleep or the server has seen what it expects, then moves
 * the clock. No wait has a time limit of its own: a wait that never ends is bounded by jest's timeout alone, so no
 * test depends on how fast the machine is.
 */
import type { TestClock } from '../../src/TestClock'

export interface WaitOptions {
  /** What is awaited: it names the wait for a reader of the test, and in the error of {@link drive}. */
  readonly what?: string
}

/** Resolves after the I/O that was ready has been handled: one turn of the event loop, timers included. */
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1))

/** Resolves once `condition()` holds, checking it after each turn of the event loop. */
export const waitFor = async (condition: () => boolean, _options: WaitOptions = {}): Promise<void> => {
  while (!condition()) await tick()
}

/** Resolves once `done()` resolves `true`, asking again every 10 ms (each asks a server: a Redis, a queue). */
export const waitUntil = async (done: () => Promise<boolean>, _options: WaitOptions = {}): Promise<void> => {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 10))
}

/**
 * Runs `run` to its end on a `TestClock`: each time the run sleeps (the clock has a sleeper), wakes every sleeper
 * with `runAll`; in between, waits for the I/O. At most `maxSteps` rounds of sleeps.
 *
 * Only for runs whose sleeps are all retry delays: an attempt timeout on the same clock would be woken too.
 */
export const drive = async <A>(
  clock: TestClock,
  run: Promise<A>,
  options: WaitOptions & { readonly maxSteps?: number } = {}
): Promise<A> => {
  let settled = false
  run.then(
    () => (settled = true),
    () => (settled = true)
  )
  const maxSteps = options.maxSteps ?? 100
  for (let step = 0; step < maxSteps; step++) {
    await waitFor(() => settled || clock.pending > 0, { what: 'the run to sleep or end', ...options })
    if (settled) return run
    await clock.runAll()
  }
  throw new Error(`drive: ${options.what ?? 'the run'} still goes on after ${maxSteps} rounds of sleeps`)
}
