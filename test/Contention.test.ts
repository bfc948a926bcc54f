import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import * as Budget from '../src/Budget'
import * as Contention from '../src/Contention'
import * as Random from '../src/Random'
import type { RetryStatus } from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import {
  deepStrictEqual,
  itThrowsRangeErrors,
  ok,
  seedArbitrary,
  strictEqual,
  throwsRangeError,
  throwsTypeError,
  type RangeErrorCase
} from './util'

/** A network where every message takes exactly 10 ms: runs that can be worked out by hand. */
const exact: Contention.Network = { mean: 10, sd: 0 }

const named = (name: string): Contention.Candidate => {
  const found = Contention.awsStrategies().find((s) => s.name === name)
  if (found === undefined) throw new Error(`no strategy ${name}`)
  return found
}

const row = (rows: ReadonlyArray<Contention.Comparison>, name: string, clients: number): Contention.Comparison => {
  const found = rows.find((r) => r.name === name && r.clients === clients)
  if (found === undefined) throw new Error(`no row ${name} at ${clients}`)
  return found
}

/**
 * How many standard errors our mean lies from a reference figure. The reference is itself the mean of 100 runs
 * (with about the same spread per run as ours), printed truncated to a whole number: its own standard error is
 * ours · √(runs / 100), and the true figure lies in [figure, figure + 1).
 */
const zScore = (estimate: Contention.Estimate, runs: number, figure: number): number =>
  (estimate.mean - (figure + 0.5)) / (estimate.standardError * Math.sqrt(1 + runs / 100))

describe('Contention', () => {
  describe('simulate', () => {
    it('should make one write and take four hops for a single client', () => {
      deepStrictEqual(Contention.simulate({ clients: 1, schedule: Schedule.forever, network: exact }), {
        calls: 1,
        rejected: 0,
        succeeded: 1,
        gaveUp: 0,
        time: 40
      })
    })

    it('should let one client win per round in lockstep: N rounds and N(N+1)/2 writes with no backoff', () => {
      for (const n of [2, 3, 10, 40]) {
        deepStrictEqual(Contention.simulate({ clients: n, schedule: Schedule.forever, network: exact }), {
          calls: (n * (n + 1)) / 2,
          rejected: (n * (n - 1)) / 2,
          succeeded: n,
          gaveUp: 0,
          time: 40 * n
        })
      }
    })

    it('should send the next read one network delay plus the backoff after the rejection reaches the client', () => {
      // round 1 ends at 40; the losers' reads reach the server at 40 + 10 + 100, and each round takes 140 ms
      const outcome = Contention.simulate({ clients: 3, schedule: Schedule.constant(100), network: exact })
      deepStrictEqual(outcome, { calls: 6, rejected: 3, succeeded: 3, gaveUp: 0, time: 40 + 2 * 140 })
    })

    it('should give up a client when its schedule stops', () => {
      deepStrictEqual(Contention.simulate({ clients: 10, schedule: Schedule.stop, network: exact }), {
        calls: 10,
        rejected: 9,
        succeeded: 1,
        gaveUp: 9,
        time: 40
      })
    })

    it('should step each schedule with the runner status: retries so far, and time since t = 0', () => {
      const seen: Array<RetryStatus & { readonly now: number; readonly client: number }> = []
      const recording = Schedule.make(null, (_, { input, status, now }: Schedule.StepContext<Contention.Conflict>) => {
        seen.push({ ...status, now, client: input.client })
        return Schedule.continueAfter(5, null)
      })
      Contention.simulate({ clients: 3, schedule: recording, network: exact })
      // round 1: clients 1 and 2 lose at 40 ms; round 2 (reads at 55): client 2 loses at 85 ms
      deepStrictEqual(
        seen.map((s) => [s.client, s.iterNumber, s.elapsed, s.now, s.cumulativeDelay]),
        [
          [1, 0, 40, 40, 0],
          [2, 0, 40, 40, 0],
          [2, 1, 85, 85, 5]
        ]
      )
    })

    it('should stop a client whose upTo budget would be passed', () => {
      // rejections at 40, 80 and 120 ms; at 120 the next retry would start past 100 ms
      const outcome = Contention.simulate({
        clients: 5,
        schedule: pipe(Schedule.forever, Schedule.upTo(100)),
        network: exact
      })
      deepStrictEqual(outcome, { calls: 12, rejected: 9, succeeded: 3, gaveUp: 2, time: 120 })
    })

    it('should hand the schedule the conflict: code 409 and the client', () => {
      const evenOnly = pipe(
        Schedule.constant(50),
        Schedule.whileInput((c: Contention.Conflict) => c.code === 409 && c.client % 2 === 0)
      )
      const outcome = Contention.simulate({ clients: 10, schedule: evenOnly, seed: 4 })
      ok(outcome.gaveUp >= 1)
      strictEqual(outcome.succeeded + outcome.gaveUp, 10)
    })

    it('should be deterministic for a seed, and equal to the same seeded Random', () => {
      fc.assert(
        fc.property(seedArbitrary, fc.integer({ min: 0, max: 30 }), (seed, clients) => {
          const schedule = named('full jitter').schedule
          const a = Contention.simulate({ clients, schedule, seed })
          deepStrictEqual(Contention.simulate({ clients, schedule, seed }), a)
          deepStrictEqual(Contention.simulate({ clients, schedule, random: Random.seeded(seed) }), a)
        }),
        { numRuns: 50 }
      )
    })

    it('should depend on the seed', () => {
      const schedule = named('decorrelated').schedule
      const outcomes = new Set(
        [1, 2, 3, 4, 5].map((seed) => JSON.stringify(Contention.simulate({ clients: 30, schedule, seed })))
      )
      ok(outcomes.size >= 4)
    })

    it('should keep its invariants for any seed and client count', () => {
      fc.assert(
        fc.property(
          seedArbitrary,
          fc.integer({ min: 0, max: 60 }),
          fc.constantFrom(...Contention.awsStrategies()),
          (seed, clients, { schedule }) => {
            const o = Contention.simulate({ clients, schedule, seed })
            strictEqual(o.succeeded, clients) // no limit: everyone writes in the end
            strictEqual(o.gaveUp, 0)
            strictEqual(o.rejected, o.calls - o.succeeded)
            ok(o.calls >= clients && o.calls <= (clients * (clients + 1)) / 2 + 10 * clients)
            // four messages of |Normal(10, 2)|: rarely under 4 ms each
            ok(clients === 0 ? o.time === 0 : o.time > 0)
          }
        ),
        { numRuns: 60 }
      )
    })

    it('should stop with a RangeError past maxCalls', () => {
      throwsRangeError(
        () => Contention.simulate({ clients: 10, schedule: Schedule.forever, network: exact, maxCalls: 54 }),
        /Contention.simulate: more than maxCalls \(54\) writes/
      )
      strictEqual(
        Contention.simulate({ clients: 10, schedule: Schedule.forever, network: exact, maxCalls: 55 }).calls,
        55
      )
    })

    describe('bad options', () => {
      const schedule = Schedule.forever
      itThrowsRangeErrors([
        [
          'clients: -1',
          () => Contention.simulate({ clients: -1, schedule }),
          /clients must be a whole number >= 0, received -1/
        ],
        ['clients: 2.5', () => Contention.simulate({ clients: 2.5, schedule }), /clients .* received 2.5/],
        [
          'network.sd: -1',
          () => Contention.simulate({ clients: 2, schedule, network: { mean: 10, sd: -1 } }),
          /network.sd .* received -1/
        ],
        [
          'network.mean: NaN',
          () => Contention.simulate({ clients: 2, schedule, network: { mean: NaN, sd: 1 } }),
          /network.mean .* received NaN/
        ],
        ['seed: -3', () => Contention.simulate({ clients: 2, schedule, seed: -3 }), /seed .* received -3/],
        [
          'both seed and random',
          () => Contention.simulate({ clients: 2, schedule, seed: 1, random: Random.seeded(1) }),
          /random or seed, not both/
        ],
        [
          'maxCalls: null (only a missing option takes the default)',
          () => Contention.simulate({ clients: 2, schedule, maxCalls: null as unknown as number }),
          /^Contention\.simulate: maxCalls must be a whole number >= 0, received null$/
        ],
        // regression: a network draw out of [0, 1) gave a time of NaN, or blamed Driver.advance
        ...[1.5, 1, -1, NaN].map(
          (u): RangeErrorCase => [
            `a random that draws ${u}`,
            () => Contention.simulate({ clients: 3, schedule: Schedule.recurs(2), random: { next: () => u } }),
            new RegExp(
              `^Contention\\.simulate: the network: random\\.next\\(\\) returned ${u}; a draw must be a number in \\[0, 1\\)$`
            )
          ]
        )
      ])

      it('should name options, a random or a candidate that is not one in a TypeError', () => {
        throwsTypeError(
          () => Contention.simulate(null as unknown as Contention.SimulateOptions),
          /^Contention\.simulate: options must be an object, received null$/
        )
        throwsTypeError(
          () => Contention.simulate({ clients: 2, schedule, random: 5 as unknown as Random.Random }),
          /^Contention\.simulate: random must be a Random, received 5$/
        )
        throwsTypeError(
          () => Contention.compare({ candidates: [null as unknown as Contention.Candidate], clients: [2] }),
          /^Contention\.compare: candidates\[0\] must be an object, received null$/
        )
      })
    })
  })

  describe('awsStrategies', () => {
    it('should build the five strategies, the exponential starting at 2 · base as the reference counts it', () => {
      const strategies = Contention.awsStrategies()
      const delays = (name: string) => Driver.delays(named(name).schedule, { random: Random.fixed(0.5), limit: 10 })
      deepStrictEqual(
        strategies.map((s) => s.name),
        ['none', 'exponential', 'full jitter', 'equal jitter', 'decorrelated']
      )
      deepStrictEqual(
        delays('none'),
        Array.from({ length: 10 }, () => 0)
      )
      deepStrictEqual(delays('exponential'), [10, 20, 40, 80, 160, 320, 640, 1280, 2000, 2000])
      deepStrictEqual(delays('full jitter'), [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000])
      deepStrictEqual(delays('equal jitter'), [7.5, 15, 30, 60, 120, 240, 480, 960, 1500, 1500])
      deepStrictEqual(named('decorrelated').schedule.description, 'decorrelatedJitter(5, 2000)')
    })

    it('should reject a cap below the base', () => {
      throwsRangeError(() => Contention.awsStrategies(100, 50), /cap must be a finite number >= 100, received 50/)
    })
  })

  // Issue 27: the AWS SDKs' retries 2.0 and 2.1, their backoffs and their quotas, compared side by side.
  describe('a budget shared by the clients, and awsRetries', () => {
    /** A budget that records what it is told, answering as `inner` does. */
    const recording = (inner: Budget.LocalBudget) => {
      const told: Array<readonly ['success' | 'failure', Budget.BudgetAttempt]> = []
      const budget: Budget.LocalBudget = {
        onSuccess: (attempt) => {
          told.push(['success', attempt])
          inner.onSuccess(attempt)
        },
        onFailure: (attempt) => {
          told.push(['failure', attempt])
          return inner.onFailure(attempt)
        }
      }
      return { budget, told }
    }

    it('should tell each verdict to the budget, and give up a client whose retry it refuses', () => {
      // three clients in lockstep: client 0 wins at t = 40, client 1 pays the 5 tokens, client 2 finds none left
      const quota = Budget.retryQuota({ tokens: 5 })
      const { budget, told } = recording(quota)
      const outcome = Contention.simulate({ clients: 3, schedule: Schedule.constant(100), network: exact, budget })
      deepStrictEqual(outcome, { calls: 4, rejected: 2, succeeded: 2, gaveUp: 1, time: 180 })
      const conflict = (client: number): Contention.Conflict => ({ code: 409, client })
      deepStrictEqual(told, [
        ['success', { latency: 40, now: 40, retries: 0, error: undefined, retrying: false }],
        ['failure', { latency: 40, now: 40, retries: 0, error: conflict(1), retrying: true }],
        ['failure', { latency: 40, now: 40, retries: 0, error: conflict(2), retrying: true }],
        // its read left at 140, after the 100 ms backoff
        ['success', { latency: 40, now: 180, retries: 1, error: { code: 409, client: 1 }, retrying: false }]
      ])
      strictEqual(quota.tokens, 5) // the retry's 5 came back
    })

    it('should tell a budget of a failure the schedule will not retry, and count the client once as given up', () => {
      const quota = Budget.retryQuota({ tokens: 5 })
      const { budget, told } = recording(quota)
      const outcome = Contention.simulate({ clients: 2, schedule: Schedule.stop, network: exact, budget })
      deepStrictEqual(outcome, { calls: 2, rejected: 1, succeeded: 1, gaveUp: 1, time: 40 })
      deepStrictEqual(
        told.map(([kind, { retrying }]) => [kind, retrying]),
        [
          ['success', false],
          ['failure', false]
        ]
      )
      strictEqual(quota.tokens, 5)
    })

    it('should refuse a budget that is not a LocalBudget, or that answers with a promise', () => {
      const schedule = Schedule.constant(10)
      throwsTypeError(
        () => Contention.simulate({ clients: 2, schedule, budget: {} as Budget.LocalBudget }),
        /^Contention\.simulate: budget must be a LocalBudget/
      )
      const remote = { onSuccess: () => undefined, onFailure: () => Promise.resolve(true) }
      throwsTypeError(
        () =>
          Contention.simulate({
            clients: 2,
            schedule,
            network: exact,
            budget: remote as unknown as Budget.LocalBudget
          }),
        /^Contention\.simulate: budget\.onFailure must answer a boolean, received \[object Promise\]/
      )
    })

    it('should make a new budget for every run of compare', () => {
      let made = 0
      const candidate: Contention.Candidate = {
        name: 'quota',
        schedule: Schedule.constant(10),
        budget: () => {
          made++
          return Budget.retryQuota()
        }
      }
      Contention.compare({ candidates: [candidate], clients: [3, 4], runs: 5 })
      strictEqual(made, 10)
      throwsTypeError(
        () =>
          Contention.compare({
            candidates: [{ ...candidate, budget: 1 as unknown as () => Budget.LocalBudget }],
            clients: [3]
          }),
        /^Contention\.compare: candidates\[0\]\.budget must be a function, received 1$/
      )
    })

    it('should build 2.0 and 2.1, each backoff alone and as the SDKs ship it (3 attempts, the quota)', () => {
      const candidates = Contention.awsRetries()
      deepStrictEqual(
        candidates.map((c) => c.name),
        ['AWS 2.0 backoff', 'AWS 2.1 backoff', 'AWS 2.0 SDK', 'AWS 2.1 SDK']
      )
      const conflict: Contention.Conflict = { code: 409, client: 0 }
      const delays = (i: number) =>
        Driver.delays(candidates[i].schedule, { random: Random.fixed(0.5), input: conflict, limit: 4 })
      deepStrictEqual(delays(0), [500, 1000, 2000, 4000])
      deepStrictEqual(delays(1), [25, 50, 100, 200]) // a conflict is no throttle: the 50 ms base
      deepStrictEqual(delays(2), [500, 1000])
      deepStrictEqual(delays(3), [25, 50])
      deepStrictEqual([candidates[0].budget, candidates[1].budget], [undefined, undefined])
      const retryOnce = (i: number): number => {
        const quota = candidates[i].budget?.() as Budget.RetryQuota
        quota.onFailure({ latency: 40, now: 40, retries: 0, error: conflict, retrying: true })
        return quota.tokens
      }
      deepStrictEqual([retryOnce(2), retryOnce(3)], [495, 486])
      ok(candidates[3].budget?.() !== candidates[3].budget?.(), 'a new quota per run')
    })

    it("should show 2.1's trade at 100 clients: its quota stops retrying sooner, so fewer writes and more clients give up", () => {
      const rows = Contention.compare({ candidates: Contention.awsRetries(), clients: [100], runs: 5 })
      const [v20, v21] = [row(rows, 'AWS 2.0 SDK', 100), row(rows, 'AWS 2.1 SDK', 100)]
      ok(v21.calls.mean < v20.calls.mean, `${v21.calls.mean} < ${v20.calls.mean}`)
      ok(v21.gaveUp.mean > v20.gaveUp.mean, `${v21.gaveUp.mean} > ${v20.gaveUp.mean}`)
      // alone, 2.1's 50 ms base finishes sooner than 2.0's 1 s, at the price of more collisions
      const [b20, b21] = [row(rows, 'AWS 2.0 backoff', 100), row(rows, 'AWS 2.1 backoff', 100)]
      ok(b21.time.mean < b20.time.mean && b21.calls.mean > b20.calls.mean)
      deepStrictEqual([b20.gaveUp.mean, b21.gaveUp.mean], [0, 0])
    })
  })

  describe('compare', () => {
    it('should average simulate over seeds seed, seed + 1, ..., in the order of clients then candidates', () => {
      const candidates = [named('full jitter'), named('none')]
      const rows = Contention.compare({ candidates, clients: [5, 8], runs: 3, seed: 10 })
      deepStrictEqual(
        rows.map((r) => [r.clients, r.name, r.runs]),
        [
          [5, 'full jitter', 3],
          [5, 'none', 3],
          [8, 'full jitter', 3],
          [8, 'none', 3]
        ]
      )
      const outcomes = [10, 11, 12].map((seed) => Contention.simulate({ clients: 8, schedule: Schedule.forever, seed }))
      const calls = outcomes.map((o) => o.calls)
      const mean = (calls[0] + calls[1] + calls[2]) / 3
      const sd = Math.sqrt(calls.reduce((s, c) => s + (c - mean) ** 2, 0) / 2)
      ok(Math.abs(rows[3].calls.mean - mean) < 1e-9)
      ok(Math.abs(rows[3].calls.standardError - sd / Math.sqrt(3)) < 1e-9)
      ok(Math.abs(rows[3].time.mean - (outcomes[0].time + outcomes[1].time + outcomes[2].time) / 3) < 1e-9)
      deepStrictEqual(rows[3].gaveUp, { mean: 0, standardError: 0 })
    })

    it('should reject fewer than 2 runs, a bad seed and bad client counts', () => {
      const candidates = Contention.awsStrategies()
      throwsRangeError(
        () => Contention.compare({ candidates, clients: [5], runs: 1 }),
        /runs must be a whole number >= 2, received 1/
      )
      throwsRangeError(
        () => Contention.compare({ candidates, clients: [5], seed: 2 ** 32 }),
        /seed .* received 4294967296/
      )
      throwsRangeError(() => Contention.compare({ candidates, clients: [5, -2] }), /clients\[1\] .* received -2/)
    })
  })

  describe('leaders', () => {
    const estimate = (mean: number): Contention.Estimate => ({ mean, standardError: 1 })
    const comparison = (name: string, clients: number, calls: number, time: number): Contention.Comparison => ({
      name,
      clients,
      runs: 10,
      calls: estimate(calls),
      time: estimate(time),
      gaveUp: estimate(0)
    })

    it('should name, per client count, the fewest mean calls and the lowest mean time, ties to the first', () => {
      const rows = [
        comparison('a', 10, 50, 300),
        comparison('b', 10, 40, 300),
        comparison('c', 10, 40, 200),
        comparison('a', 20, 90, 100),
        comparison('b', 20, 95, 90)
      ]
      deepStrictEqual(Contention.leaders(rows), [
        { clients: 10, leastWork: 'b', firstToFinish: 'c' },
        { clients: 20, leastWork: 'a', firstToFinish: 'b' }
      ])
    })
  })

  describe('the reference figures of the AWS simulator', () => {
    // Deterministic (seeded), so these never flake; a change to the model or the schedules that moves a mean by
    // more than a few standard errors fails them.
    const runs = 200
    let at50: ReadonlyArray<Contention.Comparison> = []
    beforeAll(() => {
      at50 = Contention.compare({ candidates: Contention.awsStrategies(), clients: [50], runs })
    })

    it('should reproduce the N = 50 reference means within 4 standard errors', () => {
      for (const figure of Contention.reference.filter((r) => r.clients === 50)) {
        const ours = row(at50, figure.strategy, 50)
        const calls = zScore(ours.calls, runs, figure.calls)
        const time = zScore(ours.time, runs, figure.time)
        ok(Math.abs(calls) < 4, `${figure.strategy}: calls ${ours.calls.mean} vs ${figure.calls} (z = ${calls})`)
        ok(Math.abs(time) < 4, `${figure.strategy}: time ${ours.time.mean} vs ${figure.time} (z = ${time})`)
      }
    })

    it('should reproduce the N = 100 reference means of all five strategies within 4 standard errors', () => {
      const at100 = Contention.compare({ candidates: Contention.awsStrategies(), clients: [100], runs: 100 })
      for (const figure of Contention.reference.filter((r) => r.clients === 100)) {
        const ours = row(at100, figure.strategy, 100)
        const calls = zScore(ours.calls, 100, figure.calls)
        const time = zScore(ours.time, 100, figure.time)
        ok(Math.abs(calls) < 4, `${figure.strategy}: calls ${ours.calls.mean} vs ${figure.calls} (z = ${calls})`)
        ok(Math.abs(time) < 4, `${figure.strategy}: time ${ours.time.mean} vs ${figure.time} (z = ${time})`)
      }
    })

    it("should reproduce the reference's order: work full < equal < decorrelated < exponential < none, time none < decorrelated < full < equal < exponential", () => {
      const by = (of: (r: Contention.Comparison) => number): ReadonlyArray<string> =>
        [...at50].sort((a, b) => of(a) - of(b)).map((r) => r.name)
      deepStrictEqual(
        by((r) => r.calls.mean),
        ['full jitter', 'equal jitter', 'decorrelated', 'exponential', 'none']
      )
      deepStrictEqual(
        by((r) => r.time.mean),
        ['none', 'decorrelated', 'full jitter', 'equal jitter', 'exponential']
      )
      // and the gaps are many standard errors wide, not luck
      const full = row(at50, 'full jitter', 50).calls
      const equal = row(at50, 'equal jitter', 50).calls
      ok(equal.mean - full.mean > 10 * Math.hypot(full.standardError, equal.standardError))
    })

    it('should miss the reference when the exponential starts at base instead of 2 · base', () => {
      const early = pipe(Schedule.exponential(5), Schedule.capped(2000), Schedule.fullJitter)
      const [ours] = Contention.compare({ candidates: [{ name: 'early', schedule: early }], clients: [50], runs: 100 })
      ok(zScore(ours.calls, 100, 333) > 10, `calls ${ours.calls.mean}`)
    })
  })
})
