/**
 * The crash-resume proof, with real processes: a worker (test/fixtures/durable-worker.ts) retries with a
 * FileStore, is killed with SIGKILL between attempts, and a new worker resumes from the file. The attempts and
 * delays of the interrupted run must be those of an uninterrupted run with the same seed.
 *
 * The workers sleep for real (processes cannot share a TestClock), but the test never bets on how long anything
 * takes: it waits for the workers' log lines, and a worker told to pause after attempt k stops for good once the
 * state for attempt k + 1 is saved, so the kill always lands between the two attempts. The only time limit is
 * jest's timeout.
 */
import * as O from 'fp-ts/Option'
import { spawn, type ChildProcess } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import * as FileStore from '../src/FileStore'
import { compiledFixture } from './support/child'
import * as Random from '../src/Random'
import * as Driver from '../src/Driver'
import * as ScheduleConfig from '../src/ScheduleConfig'
import { deepStrictEqual, ok, rightOf, strictEqual } from './util'

// the fixture from the suite's one transpiled copy of the sources (no tsx loaded in each child)
const WORKER = compiledFixture('durable-worker.ts')

const CONFIG = { exponential: '40ms', cap: '400ms', jitter: 'equal', maxRetries: 6 }
const SEED = 20_240_601
const FAILURES = 5 // attempts 1 to 5 fail, attempt 6 succeeds

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

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

interface Worker {
  readonly child: ChildProcess
  readonly exited: Promise<Exit>
  /** How the worker ended, once it has. */
  readonly exit: () => Exit | undefined
}

/** Starts a worker in `dir`; with `pauseAfter`, it stops for good once attempt `pauseAfter` has failed and its retry is saved. */
const startWorker = (dir: string, pauseAfter?: number): Worker => {
  const args = [
    dir,
    String(SEED),
    String(FAILURES),
    JSON.stringify(CONFIG),
    ...(pauseAfter === undefined ? [] : [String(pauseAfter)])
  ]
  const child = spawn(process.execPath, [WORKER, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  children.add(child)
  let stderr = ''
  let ended: Exit | undefined
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<Exit>((resolve) =>
    // 'close' comes after 'exit', once stderr has been read to its end
    child.on('close', (code, signal) => {
      ended = { code, signal, stderr }
      resolve(ended)
    })
  )
  return { child, exited, exit: () => ended }
}

const readLog = (dir: string): ReadonlyArray<string> => {
  const file = path.join(dir, 'log.txt')
  return fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : []
}

/**
 * Resolves once the worker's log has the line `line`, checking after each turn of the event loop; fails if the
 * worker ends first. No time limit but jest's.
 */
const untilLogged = async (dir: string, worker: Worker, line: string): Promise<void> => {
  while (!readLog(dir).includes(line)) {
    const exit = worker.exit()
    if (exit !== undefined) ok(false, `the worker ended (${JSON.stringify(exit)}) before logging "${line}"`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Runs a worker in `dir` until attempt `k` has failed and the state for attempt `k + 1` is saved, then kills it. */
const runAndKillAfter = async (dir: string, k: number): Promise<void> => {
  const worker = startWorker(dir, k)
  await untilLogged(dir, worker, `paused after ${k}`)
  worker.child.kill('SIGKILL')
  const exit = await worker.exited
  strictEqual(exit.signal, 'SIGKILL')
  // Attempt k + 1 had not started: the last event is the wait the state was saved for.
  const log = events(readLog(dir))
  ok(log[log.length - 1].startsWith(`wait after ${k}:`), `the kill came late, after:\n${log.join('\n')}`)
}

const runToTheEnd = async (dir: string): Promise<void> => {
  const exit = await startWorker(dir).exited
  deepStrictEqual({ code: exit.code, stderr: exit.stderr }, { code: 0, stderr: '' })
}

/** The log lines of the run itself: attempts, waits and the outcome (not the process starts, nor the pauses). */
const events = (log: ReadonlyArray<string>): ReadonlyArray<string> =>
  log.filter((line) => !line.startsWith('start ') && !line.startsWith('paused '))

describe('a retry that survives SIGKILL', () => {
  const delays = Driver.delays(rightOf(ScheduleConfig.parse(CONFIG)), { random: Random.seeded(SEED) })
  // What an uninterrupted run does, computed in this process with the same schedule and seed.
  const expected = [
    ...delays.slice(0, FAILURES).flatMap((delay, i) => [`attempt ${i + 1}`, `wait after ${i + 1}: ${delay}`]),
    `attempt ${FAILURES + 1}`,
    `done Right ok ${FAILURES + 1}`,
    'cleared'
  ]

  it('killed after attempts 3 and 4, resumed twice, should make the attempts and delays of an uninterrupted run', async () => {
    const interrupted = tempDir()
    const uninterrupted = tempDir()
    // the uninterrupted worker runs alongside, in its own directory
    const reference = runToTheEnd(uninterrupted)

    await runAndKillAfter(interrupted, 3)
    const store = FileStore.make(path.join(interrupted, 'state.json'))
    const afterFirstKill = await store.load()
    ok(O.isSome(afterFirstKill), 'a state was stored')
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
