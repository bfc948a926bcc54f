/**
 * What the BullMQ engine needs to know of a Redis Cluster: whether a connection is one (ioredis's `isCluster`),
 * whether a key prefix keeps a queue's keys on one slot (a hash tag), and a `WAIT` sent to the node that took a
 * write. No Redis client is loaded here: the client is the one BullMQ writes through.
 *
 * @internal
 */
import * as validate from '../internal/validate'

/** Whether `connection` is an ioredis `Cluster` (it says so: `isCluster`). */
export const isCluster = (connection: unknown): boolean =>
  typeof connection === 'object' && connection !== null && (connection as { isCluster?: unknown }).isCluster === true

/**
 * The hash tag of a key as Redis Cluster reads it (the cluster specification, "Hash tags"): what lies between the
 * first `{` and the first `}` after it, when that is not empty; only it is hashed, so keys that share it share a
 * slot.
 */
export const hashTag = (key: string): string | undefined => {
  const open = key.indexOf('{')
  if (open < 0) return undefined
  const close = key.indexOf('}', open + 1)
  return close > open + 1 ? key.slice(open + 1, close) : undefined
}

/** What {@link waitForReplicas} needs of an ioredis client (`Redis` or `Cluster`). */
interface Client {
  readonly isCluster?: boolean
  readonly call: (command: string, ...args: Array<string | number>) => Promise<unknown>
  /** A Cluster's: per slot, the nodes that serve it, `host:port`, its master first. */
  readonly slots?: ReadonlyArray<ReadonlyArray<string> | undefined>
  /** A Cluster's: its connection to each master. */
  readonly nodes?: (role: 'master') => ReadonlyArray<Client & { readonly options: { host?: string; port?: number } }>
}

/** The slot of each key asked for once (a key's slot never changes): `CLUSTER KEYSLOT`, any node answers. */
const slots = new Map<string, number>()

/**
 * Sends `WAIT replicas timeout` after a write of `key` made through `client`, and resolves with the number of
 * replicas that acknowledged it. `WAIT` counts the writes of the connection it is sent on: on a Cluster, that is the
 * connection to the master that serves `key`'s slot (the one that took the write), not the random node a keyless
 * command goes to.
 */
export const waitForReplicas = async (
  client: unknown,
  key: string,
  replicas: number,
  timeout: number
): Promise<number> => {
  const c = client as Client
  let node: Client = c
  if (c.isCluster === true) {
    // only the tag is hashed: its slot is the key's, and the keys of every queue of a prefix share it
    const tag = hashTag(key)
    let slot = tag === undefined ? undefined : slots.get(tag)
    if (slot === undefined) {
      slot = Number(await c.call('CLUSTER', 'KEYSLOT', tag ?? key))
      if (tag !== undefined) slots.set(tag, slot)
    }
    const master = c.slots?.[slot]?.[0]
    const found = c.nodes?.('master').find((n) => `${n.options.host}:${n.options.port}` === master)
    if (found === undefined) throw new Error(`no connection to the master of slot ${slot} (${String(master)})`)
    node = found
  }
  return Number(await node.call('WAIT', replicas, Math.ceil(timeout)))
}

/**
 * Throws a `TypeError` naming `where` when `connection` is a Cluster and `prefix` (BullMQ's default `'bull'` when
 * not given) has no hash tag: BullMQ's scripts use several keys of a queue at once, which a Cluster refuses
 * (`CROSSSLOT`) unless they hash to one slot, and every key of a queue starts with the prefix.
 */
export const checkClusterPrefix = (where: string, connection: unknown, prefix: string | undefined): void => {
  if (!isCluster(connection)) return
  const p = prefix ?? 'bull'
  if (hashTag(p) !== undefined) return
  throw new TypeError(
    `${where}: options.connection is a Redis Cluster and options.prefix ${JSON.stringify(p)}` +
      `${prefix === undefined ? " (BullMQ's default)" : ''} has no hash tag, so a queue's keys would hash to ` +
      `different slots and every submit fail with CROSSSLOT: give a prefix with a hash tag, e.g. prefix: '{fp}'`
  )
}

/** The engine's `waitForReplicas` option, checked. */
export interface Replication {
  readonly replicas: number
  readonly timeout: number
}

/**
 * `waitForReplicas`, checked: at least one replica, and a `WAIT` timeout of at least 1 ms (`WAIT`'s 0 would block
 * without end) and below the engine's `timeout`, which bounds the whole submit.
 */
export const replicationOptions = (where: string, value: unknown, engineTimeout: number): Replication | undefined => {
  if (value === undefined) return undefined
  const o = validate.object(where, 'options.waitForReplicas', value as Replication)
  const replicas = validate.positiveCount(where, 'options.waitForReplicas.replicas', o.replicas)
  const timeout = validate.atLeast(where, 'options.waitForReplicas.timeout', 1, o.timeout)
  if (timeout >= engineTimeout) {
    throw new RangeError(
      `${where}: options.waitForReplicas.timeout must be less than options.timeout (${engineTimeout} ms), which ` +
        `bounds the whole submit, received ${timeout}`
    )
  }
  return { replicas, timeout }
}
