/**
 * Files for the stores that must survive a kill mid-write and a folder they do not own alone (`FileStore`,
 * `FileEngine`): a file written whole or not at all (a temporary file beside the target, flushed to disk, renamed
 * over the target, and the folder flushed), and read only when it is the regular file a store made, never through
 * a link.
 *
 * @internal
 */
import { constants } from 'fs'
import * as fs from 'fs/promises'
import * as path from 'path'

/** Not on every platform (Windows): there, 0, and the checks on the opened handle still hold. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
/** A FIFO opened without it blocks the opener (a thread of the pool, then `close()` of the worker) for good. */
const NON_BLOCK = constants.O_NONBLOCK ?? 0

/** A link, a FIFO or a device where a store made a regular file or a folder: the store opens nothing through it. */
export class ForeignEntry extends Error {
  constructor(readonly path: string, readonly what: string) {
    super(`${path} is ${what}, not what the store made: skipped`)
    this.name = 'ForeignEntry'
  }
}

const codeOf = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code

/**
 * The text of `file` when it is a regular file, `undefined` when there is none; a {@link ForeignEntry} when it is
 * a link (not followed: `O_NOFOLLOW`) or anything else (checked on the opened handle, opened without waiting).
 */
export const readOwnFile = async (file: string): Promise<string | undefined> => {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, constants.O_RDONLY | NO_FOLLOW | NON_BLOCK)
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return undefined
    if (codeOf(e) === 'ELOOP') throw new ForeignEntry(file, 'a symbolic link')
    throw e
  }
  try {
    if (!(await handle.stat()).isFile()) throw new ForeignEntry(file, 'not a regular file')
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}

/**
 * Whether `dir` is there: `true` for a folder, `false` when there is nothing; a {@link ForeignEntry} for a link
 * (`lstat`: not followed) or anything else.
 */
export const ownFolder = async (dir: string): Promise<boolean> => {
  let stats
  try {
    stats = await fs.lstat(dir)
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return false
    throw e
  }
  if (stats.isDirectory()) return true
  throw new ForeignEntry(dir, stats.isSymbolicLink() ? 'a symbolic link' : 'not a folder')
}

/** Flushes a folder's entries (a rename) to disk, where the platform allows it. */
export const syncDirectory = async (dir: string): Promise<void> => {
  let handle: fs.FileHandle | undefined
  try {
    handle = await fs.open(dir, 'r')
    await handle.sync()
  } catch {
    // Windows cannot open a directory, and some file systems refuse to fsync one: the rename is still atomic.
  } finally {
    await handle?.close()
  }
}

/**
 * Writes `text` to `file` through the temporary file `temp` (in the same folder, so that the rename is atomic): a
 * reader sees the previous content or the new one, never half of one. The temporary file is removed on failure.
 */
export const writeAtomically = async (file: string, text: string, temp: string): Promise<void> => {
  try {
    const handle = await fs.open(temp, 'wx')
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temp, file)
  } catch (e) {
    await fs.rm(temp, { force: true })
    throw e
  }
  await syncDirectory(path.dirname(file))
}
