/**
 * Shows a value found in bad input, for an error message.
 *
 * @internal
 */

/**
 * The value as JSON when it has one (a number as itself), shortened to `max` characters; never throws (a BigInt or a
 * cycle has no JSON).
 */
export const showValue = (value: unknown, max = 80): string => {
  // JSON has no NaN, Infinity or -0: it would show them as null and 0
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    json = undefined
  }
  const text =
    json ??
    (typeof value === 'bigint'
      ? `${value}n`
      : value === undefined || typeof value === 'symbol' || typeof value === 'function'
      ? String(value).split('\n')[0]
      : Object.prototype.toString.call(value))
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}
