/**
 * `npm run bench:fleet`: jobs per second through a retry cycle on a real Redis, with the fp-ts-retry adapter
 * (`BullMQ.processor`, what `BullMQ.make` runs) against BullMQ's own exponential backoff, and against the floor
 * (BullMQ's backoff plus the write of a run's state, see fleet-worker.ts), at 1, 2 and 4 worker processes; and the
 * lateness of the retries (the start of the retry minus the time it was due). Prints the tables
 * and writes them into bench/RESULTS.md between the `fleet` markers (the file's other sections are left as they
 * are).
 *
 * Method: a throwaway redis-server (no persistence) per `hz` setting; every job fails its first attempt and
 * succeeds on its retry 10 ms later; each measurement is a fresh queue, and its worker processes are started and
 * connected before they are told to go. The library is measured compiled (fleet-definition.ts says why).
 *
 * - Throughput (at the default hz 10): `--jobs` jobs queued at once; the time runs from "go" to the last job
 *   completed (polled every 5 ms). The three sides run in each round, in an order reversed from round to round;
 *   each ratio to BullMQ is taken within a round, and the median is reported, with the CPU per job (the workers'
 *   and the server's) and the Redis calls per job the workers sent.
 * - Lateness (at hz 10 and hz 100): `LATE_JOBS` jobs added one every `LATE_EVERY` ms, a load light enough that the
 *   workers wait for each retry (idle, blocked on Redis), so that the figure is the queue's lateness, not a
 *   backlog's. The start is the `active` event of the retry (its stream id is the server's clock); the due time is
 *   the `delayed` event's for BullMQ, and the stored state's `dueAt` for ours (a retry whose due time passed while
 *   its state was written is made at once, in the same delivery, with no `active` event of its own: its start is
 *   then taken as the job's completion, an upper bound). One machine, one clock.
 *
 * Usage: `npm run bench:fleet [-- --jobs 2000 --rounds 5 --concurrency 32 --no-write]`
 */
import { spawn, type ChildProcess } from 'child_process'
import { Queue, QueueEvents } from 'bullmq'
import * as os from 'os'
import * as path from 'path'
import * as readline from 'readline'
import type * as BullMQ from '../src/BullMQ'
import { compiledSources } from '../test/support/child'
import { startRedis, type RedisServer } from '../test/support/redis'
import { definition, library } from './fleet-definition'
import { RESULTS, writeSection } from './results'

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} must be a whole number >= 1, received ${process.argv[i + 1]}`)
    process.exit(2)
  }
  return value
}
const JOBS = arg('jobs', 2000)
const ROUNDS = arg('rounds', 5)
const CONCURRENCY = arg('concurrency', 32)
const WRITE = !process.argv.includes('--no-write')
const LATE_JOBS = 60
const LATE_EVERY = 100
const WORKERS = [1, 2, 4]
const MODES = ['ours', 'bullmq', 'floor'] as const
const TARGET = 0.85
type Mode = (typeof MODES)[number]
type Load = 'burst' | 'steady'

const TSX = require.resolve('tsx/cjs')

/** The library, compiled (see fleet-definition.ts): made once here, loaded by every worker. */
const COMPILED = compiledSources()
const lib = library(COMPILED)

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

interface WorkerProcess {
  readonly child: ChildProcess
  /** The CPU time it used from "go" to its close, in µs, and the Redis calls it sent, once it has printed them. */
  readonly used: Promise<{ readonly cpu: number; readonly calls: number }>
}

const startWorker = (port: number, prefix: string, mode: Mode): Promise<WorkerProcess> =>
  new Promise((resolve, reject) => {
    const script = path.join(__dirname, 'fleet-worker.ts')
    const child = spawn(
      process.execPath,
      ['--require', TSX, script, String(port), prefix, 'cycle', mode, String(CONCURRENCY), COMPILED],
      {
        stdio: ['pipe', 'pipe', 'inherit']
      }
    )
    child.on('error', reject)
    child.on('exit', (code) => code !== 0 && code !== null && reject(new Error(`a worker exited with ${code}`)))
    let report: (used: { readonly cpu: number; readonly calls: number }) => void = () => undefined
    const used = new Promise<{ readonly cpu: number; readonly calls: number }>((r) => (report = r))
    readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line === 'loaded') resolve({ child, used })
      else if (line.startsWith('cpu ')) {
        const [cpu, calls] = line.slice(4).split(' ').map(Number)
        report({ cpu, calls })
      }
    })
  })

/** The jobs of one side, as each side's users add them: ours through `BullMQ.submit`. */
const jobsOf = async (
  mode: Mode,
  count: number
): Promise<ReadonlyArray<{ name: string; data: unknown; opts: object }>> => {
  const jobs: Array<{ name: string; data: unknown; opts: object }> = []
  const def = definition(lib, 'cycle')
  const collector: BullMQ.QueueLike = { add: async (name, data, opts) => void jobs.push({ name, data, opts }) }
  for (let i = 0; i < count; i++) {
    if (mode === 'ours') await lib.BullMQ.submit(collector, def, `job-${i}`, i)
    else {
      const opts = {
        jobId: `job-${i}`,
        attempts: 4,
        backoff: { type: 'exponential', delay: 10 },
        removeOnComplete: { age: 86_400 }
      }
      // the floor's jobs hold what ours hold, for the same bytes
      const data = mode === 'floor' ? { id: `job-${i}`, payload: i, retry: null, outcome: null } : i
      jobs.push({ name: 'cycle', data, opts })
    }
  }
  return jobs
}

let runs = 0

/** The CPU time the server has used, in µs (`INFO cpu`: its main thread and the others, user and system). */
const serverCpu = async (queue: Queue): Promise<number> => {
  const client = (await queue.backend.client) as unknown as { readonly info: (section: string) => Promise<string> }
  const info = await client.info('cpu')
  const field = (name: string): number => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN)
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6
}

/** One measurement: jobs per second, and the lateness of each retry whose due time was seen. */
const measure = async (
  server: RedisServer,
  mode: Mode,
  workers: number,
  load: Load
): Promise<{
  readonly jobsPerSecond: number
  readonly cpuPerJob: number
  readonly serverCpuPerJob: number
  readonly callsPerJob: number
  readonly lateness: ReadonlyArray<number>
}> => {
  const count = load === 'burst' ? JOBS : LATE_JOBS
  const prefix = `bench${++runs}`
  const connection = { host: server.host, port: server.port }
  const queue = new Queue('cycle', { connection, prefix, streams: { events: { maxLen: 20 * count } } })
  const events = new QueueEvents('cycle', { connection, prefix, autorun: false })
  const due = new Map<string, number>()
  const started = new Map<string, number>()
  const activations = new Map<string, number>()
  if (load === 'steady') {
    events.on('delayed', ({ jobId, delay }) => void due.set(jobId, Number(delay)))
    // the last activation of a job is its retry
    events.on('active', ({ jobId }, id) => {
      started.set(jobId, Number(id.split('-')[0]))
      activations.set(jobId, (activations.get(jobId) ?? 0) + 1)
    })
    void events.run()
    await events.waitUntilReady()
  }
  const processes = await Promise.all(Array.from({ length: workers }, () => startWorker(server.port, prefix, mode)))
  const children = processes.map((p) => p.child)
  const jobs = await jobsOf(mode, count)
  if (load === 'burst') await queue.addBulk(jobs.map((j) => ({ ...j })))
  const server0 = await serverCpu(queue)
  const t0 = performance.now()
  for (const child of children) child.stdin?.write('go\n')
  if (load === 'steady') {
    for (const [i, job] of jobs.entries()) {
      await queue.add(job.name, job.data, job.opts)
      await sleep(Math.max(0, t0 + (i + 1) * LATE_EVERY - performance.now()))
    }
  }
  for (;;) {
    const { completed, failed } = await queue.getJobCounts('completed', 'failed')
    if (failed > 0) throw new Error(`${failed} jobs failed (${mode})`)
    if (completed === count) break
    await sleep(5)
  }
  const seconds = (performance.now() - t0) / 1000
  const server1 = await serverCpu(queue)
  if (mode === 'ours') {
    for (const job of await queue.getJobs(['completed'])) {
      const retry = (job.data as { retry?: { dueAt?: unknown } } | null)?.retry
      if (job.id === undefined || typeof retry?.dueAt !== 'number') continue
      due.set(job.id, retry.dueAt)
      // a retry made in the delivery that stored its state (due by then) has no activation of its own: its start
      // is at most the job's completion
      if (activations.get(job.id) === 1 && job.finishedOn !== undefined) started.set(job.id, job.finishedOn)
    }
  }
  // the last events may still be on their way
  for (let tries = 0; load === 'steady' && due.size < count && tries < 400; tries++) await sleep(5)
  for (const child of children) child.stdin?.end()
  const used = await Promise.all(processes.map((p) => p.used))
  const cpu = used.reduce((sum, u) => sum + u.cpu, 0)
  const calls = used.reduce((sum, u) => sum + u.calls, 0)
  await Promise.all(
    children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(undefined) : c.once('exit', resolve))))
  )
  await events.close()
  await queue.obliterate({ force: true })
  await queue.close()
  const lateness = [...due].map(([jobId, t]) => (started.get(jobId) ?? NaN) - t)
  if (load === 'steady' && lateness.filter((x) => !Number.isNaN(x)).length < count)
    throw new Error(`only ${lateness.length} of ${count} retries were seen (${mode})`)
  return {
    jobsPerSecond: count / seconds,
    cpuPerJob: cpu / count,
    serverCpuPerJob: (server1 - server0) / count,
    callsPerJob: calls / count,
    lateness
  }
}

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}
const median = (xs: ReadonlyArray<number>): number => quantile(xs, 0.5)
const fmt = (x: number, digits = 0): string =>
  x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

const main = async (): Promise<void> => {
  const lines: Array<string> = []
  const out = (line = ''): void => {
    lines.push(line)
    console.log(line)
  }
  const cpu = os.cpus()
  out('## Fleet: durable retries on BullMQ')
  out()
  out(
    'Every job fails its first attempt and succeeds on its retry 10 ms later. **ours**: `BullMQ.processor` of a ' +
      '`Durable` definition (`exponential(10)`, 3 retries), jobs added by `BullMQ.submit`, as `BullMQ.make` does: ' +
      "the run's state stored in the job's data (`updateData`), then the job delayed through BullMQ's failure path " +
      '(a retry already due once its state is stored is made at once, in the same delivery). **BullMQ**: a ' +
      "processor that throws, jobs with BullMQ's own `backoff: { type: 'exponential', delay: 10 }`. **floor**: " +
      "BullMQ's, plus the write ours makes per retry (jobs holding what ours hold, and the same `RetryState`, the " +
      'same bytes, stored by `updateData` before each throw), deciding nothing. The library compiled, as its users ' +
      `run it (not through tsx). ${CONCURRENCY} concurrent jobs per worker process. Machine: ${cpu.length} × ${
        cpu[0]?.model ?? 'unknown CPU'
      }, ` +
      `Node ${process.version}, redis-server with no persistence on loopback; the machine's load average (1 min) ` +
      `was ${fmt(os.loadavg()[0], 1)} at the start, other work included. Regenerate with \`npm run bench:fleet\`.`
  )
  out()
  const server10 = await startRedis()
  let verdicts: Array<boolean> = []
  try {
    out(`### Throughput: ${fmt(JOBS)} jobs queued at once (redis-server at its default hz 10)`)
    out()
    out(
      `Median over ${ROUNDS} rounds, the three sides in an order reversed from round to round; each ratio to ` +
        "BullMQ is taken within a round. CPU per job: the worker processes' (from go to their close) plus " +
        "redis-server's (`INFO cpu`, from go to the last job completed, this process's polling included). Redis " +
        'calls per job: what the workers sent, each a round trip (a script counts once).'
    )
    out()
    out(
      '| worker processes | ours jobs/s | BullMQ jobs/s | ratio: median (min–max) | target ≥ 0.85× | ' +
        'floor: BullMQ + 1 write per retry, ratio | CPU per job, workers + redis-server (µs): ours / BullMQ / floor | ' +
        'Redis calls per job: ours / BullMQ / floor |'
    )
    out('| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |')
    verdicts = []
    for (const workers of WORKERS) {
      const rates: Record<Mode, Array<number>> = { ours: [], bullmq: [], floor: [] }
      const cpus: Record<Mode, Array<number>> = { ours: [], bullmq: [], floor: [] }
      const serverCpus: Record<Mode, Array<number>> = { ours: [], bullmq: [], floor: [] }
      const calls: Record<Mode, Array<number>> = { ours: [], bullmq: [], floor: [] }
      const ratios: Array<number> = []
      const floors: Array<number> = []
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? MODES : [...MODES].reverse()
        const inRound: Partial<Record<Mode, number>> = {}
        for (const mode of order) {
          const measured = await measure(server10, mode, workers, 'burst')
          inRound[mode] = measured.jobsPerSecond
          rates[mode].push(measured.jobsPerSecond)
          cpus[mode].push(measured.cpuPerJob)
          serverCpus[mode].push(measured.serverCpuPerJob)
          calls[mode].push(measured.callsPerJob)
        }
        ratios.push((inRound.ours ?? NaN) / (inRound.bullmq ?? NaN))
        floors.push((inRound.floor ?? NaN) / (inRound.bullmq ?? NaN))
      }
      const ratio = median(ratios)
      verdicts.push(ratio >= TARGET)
      const each = (xs: Record<Mode, ReadonlyArray<number>>, digits = 0): string =>
        `${fmt(median(xs.ours), digits)} / ${fmt(median(xs.bullmq), digits)} / ${fmt(median(xs.floor), digits)}`
      out(
        `| ${workers} | ${fmt(median(rates.ours))} | ${fmt(median(rates.bullmq))} | ` +
          `${fmt(ratio, 2)}× (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}) | ${
            ratio >= TARGET ? 'met' : 'not met'
          } | ${fmt(median(floors), 2)}× (${fmt(Math.min(...floors), 2)}–${fmt(Math.max(...floors), 2)}) | ` +
          `${each(cpus)} + ${each(serverCpus)} | ${each(calls, 2)} |`
      )
    }
    out()
  } finally {
    await server10.stop()
  }
  out(`### Lateness of the retries: start − due, in ms (${LATE_JOBS} jobs, one every ${LATE_EVERY} ms)`)
  out()
  out(
    'A light load: the workers are idle between jobs, blocked on Redis until the next delayed job is due. An idle ' +
      "worker wakes on the server's tick, so the lateness is bounded by 1000 / hz ms."
  )
  out()
  out('| redis-server | worker processes | ours p50 / p99 | BullMQ p50 / p99 |')
  out('| --- | ---: | ---: | ---: |')
  for (const hz of [10, 100]) {
    const server = hz === 10 ? await startRedis() : await startRedis(['--hz', String(hz)])
    try {
      for (const workers of WORKERS) {
        const late: Record<Mode, ReadonlyArray<number>> = { ours: [], bullmq: [], floor: [] }
        for (const mode of ['ours', 'bullmq'] as const)
          late[mode] = (await measure(server, mode, workers, 'steady')).lateness
        const show = (xs: ReadonlyArray<number>): string => `${fmt(quantile(xs, 0.5))} / ${fmt(quantile(xs, 0.99))}`
        out(`| hz ${hz}${hz === 10 ? ' (default)' : ''} | ${workers} | ${show(late.ours)} | ${show(late.bullmq)} |`)
      }
    } finally {
      await server.stop()
    }
  }
  out()
  out(
    `Throughput target (≥ ${TARGET}× BullMQ's own backoff): met at ${verdicts.filter((v) => v).length} of ` +
      `${verdicts.length} worker counts. What a durable retry must do beyond BullMQ's backoff: store the run's ` +
      'state before the job is delayed, one write (the floor: that write, with the same bytes, and nothing ' +
      'decided), and at each delivery check the stored state, restore the `Driver` and step the schedule (ours ' +
      'less the floor). The state cannot ride in the call that delays the job: BullMQ writes only `failedReason` ' +
      'and the stack there, and a call of our own that wrote and delayed at once would lose the next job that ' +
      "BullMQ's failure path fetches in the same round trip, spending the round trip it saves (and a script of our " +
      "own would restate BullMQ's keys and bookkeeping, for one version). Ours makes fewer calls than the floor: " +
      'a retry due by the time its state is stored (under load the write takes longer than the 10 ms delay) is made ' +
      'at once in the same delivery, where BullMQ would move the job to the wait list and fetch it again. When Redis, ' +
      'the workers and this process share few cores, the throughput is bound by CPU; at 1 worker process, by the ' +
      "worker's: there the ratio follows the CPU per job."
  )
  if (WRITE) {
    writeSection(RESULTS, 'fleet', lines.join('\n'))
    console.log('\nwritten to bench/RESULTS.md')
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
