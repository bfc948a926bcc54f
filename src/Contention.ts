/**
 * The contention simulation of Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015):
 * many clients racing to update one row under optimistic concurrency, backing off with any `Schedule`.
 *
 * Use it to compare candidate schedules at your own level of contention before you ship one: `simulate` runs
 * the model once, `compare` runs it many times per schedule and client count and reports means with their
 * standard errors. It is a seeded discrete-event simulation: no timers, no promises, the same result for the
 * same seed, a few milliseconds per run at 100 clients.
 *
 * **The model** (as in the article's simulator)
 *
 * - `clients` clients start at t = 0; each wants one successful write to one row guarded by a version number.
 * - A client sends a read; the server answers with the current version; the client sends a write carrying that
 *   version; the server accepts it only if no other write landed in between (the version is unchanged),
 *   otherwise rejects it. Four one-way messages per attempt, each taking `|Normal(mean, sd)|` ms, 10 ± 2 ms by
 *   default.
 * - When a rejection reaches a client, its own run of the schedule decides (with the same status the runner
 *   would give it: retries so far, time since t = 0, ...): stop, and the client gives up; or retry after
 *   `delay`, and its next read reaches the server one network delay plus `delay` later.
 * - `calls` counts the writes the server received, accepted and rejected: the work done. `time` is when the
 *   last accepted write's reply reached its client: the completion time.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * const fullJitter = pipe(Schedule.exponential(10), Schedule.capped(2000), Schedule.fullJitter)
 * const outcome = Contention.simulate({ clients: 20, schedule: fullJitter, seed: 1 })
 * assert.strictEqual(outcome.succeeded, 20) // every client wrote once...
 * assert.ok(outcome.calls >= 20) //             ... after some rejected writes
 * assert.deepStrictEqual(Contention.simulate({ clients: 20, schedule: fullJitter, seed: 1 }), outcome) // seeded
 *
 * @since 0.1.0
 */
import * as Budget from './Budget'
import * as Driver from './Driver'
import * as validate from './internal/validate'
import * as Random from './Random'
import * as Schedule from './Schedule'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a client's schedule sees after a rejected write: the HTTP-style code `409` (a version conflict) and which
 * client it is (from 0).
 *
 * **Details**
 *
 * Every schedule accepts it (`Schedule<unknown>` is a `Schedule<Conflict>`); a schedule from a `ScheduleConfig`
 * with `retryOn: [409]` retries it, and one with `neverRetryOn: [409]` gives up at the first conflict.
 *
 * @example
 * import type { Conflict } from 'fp-ts-retry/Contention'
 *
 * const conflict: Conflict = { code: 409, client: 3 }
 *
 * @category model
 * @since 0.1.0
 */
export interface Conflict {
  readonly code: 409
  readonly client: number
}

/**
 * The one-way delay of every message: `|Normal(mean, sd)|` ms.
 *
 * @example
 * import type { Network } from 'fp-ts-retry/Contention'
 *
 * const lan: Network = { mean: 0.5, sd: 0.1 }
 *
 * @category model
 * @since 0.1.0
 */
export interface Network {
  readonly mean: number
  readonly sd: number
}

/**
 * Options of {@link simulate}.
 *
 * @example
 * import type { SimulateOptions } from 'fp-ts-retry/Contention'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * const options: SimulateOptions = { clients: 50, schedule: Schedule.decorrelatedJitter(5, 2000), seed: 7 }
 *
 * @category model
 * @since 0.1.0
 */
export interface SimulateOptions {
  /** How many clients contend: a whole number `>= 0`. */
  readonly clients: number
  /** The backoff: each client runs its own copy of it from its initial state. */
  readonly schedule: Schedule.Schedule<Conflict>
  /** Where the network delays and the schedules' jitter draw from. Default `Random.seeded(seed)`. */
  readonly random?: Random.Random | undefined
  /** The seed of the default `random`: a whole number from 0 to 2^32 − 1. Default 0. Not with `random`. */
  readonly seed?: number | undefined
  /** The one-way message delay. Default {@link awsNetwork}: 10 ± 2 ms. */
  readonly network?: Network | undefined
  /**
   * A retry budget shared by every client of the run, as one SDK client's quota is shared by its calls: told of
   * each write's verdict as the runner tells it (a rejection as a failure, an acceptance as a success), and asked
   * before each retry; a client it refuses gives up. Default: none.
   */
  readonly budget?: Budget.LocalBudget | undefined
  /**
   * A bound on the writes (default 10,000,000): past it `simulate` throws a `RangeError` rather than run on,
   * for a schedule that keeps every client colliding for ever (a constant 0 with a network of sd 0).
   */
  readonly maxCalls?: number | undefined
}

/**
 * What one run of the simulation measured.
 *
 * @example
 * import type { Outcome } from 'fp-ts-retry/Contention'
 *
 * const outcome: Outcome = { calls: 12, rejected: 2, succeeded: 10, gaveUp: 0, time: 95.3 }
 *
 * @category model
 * @since 0.1.0
 */
export interface Outcome {
  /** Writes the server received, accepted and rejected: the work done. */
  readonly calls: number
  /** Writes the server rejected: `calls - succeeded`. */
  readonly rejected: number
  /** Clients whose write was accepted. */
  readonly succeeded: number
  /** Clients whose schedule stopped, or whose budget refused a retry, before their write was accepted. */
  readonly gaveUp: number
  /** When the last accepted write's reply reached its client, in ms from the start; 0 if none was accepted. */
  readonly time: number
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The network of the article's simulator: every one-way message takes `|Normal(10, 2)|` ms.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as assert from 'assert'
 *
 * assert.deepStrictEqual(Contention.awsNetwork, { mean: 10, sd: 2 })
 *
 * @category constructors
 * @since 0.1.0
 */
export const awsNetwork: Network = { mean: 10, sd: 2 }

/**
 * A schedule with a name, for {@link compare} and reports, and optionally the retry budget its clients share.
 *
 * **Details**
 *
 * `budget` makes a new budget for each run (a budget is mutable: runs must not share one), which every client of
 * that run shares (see {@link SimulateOptions}).
 *
 * @example
 * import type { Candidate } from 'fp-ts-retry/Contention'
 * import * as Budget from 'fp-ts-retry/Budget'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 *
 * const candidate: Candidate = { name: 'decorrelated', schedule: Schedule.decorrelatedJitter(5, 2000) }
 * const withQuota: Candidate = { ...candidate, budget: () => Budget.retryQuota() }
 *
 * @category model
 * @since 0.1.0
 */
export interface Candidate {
  readonly name: string
  readonly schedule: Schedule.Schedule<Conflict>
  /** @since 1.0.0 */
  readonly budget?: (() => Budget.LocalBudget) | undefined
}

/**
 * The article's five strategies as schedules, with its `base` (default 5 ms) and `cap` (default 2000 ms):
 * `none`, `exponential`, `full jitter`, `equal jitter` and `decorrelated`.
 *
 * **Details**
 *
 * - The article's exponential backoff is `min(cap, base · 2^attempt)` with `attempt = 1` for the first retry,
 *   so its first delay is `2 · base`: here `pipe(exponential(2 · base), capped(cap))`, and the two jitters
 *   are that schedule followed by `fullJitter` / `equalJitter`. (`exponential(base)` would start one doubling
 *   earlier, which costs measurably more rejected writes at 50 clients and more.)
 * - `decorrelated` is `decorrelatedJitter(base, cap)`; `none` is `forever`: retry at once.
 * - Requires `0 <= base <= cap`.
 *
 * @example
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as assert from 'assert'
 *
 * const strategies = Contention.awsStrategies()
 * assert.deepStrictEqual(strategies.map((s) => s.name), ['none', 'exponential', 'full jitter', 'equal jitter', 'decorrelated'])
 * assert.deepStrictEqual(Driver.delays(strategies[1].schedule, { limit: 4 }), [10, 20, 40, 80])
 *
 * @category constructors
 * @since 0.1.0
 */
export const awsStrategies = (base = 5, cap = 2000): ReadonlyArray<Candidate> => {
  validate.duration('Contention.awsStrategies', 'base', base)
  validate.atLeast('Contention.awsStrategies', 'cap', base, cap)
  const exponential = Schedule.capped(cap)(Schedule.exponential(2 * base))
  return [
    { name: 'none', schedule: Schedule.forever },
    { name: 'exponential', schedule: exponential },
    { name: 'full jitter', schedule: Schedule.fullJitter(exponential) },
    { name: 'equal jitter', schedule: Schedule.equalJitter(exponential) },
    { name: 'decorrelated', schedule: Schedule.decorrelatedJitter(base, cap) }
  ]
}

/**
 * The AWS SDKs' standard retries 2.0 and 2.1 as candidates: each version's backoff alone, retrying forever like
 * {@link awsStrategies}, then as the SDKs ship it, with 3 attempts and the version's retry quota shared by the
 * clients of a run.
 *
 * **Details**
 *
 * - `AWS 2.0 backoff` is `Schedule.awsRetries20`; `AWS 2.1 backoff` is `Schedule.awsRetries21()`, whose base is
 *   50 ms here: a version conflict is no throttle.
 * - `AWS 2.0 SDK` and `AWS 2.1 SDK` add `intersect(recurs(2))` (3 attempts) and a `Budget.retryQuota` of
 *   `Budget.awsRetries20` / `Budget.awsRetries21` per run: 500 tokens, 5 or 14 a retry. A client that runs out of
 *   attempts or of quota gives up (`gaveUp`).
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as Driver from 'fp-ts-retry/Driver'
 * import * as Random from 'fp-ts-retry/Random'
 * import * as assert from 'assert'
 *
 * const candidates = Contention.awsRetries()
 * assert.deepStrictEqual(candidates.map((c) => c.name), ['AWS 2.0 backoff', 'AWS 2.1 backoff', 'AWS 2.0 SDK', 'AWS 2.1 SDK'])
 * const conflict = { code: 409 as const, client: 0 }
 * assert.deepStrictEqual(Driver.delays(candidates[3].schedule, { random: Random.fixed(0.5), input: conflict }), [25, 50])
 * assert.strictEqual(candidates[1].budget, undefined) // the backoff alone
 *
 * @category constructors
 * @since 1.0.0
 */
export const awsRetries = (): ReadonlyArray<Candidate> => {
  const sdk = Schedule.intersect(Schedule.recurs(2))
  const v21 = Schedule.awsRetries21()
  return [
    { name: 'AWS 2.0 backoff', schedule: Schedule.awsRetries20 },
    { name: 'AWS 2.1 backoff', schedule: v21 },
    { name: 'AWS 2.0 SDK', schedule: sdk(Schedule.awsRetries20), budget: () => Budget.retryQuota(Budget.awsRetries20) },
    { name: 'AWS 2.1 SDK', schedule: sdk(v21), budget: () => Budget.retryQuota(Budget.awsRetries21) }
  ]
}

/**
 * One published figure of the article's simulator: mean calls and completion time (ms) of a strategy at a
 * number of clients.
 *
 * @example
 * import type { ReferenceFigure } from 'fp-ts-retry/Contention'
 *
 * const figure: ReferenceFigure = { strategy: 'full jitter', clients: 100, calls: 796, time: 4831 }
 *
 * @category model
 * @since 0.1.0
 */
export interface ReferenceFigure {
  readonly strategy: string
  readonly clients: number
  readonly calls: number
  readonly time: number
}

/**
 * The reference means of the article's simulator (base 5 ms, cap 2000 ms, network 10 ± 2 ms), named as in
 * {@link awsStrategies}: what a faithful reimplementation must reproduce.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as assert from 'assert'
 *
 * const full100 = Contention.reference.find((r) => r.strategy === 'full jitter' && r.clients === 100)
 * assert.deepStrictEqual(full100, { strategy: 'full jitter', clients: 100, calls: 796, time: 4831 })
 *
 * @category constructors
 * @since 0.1.0
 */
export const reference: ReadonlyArray<ReferenceFigure> = [
  { strategy: 'full jitter', clients: 100, calls: 796, time: 4831 },
  { strategy: 'equal jitter', clients: 100, calls: 813, time: 6759 },
  { strategy: 'decorrelated', clients: 100, calls: 1001, time: 4674 },
  { strategy: 'exponential', clients: 100, calls: 1856, time: 63146 },
  { strategy: 'none', clients: 100, calls: 2421, time: 2030 },
  { strategy: 'full jitter', clients: 50, calls: 333, time: 2891 },
  { strategy: 'decorrelated', clients: 50, calls: 375, time: 2166 },
  { strategy: 'equal jitter', clients: 50, calls: 348, time: 4307 }
]

// -------------------------------------------------------------------------------------
// interpreters
// -------------------------------------------------------------------------------------

// What each client's one pending message is: it is in flight, and `kind` says what it does on arrival.
const READ = 0 //        a read reaches the server
const READ_REPLY = 1 //  the version reaches the client
const WRITE = 2 //       a write (with the version read) reaches the server
const WRITE_REPLY = 3 // the verdict reaches the client

/** Who draws the network's delays, for the error of a bad draw. */
const NETWORK = 'Contention.simulate: the network'

/** `|Normal(mean, sd)|` draws from a `Random`, by the Box–Muller transform (each pair of uniforms gives two). */
const networkDelays = (network: Network, random: Random.Random): (() => number) => {
  const { mean, sd } = network
  let spare = NaN
  return () => {
    let z = spare
    if (z === z) {
      spare = NaN
    } else {
      // 1 - u is in (0, 1]: the logarithm stays finite.
      const r = Math.sqrt(-2 * Math.log(1 - validate.drawn(NETWORK, random.next())))
      const theta = 2 * Math.PI * validate.drawn(NETWORK, random.next())
      z = r * Math.cos(theta)
      spare = r * Math.sin(theta)
    }
    const d = mean + sd * z
    return d < 0 ? -d : d
  }
}

const checkNetwork = (where: string, network: Network): Network => {
  if (typeof network !== 'object' || network === null) {
    throw new RangeError(`${where}: network must be { mean, sd } in ms, received ${String(network)}`)
  }
  validate.duration(where, 'network.mean', network.mean)
  validate.duration(where, 'network.sd', network.sd)
  return network
}

const randomOf = (where: string, random: Random.Random | undefined, seed: number | undefined): Random.Random => {
  if (random !== undefined && seed !== undefined) {
    throw new RangeError(`${where}: give random or seed, not both (received seed ${String(seed)})`)
  }
  if (random !== undefined) return validate.implementing(where, 'random', 'a Random', ['next'], random)
  if (seed === undefined) return Random.seeded(0)
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`${where}: seed must be a whole number from 0 to 4294967295, received ${String(seed)}`)
  }
  return Random.seeded(seed)
}

/**
 * Runs the contention model once: `clients` clients, each backing off with its own run of `schedule`.
 *
 * **Details**
 *
 * - Deterministic: the same options (and seed) give the same {@link Outcome}. The network and every client's
 *   jitter draw from the one `Random`.
 * - Each client's schedule is stepped as the runner steps it, with the time of the rejection as `now` and a
 *   status counting from t = 0, so `upTo`, `recurs` and `whileInput` behave as they would in production; a
 *   client whose schedule stops gives up (`gaveUp`).
 * - With a `budget`, each verdict is told to it as the runner tells an attempt's outcome (`latency` from the read
 *   to the verdict, the client's `retries`, the `Conflict` as the error); a rejection it refuses to retry makes the
 *   client give up. Its `onFailure` must answer a boolean (a `TypeError` otherwise).
 * - Events go through a binary heap, one pending message per client, ties in the order they were sent: the
 *   cost is `O(calls · log clients)`, no timers.
 * - `clients` must be a whole number `>= 0`; the network's `mean` and `sd` finite and `>= 0`. A bad delay from
 *   the schedule is the interpreters' usual `RangeError`.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * // one client never conflicts: one write, after four messages of exactly 10 ms
 * const alone = Contention.simulate({ clients: 1, schedule: Schedule.forever, network: { mean: 10, sd: 0 } })
 * assert.deepStrictEqual(alone, { calls: 1, rejected: 0, succeeded: 1, gaveUp: 0, time: 40 })
 *
 * // with no retries, ten clients in lockstep: the first write wins, the other nine give up
 * const once = Contention.simulate({ clients: 10, schedule: Schedule.stop, network: { mean: 10, sd: 0 } })
 * assert.deepStrictEqual(once, { calls: 10, rejected: 9, succeeded: 1, gaveUp: 9, time: 40 })
 *
 * // a schedule can look at the conflict: here only even clients retry
 * const even = pipe(Schedule.constant(50), Schedule.whileInput((c: Contention.Conflict) => c.client % 2 === 0))
 * const outcome = Contention.simulate({ clients: 10, schedule: even, seed: 3 })
 * assert.strictEqual(outcome.succeeded + outcome.gaveUp, 10)
 *
 * @category interpreters
 * @since 0.1.0
 */
export const simulate = (options: SimulateOptions): Outcome => {
  const where = 'Contention.simulate'
  validate.object(where, 'options', options)
  const clients = validate.count(where, 'clients', options.clients)
  const maxCalls = validate.count(where, 'maxCalls', validate.orDefault(options.maxCalls, 10_000_000))
  const network = checkNetwork(where, options.network ?? awsNetwork)
  const random = randomOf(where, options.random, options.seed)
  validate.callable(where, 'schedule.stepper', options.schedule?.stepper)
  const { budget } = options
  if (budget !== undefined) validate.implementing(where, 'budget', 'a LocalBudget', ['onSuccess', 'onFailure'], budget)
  const delay = networkDelays(network, random)

  // One pending message per client: when it arrives, what it is, what it carries (a version or a verdict).
  const at = new Float64Array(clients)
  const sent = new Float64Array(clients)
  const kind = new Uint8Array(clients)
  const carried = new Float64Array(clients)
  // For a budget: when each client's attempt began (its read was sent), and its retries so far.
  const began = budget === undefined ? undefined : new Float64Array(clients)
  const retries = budget === undefined ? undefined : new Int32Array(clients)
  const drivers: Array<Driver.Driver<Conflict>> = []
  // A binary min-heap of client numbers, by arrival time, then by sending order.
  const heap = new Int32Array(clients)
  let size = clients
  let sequence = 0
  for (let c = 0; c < clients; c++) {
    drivers.push(Driver.make(options.schedule, { start: 0, random }))
    at[c] = delay()
    sent[c] = sequence++
    kind[c] = READ
    heap[c] = c
  }
  const before = (a: number, b: number): boolean => at[a] < at[b] || (at[a] === at[b] && sent[a] < sent[b])
  const siftDown = (i: number): void => {
    const c = heap[i]
    for (;;) {
      let child = 2 * i + 1
      if (child >= size) break
      if (child + 1 < size && before(heap[child + 1], heap[child])) child++
      if (!before(heap[child], c)) break
      heap[i] = heap[child]
      i = child
    }
    heap[i] = c
  }
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(i)

  let version = 0
  let calls = 0
  let succeeded = 0
  let gaveUp = 0
  let time = 0
  // Each client's next message always arrives no earlier than the one being handled, so the client at the top
  // of the heap is handled in place: its new arrival time only ever sifts it down.
  while (size > 0) {
    const c = heap[0]
    const now = at[c]
    let next = -1
    switch (kind[c]) {
      case READ:
        carried[c] = version
        next = READ_REPLY
        break
      case READ_REPLY:
        next = WRITE
        break
      case WRITE:
        if (++calls > maxCalls) {
          throw new RangeError(
            `${where}: more than maxCalls (${maxCalls}) writes; the schedule keeps the clients colliding`
          )
        }
        if (carried[c] === version) {
          version++
          carried[c] = 1
        } else {
          carried[c] = 0
        }
        next = WRITE_REPLY
        break
      default: {
        if (carried[c] === 1) {
          succeeded++
          time = now
          if (budget !== undefined) {
            const made = (retries as Int32Array)[c]
            const error = made === 0 ? undefined : { code: 409, client: c }
            budget.onSuccess({ latency: now - (began as Float64Array)[c], now, retries: made, error, retrying: false })
          }
          break
        }
        const conflict: Conflict = { code: 409, client: c }
        const wait = drivers[c].advance(conflict, now)
        if (budget !== undefined) {
          const latency = now - (began as Float64Array)[c]
          const made = (retries as Int32Array)[c]
          const allowed: unknown = budget.onFailure({
            latency,
            now,
            retries: made,
            error: conflict,
            retrying: wait >= 0
          })
          if (typeof allowed !== 'boolean') {
            throw new TypeError(`${where}: budget.onFailure must answer a boolean, received ${String(allowed)}`)
          }
          if (wait >= 0) {
            if (!allowed) {
              gaveUp++
              break
            }
            ;(retries as Int32Array)[c] = made + 1
            ;(began as Float64Array)[c] = now + wait
          }
        }
        if (wait < 0) {
          gaveUp++
          break
        }
        at[c] = now + delay() + wait
        sent[c] = sequence++
        kind[c] = READ
        siftDown(0)
        continue
      }
    }
    if (next < 0) {
      heap[0] = heap[--size]
    } else {
      at[c] = now + delay()
      sent[c] = sequence++
      kind[c] = next
    }
    siftDown(0)
  }
  return { calls, rejected: calls - succeeded, succeeded, gaveUp, time }
}

// -------------------------------------------------------------------------------------
// comparisons
// -------------------------------------------------------------------------------------

/**
 * A sample mean and its standard error (the sample standard deviation over `√runs`).
 *
 * @example
 * import type { Estimate } from 'fp-ts-retry/Contention'
 *
 * const calls: Estimate = { mean: 333.1, standardError: 0.4 }
 *
 * @category model
 * @since 0.1.0
 */
export interface Estimate {
  readonly mean: number
  readonly standardError: number
}

/**
 * Options of {@link compare}.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 *
 * const options: Contention.CompareOptions = { candidates: Contention.awsStrategies(), clients: [10, 50], runs: 100 }
 *
 * @category model
 * @since 0.1.0
 */
export interface CompareOptions {
  /** The schedules to compare, each with a name. */
  readonly candidates: ReadonlyArray<Candidate>
  /** The client counts to run each schedule at. */
  readonly clients: ReadonlyArray<number>
  /** Runs per schedule and client count: a whole number `>= 2`. Default 100. */
  readonly runs?: number | undefined
  /** Run `i` draws from `Random.seeded(seed + i)`, for every schedule and client count. Default 0. */
  readonly seed?: number | undefined
  /** The one-way message delay. Default {@link awsNetwork}. */
  readonly network?: Network | undefined
}

/**
 * The result of {@link compare} for one schedule at one client count: mean calls, completion time and clients
 * that gave up, each with its standard error.
 *
 * @example
 * import type { Comparison } from 'fp-ts-retry/Contention'
 *
 * const row: Comparison = {
 *   name: 'full jitter',
 *   clients: 50,
 *   runs: 100,
 *   calls: { mean: 333.1, standardError: 0.4 },
 *   time: { mean: 2954, standardError: 39 },
 *   gaveUp: { mean: 0, standardError: 0 }
 * }
 *
 * @category model
 * @since 0.1.0
 */
export interface Comparison {
  readonly name: string
  readonly clients: number
  readonly runs: number
  readonly calls: Estimate
  readonly time: Estimate
  readonly gaveUp: Estimate
}

const estimate = (samples: Float64Array): Estimate => {
  const n = samples.length
  let sum = 0
  for (let i = 0; i < n; i++) sum += samples[i]
  const mean = sum / n
  let squares = 0
  for (let i = 0; i < n; i++) squares += (samples[i] - mean) ** 2
  return { mean, standardError: Math.sqrt(squares / (n - 1) / n) }
}

/**
 * Runs {@link simulate} `runs` times for every candidate schedule at every client count, and reports the means
 * with their standard errors, in the order of `clients`, then of `candidates`.
 *
 * **Details**
 *
 * - Common random numbers: run `i` uses `Random.seeded(seed + i)` for every schedule, so the schedules are
 *   compared on the same network draws as far as their paths agree, and the whole comparison is reproducible.
 * - A difference between two means is significant when it is several times `√(se₁² + se₂²)`.
 * - `runs` must be a whole number `>= 2`; every client count a whole number `>= 0`.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as assert from 'assert'
 *
 * const rows = Contention.compare({ candidates: Contention.awsStrategies(), clients: [20], runs: 30 })
 * const calls = (name: string) => rows.find((r) => r.name === name)?.calls.mean ?? NaN
 * assert.ok(calls('full jitter') < calls('exponential')) // jitter spreads the retries: fewer collisions
 * assert.ok(calls('exponential') < calls('none'))
 *
 * @category interpreters
 * @since 0.1.0
 */
export const compare = (options: CompareOptions): ReadonlyArray<Comparison> => {
  const where = 'Contention.compare'
  validate.object(where, 'options', options)
  const runs = validate.count(where, 'runs', validate.orDefault(options.runs, 100))
  if (runs < 2) throw new RangeError(`${where}: runs must be a whole number >= 2, received ${runs}`)
  const seed = options.seed ?? 0
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`${where}: seed must be a whole number from 0 to 4294967295, received ${String(seed)}`)
  }
  if (!Array.isArray(options.candidates)) {
    throw new RangeError(
      `${where}: candidates must be an array of { name, schedule }, received ${String(options.candidates)}`
    )
  }
  if (!Array.isArray(options.clients)) {
    throw new RangeError(`${where}: clients must be an array of client counts, received ${String(options.clients)}`)
  }
  options.candidates.forEach((c: Candidate, i) => {
    validate.object(where, `candidates[${i}]`, c)
    if (c.budget !== undefined) validate.callable(where, `candidates[${i}].budget`, c.budget)
  })
  options.clients.forEach((n, i) => validate.count(where, `clients[${i}]`, n))
  const network = checkNetwork(where, options.network ?? awsNetwork)
  const rows: Array<Comparison> = []
  for (const clients of options.clients) {
    for (const { name, schedule, budget } of options.candidates) {
      const calls = new Float64Array(runs)
      const time = new Float64Array(runs)
      const gaveUp = new Float64Array(runs)
      for (let i = 0; i < runs; i++) {
        const random = Random.seeded((seed + i) % 2 ** 32)
        const outcome = simulate({ clients, schedule, network, random, budget: budget?.() })
        calls[i] = outcome.calls
        time[i] = outcome.time
        gaveUp[i] = outcome.gaveUp
      }
      rows.push({ name, clients, runs, calls: estimate(calls), time: estimate(time), gaveUp: estimate(gaveUp) })
    }
  }
  return rows
}

/**
 * For each client count in a comparison: the schedule that did the least work (fewest mean calls) and the one
 * that finished first (lowest mean completion time).
 *
 * **Details**
 *
 * Plain lowest means; whether a lead is significant is for the standard errors to say. Ties go to the
 * candidate listed first. Client counts come in the order they first appear.
 *
 * @example
 * import * as Contention from 'fp-ts-retry/Contention'
 * import * as assert from 'assert'
 *
 * const rows = Contention.compare({ candidates: Contention.awsStrategies(), clients: [30], runs: 20 })
 * const [leaders] = Contention.leaders(rows)
 * assert.strictEqual(leaders.clients, 30)
 * assert.strictEqual(leaders.firstToFinish, 'none') // retrying at once finishes first, at a high price in calls
 *
 * @category utils
 * @since 0.1.0
 */
export const leaders = (
  comparisons: ReadonlyArray<Comparison>
): ReadonlyArray<{ readonly clients: number; readonly leastWork: string; readonly firstToFinish: string }> => {
  const byClients = new Map<number, Array<Comparison>>()
  for (const row of comparisons) {
    const rows = byClients.get(row.clients)
    if (rows === undefined) byClients.set(row.clients, [row])
    else rows.push(row)
  }
  const lowest = (rows: ReadonlyArray<Comparison>, of: (row: Comparison) => number): string =>
    rows.reduce((best, row) => (of(row) < of(best) ? row : best)).name
  return [...byClients].map(([clients, rows]) => ({
    clients,
    leastWork: lowest(rows, (r) => r.calls.mean),
    firstToFinish: lowest(rows, (r) => r.time.mean)
  }))
}
