import * as fc from 'fast-check'
import * as Overload from '../src/Overload'
import { deepStrictEqual, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

/** A candidate that counts, per client, the slots it holds: the simulation's own view of a limit's bound. */
const counting = (
  maxConcurrent: number
): { readonly candidate: Overload.Candidate; readonly peak: () => number; readonly held: () => number } => {
  let peak = 0
  const holding: Array<number> = []
  return {
    candidate: {
      name: 'counting',
      make: () => {
        const client = holding.push(0) - 1
        return {
          limit: () => maxConcurrent,
          enter: () => {
            if (holding[client] >= maxConcurrent) return undefined
            peak = Math.max(peak, ++holding[client])
            let given = false
            const give = (): void => {
              if (given) throw new Error('a slot was given back twice')
              given = true
              holding[client]--
            }
            return { succeeded: give, dropped: give }
          }
        }
      }
    },
    peak: () => peak,
    held: () => holding.reduce((a, b) => a + b, 0)
  }
}

const phase = fc.record({
  duration: fc.integer({ min: 100, max: 3_000 }),
  rate: fc.integer({ min: 1, max: 2_000 }),
  serviceTime: fc.double({ min: 0.5, max: 100, noNaN: true })
})

describe('Overload', () => {
  it('should be deterministic: the same options, the same outcome', () => {
    const options = { candidate: Overload.bulkhead(8), seed: 5 }
    deepStrictEqual(Overload.simulate(options), Overload.simulate(options))
  })

  it('should offer every candidate the same requests from one seed', () => {
    const offered = [Overload.unlimited, Overload.bulkhead(1), Overload.bulkhead(16)].map(
      (candidate) =>
        Overload.simulate({ candidate, seed: 3, phases: [{ duration: 5_000, rate: 800, serviceTime: 20 }] }).offered
    )
    strictEqual(new Set(offered).size, 1)
  })

  it('should account for every request, and tell each slot of its end once (property)', () => {
    fc.assert(
      fc.property(
        fc.array(phase, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 1_000 }),
        (phases, clients, workers, slots, seed) => {
          const limit = counting(slots)
          const outcome = Overload.simulate({
            candidate: limit.candidate,
            phases,
            clients,
            workers,
            timeout: 200,
            seed
          })
          // what is still held at the end is what is still in flight
          strictEqual(outcome.offered, outcome.succeeded + outcome.shed + outcome.timedOut + limit.held())
          ok(limit.peak() <= slots, `a client held ${limit.peak()} slots of ${slots}`)
          ok(outcome.p50 <= outcome.p99, 'p50 <= p99')
          ok(outcome.series.every((i) => i.limit === slots * clients))
          // the phases split the run's requests between them
          for (const field of ['offered', 'succeeded', 'shed', 'timedOut'] as const)
            strictEqual(
              outcome.phases.reduce((sum, p) => sum + p[field], 0),
              outcome[field]
            )
        }
      ),
      { numRuns: 60 }
    )
  })

  it('should let no limit collapse under the slowdown, and a bulkhead keep serving', () => {
    const unlimited = Overload.simulate({ candidate: Overload.unlimited })
    const bulkhead = Overload.simulate({ candidate: Overload.bulkhead(16) })
    // the slowdown is from 20 s to 40 s; by the end, the unlimited fleet's backlog still times every request out
    const last = (o: Overload.Outcome): Overload.Interval => o.series[o.series.length - 1]
    strictEqual(last(unlimited).throughput, 0)
    ok(last(unlimited).timedOut > 500, `${last(unlimited).timedOut} timed out a second at the end`)
    ok(last(bulkhead).throughput > 500, `${last(bulkhead).throughput} a second at the end`)
    strictEqual(bulkhead.timedOut, 0)
    ok(bulkhead.throughput > 2 * unlimited.throughput, `${bulkhead.throughput} vs ${unlimited.throughput}`)
    strictEqual(unlimited.series.length, 60)
  })

  it('should measure latency: one worker, one request at a time, service time alone', () => {
    const outcome = Overload.simulate({
      candidate: Overload.bulkhead(1),
      clients: 1,
      workers: 1,
      phases: [{ duration: 10_000, rate: 50, serviceTime: 4 }]
    })
    // a request never queues at the server behind another: its latency is its service time, exponential of mean
    // 4 ms (median 4 ln 2 = 2.77, 99th percentile 4 ln 100 = 18.4)
    ok(outcome.p50 > 2.3 && outcome.p50 < 3.3, `median ${outcome.p50}`)
    ok(outcome.p99 > 14 && outcome.p99 < 23, `p99 ${outcome.p99}`)
    strictEqual(outcome.timedOut, 0)
  })

  describe('bad input', () => {
    it('should name the bad value', () => {
      const candidate = Overload.unlimited
      throwsRangeError(() => Overload.bulkhead(1.5), /Overload\.bulkhead: maxConcurrent .*1\.5/)
      throwsRangeError(() => Overload.simulate({ candidate, clients: 0 }), /clients .*0/)
      throwsRangeError(() => Overload.simulate({ candidate, timeout: NaN }), /timeout .*NaN/)
      throwsRangeError(() => Overload.simulate({ candidate, interval: Infinity }), /interval .*Infinity/)
      throwsRangeError(() => Overload.simulate({ candidate, seed: -1 }), /seed .*-1/)
      throwsRangeError(
        () => Overload.simulate({ candidate, phases: [{ duration: 1_000, rate: -5, serviceTime: 1 }] }),
        /phases\[0\]\.rate .*-5/
      )
      throwsTypeError(() => Overload.simulate({ candidate, phases: [] }), /phases must be a non-empty array/)
    })
  })
})
