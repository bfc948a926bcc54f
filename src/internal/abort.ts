/**
 * One 'abort' listener per `AbortSignal`, shared by every sleep and request waiting on it.
 *
 * A listener per waiter makes Node print `MaxListenersExceededWarning` once more than ten runs share one signal
 * (a batch cancelled together, a server's shutdown signal), although nothing leaks. Here the first waiter on a
 * signal adds one listener, which calls every waiter's callback; the last waiter to leave removes it.
 *
 * @internal
 */

/** The waiters of one signal and the one listener that calls them. */
interface Entry {
  readonly callbacks: Set<Registration>
  readonly listener: () => void
}

/** One call of {@link onAbort}: a wrapper, so that one function registered twice is two registrations. */
interface Registration {
  readonly callback: () => void
}

/** Does nothing: the unsubscribe of a registration that registered nothing. */
export const noop = (): void => undefined

const entries = new WeakMap<AbortSignal, Entry>()

const fanOut = (signal: AbortSignal, callbacks: Set<Registration>): void => {
  // The signal aborts once: forget it, so that a waiter that registers from here on starts afresh.
  if (entries.get(signal)?.callbacks === callbacks) entries.delete(signal)
  const errors: Array<unknown> = []
  // A callback that unsubscribes itself (or another) while this runs is fine: a Set's iteration skips deleted
  // members. Every callback runs even if one throws, as separate listeners would; the errors are rethrown after.
  for (const registration of callbacks) {
    try {
      registration.callback()
    } catch (e) {
      errors.push(e)
    }
  }
  callbacks.clear()
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, 'onAbort: several abort callbacks threw')
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
  // Nothing to wait for, and nothing to leave behind: a listener added now would never run nor be removed.
  if (signal.aborted) return noop
  let entry = entries.get(signal)
  if (entry === undefined) {
    const callbacks = new Set<Registration>()
    const listener = (): void => fanOut(signal, callbacks)
    entry = { callbacks, listener }
    entries.set(signal, entry)
    signal.addEventListener('abort', listener, { once: true })
  }
  const { callbacks, listener } = entry
  const registration: Registration = { callback }
  callbacks.add(registration)
  return () => {
    if (!callbacks.delete(registration) || callbacks.size > 0) return
    // The last one left: take the listener off, unless the signal has fired (the listener is already gone).
    if (entries.get(signal)?.callbacks === callbacks) {
      entries.delete(signal)
      signal.removeEventListener('abort', listener)
    }
  }
}
