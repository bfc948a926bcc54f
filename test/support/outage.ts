/**
 * A Redis outage a test makes on a `redis-server` of its own: paused (`SIGSTOP`) and resumed, or killed and
 * restarted empty on the same port. For the tests of a shared policy's calls that its caller stopped waiting for and
 * that its client (offline queue) or the paused server (its socket) still holds when Redis is back.
 */
import Redis from 'ioredis'
import * as S from './durable'

/** The two outages every such test runs through. */
export const outages = ['paused (SIGSTOP)', 'restarted empty'] as const

export type Outage = (typeof outages)[number]

/** The clients of the server, and the outage to start and end. */
export interface OutageScene {
  /** `count` clients, each its own connection (ioredis's defaults: an offline queue, reconnection). */
  readonly clients: ReadonlyArray<Redis>
  /** Pauses or kills the server. */
  readonly begin: () => Promise<void>
  /**
   * Resumes the server, or starts it again empty, and resolves once whatever the clients queued meanwhile has
   * reached it (a script it had forgotten included, sent again after its `NOSCRIPT`).
   */
  readonly end: () => Promise<void>
}

/** Runs `body` on a server of its own with `count` clients, and stops both after it, however it ends. */
export const withOutage = async (
  outage: Outage,
  count: number,
  body: (scene: OutageScene) => Promise<void>
): Promise<void> => {
  const port = await S.freePort()
  const args = ['--save', '', '--appendonly', 'no']
  let server = await S.startOwnRedis(port, args)
  const clients = Array.from({ length: count }, () => new Redis({ host: '127.0.0.1', port, disconnectTimeout: 100 }))
  try {
    await body({
      clients,
      begin: async () => {
        if (outage === 'paused (SIGSTOP)') server.pause()
        else await server.kill()
      },
      end: async () => {
        if (outage === 'paused (SIGSTOP)') server.resume()
        else server = await S.startOwnRedis(port, args)
        for (const redis of clients) {
          await redis.ping()
          await redis.ping()
        }
      }
    })
  } finally {
    for (const redis of clients) redis.disconnect()
    await server.kill()
  }
}
