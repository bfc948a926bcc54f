/**
 * A breaker that shares its state and its count with a fleet through a store (`Breaker.Store`): the local state
 * machine of `./machine`, which reads and writes the store around each of its decisions. Versioned openings, the
 * fleet's tally of the closed period, probe leases, a local copy fresh for `staleness`, and every store call bounded
 * by `storeTimeout`, with the machine deciding alone while the store does not answer. Private to `Breaker`.
 *
 * @internal
 */
import type { Tally } from '../internal/model'
import { isPromise } from '../internal/promise'
import { health, within, type Health } from '../internal/service'
import { showValue } from '../internal/show'
import * as validate from '../internal/validate'
import { Circuit, NEVER, type Config, type Origin, type Permit, type Policy } from './machine'
import { isStoreAnswer, isStoredState, type Store, type StoredState, type StoreAnswer, type Transition } from './store'

/** The options with their defaults, a store's included. */
export interface FleetConfig extends Config {
  readonly store: Store
  readonly staleness: number
  readonly storeTimeout: number
  readonly lease: number
}

/** A probe permit the fleet's store handed out. */
interface FleetProbe {
  readonly permit: string
  readonly version: number
}

/**
 * What a call carries from its entry to its outcome: the version of the fleet's state it entered at, the epoch from
 * which its success can change nothing (-1: it can), and its probe permit, if the store handed one out.
 */
interface Entry {
  readonly version: number
  readonly idleFrom: number
  readonly probe: FleetProbe | undefined
}

/** Runs `then` on a value or on what its promise resolves to. */
const andThen = <A, B>(value: A | Promise<A>, then: (a: A) => B | Promise<B>): B | Promise<B> =>
  isPromise(value) ? value.then(then) : then(value)

/** The service named in the breaker's `ServiceUnavailable` and `ServiceRecovered` events. */
const STORE = 'breaker store'

export class FleetCircuit extends Circuit<Entry> {
  /** The version of the fleet's state this process last took (a store that holds nothing is at 0). */
  private seen = 0
  /** A change of this process's own never reached the store (it did not answer): the fleet's state wins over it. */
  private diverged = false
  /** When the store was last asked: the local copy is fresh until `staleness` after. */
  private askedAt = -NEVER
  /**
   * The fleet's count of the closed period, as the store last answered it; `undefined` while the breaker does not
   * count with the store (not closed, a store that does not count, or that did not answer).
   */
  private tally: Tally | undefined
  /**
   * Bumped whenever the fleet's count may have left a state a success cannot change (an answer that says so, a
   * failure this process reports, a count no longer known): a success is not told only if this stayed as it was
   * from its call's entry to its end.
   */
  private idleEpoch = 0
  /** Store calls in flight: while the store is unavailable, a call does not wait behind one. */
  private calling = 0
  private readonly health: Health

  constructor(policy: Policy, protected override readonly config: FleetConfig) {
    super(policy, config)
    this.health = health('breaker', STORE, 'local', config.clock.now, (event) => this.emit(event))
  }

  protected override restart(): void {
    super.restart()
    this.know(undefined)
  }

  /**
   * One call to the store, bounded by `storeTimeout`: its answer, or `undefined` once the breaker has told that
   * the store failed (it then goes on with its local state).
   */
  private ask<A>(
    call: (store: Store) => A | Promise<A>,
    is: (u: unknown) => u is A,
    what: string
  ): A | undefined | Promise<A | undefined> {
    const { store, clock, storeTimeout } = this.config
    this.askedAt = clock.now()
    const failed = (error: unknown): undefined => {
      this.know(undefined)
      this.health.failed(error)
    }
    const answered = (answer: unknown): A | undefined => {
      if (!is(answer)) return failed(new TypeError(`Breaker: store.${what} answered ${showValue(answer)}`))
      this.health.answered()
      return answer
    }
    let answer: A | Promise<A>
    try {
      answer = within(clock, storeTimeout, STORE, () => call(store))
    } catch (e) {
      return failed(e)
    }
    if (!isPromise(answer)) return answered(answer)
    this.calling++
    return answer.then(answered, failed).finally(() => void this.calling--)
  }

  private apply(transition: Transition): StoreAnswer | undefined | Promise<StoreAnswer | undefined> {
    return this.ask((store) => store.apply(transition, this.config.storeTimeout), isStoreAnswer, 'apply')
  }

  /** Whether a store call may be made now: no call is stuck on the store while it is unavailable. */
  private reachable(): boolean {
    return this.calling === 0 || this.health.available()
  }

  /** Whether the next call should ask the store: its copy is stale, and the store is reachable. */
  private shouldAsk(now: number): boolean {
    if (!this.reachable()) return false
    if (now - this.askedAt >= this.config.staleness) return true
    const state = this.state
    return state._tag === 'HalfOpen' || (state._tag === 'Open' && now >= state.halfOpenAt)
  }

  /** Takes what the store answered: the fleet's state, and its count while closed. */
  private take(stored: StoredState, origin: Origin): void {
    this.adopt(stored, origin)
    this.know(stored._tag === 'Closed' && this.state._tag === 'Closed' ? stored.tally : undefined)
  }

  private know(tally: Tally | undefined): void {
    this.tally = tally
    if (tally === undefined || !this.policy.idle(tally)) this.idleEpoch++
  }

  /** Takes the fleet's state when its version is not the one this process last took. */
  private adopt(stored: StoredState, origin: Origin): void {
    if (stored.version === this.seen && (!this.diverged || stored._tag === this.state._tag)) {
      this.diverged = false
      return
    }
    this.diverged = false
    this.seen = stored.version
    const now = this.config.clock.now()
    const state = this.state
    if (stored._tag === 'Open') {
      const halfOpenAt = stored.halfOpenIn === null ? NEVER : now + stored.halfOpenIn
      // The same opening as this process's own: the fleet's wait wins, and nothing changed here.
      if (state._tag === 'Open') this.state = { ...state, halfOpenAt }
      else this.change({ _tag: 'Open', since: now, halfOpenAt }, origin)
    } else if (stored._tag !== state._tag) {
      this.change({ _tag: stored._tag, since: now }, origin)
    }
  }

  /** Makes a change in the store and takes the answer; a store that fails leaves the local change alone. */
  private publish(transition: Transition): void | Promise<void> {
    return andThen(this.apply(transition), (answer) => {
      if (answer === undefined) this.diverged = true
      else this.take(answer.state, 'local')
    })
  }

  protected override open(now: number, entry?: Entry): void | Promise<void> {
    const version = this.seen
    const wait = this.trip(now)
    const probe = entry?.probe
    const { probes } = this.config
    return this.publish(
      probe === undefined ? { _tag: 'open', version, wait } : { _tag: 'probed', ...probe, ok: false, probes, wait }
    )
  }

  protected override probeSucceeded(now: number, entry?: Entry): void | Promise<void> {
    const locally = (): void | Promise<void> => {
      this.diverged = true
      return super.probeSucceeded(now)
    }
    const probe = entry?.probe
    if (probe === undefined) return locally()
    const { probes } = this.config
    return andThen(this.apply({ _tag: 'probed', ...probe, ok: true, probes, wait: null }), (answer) =>
      answer === undefined ? locally() : this.take(answer.state, 'local')
    )
  }

  /**
   * An outcome of the closed period: told to a store that counts, whose answer judges, unless it is a success that
   * cannot change the fleet's count as far as this process has learnt from its call's entry (`idleFrom`, the epoch
   * then) to now. This process's own count judges when the store is not told, or does not answer.
   */
  protected override closedOutcome(
    succeeded: boolean,
    now: number,
    { version, idleFrom }: Entry
  ): void | Promise<void> {
    const tripsHere = this.count(succeeded, now)
    const idle = succeeded && idleFrom === this.idleEpoch
    if (this.tally === undefined || idle || !this.reachable()) return tripsHere ? this.open(now) : undefined
    // the successes of the calls in flight are told from now on: the count is no longer idle
    if (!succeeded) this.idleEpoch++
    const generation = this.generation
    const { trips, window } = this.policy
    return andThen(this.apply({ _tag: 'outcome', version, ok: succeeded, window }), (answer) => {
      if (answer !== undefined) this.take(answer.state, 'store')
      // a success opens nothing; a change meanwhile (the fleet opened, or reset) leaves nothing to judge
      if (succeeded || generation !== this.generation) return
      const stored = answer?.state
      const tally = stored?._tag === 'Closed' && stored.version === version ? stored.tally : undefined
      // counted by the fleet: its tally judges; not counted (its version has passed): nothing; no answer: ours
      const opens = tally !== undefined ? trips(tally) : stored === undefined && tripsHere
      if (opens) return this.open(this.config.clock.now())
    })
  }

  protected override entry(probe?: FleetProbe): Entry {
    const idleFrom = this.tally !== undefined && this.policy.idle(this.tally) ? this.idleEpoch : -1
    return { version: this.seen, idleFrom, probe }
  }

  /** Without the store (it would have been asked): a change it does not know of. */
  protected override halfOpen(now: number): void {
    this.diverged = true
    super.halfOpen(now)
  }

  override readonly enter = (): Permit | undefined | Promise<Permit | undefined> => {
    const { clock, probes, lease } = this.config
    if (!this.shouldAsk(clock.now())) return this.enterLocally()
    return andThen(this.apply({ _tag: 'enter', probes, lease }), (answer) => {
      if (answer === undefined) return this.enterLocally()
      const { state, permit } = answer
      if (permit === undefined) {
        this.take(state, 'store')
        return state._tag === 'Closed' ? this.permit() : this.refuse()
      }
      // This process's call is a probe of the fleet's.
      this.seen = state.version
      if (this.state._tag !== 'HalfOpen') this.change({ _tag: 'HalfOpen', since: clock.now() }, 'local')
      return this.permit(this.entry({ permit, version: state.version }))
    })
  }

  override readonly admitsIn = (ms: number): boolean | Promise<boolean> => {
    validate.duration('Breaker.admitsIn', 'ms', ms)
    if (!this.shouldAsk(this.config.clock.now())) return this.admits(ms, this.taken())
    // half-open, the fleet's probes in flight and their successes when the store answered, else this process's own
    return andThen(
      this.ask((store) => store.read(), isStoredState, 'read'),
      (stored) => {
        if (stored === undefined) return this.admits(ms, this.taken())
        this.take(stored, 'store')
        return this.admits(ms, stored._tag === 'HalfOpen' ? stored.probes + stored.successes : this.taken())
      }
    )
  }

  override readonly isolate = (): void | Promise<void> => {
    this.isolateLocally()
    return this.publish({ _tag: 'isolate' })
  }

  override readonly reset = (): void | Promise<void> => {
    this.resetLocally()
    return this.publish({ _tag: 'reset' })
  }
}
