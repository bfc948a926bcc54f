/**
 * Reference models of the window rate limiters, written the plain way (every grant kept, each answer found by
 * scanning them), and a generator of calls to drive a limiter and its model side by side on a clock.
 */
import * as fc from 'fast-check'
import type * as RateLimiter from '../../src/RateLimiter'

/** A model: given the times of the tokens granted so far (in order), when the next token may go at `t`. */
export type Model = (granted: ReadonlyArray<number>, t: number, limit: number, window: number) => number

/** `RateLimiter.fixedWindow`: the first time from `t` on, after the last token, in a window with fewer than `limit`. */
export const fixedWindowModel: Model = (granted, t, limit, window) => {
  let at = Math.max(t, ...granted)
  const inWindowOf = (x: number): number =>
    granted.filter((g) => Math.floor(g / window) === Math.floor(x / window)).length
  while (inWindowOf(at) >= limit) at = (Math.floor(at / window) + 1) * window
  return at
}

/** `RateLimiter.slidingWindow`: the first time from `t` on, after the last token, with fewer than `limit` in `(at - window, at]`. */
export const slidingWindowModel: Model = (granted, t, limit, window) => {
  let at = Math.max(t, ...granted)
  for (;;) {
    const inWindow = granted.filter((g) => g > at - window && g <= at)
    if (inWindow.length < limit) return at
    at = Math.min(...inWindow) + window
  }
}

/** A call: after `dt` ms, a take, a reservation, or the cancel of a reservation (`index`: 0 the last one made, 1 the one before...) if it still waits. */
export type Call =
  | { readonly _tag: 'take'; readonly dt: number }
  | { readonly _tag: 'reserve'; readonly dt: number }
  | { readonly _tag: 'cancel'; readonly dt: number; readonly index: number }

export const callArbitrary = (maxDt: number): fc.Arbitrary<Call> =>
  fc.oneof(
    fc.record({ _tag: fc.constant('take' as const), dt: fc.nat(maxDt) }),
    fc.record({ _tag: fc.constant('reserve' as const), dt: fc.nat(maxDt) }),
    fc.record({ _tag: fc.constant('cancel' as const), dt: fc.nat(maxDt), index: fc.nat(4) })
  )

/**
 * Runs `calls` on `limiter` (made on a clock whose time `advance` moves on and answers) and on `model` side by side,
 * asserting through `equal` that they answer alike: the same takes, the same waits. A cancel comes while its
 * reservation waits (a caller that gave up); its token is given back when it is the last in the log (the limiters'
 * rule: only the last change is undone), else it is lost. Answers the times of the tokens granted and not
 * cancelled, in the order they were asked for.
 */
export const simulate = async (
  limiter: RateLimiter.RateLimiter,
  advance: (ms: number) => number | Promise<number>,
  model: Model,
  limit: number,
  window: number,
  calls: ReadonlyArray<Call>,
  equal: (actual: unknown, expected: unknown, what: string) => void
): Promise<ReadonlyArray<number>> => {
  const log: Array<{ readonly at: number; cancelled: boolean }> = []
  const reservations: Array<{ readonly entry: (typeof log)[number]; readonly cancel: () => unknown }> = []
  for (const call of calls) {
    const t = await advance(call.dt)
    const at = model(
      log.map((e) => e.at),
      t,
      limit,
      window
    )
    if (call._tag === 'take') {
      equal(await limiter.take(), at === t, `a take at ${t}`)
      if (at === t) log.push({ at, cancelled: false })
    } else if (call._tag === 'reserve') {
      const { wait, cancel } = await limiter.reserve()
      equal(wait, at - t, `the wait of a reservation at ${t}`)
      const entry = { at, cancelled: false }
      log.push(entry)
      reservations.push({ entry, cancel })
    } else {
      const r = reservations[reservations.length - 1 - call.index]
      if (r === undefined || r.entry.at <= t) continue
      await r.cancel()
      if (r.entry.cancelled) continue
      r.entry.cancelled = true
      if (log[log.length - 1] === r.entry) log.pop()
    }
  }
  return log.filter((e) => !e.cancelled).map((e) => e.at)
}

/** Times in ascending order. */
const ascending = (times: ReadonlyArray<number>): ReadonlyArray<number> => [...times].sort((a, b) => a - b)

/** Whether each time is at or after the one before: no token went before one asked for earlier. */
export const inOrder = (times: ReadonlyArray<number>): boolean => times.every((t, i) => i === 0 || t >= times[i - 1])

/** The most tokens in one window `[k * window, (k + 1) * window)` of a fixed-window limiter. */
export const mostInAWindow = (times: ReadonlyArray<number>, window: number): number => {
  const counts = new Map<number, number>()
  for (const t of times) counts.set(Math.floor(t / window), (counts.get(Math.floor(t / window)) ?? 0) + 1)
  return Math.max(0, ...counts.values())
}

/** The most tokens in any `ms` ms, wherever they start (a window `[a, a + ms)`). */
export const mostInAny = (times: ReadonlyArray<number>, ms: number): number => {
  const sorted = ascending(times)
  let most = 0
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= ms) i++
    most = Math.max(most, j - i + 1)
  }
  return most
}
