/**
 * `fp-ts-retry overload`, in process: the command's table is the library's simulation, phase by phase, and its plot
 * a spec of the same runs. (cli.test.ts runs the command as a process; this one needs no process to check a report.)
 */
import * as assert from 'assert'
import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
import * as Overload from 'fp-ts-retry/Overload'
import * as vega from 'vega'
import * as vl from 'vega-lite'
import { overloadSpec } from '../src/plot'
import { main } from '../src/program'

const run = async (args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> => {
  let stdout = ''
  let stderr = ''
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) })
  return { code, stdout, stderr }
}

/** The table's row of a phase and a limit, split into its cells. */
const row = (stdout: string, phase: string, limit: string): ReadonlyArray<string> => {
  const line = stdout.split('\n').find((l) => l.startsWith(phase) && l.includes(` ${limit} `))
  assert.ok(line !== undefined, `no row ${phase} / ${limit} in\n${stdout}`)
  return line.trim().split(/\s{2,}/)
}

describe('fp-ts-retry overload', () => {
  it('should print, phase by phase, what the simulation measured for each limit', async () => {
    const args = ['overload', '--bulkhead', '2,8', '--phase', '5s', '--rate', '500', '--seed', '4']
    // (--adaptive defaults to gradient,aimd)
    const { code, stdout } = await run(args)
    assert.strictEqual(code, 0)
    const phases = [10, 25, 10].map((serviceTime) => ({ duration: 5_000, rate: 500, serviceTime }))
    // the command's adaptive limits: floor 1, start 8, ceiling 64, windows of 100 ms
    const limits = { min: 1, initial: 8, max: 64, window: { duration: 100, minSamples: 10 } }
    const candidates = [
      Overload.unlimited,
      Overload.bulkhead(2),
      Overload.bulkhead(8),
      Overload.adaptive({ ...limits, algorithm: AdaptiveLimit.gradient() }),
      Overload.adaptive({ ...limits, algorithm: AdaptiveLimit.aimd({ backoffRatio: 0.9, latencyThreshold: 50 }) })
    ]
    for (const candidate of candidates) {
      const outcome = Overload.simulate({ candidate, phases, seed: 4 })
      ;['before', 'slowdown', 'after'].forEach((phase, i) => {
        const cells = row(stdout, phase, candidate.name)
        const t = outcome.phases[i]
        assert.strictEqual(cells[2], Math.round(t.throughput).toLocaleString('en-US'))
        assert.strictEqual(cells[4], Math.round(t.shed).toLocaleString('en-US'))
        assert.strictEqual(cells[5], Math.round(t.timedOut).toLocaleString('en-US'))
      })
    }
    assert.match(stdout, /slowdown: 5 s at 500 requests\/s, served in 25 ms on average \(capacity 320\/s\)/)
  })

  it('should plot the same runs: a Vega-Lite spec that vega renders to SVG', async () => {
    const phases = [10, 25, 10].map((serviceTime) => ({ duration: 3_000, rate: 600, serviceTime }))
    const runs = [Overload.unlimited, Overload.bulkhead(16)].map((candidate) => ({
      name: candidate.name,
      outcome: Overload.simulate({ candidate, phases })
    }))
    const spec = overloadSpec(runs, 'a subtitle')
    const values = (spec.data as { values: ReadonlyArray<{ limit: string; throughput: number; fleet: number | null }> })
      .values
    assert.strictEqual(values.length, 2 * 9)
    assert.deepStrictEqual(
      values.filter((v) => v.limit === 'bulkhead 16').map((v) => v.throughput),
      runs[1].outcome.series.map((i) => i.throughput)
    )
    assert.ok(values.filter((v) => v.limit === 'no limit').every((v) => v.fleet === null))
    // vega-lite and vega are loaded by import() in the command, which jest cannot do: rendered here by require
    const compiled = vl.compile(spec as never).spec
    const svg = await new vega.View(vega.parse(compiled), { renderer: 'none' }).toSVG()
    assert.match(svg, /^<svg/)
    for (const label of ['no limit', 'bulkhead 16', 'p99 latency', "the fleet's limit"])
      assert.ok(svg.includes(label), label)
  }, 30_000)

  it('should refuse a bad option with exit code 2, naming the value', async () => {
    const bad = await run(['overload', '--bulkhead', '0'])
    assert.strictEqual(bad.code, 2)
    assert.match(bad.stderr, /received "0"/)
    const slow = await run(['overload', '--slow-service', 'soon'])
    assert.strictEqual(slow.code, 2)
    assert.match(slow.stderr, /received "soon"/)
    const vegas = await run(['overload', '--adaptive', 'vegas'])
    assert.strictEqual(vegas.code, 2)
    assert.match(vegas.stderr, /expected gradient, aimd, both \(gradient,aimd\) or none, received "vegas"/)
  })
})
