/**
 * A breaker's store, from the breaker's side: what a well-formed answer of a store is (a store's answer is checked
 * before a breaker takes it), and `Breaker.memoryStore`, the reference store's state machine. Private to `Breaker`.
 *
 * @internal
 */
import type { Clock } from '../Clock'
import { counterOf, sameWindow, type Counter } from '../internal/counters'
import type { Tally, Window } from '../internal/model'
import * as validate from '../internal/validate'

// The store's wire types (`Breaker.StoredState`, `Transition`, `StoreAnswer`, `Store`, documented there), declared
// again here so that the implementation imports nothing of its public module (no cycle, not even of types);
// test/types.test.ts checks that they are the same types.

export type StoredState =
  | { readonly _tag: 'Closed'; readonly version: number; readonly tally?: Tally | undefined }
  | { readonly _tag: 'Open'; readonly version: number; readonly halfOpenIn: number | null }
  | { readonly _tag: 'HalfOpen'; readonly version: number; readonly probes: number; readonly successes: number }

export type Transition =
  | { readonly _tag: 'open'; readonly version: number; readonly wait: number | null }
  | { readonly _tag: 'enter'; readonly probes: number; readonly lease: number }
  | {
      readonly _tag: 'probed'
      readonly version: number
      readonly permit: string
      readonly ok: boolean
      readonly probes: number
      readonly wait: number | null
    }
  | { readonly _tag: 'isolate' }
  | { readonly _tag: 'reset' }
  | { readonly _tag: 'outcome'; readonly version: number; readonly ok: boolean; readonly window: Window }

export interface StoreAnswer {
  readonly state: StoredState
  readonly permit?: string | undefined
}

export interface Store {
  readonly read: () => StoredState | Promise<StoredState>
  readonly apply: (transition: Transition, timeout?: number) => StoreAnswer | Promise<StoreAnswer>
}

const isWait = (u: unknown): boolean => u === null || (validate.isFiniteNumber(u) && u >= 0)

const isTally = (u: unknown): u is Tally => {
  if (u === null || typeof u !== 'object') return false
  const { outcomes, failures } = u as Record<string, unknown>
  return validate.isCount(outcomes) && validate.isCount(failures) && failures <= outcomes
}

export const isStoredState = (u: unknown): u is StoredState => {
  if (u === null || typeof u !== 'object') return false
  const s = u as Record<string, unknown>
  if (!validate.isCount(s.version)) return false
  if (s._tag === 'Closed') return s.tally === undefined || isTally(s.tally)
  if (s._tag === 'Open') return isWait(s.halfOpenIn)
  return s._tag === 'HalfOpen' && validate.isCount(s.probes) && validate.isCount(s.successes)
}

export const isStoreAnswer = (u: unknown): u is StoreAnswer =>
  u !== null &&
  typeof u === 'object' &&
  isStoredState((u as StoreAnswer).state) &&
  ((u as StoreAnswer).permit === undefined || typeof (u as StoreAnswer).permit === 'string')

/** `Breaker.memoryStore`, its options checked: the store's state machine, on `clock`'s time. */
export const memory = (clock: Clock): Store => {
  let tag: StoredState['_tag'] = 'Closed'
  let version = 0
  /** When the open circuit lets a probe through (`null`: never). */
  let halfOpenAt: number | null = null
  let successes = 0
  let issued = 0
  /** The probe permits in flight, with the time each lease runs out. */
  let permits = new Map<string, number>()
  /** The closed period's outcomes, and the window they are counted by. */
  let counted: { readonly window: Window; readonly counter: Counter } | undefined
  const become = (to: StoredState['_tag'], at: number | null): void => {
    tag = to
    version++
    halfOpenAt = at
    successes = 0
    permits = new Map()
    counted = undefined
  }
  const view = (now: number): StoredState => {
    for (const [permit, until] of permits) if (until <= now) permits.delete(permit)
    if (tag === 'Closed')
      return { _tag: 'Closed', version, tally: counted?.counter.tally(now) ?? { outcomes: 0, failures: 0 } }
    if (tag === 'HalfOpen') return { _tag: 'HalfOpen', version, probes: permits.size, successes }
    return { _tag: 'Open', version, halfOpenIn: halfOpenAt === null ? null : Math.max(0, halfOpenAt - now) }
  }
  const after = (now: number, wait: number | null): number | null => (wait === null ? null : now + wait)
  return {
    read: () => view(clock.now()),
    apply: (transition) => {
      const now = clock.now()
      view(now) // gives up the expired leases
      let permit: string | undefined
      switch (transition._tag) {
        case 'open':
          if (version === transition.version && tag !== 'Open') become('Open', after(now, transition.wait))
          break
        case 'enter':
          if (tag === 'Open' && halfOpenAt !== null && now >= halfOpenAt) become('HalfOpen', null)
          if (tag === 'HalfOpen' && permits.size + successes < transition.probes) {
            permit = String(++issued)
            permits.set(permit, now + transition.lease)
          }
          break
        case 'probed':
          if (tag === 'HalfOpen' && version === transition.version && permits.delete(transition.permit)) {
            if (!transition.ok) become('Open', after(now, transition.wait))
            else if (++successes >= transition.probes) become('Closed', null)
          }
          break
        case 'isolate':
          // isolated already: nothing changes, not even the version
          if (tag !== 'Open' || halfOpenAt !== null) become('Open', null)
          break
        case 'reset':
          become('Closed', null)
          break
        case 'outcome':
          if (tag === 'Closed' && version === transition.version) {
            const { window } = transition
            if (counted === undefined || !sameWindow(counted.window, window))
              counted = { window, counter: counterOf(window) }
            counted.counter.record(!transition.ok, now)
          }
          break
      }
      return permit === undefined ? { state: view(now) } : { state: view(now), permit }
    }
  }
}
