/**
 * A registry of resilience pipelines built from a `PolicyConfig` document: by name, and by key through `Keyed`,
 * read by the code that runs them, and reloaded while it runs without losing the state of a breaker, a limiter, a bulkhead or a budget.
 *
 * **What survives a reload**
 *
 * | layer | unchanged | changed |
 * | --- | --- | --- |
 * | breaker | the same object | a new one that takes over the old one's state and count (`Breaker` `from`) |
 * | rate limit | the same object | a new limiter of the same kind that takes over the old one's tokens or count (`RateLimiter` `from`); in Redis, the same key (and its state) |
 * | bulkhead | the same object | a new one that counts the old one's calls in flight until they end and takes its waiters (`Bulkhead.make` `from`) |
 * | adaptive limit | the same object | a new one that keeps the learned limit (within its new bounds), counts the old one's calls in flight until they end and takes its waiters (`AdaptiveLimit.make` `from`) |
 * | budget | the same object | a new one with the old one's tokens, at most its new `maxTokens` (`Budget.retryThrottle` `from`); in Redis, the same key |
 * | throttle | the same object | a new one with the old one's requests and accepts in its window (`AdaptiveThrottle.make` `from`); in Redis, the same key |
 * | retry, hedging, timeout, fallback | plain values | the runs in progress keep the ones they started with |
 *
 * A run reads its pipeline once, when it starts: it keeps the policies it started with to its end.
 *
 * @since 1.0.0
 */
import * as E from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as AdaptiveLimit from './AdaptiveLimit'
import * as AdaptiveThrottle from './AdaptiveThrottle'
import * as Breaker from './Breaker'
import * as Budget from './Budget'
import * as Bulkhead from './Bulkhead'
import type { Clock } from './Clock'
import * as LiveClock from './Clock'
import type { Observer } from './Event'
import * as Fallback from './Fallback'
import * as Hedging from './Hedging'
import { observe } from './internal/observe'
import * as validate from './internal/validate'
import * as Keyed from './Keyed'
import type {
  AdaptiveLimitConfig,
  BreakerConfig,
  FallbackReason,
  KeyField,
  PipelineConfig,
  PolicyConfig
} from './PolicyConfig'
import { formatPipeline, parse } from './PolicyConfig'
import type { Random } from './Random'
import * as RateLimiter from './RateLimiter'
import * as RedisAdaptiveThrottle from './RedisAdaptiveThrottle'
import * as RedisBreaker from './RedisBreaker'
import type { RedisClient } from './RedisBudget'
import * as RedisBudget from './RedisBudget'
import * as RedisRateLimiter from './RedisRateLimiter'
import { retrying } from './Retry'
import type { Schedule } from './Schedule'
import type { ConfigError } from './ScheduleConfig'
import { toSchedule } from './ScheduleConfig'
import * as Timeout from './Timeout'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One pipeline, built: the policies of one name (or of one key of a keyed name), each `undefined` when the
 * document leaves its section out, and the config they were built from.
 *
 * @example
 * import * as Policies from 'fp-ts-retry/Policies'
 * import * as assert from 'assert'
 *
 * const policies = Policies.make({ policies: { payments: { timeout: '2s', bulkhead: { maxConcurrent: 10, maxQueue: 0 } } } })
 * const pipeline: Policies.Pipeline = policies.get('payments')
 * assert.strictEqual(pipeline.timeout, 2_000)
 * assert.strictEqual(pipeline.breaker, undefined)
 *
 * @category model
 * @since 1.0.0
 */
export interface Pipeline {
  readonly name: string
  readonly key: string | undefined
  readonly config: PipelineConfig
  readonly timeout: number | undefined
  readonly rateLimiter: RateLimiter.RateLimiter | undefined
  readonly breaker: Breaker.Breaker | undefined
  readonly throttle: AdaptiveThrottle.AdaptiveThrottle | undefined
  readonly schedule: Schedule<unknown> | undefined
  readonly budget: Budget.RetryBudget | undefined
  readonly hedging: { readonly delays: Schedule<unknown>; readonly maxConcurrent: number | undefined } | undefined
  readonly bulkhead: Bulkhead.Bulkhead | undefined
  readonly adaptiveLimit: AdaptiveLimit.AdaptiveLimit | undefined
  readonly fallbackOn: ReadonlyArray<FallbackReason> | undefined
}

/**
 * The fields of a call a keyed pipeline's `key.template` is filled with (`{ authority: 'api.example.com' }`).
 *
 * @example
 * import type { KeyFields } from 'fp-ts-retry/Policies'
 *
 * const fields: KeyFields = { tenant: 'acme', method: 'GET' }
 *
 * @category model
 * @since 1.0.0
 */
export type KeyFields = { readonly [K in KeyField]?: string }

/**
 * What a pipeline's own layers answer instead of running the action: the breaker is open, the throttle dropped
 * the attempt, the bulkhead is full, the adaptive limit shed the run, or the attempt timed out, with the pipeline's
 * `name` and `key`.
 *
 * @example
 * import type { PolicyRefused } from 'fp-ts-retry/Policies'
 *
 * const refused: PolicyRefused = { _tag: 'PolicyRefused', layer: 'breaker', name: 'payments', key: undefined }
 *
 * @category model
 * @since 1.0.0
 */
export interface PolicyRefused {
  readonly _tag: 'PolicyRefused'
  readonly layer: 'timeout' | 'breaker' | 'throttle' | 'bulkhead' | 'adaptiveLimit'
  readonly name: string
  readonly key: string | undefined
}

/**
 * What a reload changed: the names of the pipelines `added`, `changed` and `removed`, each sorted.
 *
 * @example
 * import type { Reloaded } from 'fp-ts-retry/Policies'
 *
 * const reloaded: Reloaded = { added: [], changed: ['payments'], removed: [] }
 *
 * @category model
 * @since 1.0.0
 */
export interface Reloaded {
  readonly added: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
}

/**
 * Options of {@link make}.
 *
 * **Details**
 *
 * - `clock` (default `Clock.live`) and `random` (default `Random.live`): every policy's; give the run's.
 * - `redis`: the client of the pipelines that name a `store` (a document that names one without it is refused).
 * - `onEvent`: told `ConfigReloaded` and `ConfigRejected`, and every event of the policies built (a keyed
 *   pipeline's with its key).
 *
 * @example
 * import type { PoliciesOptions } from 'fp-ts-retry/Policies'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 *
 * const lines: Array<string> = []
 * const options: PoliciesOptions = { clock: TestClock.make(), onEvent: (event) => void lines.push(event._tag) }
 *
 * @category model
 * @since 1.0.0
 */
export interface PoliciesOptions {
  readonly clock?: Clock | undefined
  readonly random?: Random | undefined
  readonly redis?: RedisClient | undefined
  readonly onEvent?: Observer | undefined
}

/**
 * Options of a run ({@link Policies.run}): the `fallback` that answers a run that stopped for one of the reasons
 * of the pipeline's `fallback.on` (without one, or without that section, the run answers its failure).
 *
 * @example
 * import type { RunOptions } from 'fp-ts-retry/Policies'
 * import * as TE from 'fp-ts/TaskEither'
 *
 * const options: RunOptions<unknown, string> = { fallback: () => TE.right('from the cache') }
 *
 * @category model
 * @since 1.0.0
 */
export interface RunOptions<E, A> {
  readonly fallback?: ((stopped: Fallback.Stopped<E | PolicyRefused>) => TaskEither<E | PolicyRefused, A>) | undefined
}

/**
 * The registry.
 *
 * **Details**
 *
 * - `config`: the document running now; `names()`, its pipelines' names.
 * - `get(name, fields)`: the pipeline of `name` now; for a keyed one, of the key its template makes of `fields`
 *   (made on first use, kept by `Keyed`). An unknown name, or a field the template needs and `fields` lacks, is a
 *   `TypeError`.
 * - `run(name, fields)`: the pipeline applied to an action, in the order of docs/resilience-order.md: the timeout
 *   on each attempt, the rate limit, the breaker, the adaptive throttle, the retry schedule with its budget (or
 *   hedging), the bulkhead (or the adaptive limit), the fallback. The adaptive limit takes a run's latency as its
 *   sample; a run that ends in the pipeline's own timeout is a drop, any other failure is ignored. A run reads the
 *   pipeline when it starts and keeps it to its end.
 * - `reload(document)`: decodes the document and swaps the pipelines at once (see the module's table for what
 *   survives); a document that does not decode, or whose policies cannot be built, is refused: `Left` with its
 *   error, `ConfigRejected` told, and the running pipelines untouched.
 * - `reject(error)`: for a source that could not read a document (a file that is not JSON): tells
 *   `ConfigRejected` with `error`, and changes nothing.
 *
 * @example
 * import * as Policies from 'fp-ts-retry/Policies'
 * import * as assert from 'assert'
 *
 * const policies: Policies.Policies = Policies.make({ policies: { a: { timeout: '1s' } } })
 * assert.deepStrictEqual(policies.names(), ['a'])
 * const reloaded = policies.reload({ policies: { a: { timeout: '2s' }, b: {} } })
 * assert.deepStrictEqual(reloaded, { _tag: 'Right', right: { added: ['b'], changed: ['a'], removed: [] } })
 * assert.strictEqual(policies.reload({ policies: { a: { timeout: -1 } } })._tag, 'Left')
 * assert.strictEqual(policies.get('a').timeout, 2_000)
 *
 * @category model
 * @since 1.0.0
 */
export interface Policies {
  readonly config: PolicyConfig
  readonly names: () => ReadonlyArray<string>
  readonly get: (name: string, fields?: KeyFields) => Pipeline
  readonly run: (
    name: string,
    fields?: KeyFields
  ) => <E, A>(action: TaskEither<E, A>, options?: RunOptions<E, A>) => TaskEither<E | PolicyRefused, A>
  readonly reload: (document: unknown) => E.Either<ConfigError, Reloaded>
  readonly reject: (error: string) => void
}

// -------------------------------------------------------------------------------------
// building
// -------------------------------------------------------------------------------------

interface Services {
  readonly clock: Clock
  readonly random: Random | undefined
  readonly redis: RedisClient | undefined
}

/** One name's pipelines: the one, or its keys' (a `Keyed`). */
interface Entry {
  readonly config: PipelineConfig
  readonly text: string
  readonly one: Pipeline | undefined
  readonly keyed: Keyed.Keyed<Pipeline> | undefined
}

/** Whether a section (and the store it is kept in) is written the same in both. */
const same = (a: PipelineConfig, b: PipelineConfig, section: keyof PipelineConfig): boolean =>
  formatPipeline({ [section]: a[section], store: a.store }) ===
  formatPipeline({ [section]: b[section], store: b.store })

const algorithmOf = (config: AdaptiveLimitConfig): AdaptiveLimit.Algorithm =>
  config.kind === 'aimd'
    ? AdaptiveLimit.aimd(config)
    : AdaptiveLimit.gradient({ ...config, queueSize: config.queueSize ?? 'sqrt' })

const breakerOf = (config: BreakerConfig, options: Breaker.BreakerOptions): Breaker.Breaker =>
  config.kind === 'consecutive'
    ? Breaker.consecutive({ ...options, threshold: config.threshold })
    : config.kind === 'count'
    ? Breaker.count({
        ...options,
        size: config.size,
        minimumCalls: config.minimumCalls,
        failureRate: config.failureRate
      })
    : Breaker.sampling({
        ...options,
        window: config.window,
        minThroughput: config.minThroughput,
        failureRate: config.failureRate,
        buckets: config.buckets
      })

/** A window limiter, local or in Redis (a local one takes over `from`'s count). */
const windowed = (
  kind: 'fixedWindow' | 'slidingWindow',
  options: RateLimiter.WindowOptions | RedisRateLimiter.WindowOptions
): RateLimiter.RateLimiter => ('redis' in options ? RedisRateLimiter[kind](options) : RateLimiter[kind](options))

/** Builds a pipeline; a `previous` one of the same name and key hands over what a changed layer keeps. */
const build = (
  services: Services,
  name: string,
  config: PipelineConfig,
  key: string | undefined,
  onEvent: Observer | undefined,
  previous: Pipeline | undefined
): Pipeline => {
  const { clock, random, store } = { ...services, store: config.store }
  const kept = (section: keyof PipelineConfig): boolean =>
    previous !== undefined && same(previous.config, config, section)
  const redis = (): RedisClient => {
    if (services.redis === undefined) {
      throw new TypeError(`Policies: the pipeline ${JSON.stringify(name)} names a store, and no redis client was given`)
    }
    return services.redis
  }
  const redisKey = (layer: string): string => Keyed.redisKey(`${store?.prefix ?? ''}${name}:${layer}:`, key ?? '')
  const shared = { timeout: store?.timeout, fallback: store?.fallback, onEvent }

  /** A layer: none when its section is left out, the previous one when the section is unchanged, else a new one. */
  const layer = <S, A>(
    section: keyof PipelineConfig,
    value: S | undefined,
    was: A | undefined,
    make: (value: S) => A
  ) => (value === undefined ? undefined : kept(section) ? was : make(value))

  const breaker = layer('breaker', config.breaker, previous?.breaker, (b) =>
    breakerOf(b, {
      halfOpenAfter: toSchedule(b.halfOpenAfter),
      halfOpenProbes: b.probes,
      clock,
      random,
      name,
      onEvent,
      store: store === undefined ? undefined : RedisBreaker.store({ redis: redis(), key: redisKey('breaker') }),
      storeTimeout: store?.timeout,
      from: previous?.breaker
    })
  )

  const rateLimiter = layer('rateLimit', config.rateLimit, previous?.rateLimiter, (r) => {
    const inRedis = () => ({ ...shared, redis: redis(), key: redisKey(`rate.${r.kind}`) })
    // a local limiter of the same kind hands over its state (one in Redis keeps it under its key)
    const from =
      previous?.config.store === undefined && previous?.config.rateLimit?.kind === r.kind
        ? previous.rateLimiter
        : undefined
    if (r.kind !== 'gcra') {
      const bounds = { limit: r.limit, window: r.window }
      return windowed(r.kind, store === undefined ? { ...bounds, clock, onEvent, from } : { ...inRedis(), ...bounds })
    }
    const rate = { rate: r.rate, per: r.per, burst: r.burst }
    if (store !== undefined) return RedisRateLimiter.gcra({ ...inRedis(), ...rate })
    return RateLimiter.gcra({ ...rate, clock, onEvent, from })
  })

  const throttle = layer('throttle', config.throttle, previous?.throttle, (c) => {
    const window = { k: c.k, window: c.window, buckets: c.buckets, random, onEvent }
    if (store !== undefined)
      return RedisAdaptiveThrottle.make({ ...shared, ...window, redis: redis(), key: redisKey('throttle') })
    // a local throttle hands over its counts (one in Redis keeps them under its key)
    const from = previous?.config.store === undefined ? previous?.throttle : undefined
    return AdaptiveThrottle.make({ ...window, clock, from })
  })

  const budget = layer('budget', config.budget, previous?.budget, (g): Budget.RetryBudget => {
    const tokens = { maxTokens: g.maxTokens, tokenRatio: g.tokenRatio }
    // a local budget hands over its tokens (one in Redis keeps them under its key)
    const from = previous?.config.store === undefined ? previous?.budget : undefined
    return store === undefined
      ? Budget.retryThrottle({ ...tokens, from })
      : RedisBudget.retryThrottle({ ...shared, redis: redis(), key: redisKey('budget'), ...tokens })
  })

  const bulkhead = layer('bulkhead', config.bulkhead, previous?.bulkhead, (h) =>
    Bulkhead.make({ maxConcurrent: h.maxConcurrent, maxQueue: h.maxQueue, clock, onEvent, from: previous?.bulkhead })
  )

  const adaptiveLimit = layer('adaptiveLimit', config.adaptiveLimit, previous?.adaptiveLimit, (a) =>
    AdaptiveLimit.make({
      algorithm: algorithmOf(a),
      min: a.min,
      max: a.max,
      initial: a.initial,
      window: { duration: a.window ?? 1_000, minSamples: a.minSamples ?? 10 },
      maxQueue: a.maxQueue,
      queueTimeout: a.queueTimeout,
      clock,
      onEvent,
      from: previous?.adaptiveLimit
    })
  )

  return {
    name,
    key,
    config,
    timeout: config.timeout,
    rateLimiter,
    breaker,
    throttle,
    schedule: config.retry === undefined ? undefined : toSchedule(config.retry),
    budget,
    hedging:
      config.hedging === undefined
        ? undefined
        : { delays: toSchedule(config.hedging.delays), maxConcurrent: config.hedging.maxConcurrent },
    bulkhead,
    adaptiveLimit,
    fallbackOn: config.fallback?.on
  }
}

/** The key a template makes of a call's fields. */
const keyOf = (where: string, name: string, template: string, fields: KeyFields | undefined): string =>
  template.replace(/\{([a-z]+)\}/g, (_, field: KeyField) => {
    const value = fields?.[field]
    if (typeof value !== 'string') {
      throw new TypeError(
        `${where}: the pipeline ${JSON.stringify(name)} is kept by ${JSON.stringify(
          template
        )}: fields.${field} must be a string, received ${String(value)}`
      )
    }
    return value
  })

// -------------------------------------------------------------------------------------
// running
// -------------------------------------------------------------------------------------

const refused = (layer: PolicyRefused['layer'], p: Pipeline): PolicyRefused => ({
  _tag: 'PolicyRefused',
  layer,
  name: p.name,
  key: p.key
})

const isRefused = (error: unknown): error is PolicyRefused =>
  typeof error === 'object' && error !== null && (error as { readonly _tag?: unknown })._tag === 'PolicyRefused'

/** A run that ended in the pipeline's own timeout: an overload, to the adaptive limit. */
const timedOut = (error: unknown): boolean => isRefused(error) && error.layer === 'timeout'

/** The stop reason a layer's refusal is a fallback's `on` for: a load shedder's (the throttle's, the adaptive limit's) is `'shed'`. */
const REASON_OF: Record<PolicyRefused['layer'], string> = {
  timeout: 'timeout',
  breaker: 'breaker',
  throttle: 'shed',
  bulkhead: 'bulkhead',
  adaptiveLimit: 'shed'
}

/** A pipeline applied to an action, from the inside out (docs/resilience-order.md). */
const apply = <E, A>(
  p: Pipeline,
  services: Services,
  onEvent: Observer | undefined,
  action: TaskEither<E, A>,
  options: RunOptions<E, A>
): TaskEither<E | PolicyRefused, A> => {
  const { clock, random } = services
  let attempt: TaskEither<E | PolicyRefused, A> = action
  if (p.timeout !== undefined)
    attempt = Timeout.timeout(p.timeout, () => refused('timeout', p), { clock, onEvent })(attempt)
  if (p.rateLimiter !== undefined) attempt = RateLimiter.throttle(p.rateLimiter, { clock })(attempt)
  if (p.breaker !== undefined) attempt = Breaker.protect(p.breaker, () => refused('breaker', p))(attempt)
  // outside the breaker, which then counts only the attempts that reached the backend; an open circuit counts
  // against the backend, as a refusal for overload does
  const shedding = (error: unknown): boolean => isRefused(error) && error.layer === 'throttle' && error.name === p.name
  const rejected = (error: unknown): boolean =>
    AdaptiveThrottle.isOverload(error) || (isRefused(error) && error.layer === 'breaker' && error.name === p.name)
  if (p.throttle !== undefined)
    attempt = AdaptiveThrottle.protect(p.throttle, () => refused('throttle', p), { rejected })(attempt)
  const { breaker, budget } = p
  const guards = p.throttle === undefined ? undefined : [AdaptiveThrottle.asGuard(p.throttle, { refused: shedding })]
  const runOf = (tell: Fallback.Tell): TaskEither<E | PolicyRefused, A> => {
    const guarded = { clock, random, budget, breaker, guards, onEvent, key: p.key }
    let run = attempt
    if (p.schedule !== undefined) run = retrying(p.schedule, tell(guarded))(attempt)
    else if (p.hedging !== undefined) {
      const once = attempt
      run = Hedging.hedging<E | PolicyRefused, A>(
        p.hedging.delays,
        tell({ ...guarded, maxConcurrent: p.hedging.maxConcurrent })
      )(() => once)
    }
    if (p.adaptiveLimit !== undefined)
      run = AdaptiveLimit.protect(p.adaptiveLimit, () => refused('adaptiveLimit', p), { dropped: timedOut })(run)
    return p.bulkhead === undefined ? run : Bulkhead.protect(p.bulkhead, () => refused('bulkhead', p))(run)
  }
  const { fallback } = options
  if (p.fallbackOn === undefined || fallback === undefined) return runOf((o) => o)
  const on: ReadonlyArray<string> = p.fallbackOn
  const byReason = Fallback.stoppedBy(...p.fallbackOn)
  // a bulkhead or an adaptive limit refuses outside the run, which then tells no reason: its refusal is known by its error
  const when = (stopped: Fallback.Stopped<E | PolicyRefused>): boolean =>
    byReason(stopped) ||
    (isRefused(stopped.error) && stopped.error.name === p.name && on.includes(REASON_OF[stopped.error.layer]))
  return Fallback.fallback(when, fallback, { clock, onEvent })(Fallback.telling(runOf))
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A registry of the pipelines a `PolicyConfig` document describes (parsed JSON, as `PolicyConfig.parse` takes it).
 *
 * **Details**
 *
 * - A document that does not decode, or whose policies cannot be built (a `store` without `options.redis`), is a
 *   `TypeError` with its error lines: a service that starts with a bad document does not start.
 * - A keyed pipeline (`key`) keeps one pipeline per key (`Keyed.make`, at most `maxKeys`, idle ones dropped); on a
 *   reload that changes it but not its `template`, the keys it holds are rebuilt at once, each from its own.
 * - With a `store`, the breaker, rate limit, throttle and budget are shared through Redis under
 *   `<prefix><name>:<layer>:<key>` (the key escaped by `Keyed.redisKey`).
 *
 * @example
 * import * as Policies from 'fp-ts-retry/Policies'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as TE from 'fp-ts/TaskEither'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const clock = TestClock.make()
 *   const policies = Policies.make(
 *     { policies: { payments: { timeout: '1s', retry: { constant: '100ms', maxRetries: 2 } } } },
 *     { clock }
 *   )
 *   let calls = 0
 *   const flaky: TE.TaskEither<string, string> = () => Promise.resolve(++calls < 3 ? { _tag: 'Left', left: '503' } : { _tag: 'Right', right: 'ok' })
 *   const result = policies.run('payments')(flaky)()
 *   await clock.runAll()
 *   assert.deepStrictEqual(await result, { _tag: 'Right', right: 'ok' })
 *   assert.deepStrictEqual(clock.sleepsOf('backoff'), [100, 100])
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const make = (document: unknown, options: PoliciesOptions = {}): Policies => {
  const where = 'Policies.make'
  validate.object(where, 'options', options)
  validate.services(where, 'options', { clock: options.clock, random: options.random })
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  const services: Services = { clock: options.clock ?? LiveClock.live, random: options.random, redis: options.redis }
  const { onEvent } = options

  const entryOf = (name: string, config: PipelineConfig, previous: Entry | undefined): Entry => {
    const text = formatPipeline(config)
    if (previous !== undefined && previous.text === text) return previous
    const key = config.key
    if (key === undefined) {
      return { config, text, one: build(services, name, config, undefined, onEvent, previous?.one), keyed: undefined }
    }
    // the keys of the previous pipeline, rebuilt from their own when the template still means the same
    let handOver =
      previous?.keyed !== undefined && previous.config.key?.template === key.template ? previous.keyed : undefined
    const keyed = Keyed.make<Pipeline>({
      make: (k, keyEvents) => build(services, name, config, k, keyEvents, handOver?.get(k)),
      maxKeys: key.maxKeys,
      idleAfter: key.idleAfter,
      clock: services.clock,
      onEvent
    })
    if (handOver !== undefined) for (const k of handOver.keys()) keyed.get(k)
    handOver = undefined
    return { config, text, one: undefined, keyed }
  }

  /** The entries of a decoded document, built in full before anything is swapped. */
  const entriesOf = (config: PolicyConfig, previous: ReadonlyMap<string, Entry>): Map<string, Entry> =>
    new Map(Object.entries(config.policies).map(([name, p]) => [name, entryOf(name, p, previous.get(name))]))

  const first = parse(document)
  if (E.isLeft(first)) throw new TypeError(`${where}: the document does not decode:\n${first.left.message}`)
  let current = first.right
  let entries = entriesOf(current, new Map())

  const tell = (event: Parameters<Observer>[0]): void => observe(onEvent, event)
  const reject = (error: string): void =>
    tell({ _tag: 'ConfigRejected', source: 'config', run: 0, at: services.clock.now(), error })

  const get = (name: string, fields?: KeyFields): Pipeline => {
    validate.string('Policies.get', 'name', name)
    const entry = entries.get(name)
    if (entry === undefined) {
      throw new TypeError(
        `Policies.get: no pipeline ${JSON.stringify(name)}; the document names ${JSON.stringify([...entries.keys()])}`
      )
    }
    if (entry.one !== undefined) return entry.one
    const keyed = entry.keyed as Keyed.Keyed<Pipeline>
    return keyed.get(keyOf('Policies.get', name, entry.config.key?.template ?? '', fields))
  }

  return {
    get config() {
      return current
    },
    names: () => [...entries.keys()],
    get,
    run:
      (name, fields) =>
      <E, A>(action: TaskEither<E, A>, runOptions: RunOptions<E, A> = {}): TaskEither<E | PolicyRefused, A> =>
      () =>
        // read when the run starts: a reload meanwhile does not reach it
        apply(get(name, fields), services, onEvent, action, runOptions)(),
    reload: (next) => {
      const at = services.clock.now()
      const decoded = parse(next)
      let built: Map<string, Entry> | undefined
      let error: ConfigError | undefined
      if (E.isLeft(decoded)) error = decoded.left
      else {
        try {
          built = entriesOf(decoded.right, entries)
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e)
          error = { _tag: 'ConfigError', issues: [], omitted: 0, message }
        }
      }
      if (error !== undefined || built === undefined || E.isLeft(decoded)) {
        const rejected = error ?? { _tag: 'ConfigError' as const, issues: [], omitted: 0, message: 'not built' }
        reject(rejected.message)
        return E.left(rejected)
      }
      const added = [...built.keys()].filter((n) => !entries.has(n)).sort()
      const removed = [...entries.keys()].filter((n) => !built?.has(n)).sort()
      const changed = [...built.keys()].filter((n) => entries.has(n) && entries.get(n) !== built?.get(n)).sort()
      // one assignment each: a run that starts now sees the old pipelines or the new ones, never a mix
      entries = built
      current = decoded.right
      tell({ _tag: 'ConfigReloaded', source: 'config', run: 0, at, added, changed, removed })
      return E.right({ added, changed, removed })
    },
    reject: (error) => reject(validate.string('Policies.reject', 'error', error))
  }
}

// -------------------------------------------------------------------------------------
// sources
// -------------------------------------------------------------------------------------

/** The largest document a file source reads: a bigger file is refused unread. */
const MAX_DOCUMENT_BYTES = 1024 * 1024

/**
 * Options of {@link watchFile}: `every`, how often the file is looked at (ms, default 1,000), on `clock` (default
 * `Clock.live`: give a `TestClock` in tests, which then drives the polling).
 *
 * @example
 * import type { WatchOptions } from 'fp-ts-retry/Policies'
 *
 * const options: WatchOptions = { every: 5_000 }
 *
 * @category model
 * @since 1.0.0
 */
export interface WatchOptions {
  readonly every?: number | undefined
  readonly clock?: Clock | undefined
}

/**
 * Reloads `policies` from a JSON file whenever it changes: the file is looked at every `every` ms on the clock (its
 * size and modification time), and read, parsed and reloaded when they changed. Answers a function that stops the
 * watch.
 *
 * **Details**
 *
 * - A file that cannot be read, is larger than 1 MB, or is not JSON is refused as a document that does not decode
 *   is: a `ConfigRejected` told, and the running pipelines stay. The next change is read again.
 * - Polling rather than `fs.watch`: it behaves the same on every file system (an editor that replaces the file, a
 *   mounted ConfigMap's symlink swap), and a `TestClock` drives it.
 * - Any other source pushes documents with `policies.reload(document)` itself.
 *
 * @example
 * import * as Policies from 'fp-ts-retry/Policies'
 * import * as TestClock from 'fp-ts-retry/TestClock'
 * import * as fs from 'fs'
 * import * as os from 'os'
 * import * as path from 'path'
 * import * as assert from 'assert'
 *
 * async function main() {
 *   const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'policies-')), 'policy.json')
 *   fs.writeFileSync(file, JSON.stringify({ policies: { payments: { timeout: '1s' } } }))
 *   const clock = TestClock.make()
 *   const policies = Policies.make(JSON.parse(fs.readFileSync(file, 'utf8')), { clock })
 *   const stop = Policies.watchFile(policies, file, { every: 1_000, clock })
 *   fs.writeFileSync(file, JSON.stringify({ policies: { payments: { timeout: '3s' } } }))
 *   fs.utimesSync(file, new Date(), new Date(Date.now() + 5_000))
 *   await clock.advance(1_000) // looked at: changed
 *   // the read itself is on the file system's time
 *   for (let i = 0; i < 500 && policies.get('payments').timeout !== 3_000; i++) await new Promise((r) => setTimeout(r, 10))
 *   assert.strictEqual(policies.get('payments').timeout, 3_000)
 *   stop()
 * }
 * main()
 *
 * @category constructors
 * @since 1.0.0
 */
export const watchFile = (policies: Policies, file: string, options: WatchOptions = {}): (() => void) => {
  const where = 'Policies.watchFile'
  validate.implementing(where, 'policies', 'a Policies', ['reload', 'reject'], policies)
  validate.string(where, 'file', file)
  validate.object(where, 'options', options)
  validate.services(where, 'options', { clock: options.clock })
  const every = options.every === undefined ? 1_000 : validate.positive(where, 'options.every', options.every)
  const clock = options.clock ?? LiveClock.live
  const controller = new AbortController()
  const signatureOf = (stat: fs.Stats): string => `${stat.size}:${stat.mtimeMs}:${stat.ino}`
  let seen: string | undefined
  try {
    seen = signatureOf(fs.statSync(file))
  } catch {
    seen = undefined
  }
  const look = async (): Promise<void> => {
    let text: string
    try {
      const stat = await fs.promises.stat(file)
      const signature = signatureOf(stat)
      if (signature === seen) return
      seen = signature
      if (stat.size > MAX_DOCUMENT_BYTES) {
        policies.reject(`${file}: ${stat.size} bytes, more than the ${MAX_DOCUMENT_BYTES} a policy document may have`)
        return
      }
      text = await fs.promises.readFile(file, 'utf8')
    } catch (e) {
      seen = undefined
      policies.reject(`${file}: ${e instanceof Error ? e.message : String(e)}`)
      return
    }
    let document: unknown
    try {
      document = JSON.parse(text)
    } catch (e) {
      policies.reject(`${file}: not JSON: ${e instanceof Error ? e.message : String(e)}`)
      return
    }
    policies.reload(document)
  }
  const loop = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      try {
        await clock.sleep(every, controller.signal, 'user')
      } catch {
        return
      }
      if (!controller.signal.aborted) await look()
    }
  }
  void loop()
  return () => controller.abort()
}
