/**
 * A throwaway Redis server for the engine tests: a real `redis-server` (Debian's package), never a mock, started
 * as a child on 127.0.0.1 on a free port with no persistence, and stopped by its pid.
 *
 * When no `redis-server` can be had, `describeWithRedis` skips its tests and says so loudly: the rest of the suite
 * runs. `.ci/run` installs the package when it is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process'
import * as net from 'net'

/** The command that runs the server; `REDIS_SERVER` names another binary. */
const BIN = process.env.REDIS_SERVER ?? 'redis-server'

/** Whether the server can be run here, and if not, why (checked once, synchronously, when the file loads). */
export const availability: { readonly ok: true } | { readonly ok: false; readonly why: string } = (() => {
  const probe = spawnSync(BIN, ['--version'], { encoding: 'utf8', timeout: 10_000 })
  if (probe.error !== undefined) return { ok: false, why: `${BIN} cannot be run (${probe.error.message})` }
  if (probe.status !== 0) return { ok: false, why: `${BIN} --version exited with ${probe.status}: ${probe.stderr}` }
  return { ok: true }
})()

/** A running server. */
export interface RedisServer {
  readonly host: '127.0.0.1'
  readonly port: number
  readonly pid: number
  /** Stops the server (SIGKILL by pid: nothing of it needs saving) and waits until it has exited. */
  readonly stop: () => Promise<void>
}

/** A port free on 127.0.0.1 now (another process may take it before it is used: callers try again). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))
      )
    })
  })

/** Sends PING once; resolves whether the answer was +PONG. */
export const ping = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    let answer = ''
    const done = (ok: boolean): void => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      answer += chunk.toString()
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'))
    })
  })

/** Resolves once the child has exited and its pipes are closed (so that no handle of it outlives the tests). */
export const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => child.once('close', () => resolve()))

/**
 * Starts `redis-server --port <free port> --bind 127.0.0.1 --save '' --appendonly no` (plus `extraArgs`, or the
 * arguments it answers for each try: a cluster node takes a second free port), and resolves once it answers PING.
 * Tries a few ports, in case another process takes the free one first.
 */
export const startRedis = async (
  extraArgs: ReadonlyArray<string> | (() => Promise<ReadonlyArray<string>>) = []
): Promise<RedisServer> => {
  let lastError = ''
  for (let tries = 0; tries < 5; tries++) {
    const port = await freePort()
    const more = typeof extraArgs === 'function' ? await extraArgs() : extraArgs
    const child = spawn(
      BIN,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...more],
      {
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const gone = exited(child)
    let dead = false
    void gone.then(() => (dead = true))
    const deadline = Date.now() + 10_000
    while (!dead && Date.now() < deadline) {
      if (await ping(port)) {
        const pid = child.pid
        if (pid === undefined) break
        return {
          host: '127.0.0.1',
          port,
          pid,
          stop: async () => {
            if (!dead) process.kill(pid, 'SIGKILL')
            await gone
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    if (!dead && child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
    await gone
    lastError = output
  }
  throw new Error(`startRedis: ${BIN} did not answer PING:\n${lastError}`)
}

/**
 * `describe` with a Redis server started before its tests (`server()` gives it) and stopped after them; when no
 * server can be had, `describe.skip`, with a loud warning.
 */
export const describeWithRedis = (
  name: string,
  body: (server: () => RedisServer) => void,
  extraArgs: ReadonlyArray<string> = []
): void => {
  if (!availability.ok) {
    // eslint-disable-next-line no-console
    console.warn(
      `\n*** REDIS TESTS SKIPPED: "${name}" needs a real redis-server and ${availability.why}. ***\n` +
        `*** Install it (apt-get install redis-server; .ci/run does) or set REDIS_SERVER to run them. ***\n`
    )
    describe.skip(name, () => body(() => assertNever()))
    return
  }
  describe(name, () => {
    let running: RedisServer | undefined
    beforeAll(async () => {
      running = await startRedis(extraArgs)
    }, 20_000)
    body(() => {
      if (running === undefined) throw new Error('describeWithRedis: the server is not running')
      return running
    })
    // After the body's own afterAll (jest runs them in the order they are declared): its clients quit while the
    // server still answers, rather than reconnect to a dead one and keep the process alive.
    afterAll(async () => {
      await running?.stop()
    })
  })
}

const assertNever = (): never => {
  throw new Error('describeWithRedis: skipped, no server')
}
