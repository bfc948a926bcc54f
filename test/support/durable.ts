/**
 * A scenario that every durable engine must run alike: a definition whose action fails its first `failures`
 * attempts (or every one, for `failures: -1`), a seeded generator per run, and a record of each attempt and each
 * `onDone`, so that a test compares engines, and each with what the schedule says.
 */
import { spawn } from 'child_process'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import * as t from 'io-ts'
import * as net from 'net'
import type * as Durable from '../../src/Durable'
import { define } from '../../src/Durable'
import * as Random from '../../src/Random'
import type { StopReason } from '../../src/Retry'
import * as Schedule from '../../src/Schedule'
import * as Driver from '../../src/Driver'

/** Equal jitter keeps at least half of each delay; five attempts at most. */
export const schedule = pipe(
  Schedule.exponential(16),
  Schedule.capped(120),
  Schedule.equalJitter,
  Schedule.intersect(Schedule.recurs(4))
)

/** The most attempts a run of {@link schedule} makes. */
export const MAX_ATTEMPTS = 5

/** A seed per run id (FNV-1a), so that every engine and every process draws the same for one id. */
export const seedOf = (id: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

export const random = (id: string): Random.Random => Random.seeded(seedOf(id))

/** The delays the schedule gives the run `id`, in order. */
export const delaysOf = (id: string): ReadonlyArray<number> =>
  Driver.delays(schedule, { random: random(id), input: 'x' })

export const Payload = t.type({ failures: t.number })
export type Payload = t.TypeOf<typeof Payload>

/** One attempt as the action saw it. */
export interface Attempt {
  readonly n: number
  readonly previousDelay: number | null
  readonly start: number
  readonly end: number
}

/** One call of `onDone`. */
export interface Done {
  readonly result: string
  readonly iterNumber: number
  readonly reason: StopReason
}

export interface Record {
  readonly attempts: Map<string, Array<Attempt>>
  readonly done: Map<string, Array<Done>>
}

export const newRecord = (): Record => ({ attempts: new Map(), done: new Map() })

const push = <A>(map: Map<string, Array<A>>, id: string, a: A): void => {
  const list = map.get(id)
  if (list === undefined) map.set(id, [a])
  else list.push(a)
}

/** The definition of the scenario, named `name`, recording into `record`; each attempt takes `attemptMs`. */
export const definition = (name: string, record: Record, attemptMs = 2): Durable.Definition<Payload, string, string> =>
  define<Payload, string, string>({
    name,
    schedule,
    payload: Payload,
    action: (payload, run) => async () => {
      const n = run.status.iterNumber + 1
      const start = Date.now()
      await new Promise((resolve) => setTimeout(resolve, attemptMs))
      const end = Date.now()
      push(record.attempts, run.id, {
        n,
        previousDelay: O.isSome(run.status.previousDelay) ? run.status.previousDelay.value : null,
        start,
        end
      })
      return payload.failures < 0 || n <= payload.failures ? E.left(`failure ${n}`) : E.right(`ok ${n}`)
    }
  })

/** The worker's options of the scenario: seeded draws, and `onDone` recorded (and `then` called). */
export const workOptions = (
  record: Record,
  then: (id: string) => void = () => undefined
): Durable.WorkOptions<string, string> => ({
  random,
  concurrency: 8,
  onDone: ({ id, result, status, reason }) => {
    push(record.done, id, {
      result: E.isRight(result) ? result.right : typeof result.left === 'string' ? result.left : result.left._tag,
      iterNumber: status.iterNumber,
      reason
    })
    then(id)
  }
})

/** What the schedule says of a run that fails its first `failures` attempts: its attempts' previous delays and its end. */
export const expected = (
  id: string,
  failures: number
): { readonly previousDelays: ReadonlyArray<number | null>; readonly done: Done } => {
  const delays = delaysOf(id)
  const attempts = failures < 0 || failures >= MAX_ATTEMPTS ? MAX_ATTEMPTS : failures + 1
  const previousDelays = [null, ...delays.slice(0, attempts - 1)]
  const done: Done =
    attempts === failures + 1
      ? { result: `ok ${attempts}`, iterNumber: attempts - 1, reason: 'succeeded' }
      : { result: `failure ${attempts}`, iterNumber: attempts - 1, reason: 'schedule' }
  return { previousDelays, done }
}

/** Resolves once `count` distinct runs have called `onDone`. */
export const allDone = (count: number): { readonly then: (id: string) => void; readonly done: Promise<void> } => {
  const seen = new Set<string>()
  let resolve: () => void = () => undefined
  const done = new Promise<void>((r) => (resolve = r))
  return {
    done,
    then: (id) => {
      seen.add(id)
      if (seen.size >= count) resolve()
    }
  }
}

// -------------------------------------------------------------------------------------
// a Redis the test kills, pauses and restarts by pid
// -------------------------------------------------------------------------------------

/** A redis-server on `port` with `args`, stopped (SIGKILL), paused (SIGSTOP) and resumed (SIGCONT) by its pid. */
export interface OwnRedis {
  readonly port: number
  readonly pid: number
  readonly kill: () => Promise<void>
  readonly pause: () => void
  readonly resume: () => void
}

/**
 * Starts `redis-server --port <port> --bind 127.0.0.1 <args>` and resolves once it answers PING (by
 * `redis-cli`-free raw RESP on a socket): a restart on the same port and folder is a second call.
 */
export const startOwnRedis = async (port: number, args: ReadonlyArray<string>): Promise<OwnRedis> => {
  const child = spawn(
    process.env.REDIS_SERVER ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', ...args],
    {
      stdio: 'ignore'
    }
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const pid = child.pid
  if (pid === undefined) throw new Error('startOwnRedis: no pid')
  const deadline = Date.now() + 10_000
  while (!(await pinged(port))) {
    if (Date.now() > deadline) throw new Error(`startOwnRedis: no answer on port ${port}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    port,
    pid,
    kill: async () => {
      process.kill(pid, 'SIGCONT')
      process.kill(pid, 'SIGKILL')
      await exited
    },
    pause: () => process.kill(pid, 'SIGSTOP'),
    resume: () => process.kill(pid, 'SIGCONT')
  }
}

const pinged = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    const done = (ok: boolean): void => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')))
  })

/** A port no one listens on now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))
      )
    })
  })
