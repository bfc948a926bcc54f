/**
 * Scenario "pending runs": the memory a run holds while it waits out a long backoff on the live clock, the state
 * of every request in flight during an outage.
 *
 * 20,000 runs start at once; each first attempt fails and each run goes to sleep for exponential(60 s) ∩
 * recurs(3). Once every first attempt is made and the runs have armed their timers, `gc()` and the heap is read: the
 * growth over the heap read (after `gc()`) before the runs started, divided by the runs, is the heap per pending run. Two rows: no signal, and an
 * `AbortSignal` per run (the controllers are made before the first reading: a service has one per request anyway,
 * so only what a library hangs on it counts). The floor is the loop a careful human writes: an async function that
 * awaits the action and a `setTimeout` promise (with the signal, one that an abort ends).
 *
 * Ending: the callbacks of the timers armed while the runs start are recorded (through a wrapper of the global
 * `setTimeout` that writes into slots allocated before the first reading); once measured, the runs are aborted (with
 * a signal) and run out at once (see `fastForward`), so that no timer and no run outlives the scenario.
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
}

interface Skipped {
  readonly name: string
  readonly pkg: string
  readonly reason: string
}

const left: Either<Error, number> = { _tag: 'Left', left: failure }
/** Every run's first attempt fails at once; the runs never get to a second one. */
/** Attempts made since the measurement began: every run's first attempt made means every run is going to sleep. */
let attempts = 0
export const failing = (): Promise<Either<Error, number>> => (attempts++, Promise.resolve(left))
const rejecting = (): Promise<number> => (attempts++, Promise.reject(failure))

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
    const { Effect, Schedule: S } = Effect3
    const program = Effect.retry(Effect.tryPromise({ try: rejecting, catch: (e) => e as Error }), {
      schedule: S.exponential(`${BASE} millis`, 2),
      times: RETRIES
    })
    entries.push({
      name: 'effect 3',
      pkg: 'effect',
      plain: () => Effect.runPromise(program),
      signalled: (signal) => Effect.runPromise(program, { signal })
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

const heapUsed = (): number => process.memoryUsage().heapUsed

/**
 * Waits until what the previous runs left is gone: no timer pending (Effect's fibers go on finishing through timers
 * of its scheduler after their promises settle) and the heap no longer shrinking between collections (Node lets go
 * of abort signals and timers through weak references and finalizers, which run as tasks). A first reading taken
 * before would make the next runs look smaller by as much.
 */
const settle = async (): Promise<void> => {
  let last = Infinity
  for (let pass = 0; pass < 400; pass++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 5))
    const used = heapUsed()
    const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    if (timers === 0 && last - used < 64 * 1024) return
    last = used
  }
  throw new Error(`pendingRuns: the previous runs did not settle in 2 s: ${process.getActiveResourcesInfo().join(', ')}`)
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface Measured {
  /** Heap per pending run, in bytes. */
  readonly perRun: number
}

/**
 * Starts `RUNS` runs, waits until each has made its first attempt and gone to sleep, reads the heap after `gc()`,
 * then ends them all.
 */
export const measurePending = async (start: Start, withSignal: boolean, runs = RUNS): Promise<Measured> => {
  await settle()
  // Everything the measurement itself keeps is allocated before the first reading.
  const pending: Array<Promise<unknown> | undefined> = new Array<undefined>(runs).fill(undefined)
  const callbacks: Array<(() => void) | undefined> = new Array<undefined>(runs).fill(undefined)
  const timers: Array<ReturnType<typeof setTimeout> | undefined> = new Array<undefined>(runs).fill(undefined)
  const controllers = withSignal ? Array.from({ length: runs }, () => new AbortController()) : undefined
  // Node makes a controller's signal when it is first read: read here, so that the signal is not counted as the run's.
  const signals = controllers?.map((c) => c.signal)
  // The timers armed while the runs start (ours arms one for all), kept to be fired when the runs are ended.
  let armed = 0
  let calls = 0
  const original = globalThis.setTimeout
  const recording = ((f: () => void, ms?: number) => {
    calls++
    const timer = original(f, ms)
    if (armed < runs) {
      callbacks[armed] = f
      timers[armed++] = timer
    }
    return timer
  }) as typeof setTimeout
  attempts = 0
  gc()
  const before = heapUsed()
  globalThis.setTimeout = recording
  try {
    for (let i = 0; i < runs; i++) pending[i] = start(signals?.[i])
    // Asleep: every first attempt made, and a turn of the event loop in which nobody armed a timer.
    for (let turns = 0, seen = -1; attempts < runs || calls !== seen; turns++) {
      if (turns === 200) throw new Error(`pendingRuns: ${attempts} of ${runs} first attempts made`)
      seen = calls
      await turn()
    }
  } finally {
    globalThis.setTimeout = original
  }
  gc()
  const perRun = (heapUsed() - before) / runs
  await fastForward(pending, controllers, callbacks.slice(0, armed), timers.slice(0, armed))
  return { perRun }
}

/**
 * Ends the runs: aborted (with a signal), then every one run out at once. The monotonic clock leaps an hour at each
 * reading (ours never wakes before its deadline by it), the timers armed while measuring are cleared and their
 * callbacks called now, and every later timer fires after 0 ms, until every run has settled. cockatiel needs this
 * with a signal too: it does not end its sleep on an abort.
 */
const fastForward = async (
  pending: ReadonlyArray<Promise<unknown> | undefined>,
  controllers: ReadonlyArray<AbortController> | undefined,
  callbacks: ReadonlyArray<(() => void) | undefined>,
  timers: ReadonlyArray<ReturnType<typeof setTimeout> | undefined>
): Promise<void> => {
  // One reason for all: `abort()` would make a DOMException per run, which would stay in the controllers.
  for (const c of controllers ?? []) c.abort(aborted)
  const settled = Promise.allSettled(pending)
  const { setTimeout: originalSetTimeout } = globalThis
  const realNow = performance.now.bind(performance)
  let leap = 0
  performance.now = () => realNow() + (leap += 3_600_000)
  globalThis.setTimeout = ((f: () => void) => originalSetTimeout(f, 0)) as typeof setTimeout
  try {
    // Cleared, then called: a timer left to fire in a minute would keep what it holds alive until then.
    for (const timer of timers) clearTimeout(timer)
    for (const f of callbacks) f?.()
    let timer: ReturnType<typeof setTimeout> | undefined
    // Generous: Effect 3 runs out 20,000 runs in seconds on a loaded machine.
    const late = new Promise<false>((resolve) => (timer = originalSetTimeout(resolve, 120_000, false)))
    const done = await Promise.race([settled.then(() => true), late])
    clearTimeout(timer)
    if (!done) throw new Error('pendingRuns: the runs did not end')
  } finally {
    globalThis.setTimeout = originalSetTimeout
    delete (performance as { now?: unknown }).now
  }
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
  // Round 0 warms up (the first runs of each library compile and cache what they will keep), with fewer runs, and
  // is dropped.
  for (let round = 0; round <= options.rounds; round++) {
    const runs = round === 0 ? RUNS / 10 : RUNS
    for (let k = 0; k < results.length; k++) {
      const r = results[(k + round) % results.length]
      const plain = await measurePending(r.entry.plain, false, runs)
      const signalled =
        r.entry.signalled === undefined ? undefined : await measurePending(r.entry.signalled, true, runs)
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
  const rows = [...results]
    .sort((a, b) => perRunOf(a.plain) - perRunOf(b.plain))
    .map((r) => [
      r.entry.ours === true ? `**${r.entry.name}**` : r.entry.name,
      versionOf(r.entry.pkg),
      cell(r.plain, floorPlain, r.entry.floor === true),
      r.entry.signalled === undefined ? `not run: ${r.entry.noSignal ?? ''}` : cell(r.signalled, floorSignalled, r.entry.floor === true),
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
        ['library', 'version', 'heap per pending run', 'with a signal per run', 'target met?', 'notes'],
        [...rows, ...skipped.map((s) => [s.name, versionOf(s.pkg), 'not run', '', '', '', s.reason])]
      ),
      '',
      '"heap per pending run" is the growth of the heap (after `gc()`) from before the runs started to when all of ' +
        'them had made their first attempt and gone to sleep, divided by the runs; the median over the rounds. Then ' +
        'the runs are ended: aborted (with a signal), then run out at once (their timers fired early, the monotonic ' +
        'clock leaping ahead). cockatiel does not end its sleep on an abort; retry-ts takes no signal.'
    ].join('\n')
  }
}
