/**
 * What the in-process guards that queue calls share (`Bulkhead.make`'s and `AdaptiveLimit.make`'s): their lines of
 * waiters, and how a guard built to replace another (its `from` option) takes it over.
 *
 * @internal
 */

/** A node of a {@link Line}: a waiter is its own node. */
export interface Linked<W> {
  prev: W | undefined
  next: W | undefined
}

/**
 * Waiters, oldest first: a doubly linked list whose nodes are the waiters, so that one leaves from anywhere (its
 * signal aborted, its deadline passed) in O(1), and joining allocates nothing.
 */
export class Line<W extends Linked<W>> {
  head: W | undefined = undefined
  tail: W | undefined = undefined

  /** Adds `waiter` at the back. */
  push(waiter: W): void {
    waiter.prev = this.tail
    waiter.next = undefined
    if (this.tail === undefined) this.head = waiter
    else this.tail.next = waiter
    this.tail = waiter
  }

  /** Takes `waiter` out, wherever it stands. */
  remove(waiter: W): void {
    if (waiter.prev === undefined) this.head = waiter.next
    else waiter.prev.next = waiter.next
    if (waiter.next === undefined) this.tail = waiter.prev
    else waiter.next.prev = waiter.prev
    waiter.prev = waiter.next = undefined
  }

  /** Empties the line: its waiters, oldest first. */
  takeAll(): Array<W> {
    const all: Array<W> = []
    for (let waiter = this.head; waiter !== undefined; waiter = waiter.next) all.push(waiter)
    this.head = this.tail = undefined
    return all
  }
}

/**
 * A guard that may replace another of its kind (new bounds, as `Policies.reload` makes) and take over its calls in
 * flight and its waiters: at its first use, so that one built and never used (a reload refused after it was built)
 * changes nothing. From then on the one replaced passes every call on to its {@link successor}.
 */
export abstract class Successor<T extends Successor<T>> {
  /** The guard that took this one over. */
  protected successor: T | undefined = undefined
  /** The guard this one is to take over at its first use. */
  pending: T | undefined = undefined

  /** Takes `from` over: its calls in flight, its waiters, and `from.successor` set to this one. */
  protected abstract takeOver(from: T): void

  /** This guard, once it has taken over the one it replaces (and that one what it replaced, first). */
  protected settled(): this {
    let from = this.pending
    if (from === undefined) return this
    this.pending = undefined
    from.settled()
    while (from.successor !== undefined) from = from.successor
    this.takeOver(from)
    return this
  }
}
