/**
 * The demo's flaky operation over real HTTP: a `node:http` server on loopback that resets the first connection,
 * answers the second with `503 Service Unavailable` and `Retry-After: 1`, and the third with the stock. The client
 * is `Http.retryingFetch` with the real clock; the server's 1 s is clamped to 200 ms so that the demo stays quick,
 * and the log line of that retry says so.
 * The server is closed at the end, so the process can exit.
 */
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import * as http from 'http'
import type { AddressInfo } from 'net'
import * as Clock from '../src/Clock'
import * as Http from '../src/Http'
import type { Hooks } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import { heading, ms } from './log'

/** What the server does with its n-th request. */
const script = (n: number, req: http.IncomingMessage, res: http.ServerResponse): string => {
  if (n === 1) {
    req.socket.destroy()
    return 'resets the connection'
  }
  if (n === 2) {
    res.writeHead(503, { 'Retry-After': '1', 'content-type': 'text/plain' }).end('busy')
    return 'answers 503 with Retry-After: 1'
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sku: 'A-42', inStock: 42 }))
  return 'answers 200 with the stock'
}

const startServer = async (log: (line: string) => void): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  let requests = 0
  const server = http.createServer((req, res) => log(`server: request ${++requests} ${script(requests, req, res)}`))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/stock/A-42`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The longest wait a server's Retry-After may impose: the server's 1 s is clamped to it, to keep the demo quick. */
const RETRY_AFTER_MAX = 200

/** When the schedule waited less than the server's Retry-After asked for, why: the clamp. */
const clamped = (error: Http.HttpError, delay: number): string => {
  const header = error._tag === 'StatusError' ? error.response.headers.get('retry-after') : null
  const asked = header === null ? O.none : Http.parseRetryAfter(header, Clock.live.now())
  return O.isSome(asked) && asked.value > delay
    ? ` (the server asked for ${ms(asked.value)}; Http.retryAfter(${RETRY_AFTER_MAX}) clamps it to ${ms(delay)})`
    : ''
}

/** One line per attempt, from the runner's hooks, timed from the start of the run. */
const httpLogger = (at: () => string): Hooks<Http.HttpError> => {
  let retries = 0
  return {
    onRetry: ({ error, delay }) => {
      retries++
      console.log(
        `  ${at()}  attempt ${retries} failed: ${Http.Show.show(error)}; retry ${retries} in ${ms(delay)}${clamped(error, delay)}`
      )
    },
    onDone: ({ result, reason }) => {
      const outcome = result._tag === 'Right' ? 'succeeded' : `failed (${reason})`
      console.log(`  ${at()}  attempt ${retries + 1} ${outcome}`)
    }
  }
}

export const overHttp = async (): Promise<void> => {
  heading('5. Over real HTTP: a loopback server resets, then answers 503 with Retry-After: 1, then the stock')
  const start = Clock.live.now()
  const at = (): string => `+${ms(Clock.live.now() - start)}`.padStart(8)
  const server = await startServer((line) => console.log(`  ${at()}  ${line}`))
  try {
    const policy = pipe(
      Schedule.exponential(50), //             50, 100, 200, ... ms
      Schedule.capped(200), //                 ... at most 200 ms
      Http.retryAfter(RETRY_AFTER_MAX), //     the server's Retry-After instead, clamped to 200 ms
      Schedule.intersect(Schedule.recurs(4)), // 4 retries, 5 attempts
      Schedule.upTo(3000) //                   last, so that it counts the Retry-After delays too
    )
    const getStock = Http.retryingFetch(policy, { clock: Clock.live, attemptTimeout: 1000, ...httpLogger(at) })
    const result = await getStock(server.url)()
    if (result._tag === 'Right') console.log(`  => ${result.right.status}: ${await result.right.text()}`)
    else console.log(`  => ${Http.Show.show(result.left)}`)
  } finally {
    await server.close()
  }
  console.log('  the reset and the 503 are transient, and GET is idempotent: both retried; the server closed')
}
