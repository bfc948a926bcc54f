/**
 * A bulkhead shared by a fleet: at most `maxConcurrent` calls in flight across every process whose bulkhead names
 * the same Redis key, each slot a lease on the server's time, so that the slots of a killed process come back, and
 * one line of waiters for the fleet, served first come first served whatever their process.
 *
 * It implements the `Bulkhead.Bulkhead` interface, answering by promise: use it with `Bulkhead.protect`,
 * `Bulkhead.protectSignalled` and `Bulkhead.asGuard` as they are. While Redis cannot answer, it goes on by a
 * documented local rule and says so.
 *
 * This module loads no Redis client: it takes one you made (an ioredis `Redis` or `Cluster`).
 *
 * @since 1.0.0
 */
import { randomBytes } from 'crypto'
import * as Bulkhead from './Bulkhead'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { BulkheadEvent, Observer } from './Event'
import type { RedisClient } from './RedisBudget'
import { noop, onAbort } from './internal/abort'
import { observe } from './internal/observe'
import { checkClient, checkKey, deadlinedScript } from './internal/redis'
import { decode, SLOTS, type Answer } from './internal/slots'
import { health, serviceOptions, within } from './internal/service'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a fleet bulkhead does while Redis cannot answer within `timeout`: go on with a bulkhead of this process
 * holding the fleet's `maxConcurrent` divided by `processes` (`'local'`), let every call in (`'allow'`), or refuse
 * every call (`'refuse'`).
 *
 * @example
 * import type { Fallback } from 'fp-ts-retry/RedisBulkhead'
 *
 * const fallback: Fallback = 'local'
 *
 * @category model
 * @since 1.0.0
 */
export type Fallback = 'local' | 'allow' | 'refuse'

/**
 * Options of {@link make}: the client, the key of the shared slots and line, the fleet's `maxConcurrent` and this process's
 * `maxQueue` (default 0), and `lease` (ms): how long a slot outlives its process. `pollInterval` (ms, default 50)
 * and `maxWait` (ms, default `lease`) pace and bound a waiting call, on `clock` (default `Clock.live`, which also
 * times the events); how long a Redis call may take (`timeout`, ms, default 100), what to do when it takes longer
 * or fails (`fallback`, default `'local'`), how many processes share the key (`processes`, default 1: the local
 * bulkhead's share), and an observer.
 *
 * @example
 * import type { BulkheadOptions } from 'fp-ts-retry/RedisBulkhead'
 * import type { RedisClient } from 'fp-ts-retry/RedisBudget'
 *
 * // 20 calls in flight at most across a fleet of 4 processes; a slot of a killed process back after 10 s
 * const optionsFor = (redis: RedisClient): BulkheadOptions => ({ redis, key: 'bulkhead:payments-api', maxConcurrent: 20, maxQueue: 50, lease: 10_000, processes: 4 })
 *
 * @category model
 * @since 1.0.0
 */
export interface BulkheadOptions {
  readonly redis: RedisClient
  readonly key: string
  readonly maxConcurrent: number
  readonly maxQueue?: number | undefined
  readonly lease: number
  readonly pollInterval?: number | undefined
  readonly maxWait?: number | undefined
  readonly processes?: number | undefined
  readonly timeout?: number | undefined
  readonly fallback?: Fallback | undefined
  readonly onEvent?: Observer | undefined
  readonly clock?: Clock | undefined
}

/**
 * The counts of a fleet bulkhead, read from Redis: `inFlight`, the slots taken by every process; `queued`, the calls
 * of every process waiting in the fleet's line.
 *
 * @example
 * import type { FleetCounts } from 'fp-ts-retry/RedisBulkhead'
 *
 * const counts: FleetCounts = { inFlight: 20, queued: 3 }
 *
 * @category model
 * @since 1.0.0
 */
export interface FleetCounts {
  readonly inFlight: number
  readonly queued: number
}

/**
 * A `Bulkhead.Bulkhead` whose slots and line are shared by a fleet: `enter` always answers by promise, `inFlight`
 * and `queued` are this process's, `fleetCounts()` reads the fleet's (it rejects when Redis does not answer), and
 * `full()`, which `Bulkhead.asGuard` asks, reads them too.
 *
 * @example
 * import type { RedisBulkhead } from 'fp-ts-retry/RedisBulkhead'
 *
 * const report = async (bulkhead: RedisBulkhead) => {
 *   const fleet = await bulkhead.fleetCounts()
 *   return `${bulkhead.inFlight} here, ${fleet.inFlight} in all, ${fleet.queued} waiting`
 * }
 *
 * @category model
 * @since 1.0.0
 */
export interface RedisBulkhead extends Bulkhead.Bulkhead {
  readonly enter: (signal?: AbortSignal) => Promise<Bulkhead.Release | undefined>
  readonly full: () => Promise<boolean>
  readonly fleetCounts: () => Promise<FleetCounts>
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** The service named in the bulkhead's `ServiceUnavailable` and `ServiceRecovered` events. */
const SERVICE = 'bulkhead'

/** Heartbeats: a slot's lease is renewed this many times within it, so that one late beat loses nothing. */
const BEATS_PER_LEASE = 3

/** A call waiting in this process's line, under its ticket in the fleet's line. */
interface Waiter {
  readonly signal: AbortSignal | undefined
  readonly resolve: (release: Bulkhead.Release | undefined | Promise<Bulkhead.Release | undefined>) => void
  /** Ends its wait: its `maxWait` timer and its abort listener. */
  readonly stop: () => void
  /** Whether `BulkheadQueued` was told: once Redis has said it waits (a call let in at once never waited). */
  told: boolean
}

interface Config {
  readonly maxConcurrent: number
  readonly maxQueue: number
  readonly lease: number
  readonly pollInterval: number
  readonly maxWait: number
  readonly fallback: Fallback
  readonly clock: Clock
  readonly onEvent: Observer | undefined
}

class Fleet implements RedisBulkhead {
  /** The members of the slots this process holds in Redis, renewed by the heartbeat. */
  private readonly held = new Set<string>()
  /** Slots let in by `fallback: 'allow'`. */
  private allowed = 0
  /** This process's line by ticket, oldest first: the order of its tickets in the fleet's line. */
  private readonly line = new Map<string, Waiter>()
  /** The waiters of the line that Redis has said wait (told `BulkheadQueued`): this process's `queued`. */
  private waiting = 0
  /**
   * Whether the poll and the heartbeat run, and what ends their current sleep once there is nothing left to poll
   * for or to renew (one per sleep: a loop that goes on after all never sleeps on an aborted signal).
   */
  private polling = false
  private beating = false
  /** Whether the poll asks at once instead of sleeping: a new waiter to put in line, or a slot given back. */
  private urgent = false
  private pollSleep = new AbortController()
  private beatSleep = new AbortController()
  private readonly token = randomBytes(8).toString('hex')
  private issued = 0

  constructor(
    private readonly config: Config,
    private readonly run: (op: string, ...args: Array<string | number>) => Promise<Answer>,
    private readonly local: Bulkhead.Bulkhead
  ) {}

  get maxConcurrent(): number {
    return this.config.maxConcurrent
  }

  get maxQueue(): number {
    return this.config.maxQueue
  }

  get inFlight(): number {
    return this.held.size + this.allowed + this.local.inFlight
  }

  get queued(): number {
    return this.waiting + this.local.queued
  }

  readonly fleetCounts = async (): Promise<FleetCounts> => {
    const { held, waiting } = await this.run('c')
    return { inFlight: held, queued: waiting }
  }

  readonly full = async (): Promise<boolean> => {
    let counts: Answer
    try {
      counts = await this.run('c')
    } catch {
      // as a call would be answered now
      switch (this.config.fallback) {
        case 'allow':
          return false
        case 'refuse':
          return true
        case 'local':
          return this.local.full?.() ?? false
      }
    }
    // no slot left for a call behind the fleet's waiters, and no room in this process's line
    return counts.held + counts.waiting >= this.config.maxConcurrent && this.line.size >= this.config.maxQueue
  }

  readonly enter = (signal?: AbortSignal): Promise<Bulkhead.Release | undefined> => {
    if (signal?.aborted) return Promise.resolve(undefined)
    const ticket = this.member()
    if (this.line.size < this.config.maxQueue) return this.wait(signal, ticket)
    return this.once(signal, `-${ticket}`)
  }

  private tell(tag: BulkheadEvent['_tag']): void {
    const { onEvent, clock } = this.config
    if (onEvent === undefined) return
    observe(onEvent, {
      _tag: tag,
      source: 'bulkhead',
      run: 0,
      at: clock.now(),
      inFlight: this.inFlight,
      queued: this.queued
    })
  }

  private member(): string {
    return `${this.token}:${++this.issued}`
  }

  /** A call that cannot wait (this process's line is full): a slot if the fleet's rule lets it in now, else refused. */
  private async once(signal: AbortSignal | undefined, member: string): Promise<Bulkhead.Release | undefined> {
    // every slot held here already: the fleet has none, no need to ask
    if (this.held.size < this.config.maxConcurrent) {
      let entered: number
      try {
        entered = (await this.run('e', this.config.maxConcurrent, this.config.lease, member)).entered
      } catch {
        return this.fallback(signal)
      }
      if (entered === 1) {
        const release = this.hold(member)
        // aborted while Redis answered: the slot goes back, the call does not enter
        if (!signal?.aborted) return release
        release()
        return undefined
      }
    }
    if (signal?.aborted) return undefined
    this.tell('BulkheadRefused')
    return undefined
  }

  /**
   * Waits in line under `ticket` for a slot (the poll puts it in the fleet's line at once, and lets it in when its
   * turn comes), `maxWait` at most on the clock.
   */
  private wait(signal: AbortSignal | undefined, ticket: string): Promise<Bulkhead.Release | undefined> {
    return new Promise((resolve) => {
      const timer = new AbortController()
      let unsubscribe = noop
      const waiter: Waiter = {
        signal,
        resolve,
        stop: () => {
          timer.abort()
          unsubscribe()
        },
        told: false
      }
      const leave = (tag: BulkheadEvent['_tag']): void => {
        if (!this.leave(ticket)) return
        resolve(undefined)
        // an abort before Redis said it waits is told nothing, as one before it asked: it never waited
        if (waiter.told || tag === 'BulkheadRefused') this.tell(tag)
        // its place in the fleet's line goes at once, not when its lease runs out
        this.run('r', ticket).catch(noop)
        if (this.line.size > 0) return
        this.pollSleep.abort()
        if (this.held.size === 0) this.beatSleep.abort()
      }
      this.line.set(ticket, waiter)
      void this.config.clock.sleep(this.config.maxWait, timer.signal, 'timeout').then(() => {
        if (!timer.signal.aborted) leave('BulkheadRefused')
      })
      if (signal !== undefined) unsubscribe = onAbort(signal, () => leave('BulkheadAborted'))
      this.wake()
      if (!this.beating) void this.beat()
    })
  }

  /** Takes the waiter of `ticket` out of the line, its wait ended: whether it was there. */
  private leave(ticket: string): boolean {
    const waiter = this.line.get(ticket)
    if (waiter === undefined) return false
    this.line.delete(ticket)
    if (waiter.told) this.waiting--
    waiter.stop()
    return true
  }

  /** Has the poll ask at once. */
  private wake(): void {
    this.urgent = true
    if (this.polling) this.pollSleep.abort()
    else void this.poll()
  }

  /**
   * While calls wait, asks Redis every `pollInterval` (at once when woken) with the tickets of this process's line,
   * oldest first: Redis puts the new ones at the back of the fleet's line, and lets in those whose turn has come.
   */
  private async poll(): Promise<void> {
    this.polling = true
    const { clock, pollInterval, maxConcurrent, lease } = this.config
    try {
      while (this.line.size > 0) {
        if (!this.urgent) {
          this.pollSleep = new AbortController()
          await clock.sleep(pollInterval, this.pollSleep.signal, 'throttle')
        }
        this.urgent = false
        if (this.line.size === 0) return
        const tickets = [...this.line.keys()]
        let entered: number
        try {
          entered = (await this.run('e', maxConcurrent, lease, ...tickets)).entered
        } catch {
          // Redis fails: every waiter is answered by the fallback, and leaves the fleet's line
          const waiters = [...this.line.entries()]
          this.run('r', ...waiters.map(([ticket]) => ticket)).catch(noop)
          for (const [ticket, waiter] of waiters) {
            this.leave(ticket)
            waiter.resolve(this.fallback(waiter.signal))
          }
          return
        }
        tickets.forEach((ticket, i) => {
          const waiter = this.line.get(ticket)
          if (i < entered) {
            const release = this.hold(ticket)
            // it left the line (an abort, its maxWait) while Redis answered: the slot goes back
            if (waiter === undefined) return release()
            this.leave(ticket)
            waiter.resolve(release)
          } else if (waiter !== undefined && !waiter.told) {
            waiter.told = true
            this.waiting++
            this.tell('BulkheadQueued')
          }
        })
      }
    } finally {
      this.polling = false
    }
  }

  /** A slot held in Redis: renewed by the heartbeat until its release, which gives it back to the fleet. */
  private hold(member: string): Bulkhead.Release {
    this.held.add(member)
    if (!this.beating) void this.beat()
    let released = false
    return () => {
      if (released) return
      released = true
      // lost (its lease ran out, told as BulkheadLeaseLost by a heartbeat): nothing left to give back
      if (!this.held.delete(member)) return
      // a release Redis does not see leaves the slot taken until its lease runs out, never longer; one that finds
      // the slot gone is of a call that ended, after a stall, before a heartbeat could tell it
      this.run('r', member)
        .then(({ lost }) => lost.length > 0 && this.tell('BulkheadLeaseLost'))
        .catch(noop)
      // the fleet's oldest waiter takes it, which may be here: asked at once, after the release
      if (this.line.size > 0) this.wake()
      else if (this.held.size === 0) this.beatSleep.abort()
    }
  }

  /**
   * Renews the leases of the slots held and the waiters here, `BEATS_PER_LEASE` times a lease, while there are any;
   * a slot whose lease it finds gone (run out while this process was stalled) is told as `BulkheadLeaseLost`, once.
   */
  private async beat(): Promise<void> {
    this.beating = true
    const { lease } = this.config
    try {
      while (this.held.size > 0 || this.line.size > 0) {
        this.beatSleep = new AbortController()
        await HEARTBEAT_CLOCK.sleep(lease / BEATS_PER_LEASE, this.beatSleep.signal, 'timeout')
        if (this.held.size === 0 && this.line.size === 0) return
        const slots = [...this.held]
        let lost: ReadonlyArray<string>
        try {
          lost = (await this.run('h', lease, slots.length, ...slots, ...this.line.keys())).lost
        } catch {
          continue
        }
        // a slot released while the heartbeat was on its way is no longer held: not lost
        for (const member of lost) if (this.held.delete(member)) this.tell('BulkheadLeaseLost')
      }
    } finally {
      this.beating = false
    }
  }

  /** What a call gets while Redis cannot answer. */
  private fallback(signal: AbortSignal | undefined): Bulkhead.Release | undefined | Promise<Bulkhead.Release | undefined> {
    switch (this.config.fallback) {
      case 'allow': {
        this.allowed++
        let released = false
        return () => {
          if (!released) this.allowed--
          released = true
        }
      }
      case 'refuse':
        this.tell('BulkheadRefused')
        return undefined
      case 'local':
        return this.local.enter(signal)
    }
  }
}

/**
 * The heartbeat's time: real time, whatever `clock` the bulkhead is given (a lease runs out on the server's clock),
 * and a timer that does not keep the process alive (a call in flight does).
 */
const HEARTBEAT_CLOCK = LiveClock.make({ unref: true })

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A bulkhead shared by every process whose bulkhead has the same `key`: at most `maxConcurrent` calls in flight in
 * all, each slot a lease in Redis.
 *
 * **Details**
 *
 * - The slots and the fleet's line of waiters are one sorted set at `key`: a member per slot taken, scored by when
 *   its lease runs out on the server's `TIME` (the processes' clocks need not agree), and per waiter its place in
 *   the line (in the order it came, on the server) and its own lease; a slot whose lease has run out is free again,
 *   a waiter whose lease has run out (its process died) leaves the line. Each answer is one `EVALSHA` of one script
 *   on that one key (an `EVAL` the first time a server has not seen it): atomic, and at home on a Redis Cluster. The
 *   key expires when its last lease does. Every process should give the same `maxConcurrent` for a key.
 * - A slot is held by its call until the call gives it back: while this process holds any or has waiters, it renews
 *   all their leases in one call three times a lease (a heartbeat on real time, whatever `clock`), so that a call
 *   longer than `lease` keeps its slot, and a waiter its place, while its process lives. A process that dies
 *   (SIGKILL, a crash, a lost host) renews nothing: its slots come back when their leases run out, `lease` ms at
 *   most after its last heartbeat, and not before, and its waiters leave the line as late. A process stalled longer
 *   than a lease (a debugger, a frozen VM, SIGSTOP) may lose a slot to another call: the heartbeat never takes back
 *   one it lost, and tells `BulkheadLeaseLost` once for it: at the first beat after the stall, or at the call's
 *   release when the call ends before that beat (the release finds the slot gone). The call goes on, no longer
 *   counted in `inFlight`, and a release after the beat's telling does nothing.
 *   A waiter that lost its lease so takes a place at the back of the line at its next poll.
 * - A release (a `Bulkhead.Release`) is idempotent: called again, it does nothing. It removes the slot in Redis and,
 *   while this process has waiters, asks for them at once: the slot goes to the fleet's oldest waiter, which may be
 *   another process's (one round trip more than handing it on in the process, the cost of the order). A release
 *   Redis does not see leaves the slot taken until its lease runs out.
 * - `enter(signal?)` always answers by promise: a slot, or `undefined` when no slot is free for it and this
 *   process's line holds `maxQueue` calls already (`maxQueue` counts this process's waiters, not the fleet's), or
 *   when the signal had aborted. **Fleet-wide first come, first served**: a free slot goes to the oldest live waiter
 *   of the fleet, whatever its process; a call may take one only while fewer waiters are ahead of it than slots are
 *   free, so that a new call never overtakes a waiter. A call that finds no slot takes its place at the back of
 *   the fleet's line at once (told as `BulkheadQueued` once Redis has said so); this process asks Redis for its
 *   whole line, oldest first, every `pollInterval` ms on `clock`, at once when a call joins it or one of its slots
 *   is given back, and Redis lets in those whose turn has come. The cost: a slot given back in another process is
 *   taken up to `pollInterval` (and a round trip) later, and a poll sends every ticket of the process's line.
 *   A waiter leaves the line after `maxWait` ms (refused: `undefined`, told as `BulkheadRefused`), or as soon as its
 *   signal aborts (`BulkheadAborted`), and its place in Redis with it; a slot got for a call whose signal aborted
 *   meanwhile goes back at once: no call enters after its abort.
 * - `inFlight` and `queued` are this process's; `fleetCounts()` reads the fleet's (`inFlight`, the slots taken;
 *   `queued`, the live waiters of every process), rejecting when Redis does not answer. `full()`, which
 *   `Bulkhead.asGuard` asks, reads the fleet's too: a retry is refused when no slot is left for a call behind the
 *   fleet's waiters and this process's line is full; while Redis does not answer, it answers by the fallback
 *   (`'local'`: the local bulkhead's counts, `'allow'`: never full, `'refuse'`: always).
 * - Every Redis call is bounded by `timeout` (default 100 ms), whatever client is passed. A call that fails or does
 *   not answer in time never rejects: the bulkhead answers by its `fallback` and tells `ServiceUnavailable`
 *   (`source: 'bulkhead'`, `service: 'bulkhead'`) through `onEvent`, then `ServiceRecovered` once Redis answers
 *   again. `'local'` (the default) is a `Bulkhead.make` of this process with `max(1, floor(maxConcurrent /
 *   processes))` slots and the same `maxQueue` (which tells its own events, with its own counts); `'allow'` lets
 *   every call in at once; `'refuse'` refuses every call. The calls waiting in line when Redis fails are answered by
 *   the fallback too. The slots taken by the fallback are not counted in Redis.
 * - A call its caller stopped waiting for (queued in the client while Redis was down, or in a paused server's
 *   socket) may reach Redis late. An enter and a heartbeat carry a deadline on the server's clock, `timeout` after
 *   the call (learnt from the `TIME` every answer carries; a bulkhead's first call costs one round trip more, to
 *   learn it), and change nothing at or past it: a late enter takes no slot that nobody holds, and a late heartbeat
 *   does not lengthen the lease of a slot its process has given back or of a process that has died since (it would,
 *   from the time it runs); a heartbeat refused so is one missed beat, which a lease of three outlives. An enter that
 *   Redis ran in time but whose answer came after its caller stopped waiting gives its slot back when the answer
 *   comes, and its waiters' places with it. A release and the counts carry none: a release landing late removes only
 *   a slot or a place nobody holds (a member is never used again once given back), and a count changes nothing.
 * - `onEvent` is told `BulkheadQueued`, `BulkheadRefused` and `BulkheadAborted` as `Bulkhead.make` tells them, and
 *   `BulkheadLeaseLost`, with this process's counts, timed on `clock`.
 * - Bad options are a `TypeError` or `RangeError` naming them; `lease` must be more than 3 times `timeout`, so that
 *   a heartbeat that takes its whole `timeout` still renews a lease in time.
 *
 * @example
 * import * as RedisBulkhead from 'fp-ts-retry/RedisBulkhead'
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import Redis from 'ioredis'
 *
 * // needs a Redis server: defined, not called here
 * export function boundedForTheFleet(call: TaskEither<Error, string>) {
 *   const redis = new Redis({ host: '127.0.0.1', port: 6379 })
 *   const bulkhead = RedisBulkhead.make({ redis, key: 'bulkhead:payments-api', maxConcurrent: 20, maxQueue: 50, lease: 10_000, processes: 4 })
 *   return pipe(call, Bulkhead.protect(bulkhead, () => new Error('payments-api: too busy')))
 * }
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: BulkheadOptions): RedisBulkhead => {
  const where = 'RedisBulkhead.make'
  validate.object(where, 'options', options)
  const redis = checkClient(where, options.redis)
  const key = checkKey(where, options.key)
  const maxConcurrent = validate.positiveCount(where, 'options.maxConcurrent', options.maxConcurrent)
  const maxQueue = validate.count(where, 'options.maxQueue', validate.orDefault(options.maxQueue, 0))
  const processes = validate.positiveCount(where, 'options.processes', validate.orDefault(options.processes, 1))
  const { fallback, timeout } = serviceOptions(where, options)
  const lease = validate.that(
    where,
    'options.lease',
    `a finite number > 3 x options.timeout (${3 * timeout})`,
    (ms) => validate.isDuration(ms) && ms > 3 * timeout,
    options.lease
  )
  const pollInterval = validate.positive(where, 'options.pollInterval', validate.orDefault(options.pollInterval, 50))
  const maxWait = validate.duration(where, 'options.maxWait', validate.orDefault(options.maxWait, lease))
  validate.services(where, 'options', { clock: options.clock })
  const clock = options.clock ?? LiveClock.live
  const onEvent = options.onEvent
  const service = health('bulkhead', SERVICE, fallback, clock.now, onEvent)
  const evaluate = deadlinedScript(where, redis, key, SLOTS)
  /**
   * The script's answer; a rejection when Redis fails, answers nonsense or takes over `timeout`. An enter and a
   * heartbeat change nothing once their caller stopped waiting (their deadline); an enter that Redis ran in time but
   * whose answer came after that gives its slot back; a release or a count may run whenever it reaches Redis.
   */
  const run = async (op: string, ...args: Array<string | number>): Promise<Answer> => {
    const answer = evaluate(op === 'e' || op === 'h' ? timeout : undefined, op, ...args).then(decode)
    try {
      const answered = await within(LiveClock.live, timeout, SERVICE, () => answer)
      service.answered()
      return answered
    } catch (e) {
      service.failed(e)
      // whatever it did (slots, places in the line) is undone
      if (op === 'e') void answer.then(() => run('r', ...args.slice(2))).catch(noop)
      throw e
    }
  }
  const local = Bulkhead.make({
    maxConcurrent: Math.max(1, Math.floor(maxConcurrent / processes)),
    maxQueue,
    onEvent,
    clock
  })
  return new Fleet({ maxConcurrent, maxQueue, lease, pollInterval, maxWait, fallback, clock, onEvent }, run, local)
}
