/**
 * A throwaway Redis Cluster for the Cluster tests: six real `redis-server` processes in cluster mode (3 masters,
 * each with a replica), on 127.0.0.1 and free ports, no persistence, their `nodes.conf` in a temporary folder
 * removed afterwards; joined by `redis-cli --cluster create` and stopped by pid. Never a mock.
 *
 * `cluster-node-timeout` is short (500 ms) so that a master killed by a test is replaced by its replica within 1.5
 * to 2.5 s (1 s gave 2.1 to 2.9 s); shorter would risk a node of a loaded machine, slow to answer a ping, being failed
 * over without a kill. `cluster-replica-validity-factor 0` lets any replica take over however long it was cut off.
 *
 * When `redis-server` or `redis-cli` cannot be had, `describeWithCluster` skips its tests and says so loudly.
 */
import { spawn, spawnSync } from 'child_process'
import { mkdtempSync, rmSync } from 'fs'
import Redis from 'ioredis'
import { tmpdir } from 'os'
import { join } from 'path'
import { availability as serverAvailability, exited, freePort, startRedis, type RedisServer } from './redis'

/** The command that joins the nodes; `REDIS_CLI` names another binary. */
const CLI = process.env.REDIS_CLI ?? 'redis-cli'

/** Whether a cluster can be run here, and if not, why. */
export const availability: { readonly ok: true } | { readonly ok: false; readonly why: string } = (() => {
  if (!serverAvailability.ok) return serverAvailability
  const probe = spawnSync(CLI, ['--version'], { encoding: 'utf8', timeout: 10_000 })
  if (probe.error !== undefined) return { ok: false, why: `${CLI} cannot be run (${probe.error.message})` }
  if (probe.status !== 0) return { ok: false, why: `${CLI} --version exited with ${probe.status}: ${probe.stderr}` }
  return { ok: true }
})()

/** The node timeout of every node, in ms: a master that does not answer for this long is failed over. */
export const NODE_TIMEOUT = 500

/** Bounds every wait on the cluster (forming, a failover), in real ms: a wait that does not end is a failure. */
const WAIT_LIMIT = 30_000

/** One node: a server, and whether it is still running (a test may kill it). */
export interface ClusterNode extends RedisServer {
  readonly alive: () => boolean
}

/** What {@link RedisCluster.failover} did: the master it killed and the replica that took its slots. */
export interface Failover {
  readonly killed: ClusterNode
  readonly promoted: ClusterNode
  /** Real ms from the kill to a cluster that answers again (every live node `cluster_state:ok`). */
  readonly took: number
}

/** A running cluster. */
export interface RedisCluster {
  readonly nodes: ReadonlyArray<ClusterNode>
  /** Where a `new Cluster(startupNodes)` connects: every node started. */
  readonly startupNodes: ReadonlyArray<{ readonly host: '127.0.0.1'; readonly port: number }>
  /** The master that serves `key`'s slot now. */
  readonly masterOf: (key: string) => Promise<ClusterNode>
  /** Three keys named `<name>:<i>`, each served by another master now. */
  readonly keysOnEveryMaster: (name: string) => Promise<ReadonlyArray<string>>
  /** The replica of the master that serves `key`'s slot. */
  readonly replicaOf: (key: string) => Promise<ClusterNode>
  /**
   * Kills (SIGKILL, by pid) the master that serves `key`'s slot as soon as `when` resolves (at once by default; the
   * master and its replica are found before), and resolves once its replica has taken over and every live node says
   * `cluster_state:ok`.
   */
  readonly failover: (key: string, when?: Promise<void>) => Promise<Failover>
  /** Stops every node still running, by pid, and removes the temporary folder. */
  readonly stop: () => Promise<void>
}

/** One command on one node, on a connection of its own that does not retry, then closed. */
export const command = async (port: number, name: string, ...args: Array<string | number>): Promise<unknown> => {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => undefined)
  try {
    return await client.call(name, ...args)
  } finally {
    client.disconnect()
  }
}

/** A field of an INFO-like answer (`field:value` lines). */
const field = (info: unknown, name: string): string | undefined =>
  String(info)
    .split('\r\n')
    .find((line) => line.startsWith(`${name}:`))
    ?.slice(name.length + 1)

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once `check()` answers true (checked every 50 ms; a check that throws counts as false). */
const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  const deadline = Date.now() + WAIT_LIMIT
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`redis-cluster: waited ${WAIT_LIMIT} ms for ${what}`)
    await sleep(50)
  }
}

/** One line of `CLUSTER NODES`: the node's port, whether it is a master, its master's id, the slots it serves. */
interface NodeLine {
  readonly id: string
  readonly port: number
  readonly master: boolean
  readonly failed: boolean
  readonly masterId: string
  readonly serves: (slot: number) => boolean
}

const parseNodes = (answer: unknown): ReadonlyArray<NodeLine> =>
  String(answer)
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, masterId, , , , , ...slots] = line.trim().split(' ')
      const ranges = slots
        .filter((s) => !s.startsWith('['))
        .map((s) => s.split('-').map(Number))
        .map(([from, to]) => [from, to ?? from] as const)
      return {
        id,
        port: Number(address.split('@')[0].split(':')[1]),
        master: flags.split(',').includes('master'),
        failed: flags.split(',').some((f) => f === 'fail' || f === 'fail?'),
        masterId,
        serves: (slot: number) => ranges.some(([from, to]) => from <= slot && slot <= to)
      }
    })

/** Runs `redis-cli --cluster create` on the nodes: the first three masters, a replica each. */
const create = (ports: ReadonlyArray<number>): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      CLI,
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] }
    )
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_LIMIT)
    void exited(child).then(() => {
      clearTimeout(timer)
      if (child.exitCode === 0 && output.includes('[OK] All 16384 slots covered')) resolve()
      else reject(new Error(`redis-cluster: ${CLI} --cluster create failed (${child.exitCode}):\n${output}`))
    })
  })

/** Starts six nodes and joins them as a cluster of 3 masters and 3 replicas; resolves once it serves every slot. */
export const startCluster = async (): Promise<RedisCluster> => {
  const folder = mkdtempSync(join(tmpdir(), 'fp-ts-retry-cluster-'))
  const servers: Array<RedisServer> = []
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()))
    rmSync(folder, { recursive: true, force: true })
  }
  try {
    // side by side; each pushed as soon as it runs, so that a failed start still stops the others
    const starting = [0, 1, 2, 3, 4, 5].map((i) =>
      startRedis(async () => [
        '--cluster-enabled',
        'yes',
        // the bus port is chosen too: by default it is port + 10000, which may be taken or beyond 65535
        '--cluster-port',
        String(await freePort()),
        '--cluster-config-file',
        join(folder, `nodes-${i}-${Date.now()}.conf`),
        '--cluster-node-timeout',
        String(NODE_TIMEOUT),
        '--cluster-replica-validity-factor',
        '0',
        // a replica's first sync at once, not after the default 5 s of waiting for others to share it
        '--repl-diskless-sync-delay',
        '0',
        '--dir',
        folder
      ]).then((server) => void servers.push(server))
    )
    const started = await Promise.allSettled(starting)
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected')
    if (failed !== undefined) throw failed.reason
    const dead = new Set<number>()
    const nodes: ReadonlyArray<ClusterNode> = servers.map((s) => ({
      ...s,
      alive: () => !dead.has(s.pid),
      stop: async () => {
        dead.add(s.pid)
        await s.stop()
      }
    }))
    servers.splice(0, servers.length, ...nodes)
    await create(nodes.map((n) => n.port))
    const live = (): ReadonlyArray<ClusterNode> => nodes.filter((n) => n.alive())
    const healthy = async (): Promise<boolean> => {
      const infos = await Promise.all(live().map((n) => command(n.port, 'CLUSTER', 'INFO')))
      return infos.every((info) => field(info, 'cluster_state') === 'ok' && field(info, 'cluster_slots_ok') === '16384')
    }
    // every node knows every other, serves every slot, and every replica is in sync with its master
    await until('the cluster to form', async () => {
      if (!(await healthy())) return false
      const infos = await Promise.all(nodes.map((n) => command(n.port, 'CLUSTER', 'INFO')))
      if (!infos.every((info) => field(info, 'cluster_known_nodes') === '6')) return false
      const roles = await Promise.all(nodes.map((n) => command(n.port, 'ROLE')))
      const replicas = roles.filter((r) => Array.isArray(r) && r[0] === 'slave')
      return replicas.length === 3 && replicas.every((r) => Array.isArray(r) && r[3] === 'connected')
    })
    const nodeByPort = (port: number): ClusterNode => {
      const node = nodes.find((n) => n.port === port)
      if (node === undefined) throw new Error(`redis-cluster: no node on port ${port}`)
      return node
    }
    const view = async (key: string): Promise<{ master: NodeLine; lines: ReadonlyArray<NodeLine> }> => {
      const [asked] = live()
      const slot = Number(await command(asked.port, 'CLUSTER', 'KEYSLOT', key))
      const lines = parseNodes(await command(asked.port, 'CLUSTER', 'NODES'))
      const master = lines.find((l) => l.master && !l.failed && l.serves(slot))
      if (master === undefined) throw new Error(`redis-cluster: no master serves the slot of ${key}`)
      return { master, lines }
    }
    /** What `find` answers of the cluster's view, once it answers (a node may not have heard every change yet). */
    const lookUp = async (what: string, find: (key: string) => Promise<ClusterNode | undefined>, key: string) => {
      let found: ClusterNode | undefined
      await until(what, async () => (found = await find(key)) !== undefined)
      return found as ClusterNode
    }
    const masterOf = (key: string): Promise<ClusterNode> =>
      lookUp(`the master of ${key}`, async () => nodeByPort((await view(key)).master.port), key)
    const replicaOf = (key: string): Promise<ClusterNode> =>
      lookUp(
        `the replica of the master of ${key}`,
        async () => {
          const { master, lines } = await view(key)
          const replica = lines.find((l) => l.masterId === master.id && !l.failed)
          return replica === undefined ? undefined : nodeByPort(replica.port)
        },
        key
      )
    return {
      nodes,
      startupNodes: nodes.map((n) => ({ host: n.host, port: n.port })),
      masterOf,
      keysOnEveryMaster: async (name) => {
        const byMaster = new Map<number, string>()
        for (let i = 0; byMaster.size < 3; i++) {
          const key = `${name}:${i}`
          const master = await masterOf(key)
          if (!byMaster.has(master.port)) byMaster.set(master.port, key)
        }
        return [...byMaster.values()]
      },
      replicaOf,
      failover: async (key, when = Promise.resolve()) => {
        const killed = await masterOf(key)
        const promoted = await replicaOf(key)
        await when
        const from = Date.now()
        await killed.stop()
        await until(`the replica on ${promoted.port} to take over from ${killed.port}`, async () => {
          const role = await command(promoted.port, 'ROLE')
          return Array.isArray(role) && role[0] === 'master' && (await healthy())
        })
        return { killed, promoted, took: Date.now() - from }
      },
      stop
    }
  } catch (e) {
    await stop()
    throw e
  }
}

/**
 * `describe` with a cluster started before its tests (`cluster()` gives it) and stopped after them; when no
 * cluster can be had, `describe.skip`, with a loud warning.
 */
export const describeWithCluster = (name: string, body: (cluster: () => RedisCluster) => void): void => {
  if (!availability.ok) {
    // eslint-disable-next-line no-console
    console.warn(
      `\n*** REDIS CLUSTER TESTS SKIPPED: "${name}" needs redis-server and redis-cli and ${availability.why}. ***\n` +
        `*** Install them (apt-get install redis-server; .ci/run does) or set REDIS_SERVER and REDIS_CLI. ***\n`
    )
    describe.skip(name, () => body(() => notRunning()))
    return
  }
  describe(name, () => {
    let running: RedisCluster | undefined
    beforeAll(async () => {
      running = await startCluster()
    }, 60_000)
    body(() => running ?? notRunning())
    // after the body's own afterAll: its clients quit while the nodes still answer
    afterAll(async () => {
      await running?.stop()
    })
  })
}

const notRunning = (): never => {
  throw new Error('describeWithCluster: the cluster is not running')
}
