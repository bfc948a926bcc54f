/**
 * Scenario "adaptive limit": what `AdaptiveLimit.protect` costs on the success path next to `Bulkhead.protect`, the
 * fixed guard it stands in for, measured side by side in one run; and the memory a key of a `Keyed` registry of
 * adaptive limits holds.
 *
 * Time: one call at a time through each, its action `TE.right` (nothing of the dependency's own time), the
 * bulkhead the floor. The adaptive limit does what it does in production: it reads the live clock at `enter` and
 * at the end, adds the sample to its window, and closes a window each second (gradient, the defaults), with a
 * limit that is never reached (the shedding path is not the success path).
 *
 * Memory: 5,000 keys, each made by `Keyed.make` and given one call; `gc()`, the heap read; then 100 more calls on
 * every key; `gc()`, the heap read again. The first figure is the heap per key (the limit, its window, its queue's
 * lines, the registry's entry); the second says whether a key grows with its samples (it must not: a window is a
 * handful of numbers). A bulkhead per key is measured the same way, for scale.
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import { compare, fmtRatio, rowsTable, table, type Entry, type ScenarioOptions, type ScenarioReport } from './harness'
import { AdaptiveLimit, Bulkhead, Clock, Keyed } from './ours'

const TARGET = 1.2
const KEYS = 5_000
const CALLS = 100
/** A key's heap, at most: a handful of small objects, far below what one request in flight holds. */
const KEY_BYTES = 2_048

const ok: TaskEither<never, number> = () => Promise.resolve(E.right(1))
/** The same action, reading the live clock twice: what the adaptive limit reads per call, alone. */
const okTimed: TaskEither<never, number> = () => (Clock.live.now(), Clock.live.now(), Promise.resolve(E.right(1)))

const expectRight = async (f: () => Promise<E.Either<unknown, number>>, name: string): Promise<void> => {
  const result = await f()
  if (!(E.isRight(result) && result.right === 1)) throw new Error(`${name}: expected Right(1), got ${JSON.stringify(result)}`)
}

const gcHeap = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('bench: run node with --expose-gc')
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

interface Memory {
  readonly perKey: number
  readonly growth: number
}

/** The heap per key of a registry of `make`'s guards, and its growth per key after {@link CALLS} calls on each. */
const memoryOf = async <G>(make: () => G, call: (guard: G) => Promise<unknown>): Promise<Memory> => {
  const keys = Array.from({ length: KEYS }, (_, i) => `tenant-${i}`)
  const before = gcHeap()
  const registry = Keyed.make({ make, maxKeys: KEYS })
  for (const key of keys) await call(registry.get(key))
  const made = gcHeap()
  for (let round = 0; round < CALLS; round++) for (const key of keys) await call(registry.get(key))
  const used = gcHeap()
  if (registry.size !== KEYS) throw new Error(`bench: ${registry.size} keys kept, expected ${KEYS}`)
  return { perKey: (made - before) / KEYS, growth: (used - made) / KEYS }
}

export const adaptiveLimit = async (options: ScenarioOptions): Promise<ScenarioReport> => {
  const bulkhead = Bulkhead.make({ maxConcurrent: 1_000, maxQueue: 0 })
  const limit = AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 1_000, initial: 1_000 })
  const viaBulkhead = pipe(ok, Bulkhead.protect(bulkhead, () => 'full'))
  const viaLimit = pipe(ok, AdaptiveLimit.protect(limit, () => 'shed'))
  const viaBulkheadTimed = pipe(okTimed, Bulkhead.protect(bulkhead, () => 'full'))
  await expectRight(viaBulkheadTimed, 'Bulkhead.protect, 2 clock reads')
  await expectRight(viaBulkhead, 'Bulkhead.protect')
  await expectRight(viaLimit, 'AdaptiveLimit.protect')
  const entries: ReadonlyArray<Entry> = [
    { name: 'Bulkhead.protect', fn: viaBulkhead, floor: true, note: 'the fixed guard: a slot taken and given back' },
    {
      name: 'Bulkhead.protect, 2 clock reads',
      fn: viaBulkheadTimed,
      note: 'calibration: the bulkhead with the two reads of `Clock.live` the adaptive limit makes'
    },
    {
      name: 'AdaptiveLimit.protect',
      fn: viaLimit,
      ours: true,
      note: 'gradient, the defaults: two clock reads, a sample, a window closed each second'
    }
  ]
  const rows = await compare(entries, { rounds: options.rounds, minCpuTimeMs: options.minCpuTimeMs, cpuTime: true, log: options.log })
  const ours = rows.find((r) => r.ours)
  const timed = rows.find((r) => r.name === 'Bulkhead.protect, 2 clock reads')
  if (ours === undefined || timed === undefined) throw new Error('bench: no row of ours')
  options.log?.('  memory per key: adaptive limits, then bulkheads')
  const limits = await memoryOf(
    () => AdaptiveLimit.make({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 100, initial: 20 }),
    (l) => pipe(ok, AdaptiveLimit.protect(l, () => 'shed'))()
  )
  const bulkheads = await memoryOf(
    () => Bulkhead.make({ maxConcurrent: 20, maxQueue: 0 }),
    (b) => pipe(ok, Bulkhead.protect(b, () => 'full'))()
  )
  const timeMet = ours.ratio <= TARGET
  const memoryMet = limits.perKey <= KEY_BYTES && limits.growth <= KEY_BYTES / 20
  const bytes = (n: number): string => `${Math.round(n)} B`
  return {
    title: 'Adaptive limit',
    met: timeMet && memoryMet,
    // the target is below the floor on a machine whose clock read is not free: the calibration row says by how much
    summary: `${fmtRatio(ours.ratio)} \`Bulkhead.protect\` (its floor, the bulkhead with two clock reads: ${fmtRatio(
      timed.ratio
    )}), ${bytes(limits.perKey)} per key`,
    markdown: [
      `The success path of \`AdaptiveLimit.protect\` against \`Bulkhead.protect\`, side by side in one run. Target: ≤ ${TARGET}× the bulkhead; a key of a \`Keyed\` registry of adaptive limits ≤ ${KEY_BYTES} B, and no growth with its samples (≤ ${
        KEY_BYTES / 20
      } B per key after ${CALLS} more calls on each).`,
      '',
      rowsTable(rows, (r) => (r.ratio <= TARGET ? 'yes' : `**no** (${fmtRatio(r.ratio)} > ${TARGET}×)`)),
      '',
      table(
        ['guard per key', `heap per key (${KEYS} keys)`, `growth per key after ${CALLS} calls each`, 'target met?'],
        [
          ['**AdaptiveLimit** (gradient)', bytes(limits.perKey), bytes(limits.growth), memoryMet ? 'yes' : '**no**'],
          ['Bulkhead', bytes(bulkheads.perKey), bytes(bulkheads.growth), '']
        ]
      ),
      '',
      'The difference on the time path is the latency: a bulkhead counts calls and reads no clock, the adaptive ' +
        'limit reads it at `enter` and at the end, and adds the sample to its window. The calibration row is the ' +
        `bulkhead with those two reads alone: ${fmtRatio(timed.ratio)} here, so that what the adaptive limit costs ` +
        `beyond its clock is ${fmtRatio(ours.ratio / timed.ratio)} of it (the ratio of the medians). A read of the ` +
        "clock costs what the machine's clock source makes it cost (see the note under the tables). Its memory is " +
        'fixed: a window is a handful of numbers, a queue at most `maxQueue` waiters.'
    ].join('\n')
  }
}
