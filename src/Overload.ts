/**
 * The overload simulation: a fleet of clients sends requests to one server whose latency rises with its load, each
 * client behind a concurrency limit of its own: none, a fixed bulkhead, or an adaptive limit. Use it to see what a
 * limit does to throughput, tail latency and drops when the server slows down, before you choose one.
 *
 * It is a seeded discrete-event simulation, like `Contention`'s: no timers, no promises, the same result for the
 * same seed, and a minute of simulated traffic in milliseconds.
 *
 * **The model**
 *
 * - Requests arrive at the fleet as a Poisson process of `rate` per second, each at a client drawn at random.
 *   The client asks its limit for a slot: refused, the request is shed at once (`shed`); admitted, it goes to
 *   the server.
 * - The server has `workers` workers; a request waits in the server's queue (first come, first served) until one
 *   is free, then takes an exponentially distributed service time of mean `serviceTime` ms. So the latency a
 *   client sees is the service time plus the time queued: it rises with the load, steeply once the requests in
 *   flight outnumber the workers.
 * - A client waits `timeout` ms at most: a request not answered by then is a drop (`timedOut`), which the limit
 *   is told of; the server still serves it when its turn comes (it cannot know the client left), which is how an
 *   unlimited fleet makes a slow server slower.
 * - `phases` change the offered rate and the service time over the run (a server that slows down, then recovers).
 *
 * @example
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * const phases = [{ duration: 10_000, rate: 500, serviceTime: 10 }]
 * const unlimited = Overload.simulate({ candidate: Overload.unlimited, phases, seed: 1 })
 * const bulkhead = Overload.simulate({ candidate: Overload.bulkhead(4), phases, seed: 1 })
 * assert.strictEqual(unlimited.shed, 0) // no limit sheds nothing...
 * assert.ok(bulkhead.offered === unlimited.offered) // ... the same requests, from the same seed
 * assert.ok(bulkhead.shed > 0) //  four slots a client, sixteen in all, shed some of them
 *
 * @since 1.0.0
 */
import * as AdaptiveLimit from './AdaptiveLimit'
import * as Bulkhead from './Bulkhead'
import type { Clock } from './Clock'
import * as validate from './internal/validate'
import * as Random from './Random'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A slot a limit gave a request: told how the request ended, once.
 *
 * @example
 * import type { Slot } from 'fp-ts-retry/Overload'
 *
 * const told: Array<string> = []
 * const slot: Slot = { succeeded: () => void told.push('ok'), dropped: () => void told.push('drop') }
 *
 * @category model
 * @since 1.0.0
 */
export interface Slot {
  /** The server answered in time. */
  readonly succeeded: () => void
  /** The client stopped waiting: the request timed out. */
  readonly dropped: () => void
}

/**
 * A client's concurrency limit, as the simulation uses it: a slot now, or `undefined` (the request is shed).
 *
 * @example
 * import type { Limit } from 'fp-ts-retry/Overload'
 *
 * const none: Limit = { enter: () => ({ succeeded: () => undefined, dropped: () => undefined }), limit: () => Infinity }
 *
 * @category model
 * @since 1.0.0
 */
export interface Limit {
  readonly enter: () => Slot | undefined
  /** The limit now, for the time series (`Infinity` when there is none). */
  readonly limit: () => number
}

/**
 * A limit with a name: `make` builds each client's own, on the simulation's clock.
 *
 * @example
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual([Overload.unlimited.name, Overload.bulkhead(8).name], ['no limit', 'bulkhead 8'])
 *
 * @category model
 * @since 1.0.0
 */
export interface Candidate {
  readonly name: string
  readonly make: (clock: Clock) => Limit
}

/**
 * A stretch of the run: for `duration` ms, requests arrive at `rate` per second and the server serves each in
 * `serviceTime` ms on average.
 *
 * @example
 * import type { Phase } from 'fp-ts-retry/Overload'
 *
 * const slowdown: Phase = { duration: 20_000, rate: 500, serviceTime: 30 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Phase {
  readonly duration: number
  readonly rate: number
  readonly serviceTime: number
}

/**
 * Options of {@link simulate}. Defaults: {@link slowdown}'s phases, 4 clients, 8 workers, a 1 s timeout, seed 0,
 * 1 s intervals in the series.
 *
 * @example
 * import type { SimulateOptions } from 'fp-ts-retry/Overload'
 * import * as Overload from 'fp-ts-retry/Overload'
 *
 * const options: SimulateOptions = { candidate: Overload.bulkhead(16), clients: 8, seed: 7 }
 *
 * @category model
 * @since 1.0.0
 */
export interface SimulateOptions {
  readonly candidate: Candidate
  readonly phases?: ReadonlyArray<Phase> | undefined
  /** The clients, each with its own limit: a whole number `>= 1`. */
  readonly clients?: number | undefined
  /** The server's workers: a whole number `>= 1`. */
  readonly workers?: number | undefined
  /** How long a client waits for an answer, in ms: finite, `> 0`. */
  readonly timeout?: number | undefined
  /** The seed of the arrivals, the clients drawn and the service times: a whole number from 0 to 2^32 − 1. */
  readonly seed?: number | undefined
  /** The width of each interval of {@link Outcome}'s `series`, in ms: finite, `> 0`. */
  readonly interval?: number | undefined
}

/**
 * One interval of a run: `throughput`, the requests answered in time per second; `p99`, the 99th percentile of
 * their latency (ms; `0` when none was answered); `shed` and `timedOut` per second; `limit`, the fleet's limits
 * added up at the interval's end (`null` for no limit).
 *
 * @example
 * import type { Interval } from 'fp-ts-retry/Overload'
 *
 * const interval: Interval = { start: 0, throughput: 480, p99: 42, shed: 0, timedOut: 0, limit: 32 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Interval {
  readonly start: number
  readonly throughput: number
  readonly p99: number
  readonly shed: number
  readonly timedOut: number
  readonly limit: number | null
}

/**
 * What a run, or one of its phases, measured: the requests `offered`, `succeeded` (answered in time), `shed` by a
 * limit, `timedOut`; `throughput` (succeeded per second), and the latency percentiles of the requests that succeeded
 * (ms; `0` when none did). A request still in flight at the end counts in `offered` alone; a request counts in the
 * phase it arrived in.
 *
 * @example
 * import type { Totals } from 'fp-ts-retry/Overload'
 *
 * const totals: Totals = { offered: 10, succeeded: 9, shed: 1, timedOut: 0, throughput: 9, p50: 10, p99: 30 }
 *
 * @category model
 * @since 1.0.0
 */
export interface Totals {
  readonly offered: number
  readonly succeeded: number
  readonly shed: number
  readonly timedOut: number
  readonly throughput: number
  readonly p50: number
  readonly p99: number
}

/**
 * What one run measured: its {@link Totals}, the totals of each of its `phases`, and the run `series`, interval by
 * interval.
 *
 * @example
 * import type { Outcome } from 'fp-ts-retry/Overload'
 *
 * const totals = { offered: 10, succeeded: 9, shed: 1, timedOut: 0, throughput: 9, p50: 10, p99: 30 }
 * const outcome: Outcome = { ...totals, phases: [totals], series: [] }
 *
 * @category model
 * @since 1.0.0
 */
export interface Outcome extends Totals {
  readonly phases: ReadonlyArray<Totals>
  readonly series: ReadonlyArray<Interval>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The default run: 20 s at 600 requests a second served in 10 ms (the 8 workers are busy three quarters of the
 * time), 20 s in which the server takes 25 ms a request (it can serve 320 a second: overloaded), then 20 s as at
 * first.
 *
 * @example
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Overload.slowdown.map((p) => p.serviceTime), [10, 25, 10])
 *
 * @category constructors
 * @since 1.0.0
 */
export const slowdown: ReadonlyArray<Phase> = [
  { duration: 20_000, rate: 600, serviceTime: 10 },
  { duration: 20_000, rate: 600, serviceTime: 25 },
  { duration: 20_000, rate: 600, serviceTime: 10 }
]

const SLOT_OF_NONE: Slot = { succeeded: () => undefined, dropped: () => undefined }

/**
 * No limit: every request goes to the server.
 *
 * @example
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * const outcome = Overload.simulate({ candidate: Overload.unlimited, phases: [{ duration: 1_000, rate: 100, serviceTime: 5 }] })
 * assert.strictEqual(outcome.shed, 0)
 *
 * @category constructors
 * @since 1.0.0
 */
export const unlimited: Candidate = {
  name: 'no limit',
  make: () => ({ enter: () => SLOT_OF_NONE, limit: () => Infinity })
}

/**
 * A fixed bulkhead of `maxConcurrent` slots per client (`Bulkhead.make`, no queue): a request that finds them
 * all taken is shed.
 *
 * @example
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * const outcome = Overload.simulate({ candidate: Overload.bulkhead(1), clients: 1, phases: [{ duration: 1_000, rate: 200, serviceTime: 20 }] })
 * assert.ok(outcome.shed > 0) // one request in flight at a time, 20 ms each, 200 a second
 * assert.throws(() => Overload.bulkhead(0), RangeError)
 *
 * @category constructors
 * @since 1.0.0
 */
export const bulkhead = (maxConcurrent: number): Candidate => {
  validate.positiveCount('Overload.bulkhead', 'maxConcurrent', maxConcurrent)
  return {
    name: `bulkhead ${maxConcurrent}`,
    make: (clock) => {
      const b = Bulkhead.make({ maxConcurrent, maxQueue: 0, clock })
      return {
        enter: () => {
          const release = b.enter() as Bulkhead.Release | undefined
          return release === undefined ? undefined : { succeeded: release, dropped: release }
        },
        limit: () => maxConcurrent
      }
    }
  }
}

/**
 * An adaptive limit per client (`AdaptiveLimit.make` on the simulation's clock, no queue): a request that finds
 * the limit reached is shed; one answered in time is a success, one that timed out a drop.
 *
 * **Details**
 *
 * - `options` are `AdaptiveLimit.make`'s but the clock, the queue and the hooks, which the simulation sets (a
 *   limit in it does not wait). `name` (default `adaptive aimd` or `adaptive gradient`) names it in reports.
 * - Bad options are `AdaptiveLimit.make`'s typed errors, thrown by `make` when the run starts, and a `maxQueue`,
 *   `queueTimeout`, `clock`, `onEvent` or `from` a `TypeError` naming it at once.
 *
 * @example
 * import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * const window = { duration: 100, minSamples: 10 }
 * const adaptive = Overload.adaptive({ algorithm: AdaptiveLimit.gradient(), min: 1, max: 64, initial: 8, window })
 * assert.strictEqual(adaptive.name, 'adaptive gradient')
 * const outcome = Overload.simulate({ candidate: adaptive, seed: 1 })
 * assert.ok(outcome.phases[1].p99 < 200) // in the slowdown, the limit keeps the server's queue short
 *
 * @category constructors
 * @since 1.0.0
 */
export const adaptive = (
  options: Omit<AdaptiveLimit.AdaptiveLimitOptions, 'clock' | 'maxQueue' | 'queueTimeout' | 'onEvent' | 'from'> & {
    readonly name?: string | undefined
  }
): Candidate => {
  const where = 'Overload.adaptive'
  validate.object(where, 'options', options)
  for (const key of ['clock', 'maxQueue', 'queueTimeout', 'onEvent', 'from']) {
    if ((options as Record<string, unknown>)[key] !== undefined)
      throw new TypeError(
        `${where}: options.${key} is the simulation's to set, received ${String(
          (options as Record<string, unknown>)[key]
        )}`
      )
  }
  const { name, ...limitOptions } = options
  const algorithm = validate.object(where, 'options.algorithm', options.algorithm)
  return {
    name:
      name === undefined ? `adaptive ${algorithm._tag.toLowerCase()}` : validate.string(where, 'options.name', name),
    make: (clock) => {
      const limit = AdaptiveLimit.make({ ...limitOptions, clock, maxQueue: 0 })
      return {
        // no queue: a place now or none, never a promise
        enter: () => {
          const permit = limit.enter() as AdaptiveLimit.Permit | undefined
          return permit === undefined
            ? undefined
            : { succeeded: () => permit.success(), dropped: () => permit.dropped() }
        },
        limit: () => limit.limit
      }
    }
  }
}

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

// The events of a run, in a binary heap by time then by order of scheduling.
const ARRIVE = 0 // the next request reaches the fleet
const SERVED = 1 // the server answers a request
const TIMEOUT = 2 // a client stops waiting for one

interface Request {
  readonly sent: number
  readonly phase: Tally
  readonly slot: Slot
  done: boolean
}

/** The counts of a run or a phase, as the run goes. */
class Tally {
  offered = 0
  shed = 0
  timedOut = 0
  readonly latencies: Array<number> = []

  totals(duration: number): Totals {
    const sorted = this.latencies.sort(byNumber)
    const succeeded = sorted.length
    const { offered, shed, timedOut } = this
    const throughput = (succeeded * 1_000) / duration
    return { offered, succeeded, shed, timedOut, throughput, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
  }
}

interface Pending {
  readonly at: number
  readonly order: number
  readonly kind: number
  readonly request: Request | undefined
}

class Heap {
  private readonly items: Array<Pending> = []
  private order = 0

  get size(): number {
    return this.items.length
  }

  push(at: number, kind: number, request: Request | undefined): void {
    const items = this.items
    const item: Pending = { at, order: this.order++, kind, request }
    let i = items.push(item) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(item, items[parent])) break
      items[i] = items[parent]
      i = parent
    }
    items[i] = item
  }

  pop(): Pending {
    const items = this.items
    const top = items[0]
    const last = items.pop() as Pending
    if (items.length > 0) {
      let i = 0
      for (;;) {
        let child = 2 * i + 1
        if (child >= items.length) break
        if (child + 1 < items.length && before(items[child + 1], items[child])) child++
        if (!before(items[child], last)) break
        items[i] = items[child]
        i = child
      }
      items[i] = last
    }
    return top
  }
}

const before = (a: Pending, b: Pending): boolean => a.at < b.at || (a.at === b.at && a.order < b.order)

/** The `q`-quantile of sorted values (nearest rank), `0` for none. */
const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]

const byNumber = (a: number, b: number): number => a - b

const checkPhases = (where: string, phases: ReadonlyArray<Phase>): ReadonlyArray<Phase> => {
  if (!Array.isArray(phases) || phases.length === 0)
    throw new TypeError(`${where}: phases must be a non-empty array of { duration, rate, serviceTime }`)
  phases.forEach((phase: Phase, i) => {
    validate.object(where, `phases[${i}]`, phase)
    validate.positive(where, `phases[${i}].duration`, phase.duration)
    validate.positive(where, `phases[${i}].rate`, phase.rate)
    validate.positive(where, `phases[${i}].serviceTime`, phase.serviceTime)
  })
  return phases
}

/**
 * Runs the model once with one candidate limit (see the module's description).
 *
 * **Details**
 *
 * - Deterministic: the same options give the same {@link Outcome}; the arrivals, the clients they reach and the
 *   service times draw from `Random.seeded(seed)` in an order that does not depend on the limit, so candidates run
 *   with one seed see the same requests.
 * - Each client's limit is made by `candidate.make` with a clock that reads the simulated time (its `sleep` is
 *   never called: a limit in this simulation does not wait).
 * - Bad options (a count that is not a whole number, a duration, rate or service time that is not finite and
 *   `> 0`, a seed out of range) are a `RangeError` or `TypeError` naming the value.
 *
 * @example
 * import * as Overload from 'fp-ts-retry/Overload'
 * import * as assert from 'assert'
 *
 * const calm = Overload.simulate({ candidate: Overload.unlimited, phases: [{ duration: 5_000, rate: 100, serviceTime: 10 }], seed: 2 })
 * assert.strictEqual(calm.timedOut, 0) // 100 a second in 10 ms, on 8 workers: no queue to speak of
 * assert.ok(calm.p99 < 100)
 * assert.strictEqual(calm.series.length, 5) // one interval a second
 *
 * @category interpreters
 * @since 1.0.0
 */
export const simulate = (options: SimulateOptions): Outcome => {
  const where = 'Overload.simulate'
  validate.object(where, 'options', options)
  const candidate = validate.object(where, 'candidate', options.candidate)
  validate.callable(where, 'candidate.make', candidate.make)
  const phases = checkPhases(where, options.phases ?? slowdown)
  const clients = validate.positiveCount(where, 'clients', validate.orDefault(options.clients, 4))
  const workers = validate.positiveCount(where, 'workers', validate.orDefault(options.workers, 8))
  const timeout = validate.positive(where, 'timeout', validate.orDefault(options.timeout, 1_000))
  const interval = validate.positive(where, 'interval', validate.orDefault(options.interval, 1_000))
  const seed = validate.orDefault(options.seed, 0)
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new RangeError(`${where}: seed must be a whole number from 0 to 4294967295, received ${String(seed)}`)
  // Two streams, so that what the limits do never moves the arrivals the candidates see: one draws arrivals and
  // clients, the other service times (in the order requests start service, which the limit does move).
  const arrivals = Random.seeded(seed)
  const services = Random.seeded((seed ^ 0x9e3779b9) >>> 0)
  const exponential = (random: Random.Random, mean: number): number =>
    -Math.log(1 - validate.drawn(where, random.next())) * mean

  let now = 0
  const clock: Clock = {
    now: () => now,
    sleep: () => Promise.reject(new Error(`${where}: a limit in the simulation cannot sleep`))
  }
  const limits: Array<Limit> = []
  for (let c = 0; c < clients; c++) limits.push(candidate.make(clock))

  const ends: Array<number> = []
  let end = 0
  for (const phase of phases) ends.push((end += phase.duration))
  let phase = 0

  const heap = new Heap()
  const queue: Array<Request> = []
  let queueHead = 0
  let busy = 0
  const run = new Tally()
  const tallies = phases.map(() => new Tally())
  const series: Array<Interval> = []
  let bucket = { start: 0, latencies: [] as Array<number>, shed: 0, timedOut: 0 }
  const closeBucket = (until: number): void => {
    while (until >= bucket.start + interval) {
      const sorted = bucket.latencies.sort(byNumber)
      const perSecond = 1_000 / interval
      const limit = limits.reduce((sum, l) => sum + l.limit(), 0)
      series.push({
        start: bucket.start,
        throughput: sorted.length * perSecond,
        p99: quantile(sorted, 0.99),
        shed: bucket.shed * perSecond,
        timedOut: bucket.timedOut * perSecond,
        limit: Number.isFinite(limit) ? limit : null
      })
      bucket = { start: bucket.start + interval, latencies: [], shed: 0, timedOut: 0 }
    }
  }
  const serve = (request: Request): void => {
    busy++
    heap.push(now + exponential(services, phases[phase].serviceTime), SERVED, request)
  }

  heap.push(exponential(arrivals, 1_000 / phases[0].rate), ARRIVE, undefined)
  while (heap.size > 0) {
    const event = heap.pop()
    if (event.at >= end) break
    now = event.at
    closeBucket(now)
    while (now >= ends[phase]) phase++
    const request = event.request
    if (event.kind === ARRIVE) {
      const tally = tallies[phase]
      run.offered++
      tally.offered++
      const client = Math.min(clients - 1, Math.floor(validate.drawn(where, arrivals.next()) * clients))
      heap.push(now + exponential(arrivals, 1_000 / phases[phase].rate), ARRIVE, undefined)
      const slot = limits[client].enter()
      if (slot === undefined) {
        run.shed++
        tally.shed++
        bucket.shed++
        continue
      }
      const sent: Request = { sent: now, phase: tally, slot, done: false }
      heap.push(now + timeout, TIMEOUT, sent)
      if (busy < workers) serve(sent)
      else queue.push(sent)
    } else if (event.kind === SERVED) {
      busy--
      const served = request as Request
      if (!served.done) {
        served.done = true
        const latency = now - served.sent
        run.latencies.push(latency)
        served.phase.latencies.push(latency)
        bucket.latencies.push(latency)
        served.slot.succeeded()
      }
      if (queueHead < queue.length) {
        serve(queue[queueHead++])
        // drop the served prefix now and then, so that a long run keeps a short array
        if (queueHead > 1_024 && queueHead * 2 > queue.length) {
          queue.splice(0, queueHead)
          queueHead = 0
        }
      }
    } else {
      const waited = request as Request
      if (waited.done) continue
      waited.done = true
      run.timedOut++
      waited.phase.timedOut++
      bucket.timedOut++
      waited.slot.dropped()
    }
  }
  now = end
  closeBucket(end)
  return { ...run.totals(end), phases: tallies.map((t, i) => t.totals(phases[i].duration)), series }
}
