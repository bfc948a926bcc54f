/**
 * The fleet's count of a shared breaker, checked against its reference: one breaker seeing every process's outcomes
 * in the order the store receives them. Used with `Breaker.memoryStore` (test/Breaker.test.ts) and with
 * `RedisBreaker.store` on a real server (test/RedisBreaker.test.ts).
 *
 * The model is written for clarity, not speed, and shares no code with the library: it keeps every outcome with its
 * time and reads the tally off the list.
 */
import * as fc from 'fast-check'
import * as Breaker from '../../src/Breaker'
import * as Schedule from '../../src/Schedule'
import type { TestClock } from '../../src/TestClock'
import { deepStrictEqual, strictEqual } from '../util'

/** A breaker's policy, as its constructor takes it. */
export type Policy =
  | { readonly _tag: 'consecutive'; readonly threshold: number }
  | { readonly _tag: 'count'; readonly size: number; readonly minimumCalls: number; readonly failureRate: number }
  | {
      readonly _tag: 'sampling'
      readonly window: number
      readonly buckets: number
      readonly minThroughput: number
      readonly failureRate: number
    }

export const make = (policy: Policy, options: Breaker.BreakerOptions): Breaker.Breaker => {
  switch (policy._tag) {
    case 'consecutive':
      return Breaker.consecutive({ ...options, threshold: policy.threshold })
    case 'count':
      return Breaker.count({ ...options, ...policy })
    case 'sampling':
      return Breaker.sampling({ ...options, ...policy })
  }
}

/** One breaker seeing the fleet's outcomes in order: the closed period's tally, and when it opens. */
export class Model {
  open = false
  /** Bumped at every change of state: an outcome of a call let through in another period does not count. */
  period = 0
  private outcomes: Array<{ readonly at: number; readonly failed: boolean }> = []

  constructor(readonly policy: Policy) {}

  /** `isolate()` (open for good) or `reset()` (closed), by hand: a new period, counted from nothing. */
  byHand(open: boolean): void {
    this.open = open
    this.period++
    this.outcomes = []
  }

  tally(now: number): Breaker.Tally {
    const p = this.policy
    let kept = this.outcomes
    if (p._tag === 'consecutive') {
      const lastSuccess = kept.map((o) => o.failed).lastIndexOf(false)
      kept = kept.slice(lastSuccess + 1)
    } else if (p._tag === 'count') {
      kept = kept.slice(-p.size)
    } else {
      const width = p.window / p.buckets
      kept = kept.filter((o) => Math.floor(now / width) - Math.floor(o.at / width) < p.buckets)
    }
    return { outcomes: kept.length, failures: kept.filter((o) => o.failed).length }
  }

  /** Whether a success would leave the tally as it is: then the breaker does not tell it (it is as if at the read). */
  idle(now: number): boolean {
    const { outcomes, failures } = this.tally(now)
    const p = this.policy
    return p._tag === 'consecutive'
      ? failures === 0
      : p._tag === 'count'
      ? failures === 0 && outcomes === p.size
      : false
  }

  /** Records an outcome of the closed period; answers whether it opens the circuit. */
  report(failed: boolean, now: number): boolean {
    this.outcomes.push({ at: now, failed })
    if (!failed) return false
    const { outcomes, failures } = this.tally(now)
    const p = this.policy
    const opens =
      p._tag === 'consecutive'
        ? failures >= p.threshold
        : outcomes >= (p._tag === 'count' ? p.minimumCalls : p.minThroughput) && failures / outcomes >= p.failureRate
    if (opens) this.byHand(true)
    return opens
  }
}

/** What a fleet test does: a process starts a call, a call in flight ends, time passes, a process isolates or resets. */
export type Command =
  | { readonly _tag: 'start'; readonly process: number }
  | { readonly _tag: 'finish'; readonly pick: number; readonly ok: boolean }
  | { readonly _tag: 'advance'; readonly ms: number }
  | { readonly _tag: 'isolate'; readonly process: number }
  | { readonly _tag: 'reset'; readonly process: number }

const rates = fc.constantFrom(0.25, 0.5, 0.75, 1)

/** Policies small enough to open within a few dozen outcomes; `sampling` with `window` from `windows`. */
export const policyArbitrary = (windows: fc.Arbitrary<number>): fc.Arbitrary<Policy> =>
  fc.oneof(
    fc.record({ _tag: fc.constant('consecutive' as const), threshold: fc.integer({ min: 1, max: 8 }) }),
    fc.integer({ min: 1, max: 8 }).chain((size) =>
      fc.record({
        _tag: fc.constant('count' as const),
        size: fc.constant(size),
        minimumCalls: fc.integer({ min: 1, max: size }),
        failureRate: rates
      })
    ),
    fc.record({
      _tag: fc.constant('sampling' as const),
      window: windows,
      buckets: fc.integer({ min: 1, max: 5 }),
      minThroughput: fc.integer({ min: 1, max: 10 }),
      failureRate: rates
    })
  )

/** Commands for `processes` processes, with a share of successes drawn per run (so that some runs open, some not). */
export const commandsArbitrary = (processes: number, advance: boolean): fc.Arbitrary<ReadonlyArray<Command>> =>
  fc.integer({ min: 0, max: 9 }).chain((successShare) =>
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: fc.record({ _tag: fc.constant('start' as const), process: fc.nat(processes - 1) }) },
        {
          weight: 4,
          arbitrary: fc.record({
            _tag: fc.constant('finish' as const),
            pick: fc.nat(),
            ok: fc.integer({ min: 1, max: 10 }).map((n) => n <= successShare)
          })
        },
        {
          weight: advance ? 1 : 0,
          arbitrary: fc.record({ _tag: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) })
        },
        {
          weight: 1,
          arbitrary: fc.record({
            _tag: fc.constantFrom<'isolate' | 'reset'>('isolate', 'reset'),
            process: fc.nat(processes - 1)
          })
        }
      ),
      { minLength: 10, maxLength: 150, size: 'max' }
    )
  )

/**
 * Runs `commands` through one breaker per process, all on `store` (staleness 0: each call reads the fleet), and
 * checks after each step that the fleet's tally is the model's and that it is open exactly when the model is: the
 * failure that opens it is the one whose outcome brings the merged sequence to the policy's limit, and from then on
 * every process refuses.
 *
 * What each process tells the store follows the documented rules: a call let through before its process's breaker
 * changed state is not reported (`Breaker.Permit`); a success is not told when everything its process learnt of the
 * fleet's count, from the call's entry to its end, said it could change nothing (`Breaker.Store`): the count then is
 * as if it had come at that entry.
 */
export const checkFleet = async (options: {
  readonly policy: Policy
  readonly commands: ReadonlyArray<Command>
  readonly processes: number
  readonly store: Breaker.Store
  readonly clock: TestClock
}): Promise<void> => {
  const { policy, commands, processes, store, clock } = options
  const breakers = Array.from({ length: processes }, () =>
    make(policy, { halfOpenAfter: Schedule.constant(1e9), clock, store, staleness: 0 })
  )
  const model = new Model(policy)
  interface Call {
    readonly permit: Breaker.Permit
    readonly process: number
    readonly period: number
    /** Its success is not told: every count its process learnt since its entry said it changes nothing. */
    idle: boolean
    /** Its process's breaker changed state since its entry: its outcome is not reported. */
    dropped: boolean
  }
  const inFlight: Array<Call> = []
  const local: Array<'Closed' | 'Open'> = breakers.map(() => 'Closed')
  const calls = (p: number): ReadonlyArray<Call> => inFlight.filter((call) => call.process === p)
  /** Process `p`'s breaker changes state: its calls in flight are no longer reported. */
  const change = (p: number, to: 'Closed' | 'Open'): void => {
    local[p] = to
    for (const call of calls(p)) call.dropped = true
  }
  /** Process `p` learns the fleet's state and count from a store answer. */
  const learn = (p: number): void => {
    if (local[p] !== (model.open ? 'Open' : 'Closed')) change(p, model.open ? 'Open' : 'Closed')
    if (model.open || !model.idle(clock.now())) for (const call of calls(p)) call.idle = false
  }
  for (const command of commands) {
    if (command._tag === 'advance') {
      await clock.advance(command.ms)
    } else if (command._tag === 'isolate') {
      await breakers[command.process].isolate()
      change(command.process, 'Open')
      model.byHand(true)
    } else if (command._tag === 'reset') {
      await breakers[command.process].reset()
      // a reset starts the period afresh in the process that made it, closed already or not: the calls it had let
      // through are no longer reported (Breaker's reset: "the calls let through before it no longer count")
      change(command.process, 'Closed')
      model.byHand(false)
      learn(command.process)
    } else if (command._tag === 'start') {
      const p = command.process
      const permit = await breakers[p].enter()
      learn(p)
      strictEqual(permit === undefined, model.open)
      if (permit !== undefined) {
        inFlight.push({ permit, process: p, period: model.period, idle: model.idle(clock.now()), dropped: false })
      }
    } else if (inFlight.length > 0) {
      const [call] = inFlight.splice(command.pick % inFlight.length, 1)
      await (command.ok ? call.permit.onSuccess() : call.permit.onFailure())
      if (!call.dropped && !(command.ok && call.idle)) {
        // told: a failure makes the count not idle for the process's other calls at once
        if (!command.ok) for (const other of calls(call.process)) other.idle = false
        // an outcome of another period is not counted
        if (call.period === model.period && !model.open) model.report(!command.ok, clock.now())
        learn(call.process)
      }
    }
    const stored = await store.read()
    strictEqual(stored._tag, model.open ? 'Open' : 'Closed')
    if (stored._tag === 'Closed') deepStrictEqual(stored.tally, model.tally(clock.now()))
  }
}
