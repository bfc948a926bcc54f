/**
 * The `fp-ts-retry` command, end to end: each test runs the CLI as a real process and checks its exit code, its
 * output and what it did.
 *
 * The CLI runs from a build laid out in `beforeAll` as an installation: the library's src/ transpiled into
 * `node_modules/fp-ts-retry/lib` beside its package.json (so the command loads it through its "exports", by name,
 * as from the registry), the command's cli/src into `cli/lib`, and every other dependency linked from the
 * repository's node_modules. The JavaScript is the tests' one transpiled copy of the sources (test/support/child.ts:
 * TypeScript's own transpiler, module node16, as `npm run build` makes lib/, without a type-check, which lint does):
 * a process then starts in a fraction of the time tsx's loader takes. The packed tarballs themselves are tested in
 * test/package.test.ts.
 */
import * as assert from 'assert'
import { spawn } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import * as Contention from 'fp-ts-retry/Contention'
import { compiledSources } from '../../test/support/child'

const repo = path.join(__dirname, '..', '..')
let build = ''
let entry = ''

/** Lays out the library and the command in `out` as npm installs them (see the top of this file). */
const install = (out: string): void => {
  const compiled = compiledSources()
  const library = path.join(out, 'node_modules', 'fp-ts-retry')
  // copies, not links: a module's dependencies resolve from where its file really is
  fs.cpSync(path.join(compiled, 'src'), path.join(library, 'lib'), { recursive: true })
  fs.copyFileSync(path.join(repo, 'package.json'), path.join(library, 'package.json'))
  fs.cpSync(path.join(compiled, 'cli', 'src'), path.join(out, 'cli', 'lib'), { recursive: true })
  fs.copyFileSync(path.join(repo, 'cli', 'package.json'), path.join(out, 'cli', 'package.json'))
  for (const name of fs.readdirSync(path.join(repo, 'node_modules'))) {
    // the workspace's links (to the repository, whose lib/ may be stale or missing) give way to this build
    if (name === 'fp-ts-retry' || name === 'fp-ts-retry-cli' || name.startsWith('.')) continue
    fs.symlinkSync(path.join(repo, 'node_modules', name), path.join(out, 'node_modules', name), 'dir')
  }
}

beforeAll(() => {
  build = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-cli-build-'))
  install(build)
  entry = path.join(build, 'cli', 'lib', 'main.js')
})

afterAll(() => {
  if (build !== '') fs.rmSync(build, { recursive: true, force: true })
})

interface Result {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

interface RunOptions {
  /** Send this signal once stderr matches `when`. */
  readonly signal?: { readonly name: NodeJS.Signals; readonly when: RegExp }
  /** Kill the CLI after this many ms, failing the test: no run may hang (the signal tests wait on 30 s sleeps and
   * commands, so a run that did not stop at once on the signal fails here). */
  readonly timeout?: number
}

let dir = ''

/** Runs `fp-ts-retry ...args` in the temporary directory. */
const cli = (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<Result> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let signalled = false
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`fp-ts-retry ${args.join(' ')} did not exit within ${options.timeout ?? 15_000} ms\n${stderr}`))
    }, options.timeout ?? 15_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      if (options.signal !== undefined && !signalled && options.signal.when.test(stderr)) {
        signalled = true
        child.kill(options.signal.name)
      }
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

/** A node script for `run` to retry: it counts its attempts in `count.txt` and exits with the codes given in turn. */
const flaky = (codes: ReadonlyArray<number>): ReadonlyArray<string> => [
  process.execPath,
  '-e',
  `const fs = require('fs')
   const n = fs.existsSync('count.txt') ? Number(fs.readFileSync('count.txt', 'utf8')) + 1 : 1
   fs.writeFileSync('count.txt', String(n))
   const codes = ${JSON.stringify(codes)}
   console.log('flaky attempt ' + n)
   process.exit(codes[Math.min(n, codes.length) - 1])`
]

/** A node script that records its attempts and its pid, then runs for 30 s unless killed. */
const slow: ReadonlyArray<string> = [
  process.execPath,
  '-e',
  `const fs = require('fs')
   fs.appendFileSync('attempts.txt', 'x')
   fs.writeFileSync('child.pid', String(process.pid))
   console.error('slow child ' + 'ready')
   setTimeout(() => process.exit(1), 30000)`
]

const attemptsMade = (file = 'count.txt'): number => {
  const p = path.join(dir, file)
  if (!fs.existsSync(p)) return 0
  const text = fs.readFileSync(p, 'utf8')
  return file === 'count.txt' ? Number(text) : text.length
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-ts-retry-cli-'))
})

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

jest.setTimeout(30_000)

describe('fp-ts-retry (the CLI)', () => {
  describe('--help', () => {
    it('should describe every command, and each command its options, with exit code 0', async () => {
      const [top, simulate, compare, run] = await Promise.all([
        cli(['--help']),
        cli(['simulate', '--help']),
        cli(['compare', '--help']),
        cli(['run', '--help'])
      ])
      for (const r of [top, simulate, compare, run]) assert.strictEqual(r.code, 0, r.stderr)
      assert.match(top.stdout, /Usage: fp-ts-retry/)
      for (const command of ['simulate', 'compare', 'run'])
        assert.match(top.stdout, new RegExp(`^\\s+${command} `, 'm'))
      assert.match(top.stdout, /@file\.json/)
      for (const option of ['--runs', '--retries', '--seed', '--attempt-duration', '--svg'])
        assert.ok(simulate.stdout.includes(option), option)
      for (const option of ['--clients', '--runs', '--aws', '--aws-retries', '--network', '--svg'])
        assert.ok(compare.stdout.includes(option), option)
      assert.match(run.stdout, /Usage: fp-ts-retry run \[options\] -- <command> \[args\.\.\.\]/)
      assert.match(run.stdout, /--schedule <config>/)
      assert.match(run.stdout, /SIGINT/)
    })

    // Regression (issue 18, defect 14): simulate --help printed its default twice, the second time escaped.
    it('should print the default config once, as JSON, in simulate and run --help', async () => {
      const [simulate, run] = await Promise.all([cli(['simulate', '--help']), cli(['run', '--help'])])
      for (const r of [simulate, run]) {
        assert.strictEqual(r.code, 0, r.stderr)
        assert.strictEqual(r.stdout.split('"maxElapsed":"10s"}').length - 1, 1, r.stdout)
        assert.ok(!r.stdout.includes('\\"'), r.stdout)
      }
    })

    it('should exit 2 with usage help for an unknown command or a bad option value', async () => {
      const [unknown, badRuns, badClients, hugeRetries, hexSeed, tooMany] = await Promise.all([
        cli(['bogus']),
        cli(['simulate', '--runs', 'abc']),
        cli(['compare', '--aws', '--clients', '10,x']),
        // regression: a huge --retries made an array of that length, and the process died out of memory
        cli(['simulate', '--retries', '4294967295']),
        // regression: Number() read 0x10 as 16
        cli(['simulate', '--seed', '0x10']),
        cli(['simulate', '--runs', '10000', '--retries', '10000'])
      ])
      assert.strictEqual(unknown.code, 2)
      assert.match(unknown.stderr, /unknown command 'bogus'/)
      assert.strictEqual(badRuns.code, 2)
      assert.match(badRuns.stderr, /--runs must be a whole number from 1 to 9,007,199,254,740,991, received "abc"/)
      assert.strictEqual(badClients.code, 2)
      assert.match(badClients.stderr, /expected client counts like 10,20,50/)
      assert.strictEqual(hugeRetries.code, 2)
      assert.match(hugeRetries.stderr, /--retries must be a whole number from 1 to 10,000, received "4294967295"/)
      assert.strictEqual(hexSeed.code, 2)
      assert.match(hexSeed.stderr, /the seed must be a whole number from 0 to 4294967295, received "0x10"/)
      assert.strictEqual(tooMany.code, 2)
      assert.match(
        tooMany.stderr,
        /--runs × --retries must be at most 10,000,000 \(the samples are kept in memory\), received 10000 × 10000\./
      )
    })

    // Regression: a file that could not be written printed a stack trace, after the table.
    it('should exit 1 with the system error alone when the plot cannot be written', async () => {
      const r = await cli(['simulate', '--runs', '10', '--svg', path.join(dir, 'no-such-folder', 'plot.svg')])
      assert.strictEqual(r.code, 1)
      assert.match(r.stderr, /^fp-ts-retry: ENOENT: no such file or directory, open '.*plot\.svg'\n$/)
    })

    it("should print fp-ts-retry-cli's version with --version", async () => {
      const r = await cli(['--version'])
      const { version } = JSON.parse(fs.readFileSync(path.join(repo, 'cli', 'package.json'), 'utf8')) as {
        version: string
      }
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(r.stdout, `${version}\n`)
    })

    it('should read --attempt-duration and --network as config durations, and exit 2 on a bad one', async () => {
      const [seconds, badDuration, badNetwork, badSeed] = await Promise.all([
        cli(['simulate', '{"constant": "100ms", "maxRetries": 1}', '--runs', '1', '--attempt-duration', '1.5s']),
        cli(['simulate', '--attempt-duration', '-1']),
        cli(['compare', '--aws', '--network', '10ms']),
        cli(['simulate', '--seed', '1.5'])
      ])
      assert.strictEqual(seconds.code, 0, seconds.stderr)
      assert.match(seconds.stdout, /each attempt taking 1,500 ms/)
      assert.match(seconds.stdout, /^\s+1\s+100%\s+100\s+100\s+100\s+100\s+1,600\s+1,600$/m)
      assert.strictEqual(badDuration.code, 2)
      assert.match(badDuration.stderr, /expected a duration >= 0 such as 250 \(ms\) or "1\.5s", received "-1"/)
      assert.strictEqual(badNetwork.code, 2)
      assert.match(badNetwork.stderr, /expected the network as mean,sd in ms/)
      assert.strictEqual(badSeed.code, 2)
      assert.match(badSeed.stderr, /the seed must be a whole number from 0 to 4294967295, received "1\.5"/)
    })
  })

  describe('a bad <config>', () => {
    it('should print every problem with its path and exit 2, for simulate, compare and run alike', async () => {
      fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ exponential: '100ms', cap: 'ten', maxRetry: 3 }))
      const [inline, file, notJson, missing, run] = await Promise.all([
        cli(['simulate', '{"exponential": "100ms", "cap": "ten", "maxRetry": 3}']),
        cli(['compare', '@bad.json']),
        cli(['simulate', '{exponential: 100}']),
        cli(['simulate', '@nope.json']),
        cli(['run', '--schedule', '{"constant": -1}', '--', ...flaky([0])])
      ])
      for (const r of [inline, file, notJson, missing, run]) {
        assert.strictEqual(r.code, 2, r.stderr)
        assert.strictEqual(r.stdout, '')
      }
      assert.match(inline.stderr, /the inline config is not a valid schedule config:/)
      assert.match(inline.stderr, /at schedule\.cap: expected a duration like "250ms" or a number of ms, got "ten"/)
      assert.match(inline.stderr, /at schedule\.maxRetry: expected one of the keys/)
      assert.match(file.stderr, /bad\.json is not a valid schedule config:\n {2}at schedule\.\w+/)
      assert.match(notJson.stderr, /the inline config is not valid JSON/)
      assert.match(missing.stderr, /cannot read the config file nope\.json: no such file/)
      assert.match(run.stderr, /at schedule\.constant: expected a duration/)
      assert.strictEqual(attemptsMade(), 0) // the command never ran
    })
  })

  describe('simulate', () => {
    it('should print, per retry, the delays and start times over the sampled runs', async () => {
      const r = await cli(['simulate', '{"constant": "100ms", "maxRetries": 3}', '--runs', '50'])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.match(r.stdout, /50 sampled runs \(seed 0\)/)
      assert.match(r.stdout, /retry\s+runs\s+min\s+median\s+p95\s+max\s+starts at \(median\)\s+starts at \(p95\)/)
      assert.match(r.stdout, /^\s+1\s+100%\s+100\s+100\s+100\s+100\s+100\s+100$/m)
      assert.match(r.stdout, /^\s+3\s+100%\s+100\s+100\s+100\s+100\s+300\s+300$/m)
      assert.doesNotMatch(r.stdout, /^\s+4\s/m)
      assert.match(r.stdout, /Every run stops by itself within 3 retries \(4 attempts\)\./)
    })

    it('should sample the default schedule, reproducibly for a seed, and read a named @file config', async () => {
      fs.writeFileSync(path.join(dir, 'policy.json'), JSON.stringify({ decorrelatedJitter: '10ms', cap: '1s' }))
      const [a, b, file] = await Promise.all([
        cli(['simulate', '--seed', '7', '--runs', '200']),
        cli(['simulate', '--seed', '7', '--runs', '200']),
        cli(['simulate', 'mine=@policy.json', '--retries', '4'])
      ])
      assert.strictEqual(a.code, 0, a.stderr)
      assert.strictEqual(a.stdout, b.stdout)
      assert.match(a.stdout, /"maxRetries":5/)
      assert.match(a.stdout, /^\s+5\s+100%/m)
      assert.strictEqual(file.code, 0, file.stderr)
      assert.match(file.stdout, /^mine$/m)
      assert.match(file.stdout, /No run stops within 4 retries/)
    })

    // Regression (issue 18, defect 14): a config with retryOn and no --error-code said only "No retry".
    it('should say which retryOn / neverRetryOn stopped every run, and name --error-code', async () => {
      const [none, other, never] = await Promise.all([
        cli(['simulate', '{"constant": "100ms", "maxRetries": 3, "retryOn": [75]}', '--runs', '10']),
        cli([
          'simulate',
          '{"constant": "100ms", "maxRetries": 3, "retryOn": [75]}',
          '--runs',
          '10',
          '--error-code',
          '3'
        ]),
        cli([
          'simulate',
          '{"intersect": [{"constant": "1s"}, {"constant": "100ms", "neverRetryOn": ["ECONNRESET"]}]}',
          '--error-code',
          'ECONNRESET'
        ])
      ])
      for (const r of [none, other, never]) assert.strictEqual(r.code, 0, r.stderr)
      assert.match(
        none.stdout,
        /No retry: the schedule stops at the first failure: retryOn \[75\] retries only failures with one of these codes, and these carry none \(give them one with --error-code\)\.\n$/
      )
      assert.match(other.stdout, /No retry: .*: error code 3 is not in retryOn \[75\] \(set by --error-code\)\.\n$/)
      assert.match(never.stdout, /No retry: .*: error code "ECONNRESET" is in neverRetryOn \["ECONNRESET"\]/)
      const listed = await cli([
        'simulate',
        '{"constant": "100ms", "maxRetries": 1, "retryOn": [75]}',
        '--error-code',
        '75'
      ])
      assert.match(listed.stdout, /Every run stops by itself within 1 retry/)
    })

    it('should write the delay band as an SVG plot with --svg', async () => {
      const r = await cli([
        'simulate',
        '{"exponential": "100ms", "cap": "2s", "jitter": "full", "maxRetries": 6}',
        '--runs',
        '100',
        '--svg',
        'band.svg'
      ])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.match(r.stdout, /Wrote band\.svg\./)
      const svg = fs.readFileSync(path.join(dir, 'band.svg'), 'utf8')
      assert.match(svg, /^<svg /)
      assert.match(svg, /Delay before each retry, over 100 sampled runs/)
      assert.match(svg, />p95</)
    })
  })

  describe('check, simulate --policy and schema (policy documents)', () => {
    const document = {
      policies: {
        payments: {
          timeout: '2s',
          breaker: { kind: 'consecutive', threshold: 5, halfOpenAfter: { constant: '30s' } },
          retry: { constant: '100ms', maxRetries: 3 },
          bulkhead: { maxConcurrent: 10, maxQueue: 0 }
        },
        search: { hedging: { delays: { constant: '50ms', maxRetries: 1 } } }
      }
    }

    it('check prints each pipeline and its layers in the order they run; a bad document, every problem, exit 2', async () => {
      fs.writeFileSync(path.join(dir, 'policy.json'), JSON.stringify(document))
      fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ policies: { p: { bulkhed: {}, timeout: -1 } } }))
      fs.writeFileSync(path.join(dir, 'big.json'), `{"policies":{},"x":"${'x'.repeat(10 * 1024 * 1024)}"}`)
      fs.writeFileSync(path.join(dir, 'notJson.json'), '{ policies: {} }')
      const [good, bad, missing, big, notJson] = await Promise.all([
        cli(['check', 'policy.json']),
        cli(['check', 'bad.json']),
        cli(['check', 'nothing.json']),
        cli(['check', 'big.json']),
        cli(['check', 'notJson.json'])
      ])
      assert.strictEqual(good.code, 0, good.stderr)
      assert.match(good.stdout, /^policy\.json: a valid policy document, 2 pipelines\.$/m)
      const layers = good.stdout
        .split('\n')
        .filter((line) => /^\s+\d\. /.test(line))
        .map((line) => line.trim().split(/\s{2,}/)[0])
      assert.deepStrictEqual(layers, ['1. timeout', '2. breaker', '3. retry', '4. bulkhead', '1. hedging'])
      assert.match(good.stdout, /^ {2}1\. timeout {3}2 s for each attempt$/m)
      assert.strictEqual(bad.code, 2)
      assert.match(bad.stderr, /at policies\.p\.bulkhed: .* \(did you mean "bulkhead"\?\)/)
      assert.match(bad.stderr, /at policies\.p\.timeout: expected a duration > 0/)
      assert.strictEqual(missing.code, 2)
      assert.match(missing.stderr, /cannot read the policy file nothing\.json: no such file/)
      assert.strictEqual(big.code, 2)
      assert.match(big.stderr, /big\.json: 10485782 bytes, more than the 1048576 a policy document may have/)
      assert.strictEqual(notJson.code, 2)
      assert.match(notJson.stderr, /notJson\.json is not valid JSON \(/)
      const throttled = {
        policies: { p: { timeout: '1s', throttle: { k: 1.5, window: '1m' }, retry: { constant: 1 } } }
      }
      fs.writeFileSync(path.join(dir, 'throttled.json'), JSON.stringify(throttled))
      const withThrottle = await cli(['check', 'throttled.json'])
      assert.strictEqual(withThrottle.code, 0, withThrottle.stderr)
      assert.match(
        withThrottle.stdout,
        /^ {2}2\. throttle {2}adaptive: drops attempts once more than 1\/1\.5 are refused for overload, over the last 1 min$/m
      )
    })

    it("simulate --policy samples a pipeline's schedule; it needs --pipeline when there are several", async () => {
      fs.writeFileSync(path.join(dir, 'policy.json'), JSON.stringify(document))
      const budgeted = {
        policies: { p: { retry: { constant: 1 }, budget: { kind: 'retryThrottle', maxTokens: 10, tokenRatio: 0.1 } } }
      }
      fs.writeFileSync(path.join(dir, 'budget.json'), JSON.stringify(budgeted))
      const simulate = (...args: ReadonlyArray<string>) =>
        cli(['simulate', '--policy', 'policy.json', '--runs', '10', ...args])
      const [payments, cut, short, search, budget, which, both] = await Promise.all([
        simulate('--pipeline', 'payments'),
        simulate('--pipeline', 'payments', '--attempt-duration', '5s'),
        simulate('--pipeline', 'payments', '--attempt-duration', '50'),
        simulate('--pipeline', 'search'),
        cli(['simulate', '--policy', 'budget.json', '--runs', '10']),
        cli(['simulate', '--policy', 'policy.json']),
        cli(['simulate', '{"constant": 1}', '--policy', 'policy.json'])
      ])
      assert.strictEqual(payments.code, 0, payments.stderr)
      assert.match(payments.stdout, /^payments \(policy\.json\)$/m)
      // each attempt takes the pipeline's whole timeout (2 s) unless --attempt-duration says otherwise
      assert.match(payments.stdout, /^\s+3\s+100%\s+100\s+100\s+100\s+100\s+6,300/m)
      assert.match(payments.stdout, /within 3 retries/)
      assert.match(payments.stdout, /^Each attempt takes the pipeline's whole timeout \(2 s\)/m)
      assert.match(
        payments.stdout,
        /^Not simulated, and each can end a run sooner: the breaker \(consecutive\) refuses the attempts while it is open; the bulkhead refuses a run while it is full\.$/m
      )
      assert.strictEqual(cut.code, 0, cut.stderr)
      assert.match(cut.stdout, /^\s+3\s+100%\s+100\s+100\s+100\s+100\s+6,300/m)
      assert.match(
        cut.stdout,
        /^The pipeline's timeout \(2 s\) cuts each attempt: --attempt-duration 5 s counted as 2 s\.$/m
      )
      assert.strictEqual(short.code, 0, short.stderr)
      assert.match(short.stdout, /^\s+3\s+100%\s+100\s+100\s+100\s+100\s+450/m)
      assert.doesNotMatch(short.stdout, /timeout/)
      // hedges start while the others run: the delays are between starts, and nothing else applies
      assert.strictEqual(search.code, 0, search.stderr)
      assert.match(search.stdout, /^\s+1\s+100%\s+50\s+50\s+50\s+50\s+50/m)
      assert.doesNotMatch(search.stdout, /Not simulated|timeout/)
      assert.strictEqual(budget.code, 0, budget.stderr)
      assert.match(budget.stdout, /the budget \(retryThrottle\): in an outage, a full one allows 4 retries in all/)
      assert.strictEqual(which.code, 2)
      assert.match(which.stderr, /names 2 pipelines \(payments, search\): choose one with --pipeline/)
      assert.strictEqual(both.code, 2)
      assert.match(both.stderr, /a <config> or --policy, not both/)
    })

    it('schema prints the JSON Schema of a document', async () => {
      const r = await cli(['schema'])
      assert.strictEqual(r.code, 0, r.stderr)
      const schema = JSON.parse(r.stdout) as { $schema: string; required: ReadonlyArray<string> }
      assert.strictEqual(schema.$schema, 'http://json-schema.org/draft-07/schema#')
      assert.deepStrictEqual(schema.required, ['policies'])
    })
  })

  describe('compare', () => {
    it('should compare schedules in the contention simulation and plot calls and time against clients', async () => {
      const r = await cli([
        'compare',
        '--aws',
        'capped={"exponential": "10ms", "cap": "2s", "jitter": "full"}',
        '--clients',
        '5,10',
        '--runs',
        '10',
        '--svg',
        'contention.svg'
      ])
      assert.strictEqual(r.code, 0, r.stderr)
      for (const name of ['none', 'exponential', 'full jitter', 'equal jitter', 'decorrelated', 'capped']) {
        assert.match(r.stdout, new RegExp(`^\\s+5\\s+${name}\\s+[\\d.]+ ± `, 'm'))
        assert.match(r.stdout, new RegExp(`^\\s+10\\s+${name}\\s+[\\d.]+ ± `, 'm'))
      }
      assert.match(r.stdout, /10 clients: least work .*; first to finish /)
      // the config built from JSON is the same schedule as the article's full jitter: the same means
      const mean = (name: string) => new RegExp(`^\\s+10\\s+${name}\\s+([\\d.,]+ ± [\\d.,]+)`, 'm').exec(r.stdout)?.[1]
      assert.strictEqual(mean('capped'), mean('full jitter'))
      const svg = fs.readFileSync(path.join(dir, 'contention.svg'), 'utf8')
      assert.match(svg, /^<svg /)
      assert.match(svg, /calls: writes received/)
    })

    // Issue 27: the AWS SDKs' retries 2.0 and 2.1 side by side, as the library's Contention.awsRetries builds them.
    it("should compare the AWS SDKs' retries 2.0 and 2.1 with --aws-retries, with the clients that gave up", async () => {
      const r = await cli(['compare', '--aws-retries', '--clients', '20', '--runs', '10'])
      assert.strictEqual(r.code, 0, r.stderr)
      for (const name of ['AWS 2.0 backoff', 'AWS 2.1 backoff', 'AWS 2.0 SDK', 'AWS 2.1 SDK'])
        assert.match(
          r.stdout,
          new RegExp(`^\\s+20\\s+${name}\\s+[\\d.]+ ± [\\d.]+\\s+[\\d,]+ ± [\\d,]+\\s+[\\d.]+ ± `, 'm')
        )
      assert.match(r.stdout, /gave up/)
      assert.match(r.stdout, /where clients gave up, fewer calls and an earlier finish include the writes never made/)
      // the same seeds as the library's comparison: the command prints its means
      const rows = Contention.compare({ candidates: Contention.awsRetries(), clients: [20], runs: 10 })
      for (const row of rows) assert.ok(r.stdout.includes(row.calls.mean.toFixed(1)), `${row.name}: ${row.calls.mean}`)
    })

    it('should exit 2 when there is nothing to compare', async () => {
      const r = await cli(['compare'])
      assert.strictEqual(r.code, 2)
      assert.match(
        r.stderr,
        /compare needs at least one <config>, --aws for the article's strategies, or --aws-retries/
      )
    })
  })

  describe('run', () => {
    it('should retry a command that fails twice, then exit 0, with progress on stderr', async () => {
      const r = await cli(['run', '--schedule', '{"constant": "20ms", "maxRetries": 5}', '--', ...flaky([3, 3, 0])])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(attemptsMade(), 3)
      assert.match(r.stdout, /flaky attempt 1\nflaky attempt 2\nflaky attempt 3\n/) // the command's own output
      assert.match(r.stderr, /fp-ts-retry: attempt 1 exited with code 3; retry 1 in 20 ms\n/)
      assert.match(r.stderr, /fp-ts-retry: attempt 2 exited with code 3; retry 2 in 20 ms\n/)
      assert.match(r.stderr, /fp-ts-retry: attempt 3 exited with code 0: done after 3 attempts\n/)
    })

    it("should exit with the last attempt's code when the schedule stops", async () => {
      const r = await cli(['run', '--schedule', '{"constant": "10ms", "maxRetries": 2}', '--', ...flaky([5, 6, 7, 0])])
      assert.strictEqual(r.code, 7, r.stderr)
      assert.strictEqual(attemptsMade(), 3)
      assert.match(
        r.stderr,
        /attempt 3 exited with code 7; the schedule stops after 2 retries: giving up with exit code 7/
      )
    })

    it('should let the schedule see the exit code: neverRetryOn stops at once, and a missing command is never retried', async () => {
      const fatal = await cli([
        'run',
        '--schedule',
        '{"constant": "10ms", "maxRetries": 5, "neverRetryOn": [4]}',
        '--',
        ...flaky([4, 0])
      ])
      assert.strictEqual(fatal.code, 4, fatal.stderr)
      assert.strictEqual(attemptsMade(), 1)
      assert.match(fatal.stderr, /stops after 0 retries \(exit code 4 is in neverRetryOn \[4\]\)/)
      const missing = await cli([
        'run',
        '--schedule',
        '{"constant": "10ms", "maxRetries": 5}',
        '--',
        'fp-ts-retry-no-such-command'
      ])
      assert.strictEqual(missing.code, 127)
      assert.match(missing.stderr, /cannot run fp-ts-retry-no-such-command: command not found/)
      assert.doesNotMatch(missing.stderr, /attempt 2/)
    })

    // Regression (issue 18, defect 14): a retryOn that did not list the exit code said "stops after 0 retries" only.
    it('should say which retryOn / neverRetryOn stopped the run', async () => {
      const r = await cli([
        'run',
        '--schedule',
        '{"constant": "10ms", "maxRetries": 5, "retryOn": [75]}',
        '--',
        ...flaky([75, 3, 0])
      ])
      assert.strictEqual(r.code, 3, r.stderr)
      assert.strictEqual(attemptsMade(), 2)
      assert.match(
        r.stderr,
        /attempt 2 exited with code 3; the schedule stops after 1 retry \(exit code 3 is not in retryOn \[75\]\): giving up with exit code 3\n/
      )
      const maxed = await cli([
        'run',
        '--schedule',
        '{"constant": "10ms", "maxRetries": 0, "retryOn": [4]}',
        '--',
        ...flaky([4])
      ])
      assert.match(maxed.stderr, /the schedule stops after 0 retries: giving up with exit code 4\n/)
    })

    it('should stop at once on SIGINT while waiting to retry: no further attempt, exit code 130', async () => {
      const r = await cli(['run', '--schedule', '{"constant": "30s"}', '--', ...flaky([9])], {
        signal: { name: 'SIGINT', when: /retry 1 in 30,000 ms/ }
      })
      assert.strictEqual(r.code, 130, r.stderr)
      assert.strictEqual(attemptsMade(), 1)
      assert.match(r.stderr, /stopped by SIGINT after 1 attempt; no further retry/)
      assert.doesNotMatch(r.stderr, /attempt 2/)
    })

    it('should kill the running command on SIGINT and make no further attempt', async () => {
      const r = await cli(['run', '--schedule', '{"constant": "10ms"}', '--', ...slow], {
        signal: { name: 'SIGINT', when: /slow child ready/ }
      })
      assert.strictEqual(r.code, 130, r.stderr)
      const pid = Number(fs.readFileSync(path.join(dir, 'child.pid'), 'utf8'))
      assert.ok(!alive(pid), `the command (pid ${pid}) is still running`)
      assert.strictEqual(attemptsMade('attempts.txt'), 1)
      assert.match(r.stderr, /received SIGINT: stopping, and stopping the running command/)
    })

    it("should write the run's events as JSON lines with --events, an Error as { name, message }", async () => {
      const r = await cli([
        'run',
        '--events',
        'events.jsonl',
        '--schedule',
        '{"constant": "20ms", "maxRetries": 5}',
        '--',
        ...flaky([3, 0])
      ])
      assert.strictEqual(r.code, 0, r.stderr)
      const events = fs
        .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      const at0 = events[0].at as number
      assert.deepStrictEqual(
        events.map(({ at, latency: _latency, elapsed: _elapsed, run, ...rest }) => {
          assert.ok(typeof at === 'number' && at >= at0 && typeof run === 'number', JSON.stringify(rest))
          return rest
        }),
        [
          { _tag: 'AttemptStarted', source: 'retry', attempt: 1 },
          { _tag: 'AttemptFailed', source: 'retry', attempt: 1, error: { code: 3, signal: null } },
          { _tag: 'RetryScheduled', source: 'retry', attempt: 1, delay: 20 },
          { _tag: 'AttemptStarted', source: 'retry', attempt: 2 },
          { _tag: 'AttemptSucceeded', source: 'retry', attempt: 2 },
          { _tag: 'RunStopped', source: 'retry', attempts: 2, reason: 'succeeded' }
        ]
      )
      // the attempt's latency and the run's elapsed time are the ones the clock saw
      assert.ok((events[5].elapsed as number) >= 20)
      const missing = await cli([
        'run',
        '--events',
        'missing.jsonl',
        '--schedule',
        '{"constant": "10ms", "maxRetries": 5}',
        '--',
        'fp-ts-retry-no-such-command'
      ])
      assert.strictEqual(missing.code, 127)
      const failed = JSON.parse(fs.readFileSync(path.join(dir, 'missing.jsonl'), 'utf8').split('\n')[1]) as Record<
        string,
        unknown
      >
      assert.deepStrictEqual(failed.error, {
        name: 'SpawnError',
        message: 'cannot run fp-ts-retry-no-such-command: command not found'
      })
      const unwritable = await cli(['run', '--events', path.join(dir, 'no', 'such', 'dir.jsonl'), '--', ...flaky([0])])
      assert.strictEqual(unwritable.code, 1)
      assert.match(unwritable.stderr, /^fp-ts-retry: ENOENT: no such file or directory, open .*dir\.jsonl'\n$/)
      assert.strictEqual(attemptsMade(), 2) // not run when its events cannot be written
    })

    it('should stop the same way on SIGTERM, with exit code 143', async () => {
      const r = await cli(['run', '--schedule', '{"constant": "10ms"}', '--', ...slow], {
        signal: { name: 'SIGTERM', when: /slow child ready/ }
      })
      assert.strictEqual(r.code, 143, r.stderr)
      const pid = Number(fs.readFileSync(path.join(dir, 'child.pid'), 'utf8'))
      assert.ok(!alive(pid), `the command (pid ${pid}) is still running`)
      assert.strictEqual(attemptsMade('attempts.txt'), 1)
    })
  })
})
