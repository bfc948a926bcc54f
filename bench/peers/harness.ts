/**
 * Shared machinery of the peer benchmarks: run every library of a scenario side by side, interleaved and
 * repeated, and report medians and ratios to the scenario's floor (a bare hand-written loop).
 *
 * Why interleaved rounds rather than one long mitata group per library: the machine is shared and its speed
 * drifts over seconds. A ratio is taken within one round (the floor and a library measured seconds apart, in
 * rotating order), and the reported ratio is the median of the per-round ratios, so drift cancels out.
 */
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

/** One library (or floor) doing the scenario's job once per call of `fn`. */
export interface Entry {
  /** Row label, e.g. `fp-ts-retry`, `bare loop`. */
  readonly name: string
  /** npm package whose version is reported, if any. */
  readonly pkg?: string
  readonly fn: () => unknown
  /** The ratio base of the scenario: exactly one entry per scenario. */
  readonly floor?: boolean
  /** Ours: rows that the target applies to. */
  readonly ours?: boolean
  /** Shown in the notes column. */
  readonly note?: string
  /** Waits on a real timer: CPU time would not see the wait, so it gets no CPU-time measurement. */
  readonly waits?: boolean
}

/** A library not measured in a scenario, and why. */
export interface Skipped {
  readonly name: string
  readonly pkg?: string
  readonly reason: string
}

export interface Row {
  readonly name: string
  readonly version: string
  /** Median over rounds of the per-round median time of one call, in ns. */
  readonly ns: number
  /** Median over rounds of ns / floor's ns in the same round. */
  readonly ratio: number
  /** Smallest and largest per-round ratio: how much the rounds disagreed. */
  readonly ratioMin: number
  readonly ratioMax: number
  /** The same ratio with CPU time instead of wall time, when measured (see `CompareOptions.cpuTime`). */
  readonly cpuRatio: number | undefined
  readonly floor: boolean
  readonly ours: boolean
  readonly note: string
}

export interface CompareOptions {
  /** Measured rounds, after one discarded warm-up round. */
  readonly rounds: number
  /** mitata's minimum measuring time per entry per round, in ms. */
  readonly minCpuTimeMs: number
  /** Calls of `fn` that make one op (ns are divided by it); default 1. */
  readonly opsPerCall?: number
  /**
   * Also time each entry with the process's CPU time, right after its wall-clock measurement: immune to being
   * descheduled on a busy machine, but blind to time spent waiting, so not for entries that wait on a timer.
   */
  readonly cpuTime?: boolean
  readonly log?: (line: string) => void
}

/** Where every result goes, so that the JIT cannot drop the work of an entry whose result is unused. */
let sink: unknown

const consumed = (fn: () => unknown) => (): unknown => (sink = fn())

/** The last result measured (keeps `sink` observable). */
export const lastResult = (): unknown => sink

/** The process's CPU time (user + system, all threads), in ns. */
const cpuNow = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1e3
}

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/**
 * Measures every entry once per round, rotating the order each round; the first round warms the JIT and is
 * discarded.
 */
export const compare = async (entries: ReadonlyArray<Entry>, options: CompareOptions): Promise<ReadonlyArray<Row>> => {
  const floorIndex = entries.findIndex((e) => e.floor === true)
  if (floorIndex < 0) throw new Error('compare: no floor entry')
  const perCall = options.opsPerCall ?? 1
  const samples: Array<Array<number>> = entries.map(() => [])
  const ratios: Array<Array<number>> = entries.map(() => [])
  const cpuRatios: Array<Array<number>> = entries.map(() => [])
  // mitata is ESM-only: imported dynamically from this CommonJS module.
  const { measure } = await import('mitata')
  const time = async (fn: () => unknown, now?: () => number): Promise<number> => {
    const stats = await measure(fn, {
      min_cpu_time: options.minCpuTimeMs * 1e6,
      // Few samples suffice for slow entries (a fake-clock test of Effect 3 takes ~0.3 s); fast ones still
      // take many, to fill `min_cpu_time`.
      min_samples: 5,
      ...(now === undefined ? {} : { now })
    })
    return stats.p50 / perCall
  }
  for (let round = 0; round <= options.rounds; round++) {
    const ns: Array<number> = new Array(entries.length)
    const cpu: Array<number> = new Array(entries.length)
    for (let k = 0; k < entries.length; k++) {
      const i = (k + round) % entries.length
      ns[i] = await time(consumed(entries[i].fn))
      if (options.cpuTime === true && entries[i].waits !== true) cpu[i] = await time(consumed(entries[i].fn), cpuNow)
    }
    if (round === 0) continue
    for (let i = 0; i < entries.length; i++) {
      samples[i].push(ns[i])
      ratios[i].push(ns[i] / ns[floorIndex])
      if (options.cpuTime === true && entries[i].waits !== true) cpuRatios[i].push(cpu[i] / cpu[floorIndex])
    }
    options.log?.(
      `  round ${round}/${options.rounds}: ` +
        entries.map((e, i) => `${e.name} ${fmtRatio(ns[i] / ns[floorIndex])}`).join(', ')
    )
  }
  return entries.map((e, i) => ({
    name: e.name,
    version: versionOf(e.pkg),
    ns: median(samples[i]),
    ratio: median(ratios[i]),
    ratioMin: Math.min(...ratios[i]),
    ratioMax: Math.max(...ratios[i]),
    cpuRatio: cpuRatios[i].length > 0 ? median(cpuRatios[i]) : undefined,
    floor: e.floor === true,
    ours: e.ours === true,
    note: e.note ?? ''
  }))
}

// -------------------------------------------------------------------------------------
// versions and machine
// -------------------------------------------------------------------------------------

const root = path.resolve(__dirname, '..', '..')

/** The installed version of a package (aliases such as `effect4` included), read from its package.json. */
export const versionOf = (pkg: string | undefined): string => {
  if (pkg === undefined) return '—'
  // Ours is measured as built from this checkout (lib/, by `npm run build`), not as published.
  if (pkg === 'fp-ts-retry') return `${readJson(path.join(root, 'package.json')).version} (this checkout)`
  try {
    return String(readJson(path.join(root, 'node_modules', pkg, 'package.json')).version)
  } catch {
    return '?'
  }
}

const readJson = (file: string): { readonly version?: unknown } => JSON.parse(fs.readFileSync(file, 'utf8'))

export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly node: string
  readonly platform: string
  readonly date: string
  readonly load: string
}

export const machine = (): Machine => ({
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  node: process.version,
  platform: `${os.type()} ${os.release()} ${process.arch}`,
  date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  load: os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')
})

// -------------------------------------------------------------------------------------
// formatting
// -------------------------------------------------------------------------------------

export const fmtNs = (ns: number): string => {
  if (!Number.isFinite(ns)) return String(ns)
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`
  if (ns >= 1e4) return `${(ns / 1e3).toFixed(1)} µs`
  if (ns >= 100) return `${ns.toFixed(0)} ns`
  return `${ns.toFixed(1)} ns`
}

/** Our ratio for a summary line, with the CPU-time ratio beside it when measured. */
export const fmtOurs = (row: Row): string =>
  row.cpuRatio === undefined ? fmtRatio(row.ratio) : `${fmtRatio(row.ratio)} (CPU time ${fmtRatio(row.cpuRatio)})`

export const fmtRatio = (r: number): string =>
  r >= 100 ? `${r.toFixed(0)}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`

/** A markdown table. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`)
  ].join('\n')

/** The standard table of a scenario: library, version, median, ratio (with the spread of the rounds), target. */
export const rowsTable = (
  rows: ReadonlyArray<Row>,
  target: (row: Row) => string,
  skipped: ReadonlyArray<Skipped> = []
): string => {
  const cpu = rows.some((r) => r.cpuRatio !== undefined)
  return table(
    [
      'library',
      'version',
      'median / op',
      'ratio to bare',
      'rounds (min – max)',
      ...(cpu ? ['ratio, CPU time'] : []),
      'target met?',
      'notes'
    ],
    [
      ...[...rows]
        .sort((a, b) => a.ratio - b.ratio)
        .map((r) => [
          r.ours ? `**${r.name}**` : r.name,
          r.version,
          fmtNs(r.ns),
          r.floor ? '1.00 (floor)' : fmtRatio(r.ratio),
          r.floor ? '' : `${fmtRatio(r.ratioMin)} – ${fmtRatio(r.ratioMax)}`,
          ...(cpu ? [r.floor ? '' : r.cpuRatio === undefined ? 'n/a: waits on a timer' : fmtRatio(r.cpuRatio)] : []),
          r.ours ? target(r) : '',
          r.note
        ]),
      ...skipped.map((s) => [s.name, versionOf(s.pkg), 'not run', '', '', ...(cpu ? [''] : []), '', s.reason])
    ]
  )
}

// -------------------------------------------------------------------------------------
// RESULTS.md
// -------------------------------------------------------------------------------------

export { writeSection } from '../results'

// -------------------------------------------------------------------------------------
// scenarios
// -------------------------------------------------------------------------------------

export interface ScenarioOptions {
  /** Measured rounds, after one discarded warm-up round. */
  readonly rounds: number
  /** mitata's minimum measuring time per entry per round, in ms. */
  readonly minCpuTimeMs: number
  readonly log?: (line: string) => void
}

export interface ScenarioReport {
  readonly title: string
  /** Whether our target was met. */
  readonly met: boolean
  /** One line for the summary table: our figure against the target. */
  readonly summary: string
  /** The scenario's section of RESULTS.md (without its heading). */
  readonly markdown: string
}
