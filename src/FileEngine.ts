/**
 * The embedded durable engine, for one machine: the `Durable.Engine` on a folder, runs stored as files with the
 * atomic writes of `FileStore`, timers for due runs, pending runs picked up again when a worker starts after a
 * restart.
 *
 * Every decision is made by `Durable.deliver`, and every write follows the same durable step as `BullMQ.make`,
 * so runs behave here exactly as on BullMQ: the same attempts, delays and outcome for the same definition, seed and
 * failures. For a fleet of workers, use `BullMQ.make`.
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as FileEngine from 'fp-ts-retry/FileEngine'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as E from 'fp-ts/Either'
 * import * as t from 'io-ts'
 * import { pipe } from 'fp-ts/function'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * const sendInvoice = Durable.define({
 *   name: 'send-invoice',
 *   schedule: pipe(Schedule.exponential(10), Schedule.capped(1_000), Schedule.fullJitter, Schedule.intersect(Schedule.recurs(5))),
 *   payload: t.type({ invoice: t.number }),
 *   // fails once, then succeeds: the attempt number comes from the run's status
 *   action: (payload, run) => () =>
 *     Promise.resolve(run.status.iterNumber < 1 ? E.left('busy') : E.right(`sent ${payload.invoice}`))
 * })
 *
 * async function main() {
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-'))
 *   const engine = FileEngine.make({ dir })
 *   const done = new Promise<string>((resolve) =>
 *     engine.work(sendInvoice, { onDone: ({ id, result, reason }) => resolve(`${id}: ${JSON.stringify(result)} (${reason})`) })
 *   )
 *   await engine.submit(sendInvoice, 'invoice-42', { invoice: 42 })
 *   assert.strictEqual(await done, 'invoice-42: {"_tag":"Right","right":"sent 42"} (succeeded)')
 *   await engine.close()
 *   fs.rmSync(dir, { recursive: true, force: true })
 * }
 * main()
 *
 * @since 1.0.0
 */
import { randomBytes } from 'crypto'
import * as fs from 'fs/promises'
import * as path from 'path'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import { deliver, type Definition, type Engine, type Pending, type Worker, type WorkOptions } from './Durable'
import * as Event from './Event'
import * as FileStore from './FileStore'
import { ForeignEntry, ownFolder, readOwnFile, syncDirectory, writeAtomically } from './internal/atomicFile'
import {
  attemptSignals,
  checkDefinition,
  checkId,
  checkWorkOptions,
  closeDeadline,
  closeWithin,
  DEFAULT_KEEP_DONE,
  DEFAULT_WRITE_RETRY,
  durationAtLeast,
  encodePayload,
  HOOK_RETRY_DELAY,
  reportError,
  step,
  tell
} from './durable/shared'
import { fromFileName, toFileName } from './internal/ids'
import { showValue } from './internal/show'
import * as validate from './internal/validate'
import type { Schedule } from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `dir`: the folder of the store; created if missing.
 * - `keepDone`: how long a done run's id is remembered, in ms, so that submitting it again starts nothing
 *   (default 24 hours). Pruned when a worker starts and then at most once a minute.
 * - `clock` (default `Clock.live`): the time runs are decided and stored in (epoch ms with `Clock.live`), their
 *   timers, the waits between failed writes, and the times a done run is pruned by. A `TestClock` drives the
 *   engine without waiting (the files are still real).
 * - `writeRetry`: when a run's state or outcome cannot be written (`ENOSPC`, `EFBIG`, `EIO`), the write, not the
 *   attempt, is made again after this schedule's delays, each failure reported to `onError`; the decided retry or
 *   outcome waits in memory meanwhile. Default: from 100 ms, doubling, capped at 30 s, then equal jitter, without
 *   end. **Gotcha**: a schedule that stops gives the run up to the next delivery a second later, as stored: its
 *   last attempt may then be made again. A worker that closes gives up the write too (as a kill would).
 * - `onEvent`: told `RunSubmitted` for each `submit` that resolves (an id already known included: it starts
 *   nothing), and the events of the runs of every worker that
 *   has no `onEvent` of its own (see `Durable.WorkOptions`).
 *
 * @example
 * import type { Options } from 'fp-ts-retry/FileEngine'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 *
 * const options: Options = {
 *   dir: '/var/lib/my-service/retries',
 *   keepDone: 7 * 24 * 3600_000,
 *   writeRetry: pipe(Schedule.exponential(1_000), Schedule.capped(60_000), Schedule.fullJitter)
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface Options {
  readonly dir: string
  readonly keepDone?: number | undefined
  readonly clock?: Clock | undefined
  readonly writeRetry?: Schedule<unknown> | undefined
  readonly onEvent?: Event.Observer | undefined
}

// -------------------------------------------------------------------------------------
// the store
// -------------------------------------------------------------------------------------

const RUN_FILE = 'run.json'
const STATE_FILE = 'state.json'
const OUTCOME_FILE = 'outcome.json'
/** The error of a guarded run's retried failure (`StoredRun.error`): the guards are told of it with the success. */
const ERROR_FILE = 'error.json'
const STAGING = '.staging-'
/** How old a staging folder must be to be taken for a leftover of a killed submit (real time: a submit's write). */
const STAGING_STALE_MS = 60_000

/** Whether a staging folder is old enough to be a leftover (a folder gone meanwhile is none). */
const stale = async (file: string): Promise<boolean> => {
  try {
    return Date.now() - (await fs.lstat(file)).mtimeMs > STAGING_STALE_MS
  } catch {
    return false
  }
}
const PRUNE_EVERY = 60_000

const isCode = (e: unknown, ...codes: ReadonlyArray<string>): boolean =>
  codes.includes((e as NodeJS.ErrnoException | null)?.code ?? '')

/** Whether there is an entry at `p`, whatever it is (`lstat`: a link is not followed). */
const present = async (p: string): Promise<boolean> => {
  try {
    await fs.lstat(p)
    return true
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false
    throw e
  }
}

/** Writes `file` whole or not at all (internal/atomicFile), through a temporary file beside it. */
const writeWhole = (file: string, text: string): Promise<void> =>
  writeAtomically(
    file,
    text,
    path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`)
  )

/** A JSON file the store made: its value, its text when it is not JSON, `undefined` when there is none. */
const readJson = async (file: string): Promise<unknown> => {
  const text = await readOwnFile(file)
  if (text === undefined) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/** The store of one definition name: `<dir>/<name>/pending/<id>/` and `<dir>/<name>/done/<id>/`. */
interface Folder {
  readonly root: string
  readonly pending: string
  readonly done: string
  readonly ready: Promise<void>
  /** Per run: the tail of its chain of operations, so that a submit and a delivery of one run never overlap. */
  readonly locks: Map<string, Promise<void>>
  /** The staging folders of this process's submits in flight: a worker starting meanwhile must leave them alone. */
  readonly staging: Set<string>
  readonly clock: Clock
  worker: FileWorker | undefined
  lastPrune: number
}

const withLock = <R>(folder: Folder, key: string, f: () => Promise<R>): Promise<R> => {
  const previous = folder.locks.get(key) ?? Promise.resolve()
  const result = previous.then(f)
  const tail = result.then(
    () => undefined,
    () => undefined
  )
  folder.locks.set(key, tail)
  void tail.then(() => {
    if (folder.locks.get(key) === tail) folder.locks.delete(key)
  })
  return result
}

/** Removes the done runs older than `keepDone`; a `done/` that is not the store's own folder is left alone. */
const prune = async (folder: Folder, keepDone: number, report: (e: unknown) => void): Promise<void> => {
  folder.lastPrune = folder.clock.now()
  const cutoff = folder.lastPrune - keepDone
  try {
    if (!(await ownFolder(folder.done))) return
    for (const name of await fs.readdir(folder.done)) {
      const p = path.join(folder.done, name)
      try {
        // lstat and rm never follow a link: an entry that is one is removed, not what it points to
        if ((await fs.lstat(p)).mtimeMs <= cutoff)
          await withLock(folder, name, () => fs.rm(p, { recursive: true, force: true }))
      } catch (e) {
        if (!isCode(e, 'ENOENT')) throw e
      }
    }
  } catch (e) {
    report(e)
  }
}

interface FileWorker {
  readonly schedule: (key: string, at: number) => void
  readonly close: () => Promise<void>
}

const startFileWorker = <P, E, A>(
  folder: Folder,
  def: Definition<P, E, A>,
  options: WorkOptions<E, A>,
  settings: { readonly concurrency: number; readonly keepDone: number; readonly writeRetry: Schedule<unknown> }
): FileWorker => {
  const { clock } = folder
  const { concurrency, keepDone, writeRetry } = settings
  /** Per run waiting for its time: what ends its sleep. */
  const timers = new Map<string, AbortController>()
  const due: Array<string> = []
  const queued = new Set<string>()
  const inFlight = new Set<Promise<void>>()
  const controller = new AbortController()
  const signals = attemptSignals(controller.signal)
  let active = 0
  let closed = false

  const schedule = (key: string, at: number): void => {
    if (closed) return
    timers.get(key)?.abort()
    timers.delete(key)
    // A retry is due at a fraction of a ms: wait to the next whole one, as a queue does.
    const wait = Math.ceil(at) - clock.now()
    if (wait <= 0) return enqueue(key)
    const timer = new AbortController()
    timers.set(key, timer)
    void clock.sleep(wait, timer.signal, 'due').then(() => {
      if (timer.signal.aborted) return
      timers.delete(key)
      enqueue(key)
    })
  }

  const enqueue = (key: string): void => {
    if (queued.has(key)) return
    queued.add(key)
    due.push(key)
    pump()
  }

  const pump = (): void => {
    while (!closed && active < concurrency && due.length > 0) {
      const key = due.shift() as string
      queued.delete(key)
      active++
      const running: Promise<void> = withLock(folder, key, () => process(key))
        .catch((e: unknown) => {
          reportError(options.onError, e, { id: fromFileName(key) ?? key })
          // Not the store's own file or folder: skipped for good. An I/O error: the run is tried again later,
          // as stored (every write of a decision is retried in the step: only a read, made before any attempt, or
          // a write given up, gets here).
          if (!(e instanceof ForeignEntry)) schedule(key, clock.now() + HOOK_RETRY_DELAY)
        })
        .finally(() => {
          active--
          inFlight.delete(running)
          pump()
        })
      inFlight.add(running)
    }
  }

  const report = (e: unknown): void => reportError(options.onError, e, { queue: def.name })

  const process = async (key: string): Promise<void> => {
    const dir = path.join(folder.pending, key)
    // Gone (done and pruned, or never there), or not the folder the store made (a link: never followed).
    if (!(await ownFolder(dir))) return
    const record = await readJson(path.join(dir, RUN_FILE))
    if (record === undefined) return
    const r = record as Partial<Record<string, unknown>> | null
    const isObject = r !== null && typeof r === 'object' && !Array.isArray(r)
    const id = isObject && typeof r.id === 'string' ? r.id : fromFileName(key) ?? key
    const stored = isObject
      ? {
          ...r,
          retry: await readJson(path.join(dir, STATE_FILE)),
          outcome: await readJson(path.join(dir, OUTCOME_FILE)),
          error: (await readJson(path.join(dir, ERROR_FILE))) ?? null
        }
      : record
    const attempt = signals()
    // One number for the delivery's events, told by deliver and by the step.
    const run = options.onEvent === undefined ? 0 : Event.nextRun()
    const delivery = await deliver(def, id, stored, { now: clock.now, signal: attempt.signal, options, run }).finally(
      attempt.release
    )
    const { onError, onEvent } = options
    const context = { id, clock, signal: controller.signal, writeRetry, onError, onEvent, run, definition: def.name }
    await step(
      delivery,
      {
        saveRetry: async (retried, state) => {
          // the error first: a crash between the two repeats the attempt, and never pairs a retry with another's error
          if (retried.error !== undefined && retried.error !== null)
            await writeWhole(path.join(dir, ERROR_FILE), JSON.stringify(retried.error))
          await FileStore.make(path.join(dir, STATE_FILE)).save(state)
        },
        saveOutcome: (_, outcome) => writeWhole(path.join(dir, OUTCOME_FILE), JSON.stringify(outcome)),
        later: (dueAt) => schedule(key, dueAt),
        finish: async () => {
          const target = path.join(folder.done, key)
          if (!(await ownFolder(folder.done))) await fs.mkdir(folder.done)
          await fs.rm(target, { recursive: true, force: true })
          await fs.rename(dir, target)
          // Its time of death, on the engine's clock: what `keepDone` counts from.
          const now = new Date(clock.now())
          await fs.lutimes(target, now, now)
          await syncDirectory(folder.pending)
          if (clock.now() - folder.lastPrune >= PRUNE_EVERY) void prune(folder, keepDone, report)
        }
      },
      context
    )
  }

  return {
    schedule,
    close: async () => {
      closed = true
      for (const timer of timers.values()) timer.abort()
      timers.clear()
      due.length = 0
      queued.clear()
      controller.abort()
      await Promise.all([...inFlight])
    }
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The embedded engine, for one machine: runs stored as files, with the atomic writes of `FileStore`; timers for
 * due runs; pending runs picked up again when `work` starts after a restart.
 *
 * **Details**
 *
 * - Layout: `<dir>/<name>/pending/<id>/` per pending run: `run.json` (id and payload, written once at submit: the
 *   folder is written aside and renamed into place), `state.json` (the retry state, saved by `FileStore`) and
 *   `outcome.json` (the outcome, while `onDone` is pending). A done run's folder moves to `<dir>/<name>/done/`
 *   and is pruned after `keepDone`. Names and ids are escaped to file names one-to-one (a long id is hashed).
 * - One engine per folder, in one process: two processes working one folder are not coordinated (use
 *   `BullMQ.make` for a fleet). A run submitted while a worker of its name is running is worked at once;
 *   otherwise when a worker starts.
 * - Every write is flushed to disk before the next step; a run's retry state is saved before its timer is set, so
 *   a process killed at any point resumes it no earlier than its schedule says. A write that fails is made again
 *   (see `writeRetry` in {@link Options}): never the attempt.
 * - The store trusts nothing in its folder but what it made: it never follows a symbolic link and opens only
 *   regular files and folders (`lstat`, `O_NOFOLLOW`, `O_NONBLOCK`, the opened handle checked). A run folder that
 *   is a link, or a `run.json` that is a FIFO, is skipped and reported to `onError`; a `done/` that is a link is
 *   neither pruned nor moved into, and reported. Nothing outside `dir` is read, written or deleted.
 * - One worker per definition name at a time: a second `work` for a name being worked is an `Error`.
 * - `pending(def)` reads the run folders: the ids of `pending/` and of `done/` (pruned after `keepDone`).
 * - `close({ deadline })` (default 10 s) aborts the attempts in flight and waits for them until the deadline;
 *   an attempt that ignores its signal is then left to end on its own (its run is delivered again after a
 *   restart, as stored).
 *
 * @example
 * import * as Durable from 'fp-ts-retry/Durable'
 * import * as FileEngine from 'fp-ts-retry/FileEngine'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as t from 'io-ts'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-'))
 *   const def = Durable.define({ name: 'greet', schedule: Schedule.recurs(2), payload: t.string, action: (who: string) => TE.right(`hello ${who}`) })
 *   // submitted before any worker runs: stored, and worked when a worker starts
 *   const first = FileEngine.make({ dir })
 *   await first.submit(def, 'g-1', 'world')
 *   await first.submit(def, 'g-1', 'again') // the same id: no second run
 *   await first.close()
 *   const second = FileEngine.make({ dir })
 *   const results: Array<string> = []
 *   await new Promise<void>((resolve) =>
 *     second.work(def, { onDone: ({ id, result }) => { results.push(`${id} ${JSON.stringify(result)}`); resolve() } })
 *   )
 *   assert.deepStrictEqual(results, ['g-1 {"_tag":"Right","right":"hello world"}'])
 *   await second.close()
 *   fs.rmSync(dir, { recursive: true, force: true })
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: Options): Engine => {
  const where = 'FileEngine.make'
  validate.object(where, 'options', options)
  const { dir } = options
  if (typeof dir !== 'string' || dir === '')
    throw new TypeError(`${where}: options.dir must be a non-empty path, received ${showValue(dir)}`)
  const keepDone = durationAtLeast(where, 'options.keepDone', 0, options.keepDone ?? DEFAULT_KEEP_DONE)
  validate.services(where, 'options', options)
  const writeRetry =
    options.writeRetry === undefined
      ? DEFAULT_WRITE_RETRY
      : validate.schedule(where, 'options.writeRetry', options.writeRetry)
  const clock = options.clock ?? LiveClock.live
  const { onEvent } = options
  if (onEvent !== undefined) validate.callable(where, 'options.onEvent', onEvent)
  const folders = new Map<string, Folder>()
  let closed = false

  const folderOf = async (name: string): Promise<Folder> => {
    let folder = folders.get(name)
    if (folder === undefined) {
      const root = path.join(dir, toFileName(name))
      const pending = path.join(root, 'pending')
      const done = path.join(root, 'done')
      const ready = (async () => {
        await Promise.all([fs.mkdir(pending, { recursive: true }), fs.mkdir(done, { recursive: true })])
        // mkdir passes over a link to a folder: the store's own folders must be folders
        await ownFolder(root)
        await ownFolder(pending)
      })()
      folder = {
        root,
        pending,
        done,
        ready,
        locks: new Map(),
        staging: new Set(),
        clock,
        worker: undefined,
        lastPrune: 0
      }
      folders.set(name, folder)
    }
    await folder.ready
    return folder
  }

  const checkOpen = (what: string): void => {
    if (closed) throw new Error(`${where}: ${what}: the engine is closed`)
  }

  const submit = async <P, E, A>(def: Definition<P, E, A>, id: string, payload: P): Promise<void> => {
    checkOpen('submit')
    checkDefinition(`${where}: submit`, def)
    checkId(`${where}: submit`, id)
    const encoded = encodePayload(`${where}: submit`, def.payload, payload)
    const folder = await folderOf(def.name)
    const key = toFileName(id)
    const added = await withLock(folder, key, async () => {
      if ((await present(path.join(folder.pending, key))) || (await present(path.join(folder.done, key)))) return false
      const staging = await fs.mkdtemp(path.join(folder.root, STAGING))
      folder.staging.add(path.basename(staging))
      try {
        await writeWhole(path.join(staging, RUN_FILE), JSON.stringify({ id, payload: encoded }))
        await fs.rename(staging, path.join(folder.pending, key))
      } catch (e) {
        await fs.rm(staging, { recursive: true, force: true })
        if (isCode(e, 'EEXIST', 'ENOTEMPTY')) return false
        throw e
      } finally {
        folder.staging.delete(path.basename(staging))
      }
      await syncDirectory(folder.pending)
      return true
    })
    tell(onEvent, undefined, {
      _tag: 'RunSubmitted',
      source: 'durable',
      run: 0,
      at: clock.now(),
      id,
      definition: def.name
    })
    if (added) folder.worker?.schedule(key, clock.now())
  }

  const work = async <P, E, A>(def: Definition<P, E, A>, workOptions?: WorkOptions<E, A>): Promise<Worker> => {
    checkOpen('work')
    checkDefinition(`${where}: work`, def)
    const o = checkWorkOptions(`${where}: work`, workOptions)
    const concurrency = validate.positiveCount(`${where}: work`, 'options.concurrency', o.concurrency ?? 1)
    const folder = await folderOf(def.name)
    if (folder.worker !== undefined)
      throw new Error(`${where}: work: the runs of ${JSON.stringify(def.name)} are already worked by this engine`)
    const worker = startFileWorker(
      folder,
      def,
      { ...o, onEvent: o.onEvent ?? onEvent },
      {
        concurrency,
        keepDone,
        writeRetry
      }
    )
    folder.worker = worker
    // Leftovers of a submit killed midway (rm never follows a link), then every pending run: each is delivered,
    // and is NotDue until due. A staging folder of a submit still in flight is no leftover: this process's are
    // known, another process's is younger than STAGING_STALE_MS.
    for (const name of await fs.readdir(folder.root)) {
      if (name.startsWith(STAGING) && !folder.staging.has(name) && (await stale(path.join(folder.root, name))))
        await fs.rm(path.join(folder.root, name), { recursive: true, force: true })
    }
    await prune(folder, keepDone, (e) => reportError(o.onError, e, { queue: def.name }))
    for (const key of await fs.readdir(folder.pending)) worker.schedule(key, 0)
    return {
      close: async (closeOptions) => {
        const deadline = closeDeadline(`${where}: close`, closeOptions)
        if (folder.worker === worker) folder.worker = undefined
        await closeWithin(
          deadline,
          worker.close,
          () => Promise.resolve(),
          (e) => reportError(o.onError, e, { queue: def.name })
        )
      }
    }
  }

  /** The ids of a folder's runs: escaped in their names one-to-one, or read from `run.json` when hashed. */
  const idsIn = async (parent: string): Promise<ReadonlyArray<string>> => {
    if (!(await ownFolder(parent))) return []
    const ids: Array<string> = []
    for (const key of await fs.readdir(parent)) {
      let id = fromFileName(key)
      if (id === undefined) {
        const record = (await readJson(path.join(parent, key, RUN_FILE)).catch(() => undefined)) as
          | { readonly id?: unknown }
          | undefined
        id = typeof record?.id === 'string' ? record.id : undefined
      }
      if (id !== undefined) ids.push(id)
    }
    return ids.sort()
  }

  const pending = async <P, E, A>(def: Definition<P, E, A>): Promise<Pending> => {
    checkOpen('pending')
    checkDefinition(`${where}: pending`, def)
    const folder = await folderOf(def.name)
    return { pending: await idsIn(folder.pending), done: await idsIn(folder.done) }
  }

  const close = async (closeOptions?: { readonly deadline?: number | undefined }): Promise<void> => {
    const deadline = closeDeadline(`${where}: close`, closeOptions)
    closed = true
    await Promise.all(
      [...folders.values()].map(async (folder) => {
        const worker = folder.worker
        folder.worker = undefined
        const graceful = async (): Promise<void> => {
          await worker?.close()
          await Promise.all([...folder.locks.values()])
        }
        await closeWithin(
          deadline,
          graceful,
          () => Promise.resolve(),
          (e) => reportError(undefined, e, { queue: path.basename(folder.root) })
        )
      })
    )
  }

  return { submit, work, pending, close }
}
