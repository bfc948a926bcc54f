/**
 * What the BullMQ engine needs to know of a Redis Cluster: whether a connection is one (ioredis's `isCluster`),
 * whether a key prefix keeps a queue's keys on one slot (a hash tag), a `WAIT` sent to the node that took a
 * write, and how a worker is woken after a failover. No Redis client is loaded here: the client is the one BullMQ
 * writes through.
 *
 * @internal
 */
import type { RedisClient } from '../internal/model'
import { script } from '../internal/redis'
import * as validate from '../internal/validate'
import { withinRealTime } from './shared'

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

// -------------------------------------------------------------------------------------
// waking a worker after a failover
// -------------------------------------------------------------------------------------

/**
 * Sets a queue's marker as BullMQ's own scripts do (`addDelayMarkerIfNeeded`, and the resume branch of `pause`,
 * which does both): score 0 when jobs wait, else the due time of the first delayed job (its score is the due time
 * × 0x1000 plus a counter); nothing when the queue is paused (BullMQ removes a paused queue's marker) or empty. A
 * worker blocked on the marker (`BZPOPMIN`) wakes, and blocks again until that due time, or fetches. A marker set
 * late or twice costs a worker one fetch more, nothing else: no deadline on the server is needed.
 */
const MARK = `
local marker, delayed, wait, prioritized, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if redis.call('HEXISTS', meta, 'paused') == 1 then return 0 end
if redis.call('LLEN', wait) + redis.call('ZCARD', prioritized) > 0 then
  redis.call('ZADD', marker, 0, '0')
  return 1
end
local first = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
if first[2] == nil then return 0 end
redis.call('ZADD', marker, tonumber(first[2]) / 0x1000, '1')
return 1
`

/**
 * How long the wake-up waits between two tries, ms: what BullMQ's worker waits after a failed wait before it blocks
 * again, so that a failover costs Redis at most twice the worker's own tries.
 */
export const WAKE_RETRY = 100

/** What {@link waker} needs of a BullMQ worker. */
export interface WakeOptions {
  /** The worker's client (not its blocking one): BullMQ's `worker.backend.client`. */
  readonly client: Promise<unknown>
  /** BullMQ's keys of the worker's queue (`worker.keys`). */
  readonly keys: { readonly [key: string]: string }
  /** Bounds each try, ms (real time). */
  readonly timeout: number
  /** The worker's shutdown: no try after it. */
  readonly signal: AbortSignal
}

/**
 * What to call at each error of a worker, so that a retry due during a failover is not made up to 10 s after it.
 *
 * **Why.** A BullMQ worker waiting for its next job blocks on its queue's marker (`BZPOPMIN`) until the first
 * delayed job is due. When that wait fails (its master died, a Cluster failed over) BullMQ forgets the due time,
 * and then blocks its longest, 10 s, on a marker that nobody sets again: the marker that told the due time was
 * taken from the old master. So a retry due during the failover started up to 10 s after the Cluster answered
 * again (measured: due 3 s after its attempt, made 12.7 s after it).
 *
 * **What.** After each error (BullMQ reports the failed wait, on a Cluster as `Too many Cluster redirections`) the
 * queue's marker is set again (see {@link MARK}), tried every {@link WAKE_RETRY} ms until a try lands, once
 * more if another error came meanwhile: the last try lands once the slot's new master answers, and a marker
 * is kept in Redis, so the worker's next wait, before or after it, takes it at once. A retry due during a
 * failover is then late by the failover and one try, not by 10 s more.
 */
export const waker = (options: WakeOptions): (() => void) => {
  const { keys, timeout, signal } = options
  let mark: ((key: string, ...args: Array<string>) => Promise<unknown>) | undefined
  const tryOnce = async (): Promise<void> => {
    mark ??= script((await options.client) as RedisClient, MARK, 5)
    await mark(keys.marker, keys.delayed, keys.wait, keys.prioritized, keys.meta)
  }
  const late = (): Error => new Error(`setting the queue's marker took longer than ${timeout} ms`)
  let running = false
  let again = false
  const run = async (): Promise<void> => {
    running = true
    try {
      do {
        again = false
        while (!signal.aborted) {
          try {
            await withinRealTime(tryOnce(), timeout, late)
            break
          } catch {
            // not reported: the worker reports its own errors, and this one is tried again
            await new Promise<void>((resolve) => setTimeout(resolve, WAKE_RETRY).unref())
          }
        }
      } while (again && !signal.aborted)
    } finally {
      running = false
    }
  }
  return () => {
    if (running) again = true
    else void run()
  }
}
