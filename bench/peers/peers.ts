/**
 * The peers, loaded once, and the actions every library retries.
 *
 * Fairness rules followed by every scenario:
 * - one action per library, doing the same thing: a promise that settles at once, failing the first `failures`
 *   calls of each run. fp-ts libraries get a `TaskEither` (resolves a `Left`/`Right`); throw-based libraries
 *   (p-retry, cockatiel, exponential-backoff) get a function whose promise rejects; Effect gets that function
 *   through `Effect.tryPromise`, the documented way to bring a promise into Effect.
 * - the error is allocated once: a `new Error` per failure would spend ~1 µs capturing a stack and hide
 *   every library's own cost behind it.
 * - every policy, program or wrapper is built once, outside the timed function, as an application would.
 */
import type { Either } from 'fp-ts/Either'

// The ESM peers (effect 4, p-retry 7; cockatiel is loaded the same way) come by a dynamic import into this CommonJS
// module; their types from the same specifiers. cockatiel 3 and p-retry 7 are the newest that support Node 20 (4 and
// 8 ask for Node 22: npm ci would warn EBADENGINE on the Node this project supports).
export type Effect4 = typeof import('effect4', { with: { 'resolution-mode': 'import' } })
export type Effect4Testing = typeof import('effect4/testing', { with: { 'resolution-mode': 'import' } })
export type Cockatiel = typeof import('cockatiel', { with: { 'resolution-mode': 'import' } })
export type PRetry = (typeof import('p-retry', { with: { 'resolution-mode': 'import' } }))['default']

export interface Peers {
  /** `undefined` when the library failed to load on this Node (see `failed`). */
  readonly effect4: { readonly core: Effect4; readonly testing: Effect4Testing } | undefined
  readonly cockatiel: Cockatiel | undefined
  readonly pRetry: PRetry | undefined
  /** Libraries that failed to load on this Node, with the error: reported, never silently dropped. */
  readonly failed: ReadonlyArray<string>
}

/** Loads the ESM-only peers. */
export const loadPeers = async (): Promise<Peers> => {
  const failed: Array<string> = []
  const load = async <A>(name: string, f: () => Promise<A>): Promise<A | undefined> => {
    try {
      return await f()
    } catch (e) {
      failed.push(`${name}: ${String(e)}`)
      return undefined
    }
  }
  const [core, testing, cockatiel, pRetry] = await Promise.all([
    load('effect4', () => import('effect4')),
    load('effect4/testing', () => import('effect4/testing')),
    load('cockatiel', () => import('cockatiel')),
    load('p-retry', () => import('p-retry').then((m) => m.default))
  ])
  return {
    effect4: core !== undefined && testing !== undefined ? { core, testing } : undefined,
    cockatiel,
    pRetry,
    failed
  }
}

/** Why a peer is missing from a scenario. */
export const notLoaded = (name: string, peers: Peers): string =>
  `failed to load on Node ${process.version}: ${peers.failed.find((f) => f.startsWith(name)) ?? 'unknown error'}`

/** The one error every failing attempt reports (allocated once: see above). */
export const failure = new Error('transient')

const left: Either<Error, number> = { _tag: 'Left', left: failure }
const right: Either<Error, number> = { _tag: 'Right', right: 1 }

/**
 * An action that fails its first `failures` calls after each `reset()`, then succeeds; one per library, so
 * that no two libraries share a counter.
 */
export interface Flaky {
  readonly reset: () => void
  /** fp-ts style: always resolves, with a `Left` while failing. */
  readonly either: () => Promise<Either<Error, number>>
  /** Promise style: rejects with `failure` while failing. */
  readonly throwing: () => Promise<number>
  /** Attempts made since the last reset. */
  readonly calls: () => number
}

/** A call to make once, at attempt `at` of each run (to read the heap in the middle of a long run). */
export interface Probe {
  readonly at: number
  readonly fn: () => void
}

export const flaky = (failures: number, probe?: Probe): Flaky => {
  let n = 0
  const reset = (): void => {
    n = 0
  }
  const calls = (): number => n
  if (probe !== undefined) {
    const count = (): number => {
      if (++n === probe.at) probe.fn()
      return n
    }
    return {
      reset,
      either: () => Promise.resolve(count() <= failures ? left : right),
      throwing: () => (count() <= failures ? Promise.reject(failure) : Promise.resolve(1)),
      calls
    }
  }
  return {
    reset,
    either: () => Promise.resolve(n++ < failures ? left : right),
    throwing: () => (n++ < failures ? Promise.reject(failure) : Promise.resolve(1)),
    calls
  }
}

/** Throws unless a run's result is what the scenario expects: a benchmark of a wrong answer is worthless. */
export const expectRight = (name: string, value: unknown): void => {
  const ok =
    value === 1 ||
    (typeof value === 'object' && value !== null && (value as { _tag?: unknown })._tag === 'Right')
  if (!ok) throw new Error(`${name}: expected a success, got ${String(value)}`)
}
