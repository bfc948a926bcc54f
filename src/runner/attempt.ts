/**
 * The runner's attempts: an attempt under the run's timeout (on the run's clock, clamped to the schedule's `upTo`)
 * and an attempt given a signal of its own. Private to the runner (`Retry`).
 *
 * @internal
 */
import type { Either } from 'fp-ts/Either'
import * as Decision from '../Decision'
import { noop, onAbort } from '../internal/abort'
import * as validate from '../internal/validate'
import * as Timeout from '../Timeout'
import type { Attempt, AttemptTimeout, Progress, Run, SignalledAttempt } from './loop'

/**
 * An attempt under a timeout, on the run's clock: the attempt's own signal aborts when the run's does or when the
 * time is up; a timeout becomes the `Left` of `onTimeout`. The time is clamped to what is left of the schedule's
 * `upTo` limits, so that a hanging attempt cannot outlive the run's deadline.
 */
export const withTimeout =
  <In, R extends Either<unknown, unknown>>(
    run: Run<In>,
    timeout: AttemptTimeout<unknown>,
    attempt: SignalledAttempt<R>
  ): Attempt<R> =>
  async (driver, signal) => {
    const status = driver.statusAt(run.clock.now())
    let ms = typeof timeout.after === 'number' ? timeout.after : timeout.after(status)
    validate.duration(run.where, 'options.attemptTimeout(status)', ms)
    for (const limit of run.schedule.timeLimits) {
      if (limit._tag === 'Elapsed') ms = Math.min(ms, Math.max(0, limit.ms - status.elapsed))
    }
    // One timeout in the library (Timeout.timeoutSignalled): the attempt's own signal aborts with the run's or at
    // the timeout, and an attempt that cannot see its signal still times out after a run abort.
    let timedOut = false
    const result = (await Timeout.timeoutSignalled(ms, (after) => ((timedOut = true), timeout.onTimeout(after)), {
      clock: run.clock
    })(
      ({ signal: own }) =>
        () =>
          attempt(driver, own)
    )({ signal })()) as R
    return timedOut ? Decision.timedOut(result, ms) : result
  }

/**
 * A signal of the attempt's own that aborts when the run's does, and how to let go of the run's: what an attempt
 * hangs on its signal leaves with it, so no number of attempts or runs piles listeners onto one signal.
 */
export const attemptSignal = (
  signal: AbortSignal | undefined
): { readonly controller: AbortController; readonly unlink: () => void } => {
  const controller = new AbortController()
  const unlink = signal === undefined ? noop : onAbort(signal, () => controller.abort(signal.reason))
  return { controller, unlink }
}

/** An attempt given a signal of its own (see {@link attemptSignal}). */
export const withOwnSignal =
  <R>(attempt: SignalledAttempt<R>): Attempt<R> =>
  async (progress, signal) => {
    const { controller, unlink } = attemptSignal(signal)
    try {
      return await attempt(progress, controller.signal)
    } finally {
      unlink()
    }
  }

/** The runner's attempt for an action that sees no signal: `base`, under the run's timeout when it has one. */
export const attemptOf = <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  base: (progress: Progress) => Promise<R>
): Attempt<R> => (run.timeout === undefined ? base : withTimeout(run, run.timeout, base))

/** The runner's attempt for an action that sees its signal: one of its own, which the run's timeout also aborts. */
export const signalledAttemptOf = <In, R extends Either<unknown, unknown>>(
  run: Run<In>,
  base: SignalledAttempt<R>
): Attempt<R> => (run.timeout === undefined ? withOwnSignal(base) : withTimeout(run, run.timeout, base))
