/**
 * Run ids as the names a store accepts: a BullMQ job id or queue name (no `:`, not an integer), a file name (no
 * `/`, not `.` or `..`, the same on a file system that ignores case). Each mapping is one-to-one, so two ids never
 * share a job or a file, and can be read back.
 *
 * @internal
 */
import { createHash } from 'crypto'

/** A UTF-16 code unit that has no pair: Redis and the file system would both store it as U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

const hex = (code: number, digits: number): string => code.toString(16).toUpperCase().padStart(digits, '0')

/** `%XX` for a code below 256, `%uXXXX` for a UTF-16 code unit. */
const escapeUnit = (c: string): string => {
  const code = c.charCodeAt(0)
  return code < 0x100 ? `%${hex(code, 2)}` : `%u${hex(code, 4)}`
}

const unescapeAll = (text: string): string =>
  text.replace(/%(?:u([0-9A-F]{4})|([0-9A-F]{2}))/g, (_, long: string | undefined, short: string | undefined) =>
    String.fromCharCode(parseInt(long ?? short ?? '', 16))
  )

/** Marks an id that would read as an integer (BullMQ refuses those): `%` is never followed by `i` otherwise. */
const INTEGER_MARK = '%i'

/**
 * A BullMQ job id (or queue name) for `id`: `%` and `:` and lone surrogates escaped, `%i` before what would read
 * as an integer.
 */
export const toBullId = (id: string): string => {
  const escaped = id.replace(/[%:]/g, escapeUnit).replace(LONE_SURROGATE, escapeUnit)
  return `${parseInt(escaped, 10)}` === escaped ? `${INTEGER_MARK}${escaped}` : escaped
}

/** The id a {@link toBullId} came from. */
export const fromBullId = (jobId: string): string =>
  unescapeAll(jobId.startsWith(INTEGER_MARK) ? jobId.slice(INTEGER_MARK.length) : jobId)

/** Names longer than this (in UTF-16 units; at most 3 bytes each in UTF-8) are hashed: file names stop at 255 bytes. */
const MAX_NAME = 80

const HASHED_MARK = '%h'

/**
 * A file name for `id`: every character but `a-z`, `0-9`, `-` and `_` escaped (upper case too, for file systems
 * that ignore case; `.` too, so that no name is `.`, `..` or hidden); a long id becomes `%h` and its SHA-256.
 */
export const toFileName = (id: string): string => {
  const escaped = id.replace(/[^a-z0-9_-]/g, escapeUnit)
  return escaped.length <= MAX_NAME
    ? escaped
    : `${HASHED_MARK}${createHash('sha256').update(id, 'utf16le').digest('hex')}`
}

/** The id a {@link toFileName} came from, or `undefined` for a hashed one (its id is stored in the run). */
export const fromFileName = (name: string): string | undefined =>
  name.startsWith(HASHED_MARK) ? undefined : unescapeAll(name)
