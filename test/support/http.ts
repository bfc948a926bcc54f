/**
 * A real node:http (or node:https) server on loopback (127.0.0.1, a free port) whose handler a test scripts per
 * request, to inject faults: resets, slow answers, statuses, redirects. It records what reached it and when each
 * response was torn down, and closes every connection on `close()`.
 */
import * as http from 'http'
import * as https from 'https'
import type { AddressInfo, Socket } from 'net'

/** What reached the server. */
export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
}

/** Handles the `n`-th request (1-based). */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void

export interface TestServer {
  /** `http://127.0.0.1:PORT` (or `https://`), without a trailing slash. */
  readonly url: string
  readonly received: ReadonlyArray<Received>
  /** How many responses have been closed (ended, or torn down by the client); read it with `waitFor`. */
  readonly closedResponses: () => number
  /** How many of them closed before the server ended them: the client went away. */
  readonly abortedResponses: () => number
  readonly close: () => Promise<void>
}

const listen = async (server: http.Server, scheme: 'http' | 'https', handler: Handler): Promise<TestServer> => {
  const received: Array<Received> = []
  const sockets = new Set<Socket>()
  let closed = 0
  let aborted = 0
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers })
    res.on('close', () => {
      closed++
      if (!res.writableEnded) aborted++
    })
    handler(req, res, received.length)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    received,
    closedResponses: () => closed,
    abortedResponses: () => aborted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** Starts a loopback HTTP server. */
export const startServer = (handler: Handler): Promise<TestServer> => listen(http.createServer(), 'http', handler)

/** Starts a loopback HTTPS server with a self-signed certificate for 127.0.0.1 (which fetch refuses). */
export const startTlsServer = (handler: Handler): Promise<TestServer> =>
  listen(https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }), 'https', handler)

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago): connecting to it is refused. */
export const closedPort = async (): Promise<number> => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

// A P-256 key and a self-signed certificate for CN=127.0.0.1 (subjectAltName IP:127.0.0.1), valid for 100 years,
// made with `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500`. Test-only.
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgiarfDTsPgLqkQHVl
htFZVWjjLnGVkmP+GUATl3pBxK+hRANCAASyqXRfnG6vox7oB/jOAYw1YrU25x/Q
dC2xBfwX5T35wzd54tZhJhc1jf1LAGkIylZ6bxqiGb1Hc40rmVUzowDw
-----END PRIVATE KEY-----
`

const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkTCCATagAwIBAgIUUSFzqgeZMa1cSVS2axB5BsmecewwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMTE3NDMyN1oYDzIxMjYxMDI4
MTc0MzI3WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASyqXRfnG6vox7oB/jOAYw1YrU25x/QdC2xBfwX5T35wzd54tZhJhc1
jf1LAGkIylZ6bxqiGb1Hc40rmVUzowDwo2QwYjAdBgNVHQ4EFgQU/himhOT1KCac
a22hV6n79VkpOZMwHwYDVR0jBBgwFoAU/himhOT1KCaca22hV6n79VkpOZMwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0kAMEYC
IQDRXZfQQXDwP2sQ9ykoaiLQGyR8Ns1av6LxJL8YLye5QwIhAPGBXcxWpsiqJb6f
M6kdZs4GNsHPr706ZOTOslPSr6xV
-----END CERTIFICATE-----
`
