import * as fc from 'fast-check'
import * as Budget from '../src/Budget'
import { strictEqual, throwsTypeError } from './util'

const failure = { latency: 1, now: 0, retries: 0, error: 'e', retrying: true }
const success = { latency: 1, now: 0, retries: 0, error: undefined, retrying: false }

describe('Budget.retryThrottle options.from', () => {
  it("starts with the old budget's tokens, at most its own maxTokens: a spent budget stays spent", () => {
    const old = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
    for (let i = 0; i < 6; i++) old.onFailure(failure) // 4 left: retries refused
    const bigger = Budget.retryThrottle({ maxTokens: 20, tokenRatio: 0.5, from: old })
    strictEqual(bigger.tokens, 4) // not a full 20
    strictEqual(bigger.onFailure(failure), false)
    const smaller = Budget.retryThrottle({
      maxTokens: 2,
      tokenRatio: 0.1,
      from: Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
    })
    strictEqual(smaller.tokens, 2)
  })

  it('with the same options, a replaced budget answers what the old one would have (property)', () => {
    const steps = fc.array(fc.boolean(), { maxLength: 40 })
    fc.assert(
      fc.property(steps, steps, (before, after) => {
        const options = { maxTokens: 5, tokenRatio: 0.3 }
        const alone = Budget.retryThrottle(options)
        let replaced = Budget.retryThrottle(options)
        const step = (ok: boolean) => {
          if (ok) [alone, replaced].forEach((b) => b.onSuccess(success))
          else strictEqual(replaced.onFailure(failure), alone.onFailure(failure))
          strictEqual(replaced.tokens, alone.tokens)
          strictEqual(replaced.allows?.(0), alone.allows?.(0))
        }
        before.forEach(step)
        replaced = Budget.retryThrottle({ ...options, from: replaced })
        after.forEach(step)
      }),
      { numRuns: 300 }
    )
  })

  it('refuses a budget of another kind, naming it', () => {
    throwsTypeError(
      () => Budget.retryThrottle({ maxTokens: 1, tokenRatio: 1, from: Budget.retryQuota() }),
      /Budget.retryThrottle: from must be a budget made by Budget.retryThrottle, received/
    )
  })
})
