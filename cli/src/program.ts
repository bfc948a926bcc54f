/**
 * The commands of `fp-ts-retry`, on commander: `simulate`, `compare`, `overload`, `run`, `check` and `schema`, each
 * with `--help`.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import * as fs from 'fs'
import * as path from 'path'
import * as Contention from 'fp-ts-retry/Contention'
import * as Overload from 'fp-ts-retry/Overload'
import * as AdaptiveLimit from 'fp-ts-retry/AdaptiveLimit'
import * as Random from 'fp-ts-retry/Random'
import { Duration } from 'fp-ts-retry/ScheduleConfig'
import { codeCondition, DEFAULT_CONFIG, readConfig, showCodeCondition, UsageError } from './config'
import { compareReport } from './contention'
import { overloadReport } from './overload'
import { contentionSpec, delayBandSpec, overloadSpec, writeSvg } from './plot'
import { attemptDurationOf, describePolicy, policySchedule, readPolicy } from './policy'
import { lineFile, runCommand } from './run'
import { jsonSchema } from 'fp-ts-retry/PolicyConfig'
import { sample, sampleReport } from './sample'

export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
}

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text)
}

/** The version of fp-ts-retry-cli: its package.json is the parent of lib/ (and of src/). */
const version = (): string => {
  const file = path.join(__dirname, '..', 'package.json')
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
}

/** Decimal digits only: `Number` would also read `0x10`, `0b11` and `1e3`. */
const DECIMAL = /^\s*\d+\s*$/

const wholeNumber =
  (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string): number => {
    const n = Number(value)
    if (!DECIMAL.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${name} must be a whole number from ${min} to ${max.toLocaleString('en-US')}, received ${JSON.stringify(
          value
        )}.`
      )
    }
    return n
  }

/** The samples of `simulate` are kept in memory: runs × retries numbers, twice. */
const MAX_SAMPLES = 10_000_000

// The seed and the durations are checked by the library's own rules (Random.seeded, ScheduleConfig.Duration), so
// that the command accepts exactly what a config or a program may say.
const seedNumber = (value: string): number => {
  const n = DECIMAL.test(value) ? Number(value) : NaN
  try {
    Random.seeded(n)
  } catch {
    throw new InvalidArgumentError(
      `the seed must be a whole number from 0 to 4294967295, received ${JSON.stringify(value)}.`
    )
  }
  return n
}

/** A duration as a config writes it: a number of ms (`250`) or a string such as `"1.5s"`; undefined if invalid. */
const duration = (value: string): number | undefined => {
  const decoded = Duration.decode(value)
  return decoded._tag === 'Right' ? decoded.right : undefined
}

const milliseconds = (value: string): number => {
  const n = duration(value)
  if (n === undefined) {
    throw new InvalidArgumentError(
      `expected a duration >= 0 such as 250 (ms) or "1.5s", received ${JSON.stringify(value)}.`
    )
  }
  return n
}

const clientList = (value: string): ReadonlyArray<number> => {
  const items = value.split(',').map((s) => s.trim())
  const counts = items.map(Number)
  if (items.length === 0 || counts.some((n, i) => items[i] === '' || !Number.isSafeInteger(n) || n < 1)) {
    throw new InvalidArgumentError(
      `expected client counts like 10,20,50 (whole numbers >= 1), received ${JSON.stringify(value)}.`
    )
  }
  return counts
}

const network = (value: string): Contention.Network => {
  const parts = value.split(',').map(duration)
  const [mean, sd] = parts
  if (parts.length !== 2 || mean === undefined || sd === undefined) {
    throw new InvalidArgumentError(
      `expected the network as mean,sd in ms, like 10,2, received ${JSON.stringify(value)}.`
    )
  }
  return { mean, sd }
}

const algorithmList = (value: string): ReadonlyArray<'gradient' | 'aimd'> => {
  if (value.trim() === 'none') return []
  const items = value.split(',').map((s) => s.trim())
  if (items.length === 0 || items.some((a) => a !== 'gradient' && a !== 'aimd')) {
    throw new InvalidArgumentError(
      `expected gradient, aimd, both (gradient,aimd) or none, received ${JSON.stringify(value)}.`
    )
  }
  return items as ReadonlyArray<'gradient' | 'aimd'>
}

const errorCode = (value: string): string | number => (/^-?\d+$/.test(value.trim()) ? Number(value) : value)

const CONFIG_HELP = `
<config> is a schedule config (the JSON of fp-ts-retry/ScheduleConfig), inline or as @file.json, e.g.
  '{"exponential": "100ms", "cap": "2s", "jitter": "full", "maxRetries": 5}'
  '{"decorrelatedJitter": "5ms", "cap": "2s", "maxElapsed": "30s"}'
  @retry-policy.json
A bad config prints every problem in it and exits with code 2.`

/** Builds the program; `io` receives everything it prints, `exit` the code of a run that ends early. */
export const program = (io: Io = processIo): Command => {
  const root = new Command('fp-ts-retry')
    .description('See what a retry schedule does, compare schedules under contention, and retry a command.')
    .version(version(), '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .addHelpText(
      'after',
      `${CONFIG_HELP}\n\nRun \`fp-ts-retry <command> --help\` for a command's options and examples.`
    )

  root
    .command('simulate')
    .summary("show a schedule's delays, retry by retry, over many sampled runs")
    .description(
      "Sample many runs of a schedule's delays and show, for each retry, the min / median / p95 / max delay and when it starts."
    )
    // the default's description is the JSON itself: commander would print it again, escaped, as a string
    .addArgument(new Argument('[config]', 'the schedule config').default(DEFAULT_CONFIG, DEFAULT_CONFIG))
    .addOption(new Option('--runs <n>', 'how many runs to sample').default(1000).argParser(wholeNumber('--runs', 1)))
    .addOption(
      new Option('--retries <n>', 'the most retries to show, for schedules that never stop (at most 10,000)')
        .default(10)
        .argParser(wholeNumber('--retries', 1, 10_000))
    )
    .addOption(new Option('--seed <n>', 'the seed of the jitter draws').default(0).argParser(seedNumber))
    .addOption(
      new Option(
        '--attempt-duration <duration>',
        'how long each attempt takes, in ms or as "1.5s" (counted by maxElapsed; with --policy, cut by the pipeline\'s timeout, and the whole timeout when not given)'
      )
        .default(0)
        .argParser(milliseconds)
    )
    .addOption(
      new Option(
        '--error-code <code>',
        'the error code each failure carries (matched by retryOn / neverRetryOn)'
      ).argParser(errorCode)
    )
    .option('--svg <file>', 'also write a plot of the delay band over the retries to this SVG file')
    .option(
      '--policy <file>',
      "simulate a pipeline's retry (or hedging) schedule from a policy document instead of a <config>"
    )
    .option('--pipeline <name>', 'the pipeline of --policy to simulate (needed when the document names several)')
    .addHelpText(
      'after',
      `${CONFIG_HELP}

Examples:
  fp-ts-retry simulate
  fp-ts-retry simulate --policy policy.json --pipeline payments
  fp-ts-retry simulate '{"exponential": "100ms", "cap": "2s", "jitter": "full", "maxRetries": 8}' --svg delays.svg
  fp-ts-retry simulate '{"decorrelatedJitter": "100ms", "cap": "10s"}' --retries 15 --runs 5000`
    )
    .action(
      async (
        argument: string,
        options: {
          runs: number
          retries: number
          seed: number
          attemptDuration: number
          errorCode?: string | number
          svg?: string
          policy?: string
          pipeline?: string
        },
        command: Command
      ) => {
        if (options.runs * options.retries > MAX_SAMPLES) {
          throw new UsageError(
            `--runs × --retries must be at most ${MAX_SAMPLES.toLocaleString(
              'en-US'
            )} (the samples are kept in memory), received ${options.runs} × ${options.retries}.`
          )
        }
        if (options.policy !== undefined && command.args.length > 0) {
          throw new UsageError('simulate takes a <config> or --policy, not both.')
        }
        if (options.pipeline !== undefined && options.policy === undefined)
          throw new UsageError('--pipeline goes with --policy.')
        const policy =
          options.policy === undefined
            ? undefined
            : policySchedule(options.policy, readPolicy(options.policy), options.pipeline)
        const { name, schedule, config } = policy ?? readConfig(argument)
        const attempt =
          policy === undefined
            ? { attemptDuration: options.attemptDuration, note: undefined }
            : attemptDurationOf(
                policy,
                options.attemptDuration,
                command.getOptionValueSource('attemptDuration') !== 'default'
              )
        const sampleOptions = {
          runs: options.runs,
          retries: options.retries,
          seed: options.seed,
          attemptDuration: attempt.attemptDuration,
          input: options.errorCode === undefined ? undefined : { code: options.errorCode }
        }
        const result = sample(schedule, sampleOptions)
        const condition = codeCondition(config, options.errorCode)
        const why =
          condition === undefined
            ? undefined
            : `${showCodeCondition(condition, options.errorCode, 'error code')} (${
                options.errorCode === undefined ? 'give them one with --error-code' : 'set by --error-code'
              })`
        const notes = [
          attempt.note,
          policy === undefined || policy.notSimulated.length === 0
            ? undefined
            : `Not simulated, and each can end a run sooner: ${policy.notSimulated.join('; ')}.`
        ].filter((note): note is string => note !== undefined)
        io.stdout(`${[sampleReport(name, result, sampleOptions, why), ...notes].join('\n')}\n`)
        if (options.svg !== undefined) {
          await writeSvg(options.svg, delayBandSpec(name, result.runs, result.rows))
          io.stdout(`Wrote ${options.svg}.\n`)
        }
      }
    )

  root
    .command('compare')
    .summary('compare schedules in the contention simulation, over a range of client counts')
    .description(
      'Run the contention simulation (N clients racing to update one row, the AWS "Exponential Backoff and Jitter" model) ' +
        'for each schedule over a range of client counts: the work done and the completion time.'
    )
    .argument('[config...]', 'schedule configs to compare, each optionally named: name=<config>')
    .option(
      '--aws',
      "also compare the article's five strategies (none, exponential, full jitter, equal jitter, decorrelated; base 5 ms, cap 2 s)"
    )
    .option(
      '--aws-retries',
      "also compare the AWS SDKs' standard retries 2.0 and 2.1: each backoff alone, and as the SDKs ship it (3 attempts, the version's retry quota)"
    )
    .addOption(
      new Option('--clients <list>', 'the client counts, comma-separated')
        .default([10, 20, 50, 100], '10,20,50,100')
        .argParser(clientList)
    )
    .addOption(
      new Option('--runs <n>', 'runs per schedule and client count').default(100).argParser(wholeNumber('--runs', 2))
    )
    .addOption(new Option('--seed <n>', 'run i draws from Random.seeded(seed + i)').default(0).argParser(seedNumber))
    .addOption(
      new Option('--network <mean,sd>', 'the one-way message delay |Normal(mean, sd)|, each in ms or as "10ms"')
        .default(Contention.awsNetwork, '10,2')
        .argParser(network)
    )
    .option('--svg <file>', 'also write a plot of calls and completion time against clients to this SVG file')
    .addHelpText(
      'after',
      `${CONFIG_HELP}
Each client's schedule sees a conflict with code 409 (so "retryOn": [409] retries it).

Examples:
  fp-ts-retry compare --aws --clients 10,50,100
  fp-ts-retry compare --aws-retries --clients 10,100
  fp-ts-retry compare 'full={"exponential": "10ms", "cap": "2s", "jitter": "full"}' 'decorrelated={"decorrelatedJitter": "5ms", "cap": "2s"}' --svg contention.svg`
    )
    .action(
      async (
        configs: ReadonlyArray<string>,
        options: {
          aws?: boolean
          awsRetries?: boolean
          clients: ReadonlyArray<number>
          runs: number
          seed: number
          network: Contention.Network
          svg?: string
        }
      ) => {
        const candidates = [
          ...(options.aws === true ? Contention.awsStrategies() : []),
          ...(options.awsRetries === true ? Contention.awsRetries() : []),
          ...configs.map((c) => readConfig(c))
        ]
        if (candidates.length === 0)
          throw new UsageError(
            "compare needs at least one <config>, --aws for the article's strategies, or --aws-retries for the AWS SDKs' retries."
          )
        const rows = Contention.compare({
          candidates,
          clients: options.clients,
          runs: options.runs,
          seed: options.seed,
          network: options.network
        })
        io.stdout(`${compareReport(rows, options)}\n`)
        if (options.svg !== undefined) {
          await writeSvg(options.svg, contentionSpec(rows, options.runs))
          io.stdout(`Wrote ${options.svg}.\n`)
        }
      }
    )

  root
    .command('overload')
    .summary('compare no limit, fixed bulkheads and adaptive limits against a server that slows down')
    .description(
      'Run the overload simulation: a fleet of clients, each behind its own concurrency limit, sends requests to a server ' +
        'whose latency rises with its load; midway the server slows down, then recovers. For no limit, each --bulkhead ' +
        'and each --adaptive algorithm: the throughput, the p99 latency, the requests shed and timed out, phase by phase.'
    )
    .addOption(
      new Option('--bulkhead <list>', 'fixed bulkheads to compare: slots per client, comma-separated')
        .default([16], '16')
        .argParser(clientList)
    )
    .addOption(
      new Option(
        '--adaptive <list>',
        'adaptive limits to compare: gradient, aimd or both, comma-separated; none for none'
      )
        .default(['gradient', 'aimd'], 'gradient,aimd')
        .argParser(algorithmList)
    )
    .addOption(
      new Option('--window <duration>', "the adaptive limits' window of samples")
        .default(100, '100ms')
        .argParser(milliseconds)
    )
    .addOption(
      new Option('--latency-threshold <duration>', 'the latency over which aimd backs off')
        .default(50, '50ms')
        .argParser(milliseconds)
    )
    .addOption(
      new Option('--max-limit <n>', "the adaptive limits' ceiling, per client (they start at 8, floor 1)")
        .default(64)
        .argParser(wholeNumber('--max-limit', 8, 100_000))
    )
    .addOption(new Option('--clients <n>', 'the clients').default(4).argParser(wholeNumber('--clients', 1, 10_000)))
    .addOption(
      new Option('--workers <n>', "the server's workers").default(8).argParser(wholeNumber('--workers', 1, 10_000))
    )
    .addOption(
      new Option('--rate <n>', 'requests per second the fleet sends')
        .default(600)
        .argParser(wholeNumber('--rate', 1, 1_000_000))
    )
    .addOption(
      new Option('--service <duration>', 'the mean service time before and after the slowdown')
        .default(10)
        .argParser(milliseconds)
    )
    .addOption(
      new Option('--slow-service <duration>', 'the mean service time during the slowdown')
        .default(25)
        .argParser(milliseconds)
    )
    .addOption(
      new Option('--phase <duration>', 'how long each of the three phases lasts')
        .default(20_000, '20s')
        .argParser(milliseconds)
    )
    .addOption(
      new Option('--timeout <duration>', 'how long a client waits for an answer')
        .default(1_000, '1s')
        .argParser(milliseconds)
    )
    .addOption(new Option('--seed <n>', 'the seed of the arrivals and service times').default(0).argParser(seedNumber))
    .option('--svg <file>', 'also write a plot of throughput, p99 latency and the limit over time to this SVG file')
    .addHelpText(
      'after',
      `
Examples:
  fp-ts-retry overload
  fp-ts-retry overload --bulkhead 4,16,64 --adaptive gradient --svg overload.svg
  fp-ts-retry overload --rate 900 --slow-service 40ms --clients 10`
    )
    .action(
      async (options: {
        bulkhead: ReadonlyArray<number>
        adaptive: ReadonlyArray<'gradient' | 'aimd'>
        window: number
        latencyThreshold: number
        maxLimit: number
        clients: number
        workers: number
        rate: number
        service: number
        slowService: number
        phase: number
        timeout: number
        seed: number
        svg?: string
      }) => {
        const phase = (serviceTime: number): Overload.Phase => ({
          duration: options.phase,
          rate: options.rate,
          serviceTime
        })
        const phases = [phase(options.service), phase(options.slowService), phase(options.service)]
        if (options.window <= 0) throw new UsageError('--window must be a duration > 0, received 0.')
        const limits = {
          min: 1,
          initial: 8,
          max: options.maxLimit,
          window: { duration: options.window, minSamples: 10 }
        }
        const algorithms = {
          gradient: () => AdaptiveLimit.gradient(),
          aimd: () =>
            AdaptiveLimit.aimd({ backoffRatio: 0.9, latencyThreshold: Math.max(1e-3, options.latencyThreshold) })
        }
        const candidates = [
          Overload.unlimited,
          ...options.bulkhead.map(Overload.bulkhead),
          ...options.adaptive.map((kind) => Overload.adaptive({ ...limits, algorithm: algorithms[kind]() }))
        ]
        const runs = candidates.map((candidate) => ({
          name: candidate.name,
          outcome: Overload.simulate({
            candidate,
            phases,
            clients: options.clients,
            workers: options.workers,
            timeout: options.timeout,
            seed: options.seed
          })
        }))
        const reportOptions = { ...options, phases }
        io.stdout(`${overloadReport(runs, reportOptions)}\n`)
        if (options.svg !== undefined) {
          const subtitle = `${options.clients} clients, ${options.workers} workers, ${options.rate} requests/s; the service time goes from ${options.service} to ${options.slowService} ms and back (seed ${options.seed})`
          await writeSvg(options.svg, overloadSpec(runs, subtitle))
          io.stdout(`Wrote ${options.svg}.\n`)
        }
      }
    )

  root
    .command('run')
    .summary('run a command, retrying it until it exits 0 or the schedule stops')
    .description(
      'Run a command, retrying it as the schedule says until it exits 0 or the schedule stops. Progress goes to stderr; ' +
        "the exit code is the last attempt's. SIGINT (Ctrl-C) or SIGTERM stops at once: the running command gets the signal " +
        '(and SIGKILL 2 s later), no further retry is made, and the exit code is 128 + the signal number (130 for Ctrl-C).'
    )
    .usage('[options] -- <command> [args...]')
    .argument('<command>', 'the program to run (not through a shell: use sh -c "..." for pipes and globs)')
    .argument('[args...]', 'its arguments')
    .addOption(new Option('--schedule <config>', 'the schedule config').default(DEFAULT_CONFIG, DEFAULT_CONFIG))
    .addOption(
      new Option('--seed <n>', 'seed the jitter draws, for a reproducible run (default: Math.random)').argParser(
        seedNumber
      )
    )
    .option(
      '--events <file>',
      "write the run's events to this file as JSON lines (attempts, retries, the stop), to look at its retries later"
    )
    .passThroughOptions()
    .addHelpText(
      'after',
      `${CONFIG_HELP}
The schedule sees each failure as { code: <exit code> }: "retryOn": [75] retries only exit code 75, and
"neverRetryOn": [2] gives up at once on exit code 2. A command that cannot be started (127: not found,
126: not executable) is not retried.

Examples:
  fp-ts-retry run --schedule '{"exponential": "200ms", "cap": "5s", "jitter": "full", "maxRetries": 6}' -- curl -fsS https://example.com/health
  fp-ts-retry run --schedule @retry-policy.json -- sh -c 'pg_isready -h db && ./migrate'
  fp-ts-retry run --events retries.jsonl -- ./deploy.sh   # then: jq -c 'select(._tag == "RetryScheduled")' retries.jsonl`
    )
    .action(
      async (
        command: string,
        args: ReadonlyArray<string>,
        options: { schedule: string; seed?: number; events?: string }
      ) => {
        const { schedule, config } = readConfig(options.schedule)
        const events = options.events === undefined ? undefined : lineFile(options.events)
        const code = await runCommand({
          command,
          args,
          schedule,
          why: (failure) => {
            const condition = codeCondition(config, failure.code)
            return condition === undefined ? undefined : showCodeCondition(condition, failure.code, 'exit code')
          },
          seed: options.seed,
          log: (line) => io.stderr(`fp-ts-retry: ${line}\n`),
          events: events?.write
        }).finally(() => events?.close())
        throw new CommanderError(code, 'fp-ts-retry.exit', '')
      }
    )

  root
    .command('check')
    .summary('validate a policy document and print the pipelines it builds')
    .description(
      'Validate a policy document (the JSON of fp-ts-retry/PolicyConfig) and print each pipeline it builds, its layers in ' +
        'the order they run. A bad document prints every problem, with its path, and exits with code 2.'
    )
    .argument('<file>', 'the policy document, e.g. policy.json')
    .addHelpText(
      'after',
      `
Examples:
  fp-ts-retry check policy.json
  fp-ts-retry schema > policy.schema.json   # then "$schema": "./policy.schema.json" in the document, for an editor`
    )
    .action((file: string) => {
      io.stdout(`${describePolicy(file, readPolicy(file))}\n`)
    })

  root
    .command('schema')
    .summary('print the JSON Schema of a policy document, for an editor')
    .description('Print the JSON Schema (draft-07) of a policy document, generated from the codec that checks it.')
    .action(() => {
      io.stdout(`${JSON.stringify(jsonSchema, null, 2)}\n`)
    })

  return root
}

/** Runs the CLI with the given arguments (without `node` and the script); resolves with the exit code. */
export const main = async (argv: ReadonlyArray<string>, io: Io = processIo): Promise<number> => {
  try {
    await program(io).parseAsync([...argv], { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'fp-ts-retry.exit') return error.exitCode
      // commander has already printed the problem; usage errors exit with 2, --help and --version with 0
      return error.exitCode === 0 ? 0 : 2
    }
    if (error instanceof UsageError) {
      io.stderr(`fp-ts-retry: ${error.message}\n`)
      return 2
    }
    if (error instanceof RangeError) {
      io.stderr(`fp-ts-retry: ${error.message}\n`)
      return 2
    }
    // An error of the system (a file that cannot be written, a command that cannot be started): its message says it.
    if (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string') {
      io.stderr(`fp-ts-retry: ${error.message}\n`)
      return 1
    }
    throw error
  }
}
