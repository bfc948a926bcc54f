/**
 * Scenario "many retries": 1,000,000 zero-delay failures then a success, in one process and one run.
 *
 * Too long for mitata's repeated samples: each run is timed once per round with the wall clock, rounds
 * rotate the order, and the ratio is per attempt against the bare loop of the same round. A short probe run
 * first (same process) measures each library's time per attempt: a library whose full run would take longer
 * than `FULL_RUN_LIMIT_S` runs once (its heap run, timed), against the median of the bare loop's rounds; one
 * that would take longer than `ONE_RUN_LIMIT_S` is reported from the probe (extrapolated) instead of run.
 *
 * The heap is read with `global.gc()` (node --expose-gc): before the run, in the middle (at attempt 500,000,
 * from inside the action) and after it.
 */
import { fmtNs, fmtRatio, median, table, versionOf, type ScenarioOptions, type ScenarioReport } from './harness'
import type { Peers } from './peers'
import { checkEntries, retryEntries, type RetryJob } from './retryEntries'

const FAILURES = 1_000_000
const TARGET_RATIO = 1.3
const TARGET_HEAP = 1024 * 1024
/** A library whose 1,000,000-retry run would take longer than this runs once, not once per round. */
const FULL_RUN_LIMIT_S = 8
/** A library whose 1,000,000-retry run would take longer than this is extrapolated, not run. */
const ONE_RUN_LIMIT_S = 60
/** Failures of the probe run: fewer for libraries that wait on a timer between retries. */
const PROBE_FAILURES = 10_000
const PROBE_FAILURES_SLOW = 200

const time = async (fn: () => unknown): Promise<number> => {
  const t0 = performance.now()
  await fn()
  return (performance.now() - t0) * 1e6
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error('manyRetries: run node with --expose-gc')
  // Twice: the first pass may leave finalizable objects for the second.
  collect()
  collect()
}

const heapUsed = (): number => process.memoryUsage().heapUsed

interface Result {
  readonly name: string
  readonly pkg: string | undefined
  readonly ours: boolean
  readonly floor: boolean
  /** ns per attempt of the full runs, or of the probe when extrapolated. */
  readonly perAttempt: number
  readonly ratio: number
  readonly ratios: ReadonlyArray<number>
  /** Wall time of one full run (measured or extrapolated), in ns. */
  readonly runTime: number
  readonly extrapolated: boolean
  /** Too long for rounds: timed once, in its heap run. */
  readonly once: boolean
  readonly heapMid?: number
  readonly heapEnd?: number
}

const fmtBytes = (b: number): string => {
  const sign = b < 0 ? '−' : '+'
  const a = Math.abs(b)
  return a >= 1024 * 1024 ? `${sign}${(a / 1024 / 1024).toFixed(2)} MB` : `${sign}${(a / 1024).toFixed(0)} kB`
}

export const manyRetries = async (
  peers: Peers,
  options: Pick<ScenarioOptions, 'log'> & { readonly rounds: number }
): Promise<ScenarioReport> => {
  const log = options.log ?? (() => undefined)
  const job: RetryJob = { failures: FAILURES, retries: FAILURES, base: 0 }

  // 1. Probe every library at a small count, bare loop alongside, to decide who runs the full million.
  // Libraries that wait for a timer even for a zero delay are probed with fewer failures.
  const timerBased = new Set(['retry-ts', 'cockatiel', 'exponential-backoff'])
  const probeOf = async (failures: number, keep: (name: string) => boolean): Promise<Map<string, number>> => {
    const all = retryEntries({ failures, retries: failures, base: 0 }, peers).entries.map((e) => e.name)
    const { entries } = retryEntries({ failures, retries: failures, base: 0 }, peers, all.filter(keep))
    await checkEntries(entries) // also the warm-up run
    const perAttempt = new Map<string, number>()
    for (const e of entries) perAttempt.set(e.name, (await time(e.fn)) / (failures + 1))
    return perAttempt
  }
  const probe = await probeOf(PROBE_FAILURES, (name) => !timerBased.has(name))
  const probeSlow = await probeOf(PROBE_FAILURES_SLOW, (name) => timerBased.has(name))
  const probed = (name: string): number =>
    timerBased.has(name) ? (probeSlow.get(name) as number) : (probe.get(name) as number)
  log(`  probe (ns per attempt): ${[...probe, ...probeSlow].map(([n, t]) => `${n} ${fmtNs(t)}`).join(', ')}`)

  // 2. The full runs, interleaved.
  const { entries, skipped } = retryEntries(job, peers)
  const expected = (name: string): number => (probed(name) * (FAILURES + 1)) / 1e9
  const full = entries.filter((e) => e.floor === true || expected(e.name) <= FULL_RUN_LIMIT_S)
  const once = entries.filter(
    (e) => e.floor !== true && expected(e.name) > FULL_RUN_LIMIT_S && expected(e.name) <= ONE_RUN_LIMIT_S
  )
  const perAttempt = new Map<string, Array<number>>(full.map((e) => [e.name, []]))
  const ratios = new Map<string, Array<number>>(full.map((e) => [e.name, []]))
  // Round 0 warms up (a run of a million retries is one call: its first is partly unoptimised) and is dropped.
  for (let round = 0; round <= options.rounds; round++) {
    const ns = new Map<string, number>()
    for (let k = 0; k < full.length; k++) {
      const e = full[(k + round) % full.length]
      gc()
      ns.set(e.name, (await time(e.fn)) / (FAILURES + 1))
    }
    const bare = ns.get('bare loop') as number
    log(
      `  round ${round}/${options.rounds}: ` +
        full.map((e) => `${e.name} ${fmtRatio((ns.get(e.name) as number) / bare)}`).join(', ')
    )
    if (round === 0) continue
    for (const e of full) {
      perAttempt.get(e.name)?.push(ns.get(e.name) as number)
      ratios.get(e.name)?.push((ns.get(e.name) as number) / bare)
    }
  }

  // 3. The heap: its own runs, so that the collections do not disturb the timings (two collections in a
  // run of many seconds do not matter: the libraries that run once are timed here).
  const heap = new Map<string, { mid: number; end: number }>()
  const onceTime = new Map<string, number>()
  for (const e of [...full, ...once]) {
    let start = 0
    let mid = NaN
    const probeJob: RetryJob = {
      ...job,
      probe: {
        at: FAILURES / 2,
        fn: () => {
          gc()
          mid = heapUsed() - start
        }
      }
    }
    const one = retryEntries(probeJob, peers, [e.name]).entries.find((x) => x.name === e.name)
    if (one === undefined) continue
    gc()
    start = heapUsed()
    const t0 = performance.now()
    await one.fn()
    onceTime.set(e.name, ((performance.now() - t0) * 1e6) / (FAILURES + 1))
    gc()
    heap.set(e.name, { mid, end: heapUsed() - start })
    log(`  heap: ${e.name} ${fmtBytes(mid)} mid-run, ${fmtBytes(heapUsed() - start)} after`)
  }

  // Extrapolated libraries are compared per attempt with the bare loop's full runs, the steadiest figure.
  const bare = median(perAttempt.get('bare loop') as Array<number>)
  const results: Array<Result> = entries.map((e) => {
    const ran = perAttempt.get(e.name)
    const h = heap.get(e.name)
    if (ran !== undefined && ran.length > 0) {
      const pa = median(ran)
      return {
        name: e.name,
        pkg: e.pkg,
        ours: e.ours === true,
        floor: e.floor === true,
        perAttempt: pa,
        ratio: median(ratios.get(e.name) as Array<number>),
        ratios: ratios.get(e.name) as Array<number>,
        runTime: pa * (FAILURES + 1),
        extrapolated: false,
        once: false,
        heapMid: h?.mid,
        heapEnd: h?.end
      }
    }
    const one = onceTime.get(e.name)
    if (one !== undefined) {
      return {
        name: e.name,
        pkg: e.pkg,
        ours: e.ours === true,
        floor: false,
        perAttempt: one,
        ratio: one / bare,
        ratios: [],
        runTime: one * (FAILURES + 1),
        extrapolated: false,
        once: true,
        heapMid: h?.mid,
        heapEnd: h?.end
      }
    }
    const pa = probed(e.name)
    return {
      name: e.name,
      pkg: e.pkg,
      ours: e.ours === true,
      floor: false,
      perAttempt: pa,
      ratio: pa / bare,
      ratios: [],
      runTime: pa * (FAILURES + 1),
      extrapolated: true,
      once: false
    }
  })
  return report(
    results,
    skipped.map((s) => [s.name, s.reason] as const)
  )
}

const report = (results: ReadonlyArray<Result>, skipped: ReadonlyArray<readonly [string, string]>): ScenarioReport => {
  const ours = results.find((r) => r.ours) as Result
  const heapOk =
    ours.heapMid !== undefined &&
    ours.heapEnd !== undefined &&
    Math.abs(ours.heapMid) <= TARGET_HEAP &&
    Math.abs(ours.heapEnd) <= TARGET_HEAP
  const ratioOk = !ours.extrapolated && ours.ratio <= TARGET_RATIO
  const met = heapOk && ratioOk
  const rows = [...results]
    .sort((a, b) => a.ratio - b.ratio)
    .map((r) => [
      r.ours ? `**${r.name}**` : r.name,
      versionOf(r.pkg),
      r.extrapolated ? `~${fmtNs(r.runTime)} (extrapolated)` : fmtNs(r.runTime),
      fmtNs(r.perAttempt),
      r.floor ? '1.00 (floor)' : r.extrapolated ? `${fmtRatio(r.ratio)} (probe ÷ bare)` : fmtRatio(r.ratio),
      r.ratios.length > 1 && !r.floor ? `${fmtRatio(Math.min(...r.ratios))} – ${fmtRatio(Math.max(...r.ratios))}` : '',
      r.heapMid === undefined ? '' : fmtBytes(r.heapMid),
      r.heapEnd === undefined ? '' : fmtBytes(r.heapEnd),
      r.ours
        ? [
            ratioOk ? `time yes (≤ ${TARGET_RATIO}×)` : `time no: ${fmtRatio(ours.ratio)} > ${TARGET_RATIO}×`,
            heapOk ? 'heap yes (within 1 MB)' : 'heap no'
          ].join('; ')
        : '',
      r.extrapolated
        ? `not run: ${(r.runTime / 1e9 / 60).toFixed(1)} min extrapolated from a run of ${timerNote(
            r.name
          )} failures in this process`
        : r.once
        ? `one run (over ${FULL_RUN_LIMIT_S} s: no rounds), against the bare loop's median`
        : ''
    ])
  return {
    title: 'Many retries',
    met,
    summary: `completes; ${fmtRatio(ours.ratio)} the bare loop per attempt (target ≤ ${TARGET_RATIO}×); heap after GC ${
      ours.heapEnd === undefined ? '?' : fmtBytes(ours.heapEnd)
    } at the end, ${ours.heapMid === undefined ? '?' : fmtBytes(ours.heapMid)} mid-run (target within 1 MB)`,
    markdown: [
      `${FAILURES.toLocaleString('en-US')} zero-delay failures then a success, one run in one process. ` +
        `Target: completes, ≤ ${TARGET_RATIO}× the bare loop per attempt, heap after GC within 1 MB of the start.`,
      '',
      table(
        [
          'library',
          'version',
          'one run',
          'per attempt',
          'ratio to bare',
          'rounds (min – max)',
          'heap mid-run',
          'heap after',
          'target met?',
          'notes'
        ],
        [...rows, ...skipped.map(([name, reason]) => [name, '', 'not run', '', '', '', '', '', '', reason])]
      ),
      '',
      '"heap mid-run" is read after `gc()` at attempt 500,000, from inside the action; "heap after" after `gc()` ' +
        'once the run has returned; both relative to the heap after `gc()` just before the run. Our run keeps ' +
        'no history: one `Driver` whose fields are overwritten at each retry, and no promise chain (the loop awaits ' +
        'each attempt in turn).',
      ...(ratioOk
        ? []
        : [
            '',
            `**Per attempt: missed, ${fmtRatio(
              ours.ratio
            )} against ${TARGET_RATIO}×.** A retry costs us a driver step ` +
              '(`advance`: the stepper called in place, the delay checked, the retry counted; nothing allocated), the checks of the run (signal, ' +
              'budget, breaker, `onRetry`) and, every millisecond (checked every 64 retries), a turn of the event loop; the bare ' +
              'loop only awaits. bench/README.md lists what was tried to narrow the difference.'
          ])
    ].join('\n')
  }
}

const timerNote = (name: string): string =>
  (['retry-ts', 'cockatiel', 'exponential-backoff'].includes(name)
    ? PROBE_FAILURES_SLOW
    : PROBE_FAILURES
  ).toLocaleString('en-US')
