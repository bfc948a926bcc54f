/**
 * A worker process of `npm run bench:fleet`: a BullMQ `Worker` on the Redis at 127.0.0.1:<port>, whose jobs fail
 * their first attempt and succeed on the retry, with either
 *
 * - `ours`: `BullMQ.processor` of a `Durable` definition (the adapter; what `BullMQ.make` runs), schedule
 *   `exponential(10)` limited to 3 retries: the retry 10 ms after the failure, through `moveToDelayed`;
 * - `bullmq`: a plain processor that throws, with BullMQ's own `{ attempts: 4, backoff: { type: 'exponential',
 *   delay: 10 } }` on the jobs: the retry 10 ms after the failure.
 * - `floor`: as `bullmq`, plus the write ours makes per retry: the job's data (a `Durable.StoredRun`, as ours) with
 *   a `RetryState` of the definition, the same bytes, stored by `updateData` before each throw. The floor of any
 *   design that stores a run's state in a write of its own before the job is delayed, measured on BullMQ's own
 *   path: what it costs beyond BullMQ's backoff, without deciding anything.
 *
 * It prints `loaded` once connected (the worker made with `autorun: false`), starts on a line `go` on stdin, and
 * closes when stdin ends, printing `cpu <µs> <calls>`: the CPU time it used since `go`, and the Redis calls it
 * sent meanwhile (each a round trip: a script counts once, whatever it runs inside Redis).
 *
 * The library is the compiled copy under `<compiled>` (see `fleet-definition.ts`).
 *
 * Usage: tsx bench/fleet-worker.ts <port> <prefix> <queue> <ours|bullmq|floor> <concurrency> <compiled>
 */
import { Worker, type Job } from 'bullmq'
import Redis from 'ioredis'
import * as readline from 'readline'
import { definition, library } from './fleet-definition'

/** The Redis calls sent since `go`, by every connection of this process: each goes through `sendCommand`. */
let calls = 0
let counting = false
const sendCommand = Redis.prototype.sendCommand
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
  if (counting) calls++
  return sendCommand.apply(this, args)
}

const main = async (): Promise<void> => {
  const [port, prefix, queue, mode, concurrency, compiled] = process.argv.slice(2)
  const connection = { host: '127.0.0.1', port: Number(port) }
  const lib = library(compiled)
  const { BullMQ, Driver, Random } = lib
  const def = definition(lib, queue)
  // the state ours stores after the first failure, computed once: the floor stores its bytes, and decides nothing
  const driver = Driver.make(def.schedule, { start: Date.now(), random: Random.seeded(1) })
  driver.advance('503', Date.now())
  const state = driver.snapshot()
  const processor =
    mode === 'ours'
      ? BullMQ.processor(def)
      : async (job: Job): Promise<string> => {
          if (job.attemptsMade === 0) {
            const now = Date.now()
            if (mode === 'floor')
              await job.updateData({ ...job.data, retry: { ...state, startedAt: now, dueAt: now + 10 } })
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
  counting = true
  void worker.run()
  await ended
  const used = process.cpuUsage(cpu)
  counting = false
  await worker.close()
  process.stdout.write(`cpu ${used.user + used.system} ${calls}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})
