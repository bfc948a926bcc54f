/**
 * The retry-storm setup of seed 003, for real: three HTTP services on loopback, A calls B calls C, and C always
 * answers 503. Every caller (the edge client calling A, A calling B, B calling C) retries with
 * `Http.retryingFetch(Schedule.recurs(retries))`, zero delays, optionally with a retry budget of its own.
 * Each service counts the calls that reach it; the counts are deterministic when requests go one at a time.
 *
 * Used by test/amplification.test.ts (which asserts the counts) and bench/amplification.ts (which reports them).
 */
import type { RetryBudget } from '../../src/Budget'
import * as Http from '../../src/Http'
import * as Schedule from '../../src/Schedule'
import { startServer, type TestServer } from './http'

export interface ChainOptions {
  /** How many times each caller retries (attempts = retries + 1). */
  readonly retries: number
  /** A fresh budget for each of the three callers (the edge client, A, B), or none. */
  readonly budget?: () => RetryBudget
}

export interface Calls {
  readonly a: number
  readonly b: number
  readonly c: number
}

export interface Chain {
  /** One request of the edge client to A (with the client's retries); resolves to the status it finally got. */
  readonly request: () => Promise<number>
  /** The calls that have reached each service so far. */
  readonly calls: () => Calls
  readonly close: () => Promise<void>
}

/** A service that, for each request, calls `downstream` and answers 200 if it succeeded, 503 if not. */
const relay = (
  name: string,
  downstream: (() => Promise<boolean>) | undefined,
  count: () => void
): Promise<TestServer> =>
  startServer((_, res) => {
    count()
    if (downstream === undefined) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end(`${name}: unavailable`)
      return
    }
    downstream().then(
      (ok) =>
        res
          .writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' })
          .end(`${name}: ${ok ? 'ok' : 'upstream failed'}`),
      () => res.writeHead(500).end(`${name}: defect`)
    )
  })

/** A caller: one logical call to `url`, retried; true if it finally got a success. Every body is released. */
const caller = (options: ChainOptions, url: () => string): (() => Promise<boolean>) => {
  const fetchWithRetries = Http.retryingFetch(Schedule.recurs(options.retries), { budget: options.budget?.() })
  return async () => {
    const result = await fetchWithRetries(url())()
    if (result._tag === 'Right') {
      await result.right.arrayBuffer()
      return true
    }
    await Http.discardBody(result.left)
    return false
  }
}

export const startChain = async (options: ChainOptions): Promise<Chain> => {
  const calls = { a: 0, b: 0, c: 0 }
  const c = await relay('C', undefined, () => calls.c++)
  const b = await relay(
    'B',
    caller(options, () => `${c.url}/`),
    () => calls.b++
  )
  const a = await relay(
    'A',
    caller(options, () => `${b.url}/`),
    () => calls.a++
  )
  const edge = Http.retryingFetch(Schedule.recurs(options.retries), { budget: options.budget?.() })
  return {
    request: async () => {
      const result = await edge(`${a.url}/`)()
      if (result._tag === 'Right') {
        await result.right.arrayBuffer()
        return result.right.status
      }
      await Http.discardBody(result.left)
      return result.left._tag === 'StatusError' ? result.left.status : 0
    },
    calls: () => ({ ...calls }),
    close: async () => {
      await Promise.all([a.close(), b.close(), c.close()])
    }
  }
}
