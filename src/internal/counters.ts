/**
 * The windows of a circuit breaker's policies: how the outcomes of one closed period are counted, by a breaker in
 * its process and by `Breaker.memoryStore` for a fleet (`RedisBreaker`'s script keeps the same buckets).
 *
 * @internal
 */
import type { Tally, Window } from './model'

/** Counts the outcomes of one closed period, as a window keeps them: a breaker's own, and `memoryStore`'s. */
export interface Counter {
  readonly record: (failed: boolean, now: number) => void
  readonly tally: (now: number) => Tally
  readonly reset: () => void
}

/**
 * A breaker's own count, which can hand what it holds to another (a breaker that replaces it): `replay` records its
 * outcomes, oldest first, into `into`, with their times where it keeps them (else `now`).
 */
export interface Replayable extends Counter {
  readonly replay: (now: number, into: Counter) => void
}

/** The failures in a row. */
export const inARow = (): Replayable => {
  let failures = 0
  return {
    record: (failed) => void (failures = failed ? failures + 1 : 0),
    tally: () => ({ outcomes: failures, failures }),
    reset: () => void (failures = 0),
    replay: (now, into) => {
      for (let i = 0; i < failures; i++) into.record(true, now)
    }
  }
}

/** The last `size` outcomes, in a ring (1 a failure), the oldest at `next` once it is full. */
export const lastCalls = (size: number): Replayable => {
  const ring = new Uint8Array(size)
  let next = 0
  let calls = 0
  let failures = 0
  return {
    record: (failed) => {
      const bit = failed ? 1 : 0
      if (calls === size) failures -= ring[next]
      else calls++
      ring[next] = bit
      failures += bit
      next = next + 1 === size ? 0 : next + 1
    },
    tally: () => ({ outcomes: calls, failures }),
    reset: () => {
      ring.fill(0)
      next = calls = failures = 0
    },
    replay: (now, into) => {
      // the oldest is at `next` once the ring is full, at 0 before
      const start = calls === size ? next : 0
      for (let i = 0; i < calls; i++) into.record(ring[(start + i) % size] === 1, now)
    }
  }
}

/** The outcomes of the last `window` ms exactly: each kept with its time until it leaves the window. */
export const lastMs = (window: number): Replayable => {
  // The outcomes in the window, oldest first, from `head` on.
  let times: Array<number> = []
  let failed: Array<boolean> = []
  let head = 0
  let failures = 0
  const expire = (now: number): void => {
    const cutoff = now - window
    while (head < times.length && times[head] <= cutoff) {
      if (failed[head]) failures--
      head++
    }
    // Compact now and then, so that the arrays hold about the window's outcomes and no more.
    if (head > 1024 && head * 2 > times.length) {
      times = times.slice(head)
      failed = failed.slice(head)
      head = 0
    }
  }
  return {
    record: (isFailure, now) => {
      expire(now)
      times.push(now)
      failed.push(isFailure)
      if (isFailure) failures++
    },
    tally: (now) => {
      expire(now)
      return { outcomes: times.length - head, failures }
    },
    reset: () => {
      times = []
      failed = []
      head = 0
      failures = 0
    },
    replay: (now, into) => {
      expire(now)
      for (let i = head; i < times.length; i++) into.record(failed[i], times[i])
    }
  }
}

/** The outcomes of the last `duration` ms in `count` buckets, as a store keeps the fleet's (see `Breaker.Window`). */
export const inBuckets = (duration: number, count: number): Counter => {
  // the same arithmetic as RedisBreaker's script, so that both put an outcome in the same bucket
  const width = duration / count
  /** Bucket number -> [outcomes, failures]. */
  const buckets = new Map<number, [number, number]>()
  return {
    record: (failed, now) => {
      const i = Math.floor(now / width)
      const bucket = buckets.get(i) ?? [0, 0]
      bucket[0]++
      if (failed) bucket[1]++
      buckets.set(i, bucket)
    },
    tally: (now) => {
      const gone = Math.floor(now / width) - count
      let outcomes = 0
      let failures = 0
      for (const [i, [o, f]] of buckets) {
        if (i <= gone) {
          buckets.delete(i)
        } else {
          outcomes += o
          failures += f
        }
      }
      return { outcomes, failures }
    },
    reset: () => buckets.clear()
  }
}

/** How a store counts the outcomes of `window`. */
export const counterOf = (window: Window): Counter =>
  window._tag === 'consecutive'
    ? inARow()
    : window._tag === 'count'
    ? lastCalls(window.size)
    : inBuckets(window.duration, window.buckets)

/** Two windows that count alike. */
export const sameWindow = (a: Window, b: Window): boolean =>
  a._tag === 'consecutive'
    ? b._tag === 'consecutive'
    : a._tag === 'count'
    ? b._tag === 'count' && a.size === b.size
    : b._tag === 'sampling' && a.duration === b.duration && a.buckets === b.buckets
