/**
 * The crash-resume proof, with real processes: a worker (test/fixtures/durable-worker.ts) retries with a
 * FileStore, is killed with SIGKILL between attempts, and a new worker resumes from the file. The attempts and
 * delays of the interrupted run must be those of an uninterrupted run with the same seed.
 *
 * This is the one test that uses real time: processes cannot share a TestClock. The delays are tens of ms.
 */
import * as assert from 'assert'
import { spawn, type ChildProcess } from 'child_process'
import * as E from 'fp-ts/Either'
import * as O from 'fp-ts/Option'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import * as FileStore from '../src/FileStore'
import * as Random from '../src/Random'
import * as Schedule from '../src/Schedule'
import * as ScheduleConfig from '../src/ScheduleConfig'
import { deepStrictEqual } from './util'

const WORKER = path.join(__dirname, 'fixtures', 'durable-worker.ts')
// tsx's CommonJS hook, loaded in the worker's own process (the tsx CLI would run the script in a grandchild,
// which a SIGKILL of the child would not reach).
const TSX = require.resolve('tsx/cjs')

// Equal jitter keeps at least half of each delay: the waits after attempts 3 and 4, where the workers are
// killed, last at least 80 and 160 ms, ample time for the kill to land before the next attempt.
const CONFIG = { exponential: '40ms', cap: '400ms', jitter: 'equal', maxRetries: 6 }
const SEED = 20_240_601
const FAILURES = 5 // attempts 1 to 5 fail, attempt 6 succeeds

/** Bounds every wait of this file, in real ms. */
const WAIT_LIMIT = 10_000

const children = new Set<ChildProcess>()
const dirs: Array<string> = []

afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  children.clear()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const tempDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-durable-'))
  dirs.push(dir)
  return dir
}

interface Worker {
  readonly child: ChildProcess
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly stderr: string }>
}

const startWorker = (dir: string): Worker => {
  const child = spawn(process.execPath, ['--require', TSX, WORKER, dir, String(SEED), String(FAILURES), JSON.stringify(CONFIG)], {
    stdio: ['ignore', 'ignore', 'pipe']
  })
  children.add(child)
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }))
  )
  return { child, exited }
}

const readLog = (dir: string): ReadonlyArray<string> => {
  const file = path.join(dir, 'log.txt')
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((line) => line !== '') : []
}

/** Polls (every 2 ms, at most WAIT_LIMIT ms) until `done` holds. */
const until = async (what: string, done: () => boolean): Promise<void> => {
  const deadline = Date.now() + WAIT_LIMIT
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Reads the stored state's iterNumber, or undefined (no file yet, or one being replaced). */
const storedIterNumber = (dir: string): number | undefined => {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { iterNumber: number }).iterNumber
  } catch {
    return undefined
  }
}

const withTimeout = <A>(what: string, promise: Promise<A>): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_LIMIT)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Runs the worker in `dir` until attempt `k` has failed and the state for attempt `k + 1` is saved, then kills it
 * with SIGKILL, during its sleep.
 */
const runAndKillAfter = async (dir: string, k: number): Promise<void> => {
  const worker = startWorker(dir)
  await until(`attempt ${k} to fail and its state to be saved`, () => {
    if (worker.child.exitCode !== null) assert.fail(`the worker exited early with ${worker.child.exitCode}`)
    return readLog(dir).some((line) => line.startsWith(`wait after ${k}:`)) && storedIterNumber(dir) === k
  })
  worker.child.kill('SIGKILL')
  const exit = await withTimeout('the killed worker to exit', worker.exited)
  deepStrictEqual(exit.signal, 'SIGKILL')
  // The kill landed in the sleep: attempt k + 1 had not started.
  const log = readLog(dir)
  assert.ok(log[log.length - 1].startsWith(`wait after ${k}:`), `the kill came late, after:\n${log.join('\n')}`)
}

const runToTheEnd = async (dir: string): Promise<void> => {
  const exit = await withTimeout('a worker to finish', startWorker(dir).exited)
  deepStrictEqual({ code: exit.code, stderr: exit.stderr }, { code: 0, stderr: '' })
}

/** The log lines of the run itself: attempts, waits and the outcome (not the process starts). */
const events = (log: ReadonlyArray<string>): ReadonlyArray<string> => log.filter((line) => !line.startsWith('start '))

describe('a retry that survives SIGKILL', () => {
  const schedule = ScheduleConfig.parse(CONFIG)
  if (E.isLeft(schedule)) throw new Error(schedule.left.message)
  const delays = Schedule.delays(schedule.right, { random: Random.seeded(SEED) })
  // What an uninterrupted run does, computed in this process with the same schedule and seed.
  const expected = [
    ...delays.slice(0, FAILURES).flatMap((delay, i) => [`attempt ${i + 1}`, `wait after ${i + 1}: ${delay}`]),
    `attempt ${FAILURES + 1}`,
    `done Right ok ${FAILURES + 1}`,
    'cleared'
  ]

  it('killed after attempts 3 and 4, resumed twice, should make the attempts and delays of an uninterrupted run', async () => {
    assert.ok(delays[2] >= 80 && delays[3] >= 160, 'the kill windows are wide enough')
    const interrupted = tempDir()
    const uninterrupted = tempDir()
    // the uninterrupted worker runs alongside, in its own directory
    const reference = runToTheEnd(uninterrupted)

    await runAndKillAfter(interrupted, 3)
    const store = FileStore.make(path.join(interrupted, 'state.json'))
    const afterFirstKill = await store.load()
    assert.ok(O.isSome(afterFirstKill))
    if (O.isNone(afterFirstKill)) return
    deepStrictEqual(afterFirstKill.value.iterNumber, 3)

    // A kill in the middle of a save leaves a temporary file, whole or cut short; the store still reads the last
    // state that was renamed into place, and the resumed worker starts from it.
    const next = JSON.stringify({ ...afterFirstKill.value, iterNumber: 4 })
    fs.writeFileSync(path.join(interrupted, '.state.json.0123456789ab.tmp'), next.slice(0, next.length >> 1))
    fs.writeFileSync(path.join(interrupted, '.state.json.0123456789ac.tmp'), next)
    deepStrictEqual(await store.load(), afterFirstKill)

    await runAndKillAfter(interrupted, 4)
    await runToTheEnd(interrupted)
    await reference

    const log = readLog(interrupted)
    // three processes: a fresh one, then each resumed from the count the store held
    deepStrictEqual(
      log.filter((line) => line.startsWith('start ')).map((line) => line.replace(/^start \d+ /, '')),
      ['fresh', 'resume 3', 'resume 4']
    )
    // the same attempts and delays as the uninterrupted run, computed in-process and run in a process
    deepStrictEqual(events(log), expected)
    deepStrictEqual(events(readLog(uninterrupted)), expected)
    // no attempt ran twice
    const attempts = log.filter((line) => line.startsWith('attempt '))
    deepStrictEqual(new Set(attempts).size, attempts.length)
    // the run is over: the store is empty, leftovers included
    deepStrictEqual(await store.load(), O.none)
    deepStrictEqual([...fs.readdirSync(interrupted)], ['log.txt'])
  }, 30_000)
})
