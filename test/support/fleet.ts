/**
 * Long-lived fixture processes for the fleet tests: each line a child prints is an event the test can wait for,
 * so a test synchronises on what happened (a worker ready, an attempt started) instead of on timing windows.
 */
import { spawn, type ChildProcess } from 'child_process'
import { compiledFixture } from './child'

/** Bounds every wait of a fleet test, in real ms: a wait that does not end is a failure, not a hang. */
export const WAIT_LIMIT = 30_000

export interface Child {
  readonly process: ChildProcess
  readonly pid: number
  /** Every line printed so far, in order. */
  readonly lines: ReadonlyArray<string>
  /**
   * Resolves with the first line (from the `from`-th on) that satisfies `test`, whenever it comes; rejects after
   * {@link WAIT_LIMIT} or when the process exits first. Once `signal` is aborted it neither resolves nor rejects.
   */
  readonly waitFor: (
    what: string,
    test: (line: string) => boolean,
    from?: number,
    signal?: AbortSignal
  ) => Promise<string>
  /** Resolves once the process has exited and its output has been read. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** What it printed on stderr. */
  readonly stderr: () => string
}

const running = new Set<ChildProcess>()

/** Starts `test/fixtures/<name>` with `args`; stdin stays open (a fixture may stop when it closes). */
export const startChild = (name: string, args: ReadonlyArray<string>): Child => {
  const child = spawn(process.execPath, [compiledFixture(name), ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  running.add(child)
  const lines: Array<string> = []
  const waiters: Array<{ test: (line: string) => boolean; from: number; resolve: (line: string) => void }> = []
  let partial = ''
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n')
    partial = parts.pop() ?? ''
    for (const line of parts) {
      lines.push(line)
      for (let i = waiters.length - 1; i >= 0; i--) {
        const waiter = waiters[i]
        if (lines.length > waiter.from && waiter.test(line)) {
          waiters.splice(i, 1)
          waiter.resolve(line)
        }
      }
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    })
  )
  const pid = child.pid
  if (pid === undefined) throw new Error(`startChild: ${name} did not start`)
  return {
    process: child,
    pid,
    lines,
    exited,
    stderr: () => stderr,
    waitFor: (what, test, from = 0, signal) => {
      const found = lines.slice(from).find(test)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        // the waiter is removed, and its timer cleared, however the wait ends: nothing is left to fire later
        const settle = (): boolean => {
          const i = waiters.indexOf(waiter)
          if (i < 0) return false
          waiters.splice(i, 1)
          clearTimeout(timer)
          return true
        }
        const timer = setTimeout(() => {
          if (settle()) reject(new Error(`waited ${WAIT_LIMIT} ms for ${what}; stderr:\n${stderr}`))
        }, WAIT_LIMIT)
        const waiter = {
          test,
          from,
          resolve: (line: string) => {
            clearTimeout(timer)
            resolve(line)
          }
        }
        waiters.push(waiter)
        signal?.addEventListener('abort', settle, { once: true })
        void exited.then(() => {
          if (settle()) reject(new Error(`the process exited while waiting for ${what}; stderr:\n${stderr}`))
        })
      })
    }
  }
}

/**
 * Resolves with the first line that satisfies `test` printed by any of `children` (from the line counts in `from`
 * on, by default all), and with the child that printed it; the waits on the others end with it. Rejects as soon as
 * one of the waits does.
 */
export const waitForAny = async (
  children: ReadonlyArray<Child>,
  what: string,
  test: (line: string, child: Child) => boolean,
  from: ReadonlyArray<number> = []
): Promise<{ readonly child: Child; readonly line: string }> => {
  const done = new AbortController()
  try {
    return await Promise.race(
      children.map((child, i) =>
        child.waitFor(what, (line) => test(line, child), from[i], done.signal).then((line) => ({ child, line }))
      )
    )
  } finally {
    done.abort()
  }
}

/** Kills every child still running (for `afterAll`), by its pid. */
export const killChildren = async (): Promise<void> => {
  const left = [...running]
  for (const child of left) child.kill('SIGKILL')
  await Promise.all(
    left.map(
      (child) =>
        new Promise((resolve) =>
          child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('close', resolve)
        )
    )
  )
}
