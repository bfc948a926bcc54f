/**
 * One 'abort' listener per `AbortSignal`, shared by every sleep and request waiting on it.
 *
 * A listener per waiter makes Node print `MaxListenersExceededWarning` once more than ten runs share one signal
 * (a batch cancelled together, a server's shutdown signal), although nothing leaks. Here the first waiter on a
 * signal adds one listener, which calls every waiter's callback; the last waiter to leave removes it.
 *
 * @internal
 */

/**
 * What waits on a signal: `aborted()` is called once when it aborts. One object waits once at a time; the runner's
 * sleeps are waiters themselves, so that a sleep on a signal holds no closure for it.
 */
export interface Waiter {
  readonly aborted: () => void
}

/**
 * The waiters of one signal, and the one listener that calls them. The
 * first waiter is kept apart: most signals have one (a request's), and a `Set` for one weighs more than the rest.
 */
class Entry {
  /** The oldest waiter, while `more` is empty when it comes; the others, in the order they came. */
  first: Waiter | undefined = undefined
  more: Set<Waiter> | undefined = undefined

  /**
   * What the signal calls: the entry itself where the signal is an `EventTarget` (an `EventListener` object, no
   * closure), a function for the signals of polyfills built on an `EventEmitter`, which take nothing else.
   */
  readonly listener: Parameters<AbortSignal['addEventListener']>[1]

  constructor(readonly signal: AbortSignal) {
    this.listener = signal instanceof EventTarget ? this : () => this.handleEvent()
  }

  add(waiter: Waiter): void {
    if (this.first === undefined && (this.more === undefined || this.more.size === 0)) this.first = waiter
    else (this.more ??= new Set()).add(waiter)
  }

  /** Takes `waiter` off; answers whether none is left. */
  delete(waiter: Waiter): boolean {
    if (this.first === waiter) this.first = undefined
    else this.more?.delete(waiter)
    return this.first === undefined && (this.more === undefined || this.more.size === 0)
  }

  handleEvent(): void {
    const errors: Array<unknown> = []
    // A waiter that unsubscribes itself (or another) while this runs is fine: `first` is read when its turn comes,
    // and a Set's iteration skips deleted members. Every waiter runs even if one throws, as separate listeners
    // would; the errors are rethrown after.
    const call = (waiter: Waiter): void => {
      try {
        waiter.aborted()
      } catch (e) {
        errors.push(e)
      }
    }
    const first = this.first
    this.first = undefined
    if (first !== undefined) call(first)
    if (this.more !== undefined) {
      for (const waiter of this.more) call(waiter)
      this.more.clear()
    }
    // The signal aborts once: it is forgotten (a waiter that comes now finds it aborted and registers nothing).
    if (entries.get(this.signal) === this) entries.delete(this.signal)
    if (errors.length === 1) throw errors[0]
    if (errors.length > 1) throw new AggregateError(errors, 'onAbort: several abort callbacks threw')
  }
}

/** Does nothing: the unsubscribe of a registration that registered nothing. */
export const noop = (): void => undefined

const entries = new WeakMap<AbortSignal, Entry>()

/**
 * Calls `waiter.aborted()` once when `signal` aborts, as {@link onAbort} calls its callback (same contract); take it
 * off with {@link unsubscribe}.
 */
export const subscribe = (signal: AbortSignal, waiter: Waiter): void => {
  // Nothing to wait for, and nothing to leave behind: a listener added now would never run nor be removed.
  if (signal.aborted) return
  let entry = entries.get(signal)
  if (entry === undefined) {
    entry = new Entry(signal)
    entries.set(signal, entry)
    signal.addEventListener('abort', entry.listener, { once: true })
  }
  entry.add(waiter)
}

/** Takes `waiter` off `signal`: idempotent, and a no-op once it has been called. */
export const unsubscribe = (signal: AbortSignal, waiter: Waiter): void => {
  const entry = entries.get(signal)
  // The last one left: take the listener off (a signal that has fired has no entry: its listener is gone).
  if (entry !== undefined && entry.delete(waiter)) {
    entries.delete(signal)
    signal.removeEventListener('abort', entry.listener)
  }
}

/**
 * Calls `callback` once when `signal` aborts; returns a function that unsubscribes it.
 *
 * Contract:
 *
 * - Callbacks run in the order they were registered, all at once, when the signal's one listener runs (so
 *   relative to listeners added with `addEventListener` directly, they run where the first of them was added).
 * - A callback registered on a signal that has already aborted is never called (the event has been dispatched)
 *   and nothing is registered. Callers check `signal.aborted` first and act at once instead.
 * - Unsubscribing is idempotent, and a no-op once the callback has run. Unsubscribing the last callback of a
 *   signal removes the signal's listener, so a signal that outlives its waiters keeps nothing of them.
 * - If callbacks throw, the others still run; the error (an `AggregateError` for several) is thrown from the
 *   listener, where Node reports an error thrown by any 'abort' listener.
 */
export const onAbort = (signal: AbortSignal, callback: () => void): (() => void) => {
  if (signal.aborted) return noop
  // A registration of its own: one function registered twice is two registrations.
  const waiter: Waiter = { aborted: callback }
  subscribe(signal, waiter)
  return () => unsubscribe(signal, waiter)
}
