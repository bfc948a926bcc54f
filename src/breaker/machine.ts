/**
 * A circuit breaker's own state machine: closed, open or half-open; its policy's count of the closed period, the
 * waits of `halfOpenAfter`, the probes of a half-open circuit, the permits of the calls it lets through, and the
 * changes it tells. It decides alone, as a breaker without a store does; `./fleet` extends it to share all of it
 * through a store. Private to `Breaker`, whose constructors check the options and make one.
 *
 * @internal
 */
import type { Clock } from '../Clock'
import * as Driver from '../Driver'
import type * as Event from '../Event'
import type { Replayable } from '../internal/counters'
import type { Tally, Window } from '../internal/model'
import { observe } from '../internal/observe'
import { isPromise } from '../internal/promise'
import * as validate from '../internal/validate'
import type { Random } from '../Random'
import type { Schedule } from '../Schedule'

// `Breaker.State` and `Breaker.Permit`, declared again here so that the implementation imports nothing of its public
// module (no cycle, not even of types); test/types.test.ts checks that they are the same types.

/** Where a breaker stands, with the time (ms, on its clock) it got there. */
export type State =
  | { readonly _tag: 'Closed'; readonly since: number }
  | { readonly _tag: 'Open'; readonly since: number; readonly halfOpenAt: number }
  | { readonly _tag: 'HalfOpen'; readonly since: number }

/** A call let through: report its outcome once. */
export interface Permit {
  readonly onSuccess: () => void | Promise<void>
  readonly onFailure: () => void | Promise<void>
}

/** When to open, as a policy sees the outcomes of one closed period: its own, or the fleet's in a store. */
export interface Policy {
  /** This process's count: the one that decides without a store, or when the store does not answer. */
  readonly counter: Replayable
  /** How a store that counts keeps the fleet's. */
  readonly window: Window
  /** Whether a tally, after a failure, opens the circuit. */
  readonly trips: (tally: Tally) => boolean
  /** Whether a success leaves a tally as it is (then it is not told to the store). */
  readonly idle: (tally: Tally) => boolean
}

/** The options with their defaults. */
export interface Config {
  readonly halfOpenAfter: Schedule<unknown>
  readonly probes: number
  readonly clock: Clock
  readonly random: Random | undefined
  readonly name: string | undefined
  readonly onEvent: Event.Observer | undefined
}

/** Who made a change of state: this process, or the fleet (read from the store). */
export type Origin = Event.BreakerStateChanged['origin']

export const NEVER = Number.POSITIVE_INFINITY

/**
 * Throws `error` on its own, after the current call: what the breaker does with an error that is no observer's (a
 * schedule's, a permit's report) and must neither stop a change half-way nor replace a call's own answer, as Node
 * does with an error thrown by an `EventTarget` listener. An observer's error follows `internal/observe`.
 */
const throwAside = (error: unknown): void =>
  queueMicrotask(() => {
    throw error
  })

/** Reports an outcome to a permit; an error of the report is thrown on its own. */
export const tell = (report: () => void | Promise<void>): void | Promise<void> => {
  try {
    const told = report()
    if (isPromise(told)) return told.catch(throwAside)
  } catch (e) {
    throwAside(e)
  }
}

/**
 * A breaker that decides alone. `E` is what a call carries from its entry to its outcome besides its generation:
 * nothing here (`void`); a fleet's breaker, what it knew of the store then.
 */
export class Circuit<E = void> {
  state: State
  protected readonly counts = { successes: 0, failures: 0, rejections: 0 }
  /** Bumped at every change of state: a permit from another generation is stale. */
  protected generation = 0
  /** The run of `halfOpenAfter` since the circuit last opened from closed. */
  private waits: Driver.Driver<unknown> | undefined
  /** Half-open: the probes handed out and their successes. */
  private probesOut = 0
  private probeSuccesses = 0

  constructor(protected readonly policy: Policy, protected readonly config: Config) {
    this.state = { _tag: 'Closed', since: config.clock.now() }
  }

  get metrics(): { readonly successes: number; readonly failures: number; readonly rejections: number } {
    return { ...this.counts }
  }

  protected emit(event: Event.Event): void {
    observe(this.config.onEvent, event)
  }

  /**
   * A fresh start of the current period, at every change of state and at a `reset()` of a closed circuit: an empty
   * count, no probe, and the permits handed out so far stale.
   */
  protected restart(): void {
    this.generation++
    this.policy.counter.reset()
    this.probesOut = 0
    this.probeSuccesses = 0
  }

  protected change(to: State, origin: Origin): void {
    const from = this.state
    this.state = to
    this.restart()
    if (to._tag === 'Closed') this.waits = undefined
    // Told last, and never thrown from (internal/observe): an observer's error must not stop a change half-way (a
    // half-open circuit whose probe was never handed out stays half-open for good). Plain JSON: an `Infinity` wait
    // (isolated, or `halfOpenAfter` stopped) is told as `null`.
    const told = { _tag: 'BreakerStateChanged', source: 'breaker', run: 0, at: to.since, from: from._tag } as const
    const named = this.config.name === undefined ? {} : { name: this.config.name }
    this.emit(
      to._tag === 'Open'
        ? {
            ...told,
            to: 'Open',
            since: to.since,
            halfOpenAt: Number.isFinite(to.halfOpenAt) ? to.halfOpenAt : null,
            origin,
            ...named
          }
        : { ...told, to: to._tag, since: to.since, origin, ...named }
    )
  }

  /** Opens the circuit for the next wait of `halfOpenAfter`, and answers that wait (`null`: no probe ever). */
  protected trip(now: number): number | null {
    let wait: number
    try {
      this.waits ??= Driver.make(this.config.halfOpenAfter, { start: now, random: this.config.random })
      wait = this.waits.advance(undefined, now)
    } catch (e) {
      // A schedule that throws is taken as one that stopped: the circuit opens for good rather than stay half-open
      // for good with its probe spent, and the error is not lost.
      this.waits = undefined
      wait = -1
      throwAside(e)
    }
    this.change({ _tag: 'Open', since: now, halfOpenAt: wait < 0 ? NEVER : now + wait }, 'local')
    return wait < 0 ? null : wait
  }

  /** The policy opened the circuit, or a probe failed. */
  protected open(now: number, _entry?: E): void | Promise<void> {
    this.trip(now)
  }

  protected probeSucceeded(now: number, _entry?: E): void | Promise<void> {
    this.probesOut = Math.max(0, this.probesOut - 1)
    if (++this.probeSuccesses >= this.config.probes) this.change({ _tag: 'Closed', since: now }, 'local')
  }

  /** Counts an outcome of the closed period in this process's count: whether it opens the circuit. */
  protected count(succeeded: boolean, now: number): boolean {
    const { counter, trips } = this.policy
    counter.record(!succeeded, now)
    return !succeeded && trips(counter.tally(now))
  }

  protected closedOutcome(succeeded: boolean, now: number, _entry: E): void | Promise<void> {
    if (this.count(succeeded, now)) return this.open(now)
  }

  /** What a call let through now carries to its outcome: nothing, for a breaker alone (`E` is `void`). */
  protected entry(): E {
    return undefined as E
  }

  protected permit(entry: E = this.entry()): Permit {
    const generation = this.generation
    let reported = false
    const report = (succeeded: boolean): void | Promise<void> => {
      if (reported) return
      reported = true
      if (succeeded) this.counts.successes++
      else this.counts.failures++
      if (generation !== this.generation) return
      const now = this.config.clock.now()
      if (this.state._tag === 'HalfOpen') return succeeded ? this.probeSucceeded(now, entry) : this.open(now, entry)
      return this.closedOutcome(succeeded, now, entry)
    }
    return { onSuccess: () => report(true), onFailure: () => report(false) }
  }

  protected refuse(): undefined {
    this.counts.rejections++
    return undefined
  }

  /** An open circuit whose wait is over lets this call through as its first probe. */
  protected halfOpen(now: number): void {
    this.change({ _tag: 'HalfOpen', since: now }, 'local')
  }

  /** The decision of a breaker alone, or of one whose store did not answer. */
  protected enterLocally(): Permit | undefined {
    const state = this.state
    if (state._tag === 'Closed') return this.permit()
    const now = this.config.clock.now()
    if (state._tag === 'Open') {
      if (now < state.halfOpenAt) return this.refuse()
      this.halfOpen(now)
    } else if (this.taken() >= this.config.probes) {
      return this.refuse()
    }
    this.probesOut++
    return this.permit()
  }

  /** The probe slots taken, as this process knows them: the probes in flight and their successes. */
  protected taken(): number {
    return this.probesOut + this.probeSuccesses
  }

  /**
   * What `enter()` would answer `ms` from now, as far as this process knows: closed, yes; open, once `halfOpenAt` has
   * come (the call turns it half-open and is a probe); half-open, while a probe slot is free (`taken`).
   */
  protected admits(ms: number, taken: number): boolean {
    const state = this.state
    if (state._tag === 'Closed') return true
    if (state._tag === 'Open') return this.config.clock.now() + ms >= state.halfOpenAt
    return taken < this.config.probes
  }

  protected isolateLocally(): void {
    this.waits = undefined
    const state = this.state
    // Already open: the same opening, without its probe (as when the fleet's wait wins in `./fleet`); isolated
    // already: nothing changes.
    if (state._tag === 'Open') this.state = state.halfOpenAt === NEVER ? state : { ...state, halfOpenAt: NEVER }
    else this.change({ _tag: 'Open', since: this.config.clock.now(), halfOpenAt: NEVER }, 'local')
  }

  protected resetLocally(): void {
    if (this.state._tag !== 'Closed') this.change({ _tag: 'Closed', since: this.config.clock.now() }, 'local')
    // Closed already: the same closed period, with its count emptied (as a store's `reset` empties the fleet's).
    else this.restart()
  }

  /**
   * Starts where `from` stands, for a breaker that replaces it (its configuration changed): its state as it is (an
   * open circuit stays open until the same `halfOpenAt`; a half-open one stays half-open, the probes in flight
   * reporting to `from`), its metrics, and while closed the outcomes its count holds, replayed into this one's count,
   * which keeps those its own window allows. Nothing is told: no state changed. The waits of a next opening come
   * from this breaker's own `halfOpenAfter`, started afresh.
   */
  takeOver(from: Circuit<unknown>): void {
    const now = this.config.clock.now()
    Object.assign(this.counts, from.counts)
    this.state = from.state
    if (from.state._tag === 'Closed') from.policy.counter.replay(now, this.policy.counter)
  }

  readonly enter = (): Permit | undefined | Promise<Permit | undefined> => this.enterLocally()

  readonly admitsIn = (ms: number): boolean | Promise<boolean> =>
    this.admits(validate.duration('Breaker.admitsIn', 'ms', ms), this.taken())

  readonly isolate = (): void | Promise<void> => this.isolateLocally()

  readonly reset = (): void | Promise<void> => this.resetLocally()
}
