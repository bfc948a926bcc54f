/**
 * Shows a value found in bad input, for an error message.
 *
 * @internal
 */

/** The value as JSON when it has one, shortened to `max` characters; never throws (a BigInt or a cycle has no JSON). */
export const showValue = (value: unknown, max = 80): string => {
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
