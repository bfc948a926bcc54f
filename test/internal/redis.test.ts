import * as assert from 'assert'
import * as fc from 'fast-check'
import { serverClock } from '../../src/internal/redis'

describe('internal/redis serverClock', () => {
  it('should know no deadline before a reply', () => {
    assert.strictEqual(serverClock().deadline(0, 100), undefined)
  })

  // The property the breaker's store relies on: a deadline is never later on the server's clock than the moment its
  // caller stops waiting, whatever the round trips (a reply that waited in a busy event loop included).
  it("should never put a deadline later than the caller's, and come within the fastest round trip of it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e9, max: 1e9 }),
        fc.array(fc.record({ gap: fc.nat(1_000), there: fc.nat(50), back: fc.nat(500) }), {
          minLength: 1,
          maxLength: 20
        }),
        fc.nat(1_000),
        (offset, replies, ms) => {
          const clock = serverClock()
          let local = 1_000_000.25
          let fastest = Infinity
          for (const { gap, there, back } of replies) {
            const sent = (local += gap)
            // the server reads its TIME `there` ms after the call left, in whole ms; the answer comes `back` later
            const server = Math.floor(sent + there + offset)
            const answered = (local += there + back)
            clock.learn(sent, answered, server)
            fastest = Math.min(fastest, there + back)
          }
          const deadline = clock.deadline(local, ms)
          assert.ok(deadline !== undefined)
          const exact = local + ms + offset
          assert.ok(deadline <= exact, `${deadline} past ${exact}`)
          assert.ok(deadline >= exact - fastest - 2, `${deadline} more than ${fastest} ms before ${exact}`)
        }
      )
    )
  })

  it('should start afresh when a reply contradicts what it learnt (a clock stepped)', () => {
    const clock = serverClock()
    clock.learn(0, 2, 1_001)
    assert.strictEqual(clock.deadline(10, 100), 10 + 100 + 999)
    // the server's clock stepped 1 h forward
    clock.learn(20, 21, 3_600_000 + 1_020)
    assert.strictEqual(clock.deadline(30, 100), 30 + 100 + 3_600_000 + 999)
  })
})
