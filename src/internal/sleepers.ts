/**
 * The clocks' sleeps as the runner takes them: a queue that wakes a run with no promise of its own. The live clocks'
 * is one timer per clock behind a heap of small objects; a `TestClock` is its own.
 *
 * @internal
 */
import { subscribe, unsubscribe, type Waiter } from './abort'
import * as validate from './validate'

/** Node's and browsers' `setTimeout` fire after 1 ms for any delay above this (a signed 32-bit overflow). */
const MAX_TIMER = 2 ** 31 - 1

const origin = performance.timeOrigin

/** The live clocks' time: a monotonic clock anchored to the epoch. */
export const now = (): number => origin + performance.now()

/** What a sleep wakes: the runner's run itself, or a promise's `resolve`. */
export interface Wakeable {
  readonly wake: () => void
}

/**
 * A clock's sleeps, as the runner sleeps on them: its backoffs, each waking the run itself (no promise, no closure).
 * The runner uses the queue only while the clock's `sleep` is the queue's `promised` (not replaced by a spy or a
 * wrapper): both record and wake the same sleeps.
 */
export interface Sleepers {
  /**
   * Wakes `waker` once `ms` have passed on the clock, or as soon as `signal` aborts: a backoff. The caller has
   * checked that `ms` > 0 and that `signal` has not aborted. A waker must not throw.
   */
  readonly sleep: (ms: number, signal: AbortSignal | undefined, waker: Wakeable | (() => void)) => void
  /** The `sleep` of the clock on this queue. */
  readonly promised: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** A sleep waiting in a {@link Sleepers} queue. */
class Sleeper {
  /** Where it is in the queue's heap; -1 once out of it. */
  index = -1
  constructor(readonly deadline: number, readonly seq: number, readonly waker: Wakeable | (() => void)) {}

  wake(): void {
    const { waker } = this
    // A promise's resolve lets its continuation run as a job; a run is woken in a job of its own too, so that the
    // sleeps due in one timer turn go on in deadline order, whichever kind they are.
    if (typeof waker === 'function') waker()
    else queueMicrotask(() => waker.wake())
  }
}

/** A sleep that a signal may end: it waits on the signal itself (no closure for it). */
class SignalledSleeper extends Sleeper implements Waiter {
  constructor(
    deadline: number,
    seq: number,
    waker: Wakeable | (() => void),
    private readonly queue: TimerSleepers,
    private readonly signal: AbortSignal
  ) {
    super(deadline, seq, waker)
  }

  aborted(): void {
    this.queue.cancel(this)
  }

  wake(): void {
    unsubscribe(this.signal, this)
    super.wake()
  }
}

const before = (a: Sleeper, b: Sleeper): boolean =>
  a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq)

/**
 * The pending sleeps of one clock, earliest deadline first (a binary heap), behind one timer.
 *
 * Why not a timer per sleep: a Node timer weighs about 120 bytes, and a service in an outage holds one sleep per
 * request in flight. Here a sleep is one small object; the one timer is armed for the earliest deadline, and
 * whatever is due when it fires is woken, in deadline order (then in the order the sleeps began). The runner
 * hands itself in as what to wake, so that a run waiting out its backoff holds no promise for its sleep.
 */
export class TimerSleepers implements Sleepers {
  private readonly heap: Array<Sleeper> = []
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  /** The deadline the timer is armed for; Infinity when none is. */
  private armedFor = Infinity
  private seq = 0

  constructor(private readonly unref: boolean) {}

  /**
   * Wakes `waker` once `ms` have passed, or as soon as `signal` aborts. The caller has checked that `ms` > 0 and
   * that `signal` has not aborted. A waker must not throw: it would stop the others due at the same time.
   */
  sleep(ms: number, signal: AbortSignal | undefined, waker: Wakeable | (() => void)): void {
    const deadline = now() + ms
    let sleeper: Sleeper
    if (signal === undefined) sleeper = new Sleeper(deadline, this.seq++, waker)
    else {
      const signalled = new SignalledSleeper(deadline, this.seq++, waker, this, signal)
      // One listener per signal, however many sleeps share it (see internal/abort).
      subscribe(signal, signalled)
      sleeper = signalled
    }
    sleeper.index = this.heap.length
    this.heap.push(sleeper)
    this.up(sleeper.index)
    if (sleeper.deadline < this.armedFor) this.arm()
  }

  /** Ends a sleep before its deadline (an abort); nothing if it has ended. */
  cancel(sleeper: Sleeper): void {
    if (sleeper.index < 0) return
    this.remove(sleeper.index)
    // The last one gone: nothing is left to keep the process alive. Otherwise an early timer only re-arms.
    if (this.heap.length === 0) this.disarm()
    sleeper.wake()
  }

  /** The timer's callback: wakes what is due, re-arms for the rest. */
  private readonly fire = (): void => {
    this.timer = undefined
    this.armedFor = Infinity
    const { heap } = this
    const t = now()
    // A timer may fire a fraction of a millisecond early: what is not due by now() waits for the next one.
    while (heap.length > 0 && heap[0].deadline <= t) {
      const sleeper = heap[0]
      this.remove(0)
      sleeper.wake()
    }
    if (heap.length > 0) this.arm()
  }

  /** Arms the timer for the earliest deadline, in pieces of at most `MAX_TIMER`. */
  private arm(): void {
    this.disarm()
    const deadline = this.heap[0].deadline
    const wait = Math.min(Math.max(1, Math.ceil(deadline - now())), MAX_TIMER)
    this.armedFor = wait === MAX_TIMER ? now() + MAX_TIMER : deadline
    const timer = setTimeout(this.fire, wait)
    // Node's timers have unref; a browser's are numbers, which cannot keep anything alive anyway.
    if (this.unref && typeof timer === 'object' && typeof timer.unref === 'function') timer.unref()
    this.timer = timer
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.armedFor = Infinity
  }

  private remove(i: number): void {
    const { heap } = this
    const removed = heap[i]
    removed.index = -1
    const last = heap.pop() as Sleeper
    if (i === heap.length) return
    heap[i] = last
    last.index = i
    this.down(i)
    this.up(last.index)
  }

  private up(i: number): void {
    const { heap } = this
    const sleeper = heap[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(sleeper, heap[parent])) break
      heap[i] = heap[parent]
      heap[i].index = i
      i = parent
    }
    heap[i] = sleeper
    sleeper.index = i
  }

  private down(i: number): void {
    const { heap } = this
    const sleeper = heap[i]
    const n = heap.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const child = left + 1 < n && before(heap[left + 1], heap[left]) ? left + 1 : left
      if (!before(heap[child], sleeper)) break
      heap[i] = heap[child]
      heap[i].index = i
      i = child
    }
    heap[i] = sleeper
    sleeper.index = i
  }

  /** The `sleep` of a `Clock` on this queue. */
  readonly promised = (ms: number, signal?: AbortSignal): Promise<void> => {
    validate.duration('Clock.sleep', 'ms', ms)
    if (ms === 0 || signal?.aborted) return Promise.resolve()
    return new Promise<void>((resolve) => this.sleep(ms, signal, resolve))
  }
}

/** The queue behind each clock that has one (the live clocks, every `TestClock`): the runner sleeps on it directly. */
const queues = new WeakMap<object, Sleepers>()

/** A clock whose sleeps are `sleepers`'s. */
export const clockOn = <C extends object>(clock: C, sleepers: Sleepers): C => {
  queues.set(clock, sleepers)
  return clock
}

/** The queue behind `clock`, when it has one. */
export const sleepersOf = (clock: object): Sleepers | undefined => queues.get(clock)
