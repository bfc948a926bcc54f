/**
 * Seed 003's retry storm, measured on real HTTP services on loopback: the edge client calls A, A calls B, B calls
 * C, every caller retries 3 times (4 attempts), and C always answers 503. These are counts of calls, not times, and
 * they are exact when requests go one at a time. bench/amplification.ts reports the same figures over 100 requests.
 */
import * as Budget from '../src/Budget'
import { startChain, type Calls } from './support/chain'
import { deepStrictEqual, strictEqual } from './util'

/** Sends `requests` requests to A, one at a time; returns the calls that reached each service. */
const measure = async (requests: number, budget?: () => Budget.RetryBudget): Promise<Calls> => {
  const chain = await startChain({ retries: 3, budget })
  try {
    for (let i = 0; i < requests; i++) strictEqual(await chain.request(), 503)
    return chain.calls()
  } finally {
    await chain.close()
  }
}

describe('retry amplification through a chain of three services', () => {
  it('should multiply without budgets: 4 × 4 × 4 = 64 calls reach C per request', async () => {
    // Each of the three callers makes 4 attempts for each call it receives.
    deepStrictEqual(await measure(1), { a: 4, b: 16, c: 64 })
  })

  it('should stay near 1× with a token bucket per caller: N + 3 + 3 + 3 calls reach C for N requests', async () => {
    // retryThrottle(10, 0.1) starts at 10 tokens and refuses at 5: after its first 3 failures it allows a retry
    // (9, 8, 7 tokens left), after the 4th (6) recurs(3) has stopped anyway, and from the 5th on it refuses. So
    // each caller adds exactly 3 retries in all, and each layer adds them to the calls it receives.
    const bucket = (): Budget.RetryBudget => Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
    const requests = 10
    deepStrictEqual(await measure(requests, bucket), { a: requests + 3, b: requests + 6, c: requests + 9 })
  })

  it('should stay near 1× with an adaptive guard per caller: N + 7 + 7 + 7 calls reach C for N requests', async () => {
    // minSamples 10: retries go on (3 + 3 + 1) until a caller has seen 10 attempts, all failed; then none.
    const guard = (): Budget.RetryBudget => Budget.adaptive({ window: 60_000, minSuccessRate: 0.5, minSamples: 10 })
    const requests = 10
    deepStrictEqual(await measure(requests, guard), { a: requests + 7, b: requests + 14, c: requests + 21 })
  })
})
