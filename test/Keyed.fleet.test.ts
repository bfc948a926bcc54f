/**
 * Keyed policies shared by a fleet (issue 27): four processes (test/fixtures/fleet-keyed.ts), each with a breaker
 * per host and a rate limiter per tenant kept by `Keyed.make`, their state in a real Redis under
 * `Keyed.redisKey(prefix, key)`. One host's breaker opened by failures seen across the fleet is open in every
 * process, another host's stays closed; one tenant's spent rate leaves another's.
 */
import Redis from 'ioredis'
import * as Keyed from '../src/Keyed'
import { killChildren, startChild, type Child } from './support/fleet'
import { describeWithRedis } from './support/redis'
import { deepStrictEqual, ok } from './util'

describeWithRedis('Keyed policies shared by four processes on a real Redis', (server) => {
  const prefix = `keyed-${process.pid}:`
  let processes: Array<Child> = []
  let ids = 0

  beforeAll(async () => {
    processes = Array.from({ length: 4 }, () => startChild('fleet-keyed.ts', [String(server().port), prefix]))
    await Promise.all(processes.map((p) => p.waitFor('ready', (l) => l === 'ready')))
  }, 20_000)
  afterAll(killChildren)

  /** Sends a command to a process; resolves with its answer. */
  const send = async (p: Child, command: string, key: string): Promise<string> => {
    const id = String(++ids)
    p.process.stdin?.write(`${id} ${command} ${key}\n`)
    const line = await p.waitFor(`${command} ${key} (${id})`, (l) => l.startsWith(`${id} `))
    return line.split(' ')[1]
  }
  const inEach = (command: string, key: string): Promise<Array<string>> =>
    Promise.all(processes.map((p) => send(p, command, key)))

  it("should open a host's breaker in every process on failures seen across the fleet, and leave another host's closed", async () => {
    const [down, up] = ['a.example.com', 'b.example.com:8443']
    // four failures in a row in all (threshold 4), one in each process: none of them saw the threshold itself
    const failed: Array<string> = []
    for (const p of processes) failed.push(await send(p, 'fail', down))
    deepStrictEqual(failed, ['left', 'left', 'left', 'left'])
    deepStrictEqual(await inEach('fail', down), ['refused', 'refused', 'refused', 'refused'])
    deepStrictEqual(await inEach('state', down), ['Open', 'Open', 'Open', 'Open'])
    // the other host: served in every process, closed
    deepStrictEqual(await inEach('ok', up), ['right', 'right', 'right', 'right'])
    // three failures in a row in all, below its threshold: it stays closed everywhere
    deepStrictEqual(await Promise.all(processes.slice(1).map((p) => send(p, 'fail', up))), ['left', 'left', 'left'])
    deepStrictEqual(await inEach('state', up), ['Closed', 'Closed', 'Closed', 'Closed'])
    // every process told the opening with its host as key; none told a change of the other host
    for (const p of processes) {
      ok(p.lines.includes(`event BreakerStateChanged ${down}`), p.lines.join('\n'))
      ok(!p.lines.some((l) => l.startsWith('event BreakerStateChanged') && l.endsWith(up)), p.lines.join('\n'))
    }
  }, 20_000)

  it("should spend one tenant's rate across the fleet and leave another tenant's whole", async () => {
    // a burst of 4 for the fleet: one token taken in each process spends it
    deepStrictEqual(await inEach('take', 'tenant-1'), ['true', 'true', 'true', 'true'])
    deepStrictEqual(await inEach('take', 'tenant-1'), ['false', 'false', 'false', 'false'])
    deepStrictEqual(await inEach('take', 'tenant:{2}'), ['true', 'true', 'true', 'true'])
    deepStrictEqual(await inEach('take', 'tenant:{2}'), ['false', 'false', 'false', 'false'])
    for (const p of processes) ok(p.lines.includes('event RateLimitRefused tenant-1'), p.lines.join('\n'))
  }, 20_000)

  it('should keep each policy key under its own Redis key, made by Keyed.redisKey', async () => {
    const redis = new Redis({ host: server().host, port: server().port })
    try {
      const keys = (await redis.keys(`${prefix}*`)).sort()
      const expected = [
        Keyed.redisKey(`${prefix}breaker:`, 'a.example.com'),
        Keyed.redisKey(`${prefix}breaker:`, 'b.example.com:8443'),
        Keyed.redisKey(`${prefix}rate:`, 'tenant:{2}'),
        Keyed.redisKey(`${prefix}rate:`, 'tenant-1')
      ].sort()
      deepStrictEqual(keys, expected)
      ok(expected.includes(`${prefix}rate:tenant%3A%7B2%7D`), expected.join(' '))
    } finally {
      redis.disconnect()
    }
  })
})
