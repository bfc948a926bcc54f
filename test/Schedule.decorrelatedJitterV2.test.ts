import * as fc from 'fast-check'
import * as Driver from '../src/Driver'
import * as Random from '../src/Random'
import * as RS from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import { deepStrictEqual, ok, rightOf, seedArbitrary, strictEqual } from './util'

const MAX = Number.MAX_SAFE_INTEGER

/** Polly's formula, written out independently: f(t) = 2^t · tanh(√(4t)). */
const f = (t: number): number => Math.pow(2, t) * Math.tanh(Math.sqrt(4 * t))

/** `n` draws of `Random.seeded(seed)`: the same draws a schedule run with that seed sees. */
const draws = (seed: number, n: number): ReadonlyArray<number> => {
  const random = Random.seeded(seed)
  return Array.from({ length: n }, () => random.next())
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

describe('Schedule.decorrelatedJitterV2', () => {
  it('should wait f(k + u) − f(k − 1 + u′), scaled by medianFirstRetryDelay / 1.4', () => {
    const ds = Driver.delays(Schedule.decorrelatedJitterV2(100), { random: Random.fixed(0.5), limit: 4 })
    const expected = [f(0.5), f(1.5) - f(0.5), f(2.5) - f(1.5), f(3.5) - f(2.5)].map((x) => (x * 100) / 1.4)
    ds.forEach((d, i) => ok(Math.abs(d - expected[i]) < 1e-9, `delay ${i}: ${d} vs ${expected[i]}`))
    // the published shape at the median draw: retries at about 90, 200, 400, 800 ms
    deepStrictEqual(ds.map(Math.round), [90, 109, 204, 405])
  })

  it('should wait 0 ms first when the first draw is 0 (f(0) = 0), as Polly does', () => {
    deepStrictEqual(Driver.delays(Schedule.decorrelatedJitterV2(100), { random: Random.fixed(0), limit: 1 }), [0])
  })

  it('should put retry k at f(k + u_k) · median / 1.4 after the first failure: the delays telescope', () => {
    fc.assert(
      fc.property(seedArbitrary, fc.integer({ min: 1, max: 5000 }), (seed, m) => {
        const ds = Driver.delays(Schedule.decorrelatedJitterV2(m), { random: Random.seeded(seed), limit: 12 })
        const us = draws(seed, 12)
        let sum = 0
        ds.forEach((d, k) => {
          sum += d
          const expected = (f(k + us[k]) * m) / 1.4
          ok(Math.abs(sum - expected) <= 1e-9 * expected + 1e-9, `retry ${k}: ${sum} vs ${expected}`)
        })
      })
    )
  })

  it('should put the median time of retry k near medianFirstRetryDelay · 2^k', () => {
    const runs = Array.from({ length: 801 }, (_, seed) =>
      Driver.delays(Schedule.decorrelatedJitterV2(100), { random: Random.seeded(seed), limit: 6 })
    )
    for (let k = 0; k < 6; k++) {
      const times = runs.map((ds) => ds.slice(0, k + 1).reduce((a, b) => a + b, 0))
      const ratio = median(times) / (100 * 2 ** k)
      // 2^0.5 / 1.4 · tanh(√(4(k + ½))) is 0.90 at k = 0, then within 2% of 1
      ok(ratio > (k === 0 ? 0.8 : 0.95) && ratio < 1.06, `retry ${k}: median at ${ratio} · 100 · 2^${k}`)
    }
  })

  it('should keep every delay finite, >= 0 and <= maxDelay', () => {
    fc.assert(
      fc.property(
        seedArbitrary,
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        (seed, m, max) => {
          const ds = Driver.delays(Schedule.decorrelatedJitterV2(m, max), { random: Random.seeded(seed), limit: 40 })
          strictEqual(ds.length, 40)
          for (const d of ds) ok(Number.isFinite(d) && d >= 0 && d <= max, `delay ${d}`)
        }
      )
    )
  })

  it('should cap at maxDelay once the formula passes it', () => {
    const ds = Driver.delays(Schedule.decorrelatedJitterV2(100, 1000), { random: Random.fixed(0.5), limit: 8 })
    deepStrictEqual(ds.slice(5), [1000, 1000, 1000])
  })

  it('should saturate at maxDelay (or the largest delay) past 1024 retries, never NaN or infinite', () => {
    const unbounded = Driver.delays(Schedule.decorrelatedJitterV2(10), { random: Random.seeded(3), limit: 1100 })
    ok(unbounded.every((d) => Number.isFinite(d) && d >= 0))
    deepStrictEqual(
      unbounded.slice(-50),
      Array.from({ length: 50 }, () => MAX)
    )
    const bounded = Driver.delays(Schedule.decorrelatedJitterV2(10, 5000), { random: Random.seeded(3), limit: 1100 })
    deepStrictEqual(
      bounded.slice(-50),
      Array.from({ length: 50 }, () => 5000)
    )
  })

  it('should wait 0 ms every time with a median of 0, even past the overflow', () => {
    const ds = Driver.delays(Schedule.decorrelatedJitterV2(0), { random: Random.seeded(1), limit: 1100 })
    ok(ds.every((d) => d === 0))
  })

  it('should keep a plain JSON state that resumes to the same delays', () => {
    const schedule = Schedule.decorrelatedJitterV2(50, 10_000)
    // the schedule reads neither the status nor the time: one context serves every step
    const context = { input: undefined, status: RS.initial, now: 0, dueAt: 0 }
    const random = Random.seeded(9)
    let state = schedule.initial
    const straight: Array<number> = []
    const resumed: Array<number> = []
    const copy = Random.fromState(random.getState())
    for (let i = 0; i < 20; i++) {
      const d = schedule.step(state, { ...context, random })
      ok(d._tag === 'Continue')
      straight.push(d.delay)
      state = d.state
    }
    let stored = JSON.stringify(schedule.initial)
    for (let i = 0; i < 20; i++) {
      const d = schedule.step(JSON.parse(stored) as Schedule.Json, { ...context, random: copy })
      ok(d._tag === 'Continue')
      resumed.push(d.delay)
      stored = JSON.stringify(d.state)
    }
    deepStrictEqual(resumed, straight)
    deepStrictEqual(JSON.parse(JSON.stringify(state)), state)
    // a Driver stopped half way and restored from the JSON of its snapshot waits the same
    const driver = Driver.make(schedule, { random: Random.seeded(9) })
    const first = Array.from({ length: 10 }, () => driver.advance(undefined, driver.dueAt))
    const restored = rightOf(Driver.restore(schedule, JSON.parse(JSON.stringify(driver.snapshot()))))
    const rest = Array.from({ length: 10 }, () => restored.advance(undefined, restored.dueAt))
    deepStrictEqual([...first, ...rest], straight)
  })

  it('should describe itself with its arguments', () => {
    deepStrictEqual(Schedule.decorrelatedJitterV2(100).description, 'decorrelatedJitterV2(100)')
    deepStrictEqual(Schedule.decorrelatedJitterV2(100, 2000).description, 'decorrelatedJitterV2(100, 2000)')
  })
})
