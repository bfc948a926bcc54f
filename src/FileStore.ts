/**
 * A small file-backed store for one in-flight run: `save` a `RetryState` atomically, `load` it after a restart,
 * `clear` it when the run is over.
 *
 * A run persists with `onRetry: ({ driver }) => store.save(driver.snapshot())` (the runner awaits the
 * save before it sleeps), and a new process resumes with `resume: state` from `load`.
 *
 * @since 0.1.0
 */
import { randomBytes } from 'crypto'
import * as fs from 'fs/promises'
import * as O from 'fp-ts/Option'
import * as path from 'path'
import { showValue } from './internal/show'
import type { RetryState } from './RetryState'
import { RetryStateCodec } from './RetryState'
import { writeAtomically } from './internal/atomicFile'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A store of one `RetryState` in one file.
 *
 * **Details**
 *
 * - `load()`: `none` when there is no file, `some(state)` when it holds a valid state; a file that is not a valid
 *   state (not JSON, or not a `RetryState`) rejects with a {@link CorruptState}, never with a crash later.
 * - `save(state)`: checks that `state` is a valid `RetryState` (else a `TypeError`), writes a temporary file in the same directory, flushes it to disk (`fsync`), renames it over
 *   the file and flushes the directory, so a reader sees either the previous state or the new one, even if
 *   the process is killed mid-write. The directory must exist.
 * - `clear()`: removes the file (and any temporary file a killed `save` left behind); clearing an absent file
 *   is not an error.
 * - The three functions are plain values (no `this`): they can be passed around on their own.
 *
 * @example
 * import * as FileStore from 'fp-ts-retry/FileStore'
 * import * as RetryState from 'fp-ts-retry/RetryState'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as O from 'fp-ts/Option'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retry-'))
 *   const store: FileStore.FileStore = FileStore.make(path.join(dir, 'job-42.json'))
 *   assert.deepStrictEqual(await store.load(), O.none)
 *   const state = RetryState.start(Schedule.recurs(3), 0)
 *   await store.save(state)
 *   assert.deepStrictEqual(await store.load(), O.some(state))
 *   await store.clear()
 *   assert.deepStrictEqual(await store.load(), O.none)
 *   fs.rmSync(dir, { recursive: true })
 * }
 * main()
 *
 * @category model
 * @since 0.1.0
 */
export interface FileStore {
  /** The file the state is kept in. */
  readonly path: string
  readonly load: () => Promise<O.Option<RetryState>>
  readonly save: (state: RetryState) => Promise<void>
  readonly clear: () => Promise<void>
}

/**
 * What `load` rejects with when the file does not hold a valid `RetryState`: the file's path and why.
 *
 * **Details**
 *
 * `reason` is `"not JSON"` or `"not a RetryState"`; `errors` lists the fields that did not decode, as
 * `path: value`. A file written by `save` is never corrupt: this is a file edited or damaged by something else.
 *
 * @example
 * import * as FileStore from 'fp-ts-retry/FileStore'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retry-'))
 *   const file = path.join(dir, 'state.json')
 *   fs.writeFileSync(file, '{"schedule": 42}')
 *   await assert.rejects(FileStore.make(file).load(), (e: unknown) => e instanceof FileStore.CorruptState && e.reason === 'not a RetryState')
 *   fs.rmSync(dir, { recursive: true })
 * }
 * main()
 *
 * @category error reporting
 * @since 0.1.0
 */
export class CorruptState extends Error {
  /**
   * The tag that tells this error apart in a union of errors.
   *
   * @since 0.1.0
   */
  readonly _tag = 'CorruptState'
  constructor(
    /** The file that was read. */
    readonly path: string,
    /** What is wrong with it. */
    readonly reason: 'not JSON' | 'not a RetryState',
    /** The fields that did not decode (`path: value`), for `"not a RetryState"`. */
    readonly errors: ReadonlyArray<string> = []
  ) {
    super(
      `FileStore: ${path} does not hold a valid RetryState (${reason}${
        errors.length > 0 ? `: ${errors.join('; ')}` : ''
      })`
    )
    this.name = 'CorruptState'
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const isNotFound = (e: unknown): boolean => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT'

/** Flushes a directory, so that a rename in it survives a power cut; not every platform can open one. */

const show = (value: unknown): string => showValue(value, 60)

/** The random part of a temporary file's name: 6 bytes, 12 hex digits. */
const TEMP_RANDOM_BYTES = 6
const TEMP_SUFFIX = '.tmp'
const HEX = /^[0-9a-f]+$/

/**
 * The temporary files of the store of `file`: `.<name>.` + exactly 12 hex digits + `.tmp`. A prefix alone would
 * be ambiguous: `.order-17.` begins the temporary files of `order-17.2` too.
 */
const tempFiles = (file: string) => {
  const prefix = `.${path.basename(file)}.`
  const length = prefix.length + 2 * TEMP_RANDOM_BYTES + TEMP_SUFFIX.length
  return {
    name: (): string => `${prefix}${randomBytes(TEMP_RANDOM_BYTES).toString('hex')}${TEMP_SUFFIX}`,
    isOne: (name: string): boolean =>
      name.length === length &&
      name.startsWith(prefix) &&
      name.endsWith(TEMP_SUFFIX) &&
      HEX.test(name.slice(prefix.length, length - TEMP_SUFFIX.length))
  }
}

/**
 * A store that keeps its state in the file `file`.
 *
 * **Details**
 *
 * - Nothing is read or written until `load`, `save` or `clear` is called; the directory of `file` must exist by
 *   then.
 * - Temporary files are named `.<name>.<12 random hex digits>.tmp` beside `file`; `load` ignores them, and
 *   `clear` removes only names of exactly that form, so that stores whose names share a prefix (`order-17` and
 *   `order-17.2`) in one directory never touch each other's temporary files.
 * - The calls of one store take turns, in call order: a `clear` called while a `save` is in flight runs after it,
 *   and a `load` sees the saves called before it.
 * - One store per run: two processes saving to one file at once are not coordinated (the last rename wins).
 * - `file` must be a non-empty string, else a `TypeError`.
 *
 * @example
 * import * as FileStore from 'fp-ts-retry/FileStore'
 * import * as RetryState from 'fp-ts-retry/RetryState'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import { retrying } from 'fp-ts-retry'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as O from 'fp-ts/Option'
 * import { pipe } from 'fp-ts/function'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retry-'))
 *   const store = FileStore.make(path.join(dir, 'state.json'))
 *   const schedule = Schedule.fromDelays([100, 200])
 *   const clock = TestClock.make()
 *   // the state is saved before each sleep
 *   const run = pipe(
 *     TE.left('down'),
 *     retrying(schedule, { clock, onRetry: ({ driver }) => store.save(driver.snapshot()) })
 *   )()
 *   await clock.runAll()
 *   await run
 *   const saved = await store.load()
 *   assert.ok(O.isSome(saved) && saved.value.iterNumber === 2 && saved.value.dueAt === 300)
 *   fs.rmSync(dir, { recursive: true })
 * }
 * main()
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (file: string): FileStore => {
  if (typeof file !== 'string' || file === '') {
    throw new TypeError(`FileStore.make: file must be a non-empty path, received ${show(file)}`)
  }
  const dir = path.dirname(file)
  const temps = tempFiles(file)

  const load = async (): Promise<O.Option<RetryState>> => {
    let text: string
    try {
      text = await fs.readFile(file, 'utf8')
    } catch (e) {
      if (isNotFound(e)) return O.none
      throw e
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new CorruptState(file, 'not JSON')
    }
    const decoded = RetryStateCodec.decode(json)
    if (decoded._tag === 'Right') return O.some(decoded.right)
    // One line per top-level field (a union reports each of its members: once is enough).
    const errors = decoded.left.map((e) => {
      const field = e.context[1]
      return field === undefined ? `(root): ${show(e.value)}` : `${field.key}: ${show(field.actual)}`
    })
    throw new CorruptState(file, 'not a RetryState', [...new Set(errors)])
  }

  const save = async (state: RetryState): Promise<void> => {
    // Never write what load would refuse.
    if (!RetryStateCodec.is(state))
      throw new TypeError(`FileStore.save: state must be a RetryState, received ${show(state)}`)
    const json = JSON.stringify(RetryStateCodec.encode(state))
    await writeAtomically(file, json, path.join(dir, temps.name()))
  }

  const clear = async (): Promise<void> => {
    await fs.rm(file, { force: true })
    let names: ReadonlyArray<string>
    try {
      names = await fs.readdir(dir)
    } catch (e) {
      if (isNotFound(e)) return
      throw e
    }
    await Promise.all(names.filter(temps.isOne).map((name) => fs.rm(path.join(dir, name), { force: true })))
  }

  // The calls of this store take turns in call order: a clear called while a save is in flight would remove the
  // save's temporary file under it, and a load after a save should see it.
  let last: Promise<unknown> = Promise.resolve()
  const inTurn = <A>(call: () => Promise<A>): Promise<A> => {
    const turn = last.then(call)
    last = turn.catch(() => undefined)
    return turn
  }

  return {
    path: file,
    load: () => inTurn(load),
    save: (state) => inTurn(() => save(state)),
    clear: () => inTurn(clear)
  }
}
