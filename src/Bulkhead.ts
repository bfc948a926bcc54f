/**
 * Bulkheads: at most `maxConcurrent` calls to one dependency in flight, and at most `maxQueue` more waiting for a
 * slot, first come first served; a call beyond that is refused at once.
 *
 * {@link protect} wraps a `TaskEither` with a bulkhead, {@link protectSignalled} an action handed `{ signal }`:
 * a waiting call whose signal aborts leaves the queue at once, and never holds up those behind it (cockatiel#112).
 * {@link asGuard} makes a bulkhead a `Guard` of the runners: a retry is refused while the bulkhead is full, and the
 * run stops with reason `'bulkhead'`. The bulkhead goes outside everything else: see docs/resilience-order.md.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import type { TaskEither } from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1 })
 *   let release = (): void => undefined
 *   const slow: TaskEither<string, string> = () => new Promise((resolve) => (release = () => resolve({ _tag: 'Right', right: 'ok' })))
 *   const call = pipe(slow, Bulkhead.protect(bulkhead, () => 'too busy'))
 *   const first = call() // runs
 *   const second = call() // waits
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: 'too busy' }) // refused at once
 *   assert.deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [1, 1])
 *   release()
 *   assert.deepStrictEqual(await first, { _tag: 'Right', right: 'ok' })
 *   release()
 *   assert.deepStrictEqual(await second, { _tag: 'Right', right: 'ok' })
 * }
 * main()
 *
 * @since 1.0.0
 */
import type { Either } from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Signalled } from './Timeout'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { BulkheadEvent, Observer } from './Event'
import type { Guard } from './Guard'
import { noop, onAbort } from './internal/abort'
import { Line, Successor, type Linked } from './internal/line'
import { observe } from './internal/observe'
import { isPromise } from './internal/promise'
import { showValue } from './internal/show'
import * as validate from './internal/validate'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Gives back a slot of a bulkhead. Calling it again does nothing.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import * as assert from 'assert'
 *
 * const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
 * const release = bulkhead.enter() as Bulkhead.Release
 * release()
 * release()
 * assert.strictEqual(bulkhead.inFlight, 0)
 *
 * @category model
 * @since 1.0.0
 */
export type Release = () => void

/**
 * A bulkhead: shared by every call to one dependency, used through {@link protect}, {@link protectSignalled} and
 * {@link asGuard}.
 *
 * **Details**
 *
 * - `enter(signal?)` asks for a slot: a {@link Release} when one is free now; `undefined` when none is and the
 *   queue is full (refused); else a promise, which resolves to a `Release` when a slot is handed over (in the
 *   order of asking), or to `undefined` as soon as `signal` aborts (also when it had aborted already). A slot
 *   given back goes straight to the oldest waiter.
 * - `inFlight`: the slots taken; `queued`: the waiters. `inFlight <= maxConcurrent` and `queued <= maxQueue`
 *   always, and a waiter exists only while every slot is taken.
 * - The four numbers are read-only at run time too (getters of `make`'s bulkhead): writing one throws a
 *   `TypeError` in strict code and is ignored otherwise; only `enter` and the releases move the counts.
 * - `full()` (optional): whether a call asking now would be refused at once, every slot taken and the queue full;
 *   {@link asGuard} asks it. A bulkhead whose counts are kept elsewhere (a fleet's, in Redis: `RedisBulkhead`)
 *   answers by promise, from there; without it, `asGuard` compares `inFlight` and `queued` with the bounds.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import * as assert from 'assert'
 *
 * const bulkhead: Bulkhead.Bulkhead = Bulkhead.make({ maxConcurrent: 2, maxQueue: 10 })
 * assert.deepStrictEqual([bulkhead.inFlight, bulkhead.queued], [0, 0])
 * assert.strictEqual(bulkhead.full?.(), false)
 *
 * @category model
 * @since 1.0.0
 */
export interface Bulkhead {
  readonly maxConcurrent: number
  readonly maxQueue: number
  readonly inFlight: number
  readonly queued: number
  readonly enter: (signal?: AbortSignal) => Release | undefined | Promise<Release | undefined>
  readonly full?: (() => boolean | Promise<boolean>) | undefined
}

/**
 * Options of {@link make}: `maxConcurrent`, the calls in flight at most (a whole number >= 1), and `maxQueue`, the
 * calls waiting at most (a whole number >= 0; `0`: a call that finds every slot taken is refused at once).
 * `onEvent` is told `BulkheadQueued`, `BulkheadRefused` and `BulkheadAborted` (a queued call's signal aborted),
 * timed on `clock` (default `Clock.live`; the bulkhead reads it for nothing else).
 *
 * **Details**
 *
 * - `from`: a bulkhead of {@link make} that this one replaces (its bounds changed, as `Policies.reload` does), so
 *   that `maxConcurrent` holds for the old calls and the new together: the calls in flight in `from` count as
 *   taken here until they end, their slots then given back here (to this one's oldest waiter first); `from`'s
 *   waiters join this line in their order (a free slot first, then the queue; those past `maxQueue` are refused,
 *   as a new call would be); and every later call to `from` (`enter`, the counts) is made here. It takes over at
 *   its first use (`enter` or a count read), so that a bulkhead built and never used, as by a reload refused after
 *   it was built, leaves `from` as it was. Any other value is a `TypeError` naming it.
 *
 * @example
 * import type { BulkheadOptions } from 'fp-ts-retry/Bulkhead'
 *
 * const seen: Array<string> = []
 * const options: BulkheadOptions = { maxConcurrent: 10, maxQueue: 100, onEvent: (event) => void seen.push(event._tag) }
 *
 * @category model
 * @since 1.0.0
 */
export interface BulkheadOptions {
  readonly maxConcurrent: number
  readonly maxQueue: number
  readonly onEvent?: Observer | undefined
  readonly clock?: Clock | undefined
  readonly from?: Bulkhead | undefined
}

/**
 * What {@link protect} hands its `onRejected` when a call finds the bulkhead full: the bulkhead's bounds, to put in
 * an error. {@link asGuard} recognises it as the bulkhead's own refusal.
 *
 * @example
 * import type { BulkheadRejected } from 'fp-ts-retry/Bulkhead'
 *
 * const rejected: BulkheadRejected = { _tag: 'BulkheadRejected', maxConcurrent: 10, maxQueue: 100 }
 *
 * @category model
 * @since 1.0.0
 */
export interface BulkheadRejected {
  readonly _tag: 'BulkheadRejected'
  readonly maxConcurrent: number
  readonly maxQueue: number
}

// -------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------

/** A call waiting for a slot: a node of the line, so that one whose signal aborts leaves from anywhere in O(1). */
interface Waiter extends Linked<Waiter> {
  /** The bulkhead whose line it is in: the one that took over, once it has moved. */
  owner: Pool
  readonly resolve: (release: Release | undefined) => void
  unsubscribe: () => void
}

class Pool extends Successor<Pool> implements Bulkhead {
  /** The slots taken and the waiters: read through getters, so that no caller can write them. */
  private taken = 0
  private waiting = 0
  private readonly line = new Line<Waiter>()

  constructor(
    private readonly concurrency: number,
    private readonly queueSize: number,
    private readonly onEvent: Observer | undefined,
    private readonly clock: Clock
  ) {
    super()
  }

  get maxConcurrent(): number {
    return this.successor?.maxConcurrent ?? this.concurrency
  }

  get maxQueue(): number {
    return this.successor?.maxQueue ?? this.queueSize
  }

  get inFlight(): number {
    return this.successor?.inFlight ?? this.settled().taken
  }

  get queued(): number {
    return this.successor?.queued ?? this.settled().waiting
  }

  readonly full = (): boolean => isFull(this)

  /**
   * Takes `from` over: its slots count as taken here until they are given back (to this one), its waiters join
   * this line in order (those past this one's bounds are refused, as a new call would be), and every call to it
   * from now on is made here.
   */
  protected takeOver(from: Pool): void {
    this.taken = from.taken
    from.taken = 0
    from.successor = this
    from.waiting = 0
    for (const waiter of from.line.takeAll()) {
      waiter.owner = this
      if (this.taken < this.concurrency) {
        this.taken++
        waiter.unsubscribe()
        waiter.resolve(this.release())
      } else if (this.waiting < this.queueSize) this.join(waiter)
      else {
        waiter.unsubscribe()
        waiter.resolve(undefined)
        this.tell('BulkheadRefused')
      }
    }
  }

  /** Tells `onEvent`, which watches: an error it throws is reported (internal/observe), never thrown from here. */
  private tell(tag: BulkheadEvent['_tag'], queued = this.waiting): void {
    if (this.onEvent === undefined) return
    observe(this.onEvent, { _tag: tag, source: 'bulkhead', run: 0, at: this.clock.now(), inFlight: this.taken, queued })
  }

  private leave(waiter: Waiter): void {
    this.line.remove(waiter)
    this.waiting--
  }

  private join(waiter: Waiter): void {
    this.line.push(waiter)
    this.waiting++
  }

  private release(): Release {
    let released = false
    return () => {
      if (released) return
      released = true
      this.giveBack()
    }
  }

  /** A slot given back: to the bulkhead that took this one over, if any, else to the oldest waiter. */
  private giveBack(): void {
    if (this.successor !== undefined) return this.successor.giveBack()
    const waiter = this.line.head
    // over the bound (a bulkhead taken over with more calls in flight than it allows): the slot is not handed on
    if (waiter === undefined || this.taken > this.concurrency) {
      this.taken--
      return
    }
    // The slot goes to the oldest waiter as it is: nobody arriving meanwhile can take it first.
    this.leave(waiter)
    waiter.unsubscribe()
    waiter.resolve(this.release())
  }

  readonly enter = (signal?: AbortSignal): Release | undefined | Promise<Release | undefined> => {
    if (this.successor !== undefined) return this.successor.enter(signal)
    this.settled()
    if (signal?.aborted) return Promise.resolve(undefined)
    if (this.taken < this.concurrency) {
      this.taken++
      return this.release()
    }
    if (this.waiting >= this.queueSize) {
      this.tell('BulkheadRefused')
      return undefined
    }
    this.tell('BulkheadQueued', this.waiting + 1)
    return new Promise((resolve) => {
      const waiter: Waiter = { owner: this, resolve, unsubscribe: noop, prev: undefined, next: undefined }
      this.join(waiter)
      if (signal !== undefined)
        waiter.unsubscribe = onAbort(signal, () => {
          waiter.owner.leave(waiter)
          resolve(undefined)
          waiter.owner.tell('BulkheadAborted')
        })
    })
  }
}

/** What a call without a signal answers for an abort: it cannot abort. */
const unreachable = (): never => {
  throw new Error('Bulkhead: a call without a signal was aborted')
}

/** Every slot taken and the queue full: a call asking now is refused at once. */
const isFull = (bulkhead: Bulkhead): boolean =>
  bulkhead.inFlight >= bulkhead.maxConcurrent && bulkhead.queued >= bulkhead.maxQueue

const checked = (where: string, bulkhead: Bulkhead): Bulkhead =>
  validate.implementing(where, 'bulkhead', 'a Bulkhead', ['enter'], bulkhead)

/** Runs `start` in a slot of `bulkhead`, given back when it settles; the refusals become `Left`s. */
const inSlot = async <E1, E2, E3, A>(
  bulkhead: Bulkhead,
  onRejected: (rejected: BulkheadRejected) => E2,
  onAborted: (reason: unknown) => E3,
  signal: AbortSignal | undefined,
  start: () => Promise<Either<E1, A>>
): Promise<Either<E1 | E2 | E3, A>> => {
  const entered = bulkhead.enter(signal)
  const release = isPromise(entered) ? await entered : entered
  if (release === undefined) {
    if (signal?.aborted) return { _tag: 'Left', left: onAborted(signal.reason) }
    const { maxConcurrent, maxQueue } = bulkhead
    return { _tag: 'Left', left: onRejected({ _tag: 'BulkheadRejected', maxConcurrent, maxQueue }) }
  }
  try {
    return await start()
  } finally {
    release()
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A new bulkhead, empty.
 *
 * **Details**
 *
 * - `maxConcurrent` must be a whole number >= 1 and `maxQueue` a whole number >= 0: anything else is a
 *   `RangeError` naming it; `options` must be an object (`TypeError`).
 * - It counts calls, not time: its `clock` only times the events told to `onEvent`.
 * - `onEvent` is told `BulkheadQueued` when a call waits, `BulkheadRefused` when one is refused (the queue full),
 *   `BulkheadAborted` when a waiting call's signal aborts, with the counts just after. A call whose signal had
 *   aborted before it asked is told nothing: it never waited.
 * - `onEvent` observes, under the library's one rule (see the `Event` module): an error it throws is reported as a
 *   process warning (`ObserverWarning`) and the bulkhead goes on as if it had returned (the call is queued, refused
 *   or leaves the queue all the same).
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import * as assert from 'assert'
 *
 * const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
 * const release = bulkhead.enter() as Bulkhead.Release
 * assert.strictEqual(bulkhead.enter(), undefined) // full, and no queue
 * release()
 * assert.strictEqual(typeof bulkhead.enter(), 'function')
 * assert.throws(() => Bulkhead.make({ maxConcurrent: 0, maxQueue: 0 }), RangeError)
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (options: BulkheadOptions): Bulkhead => {
  const where = 'Bulkhead.make'
  validate.object(where, 'options', options)
  const maxConcurrent = validate.positiveCount(where, 'maxConcurrent', options.maxConcurrent)
  const maxQueue = validate.count(where, 'maxQueue', options.maxQueue)
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  validate.services(where, 'options', { clock: options.clock })
  const from = options.from
  if (from !== undefined && !(from instanceof Pool)) {
    throw new TypeError(`${where}: from must be a bulkhead made by Bulkhead.make, received ${showValue(from)}`)
  }
  const pool = new Pool(maxConcurrent, maxQueue, options.onEvent, options.clock ?? LiveClock.live)
  pool.pending = from
  return pool
}

/**
 * A bulkhead as a `Guard` of the runners (reason `'bulkhead'`): a retry is refused while the bulkhead is full
 * (every slot taken and the queue full, so that the retry would be refused too), and the run ends at once instead
 * of sleeping toward a refusal.
 *
 * **Details**
 *
 * - `options.refused(error)` (default: the error is a {@link BulkheadRejected}) says which failures are the
 *   bulkhead's own refusal: a run that such a failure ends (its schedule stops on it) stops with reason
 *   `'bulkhead'`. Give it when `onRejected` maps the rejection to an error of your own.
 * - It is told nothing and reads no time: the slots are taken by {@link protect} around the action. Its `allows`
 *   refuses a hedge while the bulkhead is full, likewise.
 * - Full is the bulkhead's `full()` when it has one, which a fleet's (`RedisBulkhead`) reads from Redis, by
 *   promise: the runners then await it. Without one, `inFlight` and `queued` are compared with the bounds.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import { retrying } from 'fp-ts-retry'
 * import type { StopReason } from 'fp-ts-retry/Retry'
 * import * as Schedule from 'fp-ts-retry/Schedule'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
 *   const hold = bulkhead.enter() as Bulkhead.Release // another caller holds the only slot
 *   const reasons: Array<StopReason> = []
 *   const run = pipe(
 *     TE.right<never, string>('ok'),
 *     Bulkhead.protect(bulkhead, (rejected) => rejected),
 *     retrying(pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3))), {
 *       clock,
 *       guards: [Bulkhead.asGuard(bulkhead)],
 *       onDone: ({ reason }) => void reasons.push(reason)
 *     })
 *   )()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await run, { _tag: 'Left', left: { _tag: 'BulkheadRejected', maxConcurrent: 1, maxQueue: 0 } })
 *   assert.deepStrictEqual(clock.sleeps, []) // no sleep toward a full bulkhead
 *   assert.deepStrictEqual(reasons, ['bulkhead'])
 *   hold()
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const asGuard = (
  bulkhead: Bulkhead,
  options: { readonly refused?: ((error: unknown) => boolean) | undefined } = {}
): Guard => {
  const where = 'Bulkhead.asGuard'
  checked(where, bulkhead)
  validate.object(where, 'options', options)
  const refused =
    options.refused === undefined ? isRejected : validate.callable(where, 'options.refused', options.refused)
  if (bulkhead.full !== undefined) validate.callable(where, 'bulkhead.full', bulkhead.full)
  const admits = (): boolean | Promise<boolean> => {
    const full = bulkhead.full?.() ?? isFull(bulkhead)
    return isPromise(full) ? full.then((f) => !f) : !full
  }
  return { reason: 'bulkhead', readsTime: false, admit: (o) => !o.retrying || admits(), allows: admits, refused }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Runs an action in a slot of the bulkhead: at once when one is free, after waiting in line when the queue has
 * room, else not at all: `Left(onRejected(rejected))`, at once.
 *
 * **Details**
 *
 * - The slot is given back when the action settles, whether it answers or rejects (a rejection propagates
 *   unchanged).
 * - A call waiting here cannot be cancelled: use {@link protectSignalled} for calls that may be aborted.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const bulkhead = Bulkhead.make({ maxConcurrent: 2, maxQueue: 0 })
 *   const call = pipe(TE.right('ok'), Bulkhead.protect(bulkhead, (r) => `full: ${r.maxConcurrent} in flight`))
 *   const hold = bulkhead.enter() as Bulkhead.Release
 *   assert.deepStrictEqual(await call(), { _tag: 'Right', right: 'ok' }) // one slot left
 *   const hold2 = bulkhead.enter() as Bulkhead.Release
 *   assert.deepStrictEqual(await call(), { _tag: 'Left', left: 'full: 2 in flight' })
 *   hold()
 *   hold2()
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const protect = <E2>(
  bulkhead: Bulkhead,
  onRejected: (rejected: BulkheadRejected) => E2
): (<E1, A>(action: TaskEither<E1, A>) => TaskEither<E1 | E2, A>) => {
  const where = 'Bulkhead.protect'
  checked(where, bulkhead)
  validate.callable(where, 'onRejected', onRejected)
  return (action) => () => inSlot(bulkhead, onRejected, unreachable, undefined, action)
}

/**
 * Like {@link protect}, for an action handed `{ signal }` (`Timeout.Signalled`, the one form of a signal-aware
 * action): the caller's signal, passed on. A call waiting for
 * a slot whose signal aborts leaves the line at once, `Left(onAborted(signal.reason))`, and the calls behind it
 * move up: an aborted waiter never holds a slot nor blocks the queue (cockatiel#112).
 *
 * **Details**
 *
 * - The result takes the caller's (optional): `pipe(action, protectSignalled(...))({ signal })` is a
 *   `TaskEither`. Without one, the action gets a signal that never aborts.
 * - A signal that has aborted already: `Left(onAborted(reason))` without taking a slot or running the action.
 * - Once the action runs, the signal is the action's business: the bulkhead waits for it to settle.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import type { Signalled } from 'fp-ts-retry/Timeout'
 * import * as TE from 'fp-ts/TaskEither'
 * import { pipe } from 'fp-ts/function'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 5 })
 *   const hold = bulkhead.enter() as Bulkhead.Release
 *   const call = pipe((_: Signalled) => TE.right('ok'), Bulkhead.protectSignalled(bulkhead, () => 'full', (reason) => `aborted: ${reason}`))
 *   const controller = new AbortController()
 *   const waiting = call({ signal: controller.signal })()
 *   const behind = call()()
 *   assert.strictEqual(bulkhead.queued, 2)
 *   controller.abort('cancelled')
 *   assert.deepStrictEqual(await waiting, { _tag: 'Left', left: 'aborted: cancelled' })
 *   assert.strictEqual(bulkhead.queued, 1) // left at once
 *   hold()
 *   assert.deepStrictEqual(await behind, { _tag: 'Right', right: 'ok' })
 * }
 * main()
 *
 * @category combinators
 * @since 1.0.0
 */
export const protectSignalled = <E2, E3>(
  bulkhead: Bulkhead,
  onRejected: (rejected: BulkheadRejected) => E2,
  onAborted: (reason: unknown) => E3
): (<E1, A>(
  action: (context: Signalled) => TaskEither<E1, A>
) => (context?: Partial<Signalled>) => TaskEither<E1 | E2 | E3, A>) => {
  const where = 'Bulkhead.protectSignalled'
  checked(where, bulkhead)
  validate.callable(where, 'onRejected', onRejected)
  validate.callable(where, 'onAborted', onAborted)
  return (action) => (context) => {
    const signal = context?.signal
    if (signal !== undefined)
      validate.implementing(where, 'signal', 'an AbortSignal', ['addEventListener', 'removeEventListener'], signal)
    return () =>
      inSlot(bulkhead, onRejected, onAborted, signal, () =>
        action({ signal: signal ?? new AbortController().signal })()
      )
  }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Whether `error` is a {@link BulkheadRejected}: the default `refused` of {@link asGuard}.
 *
 * @example
 * import * as Bulkhead from 'fp-ts-retry/Bulkhead'
 * import * as assert from 'assert'
 *
 * assert.strictEqual(Bulkhead.isRejected({ _tag: 'BulkheadRejected', maxConcurrent: 1, maxQueue: 0 }), true)
 * assert.strictEqual(Bulkhead.isRejected('timeout'), false)
 *
 * @category utils
 * @since 1.0.0
 */
export const isRejected = (error: unknown): error is BulkheadRejected =>
  error !== null && typeof error === 'object' && (error as { readonly _tag?: unknown })._tag === 'BulkheadRejected'
