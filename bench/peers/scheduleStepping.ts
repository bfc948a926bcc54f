/**
 * Scenario "schedule stepping": the first 20 delays of exponential(10 ms, ×2) capped at 10 s, computed purely
 * (nothing sleeps), as an array of ms. Each library uses its own pure interpreter; p-retry and
 * exponential-backoff compute their delays inside the runner and export none.
 */
import * as Effect3 from 'effect'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import { Driver, Random, RetryStatus, Schedule } from './ours'
import * as RetryTs from 'retry-ts'
import {
  compare,
  fmtOurs,
  fmtRatio,
  rowsTable,
  type Entry,
  type Row,
  type ScenarioOptions,
  type ScenarioReport,
  type Skipped
} from './harness'
import { notLoaded, type Peers } from './peers'

const N = 20
const BASE = 10
const CAP = 10_000
const TARGET = 2

/** What every entry must return. */
const expected: ReadonlyArray<number> = Array.from({ length: N }, (_, i) => Math.min(BASE * 2 ** i, CAP))

const sameDelays = (name: string, got: ReadonlyArray<number>): void => {
  if (got.length !== N || got.some((d, i) => d !== expected[i])) {
    throw new Error(`${name}: expected [${expected.join(', ')}], got [${got.join(', ')}]`)
  }
}

export const scheduleStepping = async (peers: Peers, options: ScenarioOptions): Promise<ScenarioReport> => {
  const entries: Array<Entry> = []
  const skipped: Array<Skipped> = []
  const check: Array<[string, () => ReadonlyArray<number>]> = []
  const add = (entry: Entry & { readonly fn: () => ReadonlyArray<number> }): void => {
    entries.push(entry)
    check.push([entry.name, entry.fn])
  }

  // The floor: what a careful human writes for these delays.
  add({
    name: 'bare loop',
    floor: true,
    fn: () => {
      const out: Array<number> = []
      for (let i = 0, d = BASE; i < N; i++, d *= 2) out.push(Math.min(d, CAP))
      return out
    },
    note: 'a `for` loop pushing `Math.min(d, cap)`'
  })

  const schedule = pipe(Schedule.exponential(BASE), Schedule.capped(CAP))
  add({
    name: 'fp-ts-retry `Driver.delays`',
    pkg: 'fp-ts-retry',
    ours: true,
    fn: () => Driver.delays(schedule, { limit: N }),
    note: 'the pure interpreter: options checked, a `Driver` made, then `advance` per delay'
  })
  add({
    name: 'fp-ts-retry `Driver.advance` loop',
    pkg: 'fp-ts-retry',
    fn: () => {
      const driver = Driver.make(schedule, { start: 0 })
      const out: Array<number> = []
      let now = 0
      for (let i = 0; i < N; i++) {
        const delay = driver.advance(undefined, now)
        if (delay < 0) break
        out.push(delay)
        now += delay
      }
      return out
    },
    note: "`delays` without its setup: the stepper, the check of the delay and the run's counts"
  })
  {
    // The stepper alone: the schedule's in-place form, read through a cursor made once.
    const cursor = Driver.make(Schedule.forever, { start: 0 })
    add({
      name: 'fp-ts-retry stepper loop',
      pkg: 'fp-ts-retry',
      fn: () => {
        const stepper = schedule.stepper(schedule.initial)
        const out: Array<number> = []
        for (let i = 0; i < N; i++) {
          const delay = stepper.next(cursor)
          if (delay < 0) break
          out.push(delay)
        }
        return out
      },
      note: '`schedule.stepper(initial).next(cursor)` alone: the schedule without its interpreter'
    })
  }
  {
    // The floor of any one interpreter: the stepper called through a single call site that has seen the steppers
    // of many schedules (as `Driver.advance`'s has, in a process that runs more than one schedule), with nothing
    // else per step.
    const cursor = Driver.make(Schedule.forever, { start: 0 })
    type Stepper = ReturnType<typeof schedule.stepper>
    type Next = Stepper['next']
    // As a `Driver` does: the stepper's `next` read once per run (where every schedule's stepper passes), then
    // called with `.call` at each step.
    const nextOf = (stepper: Stepper): Next => stepper.next
    const callNext = (next: Next, stepper: Stepper): number => next.call(stepper, cursor)
    const others = [
      Schedule.recurs(30),
      Schedule.constant(5),
      pipe(Schedule.exponential(3), Schedule.fullJitter),
      pipe(Schedule.constant(1), Schedule.intersect(Schedule.recurs(10))),
      Schedule.fibonacci(2),
      pipe(Schedule.linear(4), Schedule.upTo(1e6)),
      Schedule.decorrelatedJitter(5, 100),
      pipe(Schedule.exponential(1), Schedule.union(Schedule.constant(3))),
      Schedule.fromDelays([1, 2, 3]),
      schedule
    ]
    for (let i = 0; i < 20_000; i++) {
      for (const other of others) {
        const stepper = other.stepper(other.initial)
        const next = nextOf(stepper)
        for (let j = 0; j < 3; j++) callNext(next, stepper)
      }
    }
    add({
      name: 'fp-ts-retry stepper through a shared call site',
      pkg: 'fp-ts-retry',
      fn: () => {
        const stepper = schedule.stepper(schedule.initial)
        const next = nextOf(stepper)
        const out: Array<number> = []
        for (let i = 0; i < N; i++) {
          const delay = callNext(next, stepper)
          if (delay < 0) break
          out.push(delay)
        }
        return out
      },
      note: "the stepper as a `Driver` calls it, through call sites that have seen ten schedules' steppers: the floor of one interpreter"
    })
  }
  {
    // The schedule alone: its step function, with no interpreter around it.
    const random = Random.fixed(0)
    const status = RetryStatus.initial
    add({
      name: 'fp-ts-retry `schedule.step` loop',
      pkg: 'fp-ts-retry',
      fn: () => {
        const out: Array<number> = []
        let state = schedule.initial
        for (let i = 0; i < N; i++) {
          const decision = schedule.step(state, { input: undefined, status, now: 0, dueAt: 0, random })
          if (decision._tag === 'Done') break
          out.push(decision.delay)
          state = decision.state
        }
        return out
      },
      note: 'the pure `step`, one fixed status: a stepper made, run once and its state read per step, and a `Continue` allocated'
    })
  }

  {
    const policy = RetryTs.capDelay(CAP, RetryTs.exponentialBackoff(BASE))
    add({
      name: 'retry-ts',
      pkg: 'retry-ts',
      fn: () => {
        const out: Array<number> = []
        let status = RetryTs.defaultRetryStatus
        for (let i = 0; i < N; i++) {
          status = RetryTs.applyPolicy(policy, status)
          if (O.isNone(status.previousDelay)) break
          out.push(status.previousDelay.value)
        }
        return out
      },
      note: '`applyPolicy` in a loop'
    })
  }

  {
    const { Effect, Schedule: S, Chunk, Duration } = Effect3
    const capped = S.delays(S.exponential(`${BASE} millis`, 2).pipe(S.union(S.spaced(`${CAP} millis`))))
    const inputs = new Array<undefined>(N).fill(undefined)
    add({
      name: 'effect 3',
      pkg: 'effect',
      fn: () => Chunk.toReadonlyArray(Effect.runSync(S.run(capped, 0, inputs))).map(Duration.toMillis),
      note: '`Schedule.run` over `Driver.delays`, `union(spaced(cap))` as the cap'
    })
  }

  if (peers.effect4 === undefined)
    skipped.push({ name: 'effect 4', pkg: 'effect4', reason: notLoaded('effect4', peers) })
  else {
    const { Effect, Schedule: S, Duration } = peers.effect4.core
    const capped = S.min([S.exponential(`${BASE} millis`, 2), S.spaced(`${CAP} millis`)])
    const program = Effect.gen(function* () {
      const step = yield* S.toStep(capped)
      const out: Array<number> = []
      for (let i = 0; i < N; i++) {
        const [, delay] = yield* step(0, undefined)
        out.push(Duration.toMillis(delay))
      }
      return out
    })
    add({
      name: 'effect 4',
      pkg: 'effect4',
      fn: () => Effect.runSync(program),
      note: '`Schedule.toStep` in `Effect.gen`, `min([.., spaced(cap)])` as the cap'
    })
  }

  if (peers.cockatiel === undefined)
    skipped.push({ name: 'cockatiel', pkg: 'cockatiel', reason: notLoaded('cockatiel', peers) })
  else {
    const { ExponentialBackoff, noJitterGenerator } = peers.cockatiel
    const factory = new ExponentialBackoff({ initialDelay: BASE, maxDelay: CAP, generator: noJitterGenerator })
    add({
      name: 'cockatiel',
      pkg: 'cockatiel',
      fn: () => {
        const out: Array<number> = []
        let backoff = factory.next()
        out.push(backoff.duration)
        for (let i = 1; i < N; i++) {
          backoff = backoff.next(undefined)
          out.push(backoff.duration)
        }
        return out
      },
      note: '`ExponentialBackoff` with `noJitterGenerator`, `next()` in a loop'
    })
  }
  skipped.push(
    {
      name: 'p-retry',
      pkg: 'p-retry',
      reason: 'no pure interpreter: delays are computed inside `pRetry` and not exported'
    },
    {
      name: 'exponential-backoff',
      pkg: 'exponential-backoff',
      reason: 'no pure interpreter: its `Delay` classes are internal'
    }
  )

  for (const [name, fn] of check) sameDelays(name, fn())
  const rows = await compare(entries, { ...options, cpuTime: true })
  return report(rows, skipped)
}

const report = (rows: ReadonlyArray<Row>, skipped: ReadonlyArray<Skipped>): ScenarioReport => {
  const ours = rows.find((r) => r.ours) as Row
  const bare = rows.find((r) => r.floor) as Row
  const byName = (name: string): Row => rows.find((r) => r.name === name) ?? bare
  const step = byName('fp-ts-retry `schedule.step` loop')
  const driver = byName('fp-ts-retry `Driver.advance` loop')
  const stepper = byName('fp-ts-retry stepper loop')
  const shared = byName('fp-ts-retry stepper through a shared call site')
  const perStep = (r: Row): string => `${(r.ns / N).toFixed(0)} ns`
  const met = ours.ratio <= TARGET
  return {
    title: 'Schedule stepping',
    met,
    summary: `\`Driver.delays\` ${fmtOurs(ours)} the bare loop (target ≤ ${TARGET}×)`,
    markdown: [
      `First ${N} delays of exponential(${BASE} ms, ×2) capped at ${CAP / 1000} s, computed purely into an array. ` +
        `Target: \`Driver.delays\` ≤ ${TARGET}× the bare loop.`,
      '',
      rowsTable(
        rows,
        (r) => (r.ratio <= TARGET ? `yes (≤ ${TARGET}×)` : `no: ${fmtRatio(r.ratio)} > ${TARGET}×`),
        skipped
      ),
      '',
      `Per delay: the bare loop ${perStep(bare)} (a multiplication, a \`Math.min\`, a push), the stepper alone ` +
        `${perStep(stepper)}, \`Driver.advance\` ${perStep(driver)}, \`Driver.delays\` ${perStep(ours)} (its ` +
        'setup included: options checked, a driver made). `delays` is a loop over `Driver.advance`, the one ' +
        "interpreter: each step calls the schedule's stepper, which keeps its state in place (here the next " +
        "delay of `exponential`, and `capped`'s bound), checks the delay it answers, and counts the retry in the " +
        "driver's fields; nothing is allocated per step but the pushed number. A `RetryStatus` or an `Option` is " +
        'built only when asked for, JSON only by `snapshot`. The `schedule.step` row ' +
        `(${fmtRatio(step.ratio)}) is the pure form of the same ` +
        'schedule (`Continue` objects and a stepper per call): it is what a caller that keeps its own state pays, ' +
        'and is not on the path of `delays` or the runner.' +
        (met
          ? ''
          : ` **Missed: ${fmtRatio(ours.ratio)} against ${TARGET}×.** The stepper alone is ` +
            `${fmtRatio(stepper.ratio)} the bare loop and \`Driver.advance\` ${fmtRatio(driver.ratio)}: ` +
            "the stepper's calls (one per combinator, through call sites that see every schedule of the process, " +
            "so the JIT cannot inline them) and the driver's check and counts per step are what stands between " +
            '`delays` and a hand-written loop. The same stepper called as a `Driver` calls it (its `next` read where ' +
            "every schedule's stepper passes, then one call per step), with nothing else per step, is already " +
            `${fmtRatio(shared.ratio)}: that is the floor of one interpreter of every schedule in a process that ` +
            'runs more than one, before it checks or counts anything. The stepper loop row reaches 1× only because ' +
            'its call site sees this one schedule, so the JIT inlines the stepper into it.') +
        ' The reference figures of the issue (retry-ts 1.5×, cockatiel 1.6×) could not be reproduced: against this ' +
        `floor of ${perStep(bare)} per step they measure ${fmtRatio(byName('retry-ts').ratio)} ` +
        `and ${fmtRatio(byName('cockatiel').ratio)}; their floor must have been about ten times slower.`
    ].join('\n')
  }
}
