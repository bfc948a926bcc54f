/**
 * Bounded real waits, for tests that mix a `TestClock` with real I/O: `TestClock.runAll` lets promise jobs settle,
 * not sockets, so a test waits (for real, within a bound) until the run has gone to sleep or the server has seen
 * what it expects, then moves the clock.
 */
import type { TestClock } from '../../src/TestClock'

export interface WaitOptions {
  /** The longest real wait, in ms. Default 5000. */
  readonly timeoutMs?: number
  /** What is awaited, for the error message. */
  readonly what?: string
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1))

/** Resolves once `condition()` holds, polling every millisecond; rejects after `timeoutMs` of real time. */
export const waitFor = async (condition: () => boolean, options: WaitOptions = {}): Promise<void> => {
  const timeoutMs = options.timeoutMs ?? 5000
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) {
      throw new Error(`waitFor: ${options.what ?? 'the condition'} did not happen within ${timeoutMs} ms`)
    }
    await tick()
  }
}

/**
 * Runs `run` to its end on a `TestClock`: each time the run sleeps (the clock has a sleeper), wakes every sleeper
 * with `runAll`; in between, waits for real for the I/O. At most `maxSteps` rounds.
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
  throw new Error(`drive: the run still goes on after ${maxSteps} rounds of sleeps`)
}
