/**
 * A worker process of `npm run bench:fleet`: a BullMQ `Worker` on the Redis at 127.0.0.1:<port>, whose jobs fail
 * their first attempt and succeed on the retry, with either
 *
 * - `ours`: `BullMQ.processor` of a `Durable` definition (the adapter; what `BullMQ.engine` runs), schedule
 *   `exponential(10)` limited to 3 retries: the retry 10 ms after the failure, through `moveToDelayed`;
 * - `bullmq`: a plain processor that throws, with BullMQ's own `{ attempts: 4, backoff: { type: 'exponential',
 *   delay: 10 } }` on the jobs: the retry 10 ms after the failure.
 * - `floor`: as `bullmq`, plus one `updateData` of the job's data before each throw: the floor of any design
 *   that stores a run's state in a write of its own before the job is delayed, measured on BullMQ's own path.
 *
 * It prints `loaded` once connected (the worker made with `autorun: false`), starts on a line `go` on stdin, and
 * closes when stdin ends, printing `cpu <µs>`: the CPU time it used since `go`.
 *
 * Usage: tsx bench/fleet-worker.ts <port> <prefix> <queue> <ours|bullmq|floor> <concurrency>
 */
import { Worker, type Job } from 'bullmq'
import * as readline from 'readline'
import * as BullMQ from '../src/BullMQ'
import { definition } from './fleet-definition'

const main = async (): Promise<void> => {
  const [port, prefix, queue, mode, concurrency] = process.argv.slice(2)
  const connection = { host: '127.0.0.1', port: Number(port) }
  const processor =
    mode === 'ours'
      ? BullMQ.processor(definition(queue))
      : async (job: Job): Promise<string> => {
          if (job.attemptsMade === 0) {
            if (mode === 'floor') await job.updateData(job.data)
            throw new Error('503')
          }
          return '200'
        }
  const worker = new Worker(queue, processor, {
    connection,
    prefix,
    concurrency: Number(concurrency),
    autorun: false,
    ...(mode === 'ours' ? BullMQ.workerOptions : {})
  })
  await worker.waitUntilReady()
  const input = readline.createInterface({ input: process.stdin })
  const ended = new Promise((resolve) => input.once('close', resolve))
  process.stdout.write('loaded\n')
  await new Promise((resolve) => input.once('line', resolve))
  const cpu = process.cpuUsage()
  void worker.run()
  await ended
  const used = process.cpuUsage(cpu)
  await worker.close()
  process.stdout.write(`cpu ${used.user + used.system}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})
