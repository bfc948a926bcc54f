/**
 * Plain-text tables for the terminal: columns padded to their widest cell, numbers right-aligned.
 */

export type Align = 'left' | 'right'

/** Renders rows of cells under a header, two spaces between columns. */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  align: ReadonlyArray<Align>
): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: ReadonlyArray<string>): string =>
    cells
      .map((cell, i) => (align[i] === 'left' ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

/** A number of ms with a precision that suits its size: 0.42, 7.5, 95, 12,345. */
export const ms = (x: number): string => {
  const digits = x === 0 ? 0 : Math.abs(x) < 1 ? 2 : Math.abs(x) < 10 ? 1 : 0
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
}

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's']
]

/** A duration in ms as a person writes it, exactly: the largest unit that divides it (`2 s`, `10 min`, `250 ms`). */
export const duration = (x: number): string => {
  const unit = UNITS.find(([size]) => x >= size && x % size === 0)
  // exactly: 5 ms, not ms()'s 5.0
  return unit === undefined
    ? `${x.toLocaleString('en-US', { maximumFractionDigits: 3 })} ms`
    : `${(x / unit[0]).toLocaleString('en-US')} ${unit[1]}`
}

/** A mean and its standard error, both in the precision of the mean. */
export const plusMinus = (mean: number, standardError: number, digits: number): string => {
  const f = (x: number): string =>
    x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  return `${f(mean)} ± ${f(standardError)}`
}
