/**
 * Shows a value found in bad input, for an error message: the one printer of the project's messages.
 *
 * @internal
 */

/** The longest array shown item by item: a longer one is shown by its length, without reading it. */
const MAX_ITEMS = 16

/**
 * The value as JSON when it has one (a number as itself), shortened to `max` characters. Never throws, and takes
 * no longer for a huge array (2^32 - 1 holes would take JSON.stringify minutes): it is shown by its length. A value
 * without JSON (a BigInt inside, a cycle) is shown by its class; one that throws when read (a revoked Proxy, a
 * throwing getter) as such.
 */
export const showValue = (value: unknown, max = 80): string => {
  // JSON has no NaN, Infinity or -0: it would show them as null and 0
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  if (typeof value === 'bigint') return `${value}n`
  if (value === undefined || typeof value === 'symbol' || typeof value === 'function') {
    return String(value).split('\n')[0]
  }
  let text: string
  try {
    if (Array.isArray(value) && value.length > MAX_ITEMS) return `an array of length ${value.length}`
    text = JSON.stringify(value)
  } catch {
    try {
      text = Object.prototype.toString.call(value)
    } catch {
      return 'a value that cannot be read'
    }
  }
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}

/**
 * A value as plain JSON keeps it: itself when `JSON.stringify` would give it back, else its description (`NaN`,
 * `Infinity`, `-0`, `undefined`, a BigInt, a function): an event stays a log line that says what was seen.
 */
export const jsonValue = (value: unknown): unknown => {
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : showValue(value)
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  return showValue(value)
}
