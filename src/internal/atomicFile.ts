/**
 * Writing a file whole or not at all, for the stores that must survive a kill mid-write (`FileStore`, the file
 * engine of `Durable`): a temporary file beside the target, flushed to disk, renamed over the target, and the
 * folder flushed.
 *
 * @internal
 */
import * as fs from 'fs/promises'
import * as path from 'path'

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
