/**
 * `fp-ts-retry run`: retries a command until it exits 0 or the schedule stops, with the library's own runner.
 */
import { spawn } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type * as TE from 'fp-ts/TaskEither'
import type { Event } from 'fp-ts-retry/Event'
import * as Random from 'fp-ts-retry/Random'
import { retrying } from 'fp-ts-retry/Retry'
import * as Schedule from 'fp-ts-retry/Schedule'
import { ms } from './format'

/** How an attempt failed: what the schedule sees, so `retryOn` / `neverRetryOn` match exit codes. */
export interface Failure {
  /** The exit code, or 128 + the signal's number when the command was killed by a signal (as shells report it). */
  readonly code: number
  readonly signal: NodeJS.Signals | null
}

export interface RunOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The schedule from the config: it sees each failure as a {@link Failure}. */
  readonly schedule: Schedule.Schedule<unknown>
  /** Why the schedule stops at this failure, when the config can tell (its `retryOn` / `neverRetryOn`). */
  readonly why?: (failure: Failure) => string | undefined
  readonly seed?: number
  /** Where progress lines go. */
  readonly log: (line: string) => void
  /** How long a command gets to exit after the stop signal is passed on, before it is killed. */
  readonly killAfter?: number
  /** Where the run's events go, one JSON line each (see {@link eventLine}). */
  readonly events?: (line: string) => void
}

/**
 * An event as one line of JSON: `JSON.stringify(event)`, with an `error` that is an `Error` (a command that
 * cannot be started) as `{ name, message }`, which `JSON.stringify` would print as `{}`.
 */
export const eventLine = (event: Event): string =>
  JSON.stringify(
    'error' in event && event.error instanceof Error
      ? { ...event, error: { name: event.error.name, message: event.error.message } }
      : event
  )

/** Writes each line to `file` (made anew) as it comes, so that a run cut short leaves what it did; `close` ends it. */
export const lineFile = (file: string): { readonly write: (line: string) => void; readonly close: () => void } => {
  const fd = fs.openSync(file, 'w')
  return { write: (line) => void fs.writeSync(fd, `${line}\n`), close: () => fs.closeSync(fd) }
}

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number =>
  code ?? 128 + (signal === null ? 0 : os.constants.signals[signal] ?? 0)

/** A command that could not be started (not found, not executable): never retried. */
class SpawnError extends Error {
  override readonly name = 'SpawnError'
  constructor(readonly exitCode: number, message: string) {
    super(message)
  }
}

/**
 * Runs the command, retrying as the schedule says. Resolves with the exit code for the CLI: 0 on success, the
 * last attempt's code when the schedule stops, 128 + the signal's number when SIGINT or SIGTERM stopped it,
 * 127 or 126 when the command cannot be started.
 */
export const runCommand = async (options: RunOptions): Promise<number> => {
  const { log } = options
  const controller = new AbortController()
  let child: ReturnType<typeof spawn> | undefined
  let interrupted: NodeJS.Signals | undefined
  let attempts = 0

  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted !== undefined) return
    interrupted = signal
    log(
      `received ${signal}: stopping${
        child !== undefined ? `, and stopping the running command (pid ${child.pid})` : ''
      }`
    )
    controller.abort(new Error(signal))
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const running = child
      running.kill(signal)
      // A command that ignores the signal is killed outright; the timer does not keep the CLI alive.
      setTimeout(() => {
        if (running.exitCode === null && running.signalCode === null) running.kill('SIGKILL')
      }, options.killAfter ?? 2000).unref()
    }
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const attempt: TE.TaskEither<Failure | SpawnError, number> = () =>
    new Promise((resolve) => {
      attempts++
      log(`attempt ${attempts}: ${[options.command, ...options.args].join(' ')}`)
      const started = spawn(options.command, [...options.args], { stdio: 'inherit' })
      child = started
      started.once('error', (error: NodeJS.ErrnoException) => {
        const code = error.code === 'ENOENT' ? 127 : 126
        resolve(
          E.left(
            new SpawnError(
              code,
              `cannot run ${options.command}: ${error.code === 'ENOENT' ? 'command not found' : error.message}`
            )
          )
        )
      })
      started.once('exit', (code, signal) => {
        child = undefined
        const exitCode = exitCodeOf(code, signal)
        resolve(exitCode === 0 ? E.right(0) : E.left({ code: exitCode, signal }))
      })
    })

  // A command that cannot be started is not retried: the schedule only sees exit codes.
  const schedule = pipe(
    options.schedule,
    Schedule.whileInput((failure: Failure | SpawnError) => !(failure instanceof SpawnError))
  )

  try {
    const result = await retrying(schedule, {
      random: options.seed === undefined ? Random.live : Random.seeded(options.seed),
      signal: controller.signal,
      onEvent: options.events === undefined ? undefined : (event) => options.events?.(eventLine(event)),
      onRetry: ({ error: failure, status, delay }) => {
        const why =
          failure instanceof SpawnError
            ? failure.message
            : `exited with code ${failure.code}${failure.signal === null ? '' : ` (${failure.signal})`}`
        log(`attempt ${status.iterNumber + 1} ${why}; retry ${status.iterNumber + 1} in ${ms(delay)} ms`)
      },
      onDone: ({ result: outcome, status, reason }) => {
        const made = `${attempts} attempt${attempts === 1 ? '' : 's'}`
        if (reason === 'succeeded') log(`attempt ${attempts} exited with code 0: done after ${made}`)
        else if (reason === 'aborted') log(`stopped by ${interrupted ?? 'a signal'} after ${made}; no further retry`)
        else if (E.isLeft(outcome) && outcome.left instanceof SpawnError) log(outcome.left.message)
        else if (E.isLeft(outcome)) {
          const failure = outcome.left as Failure
          const why = reason === 'schedule' ? options.why?.(failure) : undefined
          log(
            `attempt ${attempts} exited with code ${failure.code}; the schedule stops after ${status.iterNumber} ${
              status.iterNumber === 1 ? 'retry' : 'retries'
            }${why === undefined ? '' : ` (${why})`}: giving up with exit code ${failure.code}`
          )
        }
      }
    })(attempt)()
    if (interrupted !== undefined) return 128 + (os.constants.signals[interrupted] ?? 0)
    if (E.isRight(result)) return 0
    return result.left instanceof SpawnError ? result.left.exitCode : result.left.code
  } catch (error) {
    // The signal came before the first attempt started.
    if (interrupted !== undefined) return 128 + (os.constants.signals[interrupted] ?? 0)
    throw error
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
