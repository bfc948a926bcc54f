/**
 * Scenario "pending runs": the memory a run holds while it waits out a long backoff on the live clock, the state
 * of every request in flight during an outage.
 *
 * 20,000 runs start at once; each first attempt fails and each run goes to sleep for exponential(60 s) ∩
 * recurs(3). Once every run has armed its timer, `gc()` and the heap is read: the growth over the heap read (after
 * `gc()`) before the runs started, divided by the runs, is the heap per pending run. Two rows: no signal, and an
 * `AbortSignal` per run (the controllers are made before the first reading: a service has one per request anyway,
 * so only what a library hangs on it counts). The floor is the loop a careful human writes: an async function that
 * awaits the action and a `setTimeout` promise (with the signal, one that an abort ends).
 *
 * Ending: every timer of 60 s armed while the runs start is recorded (through a wrapper of the global
 * `setTimeout` that writes into slots allocated before the first reading), and cleared once measured; with a
 * signal, the runs are aborted first and awaited. The heap after that is reported, to show that nothing stays.
 */
import * as Effect3 from 'effect'
import { pipe } from 'fp-ts/function'
import type { Either } from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as RetryTs from 'retry-ts'
import * as RetryTsTask from 'retry-ts/Task'
import { fmtRatio, median, table, versionOf, type ScenarioReport } from './harness'
import { failure, notLoaded, type Peers } from './peers'
import { retrying, Schedule } from './ours'

const RUNS = 20_000
const BASE = 60_000
const RETRIES = 3
const TARGET = 1.2

/** How a library starts one run, given the run's signal (in the row with a signal). */
type Start = (signal: AbortSignal | undefined) => Promise<unknown>

interface PendingEntry {
  readonly name: string
  readonly pkg?: string
  readonly floor?: boolean
  readonly ours?: boolean
  /** Without a signal; `undefined` when the library cannot run without one (none here). */
  readonly plain: Start
  /** With a signal per run; `undefined` when the library takes no signal (the reason is `noSignal`). */
  readonly signalled?: Start
  readonly noSignal?: string
  readonly note?: string
  /** Ends the runs that clearing their timers leaves in the library's keeping (Effect 3 keeps its root fibers). */
  readonly end?: () => Promise<void>
}

interface Skipped {
  readonly name: string
  readonly pkg: string
  readonly reason: string
}

const left: Either<Error, number> = { _tag: 'Left', left: failure }
/** Every run's first attempt fails at once; the runs never get to a second one. */
const failing = (): Promise<Either<Error, number>> => Promise.resolve(left)
const rejecting = (): Promise<number> => Promise.reject(failure)

/** The floor's sleep: a promise and a timer; with a signal, an abort clears the timer and ends the sleep. */
const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal === undefined) {
      setTimeout(resolve, ms)
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      resolve()
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })

const entriesOf = (peers: Peers): { readonly entries: ReadonlyArray<PendingEntry>; readonly skipped: Array<Skipped> } => {
  const entries: Array<PendingEntry> = []
  const skipped: Array<Skipped> = []

  const hand = async (signal: AbortSignal | undefined): Promise<Either<Error, number>> => {
    let delay = BASE
    for (let retry = 0; ; retry++) {
      const result = await failing()
      if (result._tag === 'Right' || retry === RETRIES || signal?.aborted === true) return result
      await sleep(delay, signal)
      delay *= 2
    }
  }
  entries.push({
    name: 'hand loop',
    floor: true,
    plain: hand,
    signalled: hand,
    note: 'an async function awaiting the action and a `setTimeout` promise'
  })

  {
    const schedule = pipe(Schedule.exponential(BASE), Schedule.intersect(Schedule.recurs(RETRIES)))
    const action: TaskEither<Error, number> = failing
    const run = retrying(schedule)(action)
    entries.push({
      name: 'fp-ts-retry',
      pkg: 'fp-ts-retry',
      ours: true,
      plain: run,
      // The signal is an option of the runner: a service that has a signal per request builds the runner per request.
      signalled: (signal) => retrying(schedule, { signal })(action)(),
      note: '`retrying(schedule, { signal })(action)()` per run in the row with a signal'
    })
  }

  if (peers.cockatiel === undefined)
    skipped.push({ name: 'cockatiel', pkg: 'cockatiel', reason: notLoaded('cockatiel', peers) })
  else {
    const { retry, handleAll, ExponentialBackoff, noJitterGenerator } = peers.cockatiel
    const policy = retry(handleAll, {
      maxAttempts: RETRIES,
      backoff: new ExponentialBackoff({ initialDelay: BASE, maxDelay: Infinity, generator: noJitterGenerator })
    })
    entries.push({
      name: 'cockatiel',
      pkg: 'cockatiel',
      plain: () => policy.execute(rejecting),
      signalled: (signal) => policy.execute(rejecting, signal)
    })
  }

  {
    const policy = RetryTs.Monoid.concat(RetryTs.exponentialBackoff(BASE), RetryTs.limitRetries(RETRIES))
    const action: TaskEither<Error, number> = failing
    const run = RetryTsTask.retrying(policy, () => action, (e) => e._tag === 'Left')
    entries.push({
      name: 'retry-ts',
      pkg: 'retry-ts',
      plain: run,
      noSignal: 'takes no signal'
    })
  }

  if (peers.pRetry === undefined) skipped.push({ name: 'p-retry', pkg: 'p-retry', reason: notLoaded('p-retry', peers) })
  else {
    const pRetry = peers.pRetry
    const options = { retries: RETRIES, minTimeout: BASE, factor: 2 }
    entries.push({
      name: 'p-retry',
      pkg: 'p-retry',
      plain: () => pRetry(rejecting, options),
      signalled: (signal) => pRetry(rejecting, { ...options, signal })
    })
  }

  if (peers.effect4 === undefined)
    skipped.push({ name: 'effect 4', pkg: 'effect4', reason: notLoaded('effect4', peers) })
  else {
    const { Effect, Schedule: S } = peers.effect4.core
    const program = Effect.retry(Effect.tryPromise({ try: rejecting, catch: (e) => e as Error }), {
      schedule: S.exponential(`${BASE} millis`, 2),
      times: RETRIES
    })
    entries.push({
      name: 'effect 4',
      pkg: 'effect4',
      plain: () => Effect.runPromise(program),
      signalled: (signal) => Effect.runPromise(program, { signal })
    })
  }

  {
    const { Effect, Fiber, Schedule: S } = Effect3
    const program = Effect.retry(Effect.tryPromise({ try: rejecting, catch: (e) => e as Error }), {
      schedule: S.exponential(`${BASE} millis`, 2),
      times: RETRIES
    })
    entries.push({
      name: 'effect 3',
      pkg: 'effect',
      plain: () => Effect.runPromise(program),
      signalled: (signal) => Effect.runPromise(program, { signal }),
      // Read first, then interrupted: a fiber that interrupts the roots is one of them.
      end: () => Effect.runPromise(Fiber.interruptAll(Effect.runSync(Fiber.roots)))
    })
  }
  return { entries, skipped }
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error('pendingRuns: run node with --expose-gc')
  // Twice: the first pass may leave finalizable objects for the second.
  collect()
  collect()
}

const aborted = new Error('pendingRuns: measured')

const ignore = (): void => undefined

const heapUsed = (): number => process.memoryUsage().heapUsed

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface Measured {
  /** Heap per pending run, in bytes. */
  readonly perRun: number
  /** Heap per run left once the runs were ended, in bytes. */
  readonly leftPerRun: number
}

/**
 * Starts `RUNS` runs, waits until each has armed its backoff timer, reads the heap after `gc()`, then ends them.
 */
export const measurePending = async (
  start: Start,
  withSignal: boolean,
  end: (() => Promise<void>) | undefined,
  runs = RUNS
): Promise<Measured> => {
  // Everything the measurement itself keeps is allocated before the first reading.
  const pending: Array<Promise<unknown> | undefined> = new Array<undefined>(runs).fill(undefined)
  const timers: Array<ReturnType<typeof setTimeout> | undefined> = new Array<undefined>(runs).fill(undefined)
  gc()
  // What the run leaves is read against this: the controllers are dropped before that reading.
  const empty = heapUsed()
  let controllers = withSignal ? Array.from({ length: runs }, () => new AbortController()) : undefined
  // Node makes a controller's signal when it is first read: read here, so that the signal is not counted as the run's.
  let signals = controllers?.map((c) => c.signal)
  let armed = 0
  const original = globalThis.setTimeout
  const recording = ((f: (...args: Array<unknown>) => void, ms?: number, ...args: Array<unknown>) => {
    const timer = original(f, ms, ...args)
    // Only the backoff's timers (ours asks for the time left to its deadline, a fraction of a ms under BASE): a
    // library's scheduler may take short ones of its own (Effect's yields).
    if (ms !== undefined && ms >= BASE / 2 && armed < runs) timers[armed++] = timer
    return timer
  }) as typeof setTimeout
  gc()
  const before = heapUsed()
  globalThis.setTimeout = recording
  try {
    for (let i = 0; i < runs; i++) pending[i] = start(signals?.[i])
    for (let turns = 0; armed < runs; turns++) {
      if (turns === 200) throw new Error(`pendingRuns: only ${armed} of ${runs} runs went to sleep`)
      await turn()
    }
    // Let whatever follows the arming (the runs' awaits) settle before reading.
    await turn()
  } finally {
    globalThis.setTimeout = original
  }
  gc()
  const perRun = (heapUsed() - before) / runs
  // Ending them: handled first (an aborted or interrupted run may reject), then aborted, then their timers cleared
  // (cockatiel does not end its sleep on an abort), then whatever the library keeps of a run it cannot end.
  for (const p of pending) p?.then(undefined, ignore)
  if (controllers !== undefined) {
    // One reason for all: `abort()` would make a DOMException per run, which would stay in the controllers.
    for (const c of controllers) c.abort(aborted)
    await turn()
  }
  for (const timer of timers) clearTimeout(timer)
  await end?.()
  pending.fill(undefined)
  timers.fill(undefined)
  controllers = undefined
  signals = undefined
  gc()
  return { perRun, leftPerRun: (heapUsed() - empty) / runs }
}

interface Result {
  readonly entry: PendingEntry
  readonly plain: ReadonlyArray<Measured>
  readonly signalled: ReadonlyArray<Measured>
}

const perRunOf = (ms: ReadonlyArray<Measured>): number => median(ms.map((m) => m.perRun))

export const pendingRuns = async (
  peers: Peers,
  options: { readonly rounds: number; readonly log?: (line: string) => void }
): Promise<ScenarioReport> => {
  const log = options.log ?? (() => undefined)
  const { entries, skipped } = entriesOf(peers)
  const results: Array<{ entry: PendingEntry; plain: Array<Measured>; signalled: Array<Measured> }> = entries.map(
    (entry) => ({ entry, plain: [], signalled: [] })
  )
  // Round 0 warms up (the first run of each library compiles and caches what it will keep) and is dropped.
  for (let round = 0; round <= options.rounds; round++) {
    for (let k = 0; k < results.length; k++) {
      const r = results[(k + round) % results.length]
      const plain = await measurePending(r.entry.plain, false, r.entry.end)
      const signalled =
        r.entry.signalled === undefined ? undefined : await measurePending(r.entry.signalled, true, r.entry.end)
      if (round === 0) continue
      r.plain.push(plain)
      if (signalled !== undefined) r.signalled.push(signalled)
    }
    if (round > 0)
      log(
        `  round ${round}/${options.rounds}: ` +
          results
            .map((r) => `${r.entry.name} ${r.plain[r.plain.length - 1].perRun.toFixed(0)} B`)
            .join(', ')
      )
  }
  return report(results, skipped)
}

const report = (results: ReadonlyArray<Result>, skipped: ReadonlyArray<Skipped>): ScenarioReport => {
  const floor = results.find((r) => r.entry.floor === true) as Result
  const ours = results.find((r) => r.entry.ours === true) as Result
  const floorPlain = perRunOf(floor.plain)
  const floorSignalled = perRunOf(floor.signalled)
  const ratioPlain = perRunOf(ours.plain) / floorPlain
  const ratioSignalled = perRunOf(ours.signalled) / floorSignalled
  const met = ratioPlain <= TARGET && ratioSignalled <= TARGET
  const cell = (ms: ReadonlyArray<Measured>, base: number, isFloor: boolean): string =>
    ms.length === 0
      ? ''
      : `${perRunOf(ms).toFixed(0)} B (${isFloor ? 'floor' : fmtRatio(perRunOf(ms) / base)})`
  const left = (r: Result): string =>
    `${Math.max(...[...r.plain, ...r.signalled].map((m) => m.leftPerRun)).toFixed(0)} B`
  const rows = [...results]
    .sort((a, b) => perRunOf(a.plain) - perRunOf(b.plain))
    .map((r) => [
      r.entry.ours === true ? `**${r.entry.name}**` : r.entry.name,
      versionOf(r.entry.pkg),
      cell(r.plain, floorPlain, r.entry.floor === true),
      r.entry.signalled === undefined ? `not run: ${r.entry.noSignal ?? ''}` : cell(r.signalled, floorSignalled, r.entry.floor === true),
      left(r),
      r.entry.ours === true ? (met ? `yes (≤ ${TARGET}×)` : `no: > ${TARGET}×`) : '',
      r.entry.note ?? ''
    ])
  return {
    title: 'Pending runs',
    met,
    summary: `${fmtRatio(ratioPlain)} the hand loop's heap per pending run, ${fmtRatio(
      ratioSignalled
    )} with a signal per run (target ≤ ${TARGET}×)`,
    markdown: [
      `${RUNS.toLocaleString('en-US')} runs whose first attempt failed, each waiting out exponential(${BASE / 1000} s) ∩ ` +
        `recurs(${RETRIES}) on the live clock; heap per pending run after \`gc()\`, without a signal and with an ` +
        `\`AbortSignal\` per run. Target: ≤ ${TARGET}× the hand loop in both.`,
      '',
      table(
        ['library', 'version', 'heap per pending run', 'with a signal per run', 'left after ending them', 'target met?', 'notes'],
        [...rows, ...skipped.map((s) => [s.name, versionOf(s.pkg), 'not run', '', '', '', s.reason])]
      ),
      '',
      '"heap per pending run" is the growth of the heap (after `gc()`) from before the runs started to when all of ' +
        'them had armed their backoff timer, divided by the runs; the median over the rounds. "left after ending ' +
        'them": the same reading once the runs were aborted (with a signal) or their timers cleared (without), the ' +
        'larger of the two rows.'
    ].join('\n')
  }
}
