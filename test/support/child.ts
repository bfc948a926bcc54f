/**
 * A test fixture (`test/fixtures/<name>.ts`) run in a child process, for what only a whole process shows: whether
 * a pending timer keeps it alive, the warnings Node emits (a test runner's process object does not receive them).
 */
import { spawn, type ChildProcess } from 'child_process'
import * as path from 'path'

// tsx's CommonJS hook, loaded in the child's own process (the tsx CLI would run the script in a grandchild).
const TSX = require.resolve('tsx/cjs')

/** How a child process ended and what it printed. */
export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const children: Array<ChildProcess> = []

/**
 * Runs `test/fixtures/<name>` in a child process and resolves once it has exited by itself (on 'close': after
 * 'exit', when its output has been read), however long that takes: the test's timeout is the only bound.
 */
export const runFixture = (name: string, args: ReadonlyArray<string>): Promise<Exited> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', TSX, path.join(__dirname, '..', 'fixtures', name), ...args], {
      stdio: ['ignore', 'pipe', 'pipe']
    })
    children.push(child)
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

/** Kills the children still running (a test that failed because one did not exit), for `afterAll`. */
export const killLeftoverChildren = (): void => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill()
}
