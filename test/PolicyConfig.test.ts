import Ajv from 'ajv'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import type { PipelineConfig, PolicyConfig } from '../src/PolicyConfig'
import { format, formatPipeline, jsonSchema, parse, PolicyConfigCodec } from '../src/PolicyConfig'
import { deepStrictEqual, ok, strictEqual } from './util'

/** The message of a document that does not decode. */
const errorOf = (u: unknown): string => {
  const result = parse(u)
  if (E.isRight(result)) throw new Error(`expected a failure, got ${format(result.right)}`)
  return result.left.message
}

const one = (pipeline: unknown): unknown => ({ policies: { p: pipeline } })

// -------------------------------------------------------------------------------------
// generators: decoded pipelines, and the ways to write each
// -------------------------------------------------------------------------------------

const ms = fc.oneof(
  fc.integer({ min: 1, max: 10 ** 7 }),
  fc.integer({ min: 1, max: 10 ** 4 }).map((s) => s * 1000)
)
/** A duration as written: a number of ms, or a string the `ms` package reads back to it. */
const written = (value: number): fc.Arbitrary<number | string> =>
  // in seconds only when whole: `ms` reads "512.358s" as 512357.99999999994 (a float product)
  fc.constantFrom<number | string>(value, `${value}ms`, ...(value % 1000 === 0 ? [`${value / 1000}s`] : []))

const scheduleArb = fc.oneof(
  ms.map((d) => ({ constant: d })),
  fc.record({ exponential: ms, maxRetries: fc.integer({ min: 0, max: 10 }) }),
  fc.record({ fibonacci: ms, cap: ms }).filter((s) => s.cap >= s.fibonacci)
)

const breakerArb = fc.oneof(
  fc.record(
    {
      kind: fc.constant('consecutive' as const),
      threshold: fc.integer({ min: 1, max: 100 }),
      halfOpenAfter: scheduleArb,
      probes: fc.integer({ min: 1, max: 5 })
    },
    { requiredKeys: ['kind', 'threshold', 'halfOpenAfter'] }
  ),
  fc
    .record(
      {
        kind: fc.constant('count' as const),
        size: fc.integer({ min: 1, max: 1000 }),
        minimumCalls: fc.integer({ min: 1, max: 1000 }),
        failureRate: fc.double({ min: 0.01, max: 1, noNaN: true }),
        halfOpenAfter: scheduleArb
      },
      { requiredKeys: ['kind', 'size', 'failureRate', 'halfOpenAfter'] }
    )
    .filter((b) => b.minimumCalls === undefined || b.minimumCalls <= b.size),
  fc.record(
    {
      kind: fc.constant('sampling' as const),
      window: ms,
      minThroughput: fc.integer({ min: 1, max: 100 }),
      failureRate: fc.double({ min: 0.01, max: 1, noNaN: true }),
      buckets: fc.integer({ min: 1, max: 60 }),
      halfOpenAfter: scheduleArb
    },
    { requiredKeys: ['kind', 'window', 'minThroughput', 'failureRate', 'halfOpenAfter'] }
  )
)

const pipelineArb: fc.Arbitrary<PipelineConfig> = fc
  .record(
    {
      timeout: ms,
      rateLimit: fc.oneof(
        fc.record({
          kind: fc.constant('gcra' as const),
          rate: fc.integer({ min: 1, max: 1000 }),
          per: ms,
          burst: fc.integer({ min: 1, max: 100 })
        }),
        fc.record({
          kind: fc.constantFrom('fixedWindow' as const, 'slidingWindow' as const),
          limit: fc.integer({ min: 1, max: 1000 }),
          window: ms
        })
      ),
      breaker: breakerArb,
      throttle: fc.record(
        { k: fc.constantFrom(1, 1.5, 2, 10), window: ms, buckets: fc.integer({ min: 1, max: 1_000 }) },
        { requiredKeys: [] }
      ),
      retry: scheduleArb,
      budget: fc.record({
        kind: fc.constant('retryThrottle' as const),
        maxTokens: fc.integer({ min: 1, max: 1000 }),
        tokenRatio: fc.constantFrom(0.1, 0.5, 1)
      }),
      bulkhead: fc.record({
        maxConcurrent: fc.integer({ min: 1, max: 100 }),
        maxQueue: fc.integer({ min: 0, max: 100 })
      }),
      adaptiveLimit: fc
        .tuple(
          fc.oneof(
            fc.record(
              {
                kind: fc.constant('aimd' as const),
                backoffRatio: fc.constantFrom(0.5, 0.75, 0.9),
                increase: fc.integer({ min: 1, max: 5 }),
                latencyThreshold: ms
              },
              { requiredKeys: ['kind', 'backoffRatio'] }
            ),
            fc.record(
              {
                kind: fc.constant('gradient' as const),
                tolerance: fc.constantFrom(1, 1.5, 2),
                smoothing: fc.constantFrom(0.2, 1),
                longWindow: fc.integer({ min: 1, max: 1000 }),
                queueSize: fc.constantFrom(0, 4, 2.5)
              },
              { requiredKeys: ['kind'] }
            )
          ),
          fc.integer({ min: 1, max: 100 }),
          fc.integer({ min: 0, max: 100 }),
          fc.integer({ min: 0, max: 100 }),
          fc.record(
            {
              window: ms,
              minSamples: fc.integer({ min: 1, max: 100 }),
              maxQueue: fc.integer({ min: 0, max: 100 }),
              queueTimeout: ms
            },
            { requiredKeys: [] }
          )
        )
        .map(([algorithm, min, up, more, rest]) => ({
          ...algorithm,
          min,
          initial: min + up,
          max: min + up + more,
          ...rest
        })),
      fallback: fc.record({
        on: fc.uniqueArray(
          fc.constantFrom(
            'failed' as const,
            'schedule' as const,
            'breaker' as const,
            'bulkhead' as const,
            'shed' as const
          ),
          { minLength: 1 }
        )
      }),
      key: fc.record(
        {
          template: fc.constantFrom('{authority}', '{tenant}:{method}', 'svc/{host}'),
          maxKeys: fc.integer({ min: 1, max: 10_000 }),
          idleAfter: ms
        },
        { requiredKeys: ['template', 'maxKeys'] }
      ),
      store: fc.record(
        {
          kind: fc.constant('redis' as const),
          prefix: fc.constantFrom('svc:', 'a.b-c'),
          timeout: ms,
          fallback: fc.constantFrom('local' as const, 'allow' as const, 'refuse' as const)
        },
        { requiredKeys: ['kind', 'prefix'] }
      )
    },
    { requiredKeys: [] }
  )
  .filter((p) => p.budget === undefined || p.retry !== undefined)
  .filter((p) => p.bulkhead === undefined || p.adaptiveLimit === undefined)

const documentArb: fc.Arbitrary<PolicyConfig> = fc
  .dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), pipelineArb, { maxKeys: 4 })
  // plain JSON: fast-check's records may have no prototype
  .map((policies) => JSON.parse(JSON.stringify({ policies })) as PolicyConfig)

/** Writes a decoded document the way a person might: durations in any unit, keys in any order. */
const writtenArb = (config: PolicyConfig): fc.Arbitrary<unknown> => {
  const DURATIONS = new Set(['timeout', 'per', 'window', 'idleAfter'])
  const write = (value: unknown, key: string, inSchedule: boolean): fc.Arbitrary<unknown> => {
    if (typeof value === 'number' && (DURATIONS.has(key) || (key === 'timeout' && !inSchedule))) return written(value)
    if (Array.isArray(value) || typeof value !== 'object' || value === null) return fc.constant(value)
    const entries = Object.entries(value as Record<string, unknown>)
    return fc
      .tuple(
        fc.shuffledSubarray(entries, { minLength: entries.length }),
        ...entries.map(([k, v]) => write(v, k, inSchedule || ['retry', 'halfOpenAfter', 'delays'].includes(k)))
      )
      .map(([order, ...values]) => {
        const byKey = new Map(entries.map(([k], i) => [k, values[i]]))
        return Object.fromEntries(order.map(([k]) => [k, byKey.get(k)]))
      })
  }
  return write(config, '', false)
}

describe('PolicyConfig', () => {
  describe('PolicyConfigCodec', () => {
    it('round-trips: encoding a decoded document gives back its canonical JSON, and decoding that gives the document', () => {
      fc.assert(
        fc.property(documentArb, (config) => {
          const encoded = PolicyConfigCodec.encode(config)
          deepStrictEqual(JSON.parse(JSON.stringify(encoded)), encoded)
          const decoded = PolicyConfigCodec.decode(encoded)
          ok(E.isRight(decoded))
          deepStrictEqual(decoded.right, config)
          ok(PolicyConfigCodec.is(decoded.right))
          deepStrictEqual(PolicyConfigCodec.encode(decoded.right), encoded)
        }),
        { numRuns: 300 }
      )
    })

    it('reads a document however it is written (units, key order) as the same document', () => {
      fc.assert(
        fc.property(
          documentArb.chain((config) => fc.tuple(fc.constant(config), writtenArb(config))),
          ([config, written]) => {
            const decoded = PolicyConfigCodec.decode(written)
            ok(E.isRight(decoded), JSON.stringify(written))
            strictEqual(format(decoded.right), format(config))
          }
        ),
        { numRuns: 300 }
      )
    })

    it('writes the layers in the order they wrap one another, whatever the order of the keys', () => {
      const decoded = parse(
        one({
          bulkhead: { maxQueue: 0, maxConcurrent: 1 },
          retry: { constant: 1 },
          breaker: { halfOpenAfter: { constant: 1 }, threshold: 1, kind: 'consecutive' },
          timeout: '1s'
        })
      )
      ok(E.isRight(decoded))
      deepStrictEqual(Object.keys(PolicyConfigCodec.encode(decoded.right).policies as object), ['p'])
      strictEqual(
        formatPipeline(decoded.right.policies.p),
        '{"timeout":1000,"breaker":{"kind":"consecutive","threshold":1,"halfOpenAfter":{"constant":1}},' +
          '"retry":{"constant":1},"bulkhead":{"maxConcurrent":1,"maxQueue":0}}'
      )
    })

    it('is not fooled by a value with the right JSON but not decoded (a duration still a string)', () => {
      ok(!PolicyConfigCodec.is({ policies: { p: { timeout: '1s' } } }))
      ok(PolicyConfigCodec.is({ policies: { p: { timeout: 1000 } } }))
    })
  })

  describe('bad documents', () => {
    const cases: ReadonlyArray<readonly [string, unknown, string]> = [
      [
        "a throttle's k below 1",
        one({ throttle: { k: 0.5 } }),
        'at policies.p.throttle.k: expected a finite number >= 1, got 0.5'
      ],
      [
        "a throttle's buckets out of range",
        one({ throttle: { buckets: 1_001 } }),
        'at policies.p.throttle.buckets: expected a whole number in [1, 1000], got 1001'
      ],
      [
        'a negative duration',
        one({ timeout: -5 }),
        'at policies.p.timeout: expected a duration > 0 like "250ms" or "2s", or a number of ms, got -5'
      ],
      [
        'a zero duration',
        one({ timeout: '0ms' }),
        'at policies.p.timeout: expected a duration > 0 like "250ms" or "2s", or a number of ms, got "0ms"'
      ],
      [
        'an infinite duration',
        one({ key: { template: '{host}', maxKeys: 1, idleAfter: Infinity } }),
        'at policies.p.key.idleAfter: expected a duration > 0 like "250ms" or "2s", or a number of ms, got Infinity'
      ],
      [
        'NaN',
        one({ rateLimit: { kind: 'gcra', rate: NaN, per: 1, burst: 1 } }),
        'at policies.p.rateLimit.rate: expected a finite number > 0, got NaN'
      ],
      [
        'a threshold out of range',
        one({ breaker: { kind: 'consecutive', threshold: 0, halfOpenAfter: { constant: 1 } } }),
        'at policies.p.breaker.threshold: expected a whole number >= 1, got 0'
      ],
      [
        'a failure rate out of range',
        one({ breaker: { kind: 'count', size: 10, failureRate: 1.5, halfOpenAfter: { constant: 1 } } }),
        'at policies.p.breaker.failureRate: expected a number in (0, 1], got 1.5'
      ],
      [
        'minimumCalls above size',
        one({
          breaker: { kind: 'count', size: 10, minimumCalls: 11, failureRate: 0.5, halfOpenAfter: { constant: 1 } }
        }),
        'at policies.p.breaker: expected minimumCalls at most size (10), got {"kind":"count","size":10,"minimumCalls":11,"failureRate":0.5,"halfOpenAfter"...'
      ],
      [
        'an unknown kind',
        one({ breaker: { kind: 'consecutve', threshold: 1, halfOpenAfter: { constant: 1 } } }),
        'at policies.p.breaker.kind: expected one of "consecutive", "count", "sampling", got "consecutve" (did you mean "consecutive"?)'
      ],
      [
        'no kind',
        one({ rateLimit: { rate: 1, per: 1, burst: 1 } }),
        'at policies.p.rateLimit.kind: expected one of "gcra", "fixedWindow", "slidingWindow", got nothing'
      ],
      [
        'a key of another kind',
        one({ breaker: { kind: 'consecutive', threshold: 1, window: 5, halfOpenAfter: { constant: 1 } } }),
        'at policies.p.breaker.window: expected one of the keys "kind", "threshold", "halfOpenAfter", "probes", got the unknown key "window"'
      ],
      [
        'a misspelt section',
        one({ bulkhed: { maxConcurrent: 1, maxQueue: 0 } }),
        'at policies.p.bulkhed: expected one of the keys "timeout", "rateLimit", "breaker", "throttle", "retry", "budget", "hedging", "bulkhead", "adaptiveLimit", "fallback", "key", "store", got the unknown key "bulkhed" (did you mean "bulkhead"?)'
      ],
      [
        'a key template naming no field',
        one({ key: { template: 'payments', maxKeys: 1 } }),
        'at policies.p.key.template: expected a key template naming at least one field in braces, of "authority", "host", "method", "route", "tenant" ("{authority}"), got "payments", which names no field'
      ],
      [
        'a key template naming an unknown field',
        one({ key: { template: '{autority}', maxKeys: 1 } }),
        'at policies.p.key.template: expected fields of "authority", "host", "method", "route", "tenant", got "{autority}", which names the unknown field "autority" (did you mean "authority"?)'
      ],
      [
        'an unbalanced template',
        one({ key: { template: '{host', maxKeys: 1 } }),
        'at policies.p.key.template: expected a key template naming at least one field in braces, of "authority", "host", "method", "route", "tenant" ("{authority}"), got "{host", which names no field'
      ],
      [
        'a bad schedule, with its own path',
        one({ breaker: { kind: 'consecutive', threshold: 1, halfOpenAfter: { exponential: '1s', cap: 'ten' } } }),
        'at policies.p.breaker.halfOpenAfter.cap: expected a duration like "250ms" or a number of ms, got "ten"'
      ],
      [
        'retry and hedging',
        one({ retry: { constant: 1 }, hedging: { delays: { constant: 1 } } }),
        'at policies.p: expected either "retry" or "hedging", not both: a pipeline retries or hedges, got {"retry":{"constant":1},"hedging":{"delays":{"constant":1}}}'
      ],
      [
        'a budget with nothing to limit',
        one({ budget: { kind: 'retryThrottle', maxTokens: 1, tokenRatio: 0.1 } }),
        'at policies.p: expected a "retry" or "hedging" for the budget to limit, got {"budget":{"kind":"retryThrottle","maxTokens":1,"tokenRatio":0.1}}'
      ],
      [
        'a repeated fallback reason',
        one({ fallback: { on: ['breaker', 'breaker'] } }),
        'at policies.p.fallback.on[1]: expected no repeat of "breaker", got "breaker"'
      ],
      [
        'an unknown fallback reason',
        one({ fallback: { on: ['breakr'] } }),
        'at policies.p.fallback.on[0]: expected one of "failed", "schedule", "aborted", "budget", "breaker", "rateLimit", "bulkhead", "shed", got "breakr" (did you mean "breaker"?)'
      ],
      [
        'a bad name',
        { policies: { 'a b': {} } },
        'at policies["a b"]: expected a name of letters, digits, ".", "_", ":" and "-" (at most 100 characters), got the name "a b"'
      ],
      [
        'an adaptive limit out of order',
        one({ adaptiveLimit: { kind: 'gradient', min: 10, initial: 5, max: 100 } }),
        'at policies.p.adaptiveLimit: expected min <= initial <= max (received min 10, initial 5, max 100), got {"kind":"gradient","min":10,"initial":5,"max":100}'
      ],
      [
        'an AIMD backoff ratio of 1',
        one({ adaptiveLimit: { kind: 'aimd', backoffRatio: 1, min: 1, initial: 5, max: 100 } }),
        'at policies.p.adaptiveLimit.backoffRatio: expected a number in [0.5, 1), got 1'
      ],
      [
        'a bulkhead and an adaptive limit',
        one({
          bulkhead: { maxConcurrent: 1, maxQueue: 0 },
          adaptiveLimit: { kind: 'gradient', min: 1, initial: 1, max: 1 }
        }),
        'at policies.p: expected either "bulkhead" or "adaptiveLimit", not both: one bound on the runs in progress, got {"bulkhead":{"maxConcurrent":1,"maxQueue":0},"adaptiveLimit":{"kind":"gradien...'
      ],
      ['no policies', {}, 'at policies: expected an object of pipelines by name, got nothing'],
      ['not an object', [], 'at document: expected a policy document: { "policies": { "<name>": <pipeline> } }, got []']
    ]
    it.each(cases)('%s: a clear error with its path', (_, document, message) => {
      strictEqual(errorOf(document), message)
    })

    it('a document nested 10,000 deep: an error at its path, at once', () => {
      let deep: Record<string, unknown> = {}
      const root = deep
      for (let i = 0; i < 10_000; i++) deep = deep.intersect = {} as Record<string, unknown>
      ok(errorOf(one({ retry: root })).startsWith('at policies.p.retry'))
      let list: Array<unknown> = []
      const nested = list
      for (let i = 0; i < 10_000; i++) list = (list[0] = []) as Array<unknown>
      ok(errorOf(one({ fallback: { on: nested } })).startsWith('at policies.p.fallback.on[0]: expected one of'))
      ok(
        errorOf(JSON.parse(`${'['.repeat(10_000)}${']'.repeat(10_000)}`)).startsWith(
          'at document: expected a policy document'
        )
      )
    })

    it('a 10 MB document: the issue is named without reading the rest', () => {
      const big = JSON.parse(JSON.stringify(one({ timeout: 'x'.repeat(10 * 1024 * 1024) })))
      const message = errorOf(big)
      ok(message.startsWith('at policies.p.timeout: expected a duration'), message.slice(0, 100))
      ok(message.length < 300)
      const manyKeys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'x'.repeat(40)]))
      const lines = errorOf(one(manyKeys)).split('\n')
      strictEqual(lines.length, 21)
      strictEqual(lines[20], 'and 49980 more')
    })

    it('a value that throws when read is an issue, not a throw', () => {
      const hostile = new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('boom')
          }
        }
      )
      strictEqual(errorOf(one(hostile)), 'at policies.p: expected an object: a pipeline, got [object Object]')
      const revoked = Proxy.revocable({}, {})
      revoked.revoke()
      ok(errorOf({ policies: revoked.proxy }).startsWith('at policies: expected an object of pipelines by name'))
    })

    it('lists every issue at once, and applies nothing', () => {
      const message = errorOf({ policies: { a: { timeout: -1 }, b: { bulkhead: { maxConcurrent: 0, maxQueue: -1 } } } })
      deepStrictEqual(message.split('\n').length, 3)
    })
  })

  describe('jsonSchema', () => {
    const validate = new Ajv({ allErrors: true }).compile(jsonSchema)

    it('accepts every document the codec accepts, written in any form (property, checked by ajv)', () => {
      fc.assert(
        fc.property(
          documentArb.chain((config) => writtenArb(config)),
          (written) => {
            ok(E.isRight(PolicyConfigCodec.decode(written)))
            ok(validate(written) === true, JSON.stringify(validate.errors))
          }
        ),
        { numRuns: 200 }
      )
    })

    it("accepts the guide's document, and refuses unknown keys, unknown kinds and numbers out of range", () => {
      const guide = {
        $schema: './policy.schema.json',
        policies: {
          payments: {
            timeout: '2s',
            rateLimit: { kind: 'gcra', rate: 100, per: '1s', burst: 10 },
            breaker: { kind: 'consecutive', threshold: 5, halfOpenAfter: { exponential: '1s', cap: '30s' } },
            retry: { exponential: '100ms', cap: '2s', jitter: 'full', maxRetries: 3 },
            budget: { kind: 'retryThrottle', maxTokens: 10, tokenRatio: 0.1 },
            bulkhead: { maxConcurrent: 10, maxQueue: 100 },
            fallback: { on: ['breaker', 'bulkhead'] },
            key: { template: '{authority}', maxKeys: 1000, idleAfter: '10m' },
            store: { kind: 'redis', prefix: 'svc:' }
          }
        }
      }
      ok(validate(guide) === true, JSON.stringify(validate.errors))
      ok(E.isRight(parse(guide)))
      const bad = [
        one({ bulkhed: { maxConcurrent: 1, maxQueue: 0 } }),
        one({ breaker: { kind: 'consecutve', threshold: 1, halfOpenAfter: { constant: 1 } } }),
        one({ breaker: { kind: 'consecutive', threshold: 0, halfOpenAfter: { constant: 1 } } }),
        one({ breaker: { kind: 'count', size: 10, failureRate: 1.5, halfOpenAfter: { constant: 1 } } }),
        one({ timeout: -1 }),
        one({ retry: { exponentail: 100 } }),
        { policies: { 'a b': {} } }
      ]
      for (const document of bad) {
        strictEqual(validate(document), false)
        ok(E.isLeft(parse(document)))
      }
    })

    it('lists every section of a pipeline, and refuses unknown keys', () => {
      const policies = (jsonSchema.properties as Record<string, Record<string, unknown>>).policies
      const pipeline = policies.additionalProperties as Record<string, unknown>
      deepStrictEqual(Object.keys(pipeline.properties as object), [
        'timeout',
        'rateLimit',
        'breaker',
        'throttle',
        'retry',
        'budget',
        'hedging',
        'bulkhead',
        'adaptiveLimit',
        'fallback',
        'key',
        'store'
      ])
      strictEqual(pipeline.additionalProperties, false)
    })
  })
})
