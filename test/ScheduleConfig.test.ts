import * as assert from 'assert'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as t from 'io-ts'
import { PathReporter } from 'io-ts/PathReporter'
import ms from 'ms'
import * as path from 'path'
import type * as Clock from '../src/Clock'
import { isCount, isDuration } from '../src/internal/validate'
import * as Driver from '../src/Driver'
import * as Random from '../src/Random'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import type { Code, ConfigError, InterpretOptions, ScheduleConfig } from '../src/ScheduleConfig'
import {
  defaultCodeOf,
  Duration,
  format,
  grammar,
  parse,
  ScheduleConfigCodec,
  toConfigError,
  toSchedule
} from '../src/ScheduleConfig'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, ok, seedArbitrary, throwsTypeError } from './util'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

/** Decodes or fails the test, showing the errors. */
const decode = (u: unknown): ScheduleConfig => {
  const result = ScheduleConfigCodec.decode(u)
  if (E.isLeft(result))
    assert.fail(`expected ${JSON.stringify(u)} to decode, got:\n${toConfigError(result.left).message}`)
  return result.right
}

/** The config error of a bad config, or fails the test. */
const errorOf = (u: unknown): ConfigError => {
  const result = parse(u)
  if (E.isRight(result)) return assert.fail(`expected a config error, got the schedule ${result.right.description}`)
  return result.left
}

const messageOf = (u: unknown): string => errorOf(u).message

interface RunOptions {
  readonly inputs?: ReadonlyArray<unknown>
  readonly attemptDurations?: ReadonlyArray<number>
  readonly seeds?: ReadonlyArray<number>
}

/**
 * Asserts that two schedules make the same delays for every seed, input and attempt duration given (defaults:
 * four seeds, one input, attempts that take no time).
 */
const sameDelays = (
  actual: Schedule.Schedule<unknown>,
  expected: Schedule.Schedule<unknown>,
  options: RunOptions = {}
): void => {
  for (const seed of options.seeds ?? [0, 1, 42, 0xffffffff]) {
    for (const input of options.inputs ?? [undefined]) {
      for (const attemptDuration of options.attemptDurations ?? [0]) {
        const run = (s: Schedule.Schedule<unknown>) =>
          Driver.delays(s, { random: Random.seeded(seed), input, attemptDuration, limit: 40 })
        deepStrictEqual(run(actual), run(expected))
      }
    }
  }
}

/** Deep equality as `deepStrictEqual` sees it (key order aside, `-0` is not `0`). */
const equal = (a: unknown, b: unknown): boolean => {
  try {
    assert.deepStrictEqual(a, b)
    return true
  } catch {
    return false
  }
}

const fromConfig = (u: unknown, options?: Parameters<typeof toSchedule>[1]): Schedule.Schedule<unknown> =>
  toSchedule(decode(u), options)

/**
 * How many times the runner reads the clock through a run of failures of `schedule` (bounded to 5 retries), on a
 * clock whose sleeps end at once: 0 when the runner knows the schedule never looks at the time.
 */
const clockReads = async (schedule: Schedule.Schedule<unknown>): Promise<number> => {
  let reads = 0
  let time = 0
  const clock: Clock.Clock = {
    now: () => (reads++, time),
    sleep: (ms) => {
      time += ms
      return Promise.resolve()
    }
  }
  const bounded = pipe(schedule, Schedule.intersect(Schedule.recurs(5)))
  await pipe(TE.left('failed'), retrying(bounded, { clock, random: Random.seeded(1) }))()
  return reads
}

/** Asserts that `f` returns a Left (and so did not throw), and returns its error. */
const leftOf = (u: unknown): ConfigError => {
  const result = parse(u)
  assert.ok(E.isLeft(result), 'expected a Left')
  return result.left
}

// -------------------------------------------------------------------------------------
// generated configs
// -------------------------------------------------------------------------------------

/** A duration as written in a config, and the ms it stands for. */
interface WrittenDuration {
  readonly text: number | string
  readonly value: number
}

const written = (text: string): WrittenDuration => ({ text, value: ms(text as ms.StringValue) as number })

const durationArbitrary: fc.Arbitrary<WrittenDuration> = fc.oneof(
  fc.integer({ min: 0, max: 5000 }).map((n): WrittenDuration => ({ text: n, value: n })),
  fc.double({ min: 0, max: 5000, noNaN: true }).map((x): WrittenDuration => ({ text: x, value: x + 0 })),
  fc.integer({ min: 0, max: 5000 }).map((n) => written(`${n}ms`)),
  fc.integer({ min: 0, max: 5000 }).map((n) => written(String(n))),
  fc.integer({ min: 0, max: 60 }).map((n) => written(`${n / 10}s`)),
  fc.integer({ min: 0, max: 5 }).map((n) => written(`${n}m`)),
  fc.integer({ min: 0, max: 2 }).map((n) => written(`${n}h`))
)

/** Two durations, the smaller first. */
const orderedDurations = fc
  .tuple(durationArbitrary, durationArbitrary)
  .map(([a, b]): readonly [WrittenDuration, WrittenDuration] => (a.value <= b.value ? [a, b] : [b, a]))

type RawConfig = { readonly [key: string]: unknown }

const codeArbitrary: fc.Arbitrary<Code> = fc.constantFrom<Code>('ECONNRESET', 'ETIMEDOUT', 429, 503, '503')

/**
 * The optional modifiers of a config whose constructor has the base delay `base` (if any); `fixedCap` is the cap
 * when the constructor sets it (`null`: no cap).
 */
const modifiersArbitrary = (base: number | undefined, fixedCap?: WrittenDuration | null): fc.Arbitrary<RawConfig> =>
  fc
    .record({
      cap:
        fixedCap === undefined ? fc.option(durationArbitrary, { nil: undefined }) : fc.constant(fixedCap ?? undefined),
      jitter: fc.option(fc.constantFrom('full', 'equal', 'none'), { nil: undefined }),
      minDelay: fc.option(durationArbitrary, { nil: undefined }),
      maxRetries: fc.option(fc.nat(6), { nil: undefined }),
      maxElapsed: fc.option(durationArbitrary, { nil: undefined }),
      maxCumulativeDelay: fc.option(durationArbitrary, { nil: undefined }),
      retryOn: fc.option(fc.array(codeArbitrary, { maxLength: 3 }), { nil: undefined }),
      neverRetryOn: fc.option(fc.array(codeArbitrary, { maxLength: 3 }), { nil: undefined })
    })
    .map((m): RawConfig => {
      // keep only what is valid: a cap >= the base delay, a minimum delay <= the cap
      const cap = m.cap !== undefined && (base === undefined || m.cap.value >= base) ? m.cap : undefined
      const minDelay =
        m.minDelay !== undefined && (cap === undefined || m.minDelay.value <= cap.value) ? m.minDelay : undefined
      const out: Record<string, unknown> = { ...m, cap: cap?.text, minDelay: minDelay?.text }
      out.maxElapsed = m.maxElapsed?.text
      out.maxCumulativeDelay = m.maxCumulativeDelay?.text
      return out
    })

/** A config with its keys in a random order (the order must not matter) and undefined keys left out. */
const shuffled = (config: RawConfig): fc.Arbitrary<RawConfig> => {
  const keys = Object.keys(config).filter((k) => config[k] !== undefined)
  return fc
    .shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length })
    .map((order) => Object.fromEntries(order.map((k) => [k, config[k]])))
}

const leafArbitrary: fc.Arbitrary<RawConfig> = fc.oneof(
  fc
    .tuple(orderedDurations, fc.option(fc.double({ min: 1, max: 4, noNaN: true }), { nil: undefined }), fc.boolean())
    .chain(([[base, cap], factor, capped]) =>
      modifiersArbitrary(base.value, capped ? cap : null).map((m) => ({ ...m, exponential: base.text, factor }))
    ),
  ...(['constant', 'linear', 'fibonacci'] as const).map((kind) =>
    durationArbitrary.chain((base) => modifiersArbitrary(base.value).map((m) => ({ ...m, [kind]: base.text })))
  ),
  orderedDurations.chain(([base, cap]) =>
    modifiersArbitrary(base.value, cap).map((m) => ({ ...m, decorrelatedJitter: base.text }))
  ),
  // maxDoublings past 1023: 2^maxDoublings overflows, the early delays underflow to 0
  fc
    .tuple(durationArbitrary, fc.oneof(fc.nat(12), fc.integer({ min: 1000, max: 1100 })))
    .chain(([longest, maxDoublings]) =>
      modifiersArbitrary(longest.value).map((m) => ({ ...m, truncatedBinaryExponential: longest.text, maxDoublings }))
    ),
  fc
    .tuple(orderedDurations, fc.boolean())
    .chain(([[median, cap], capped]) =>
      modifiersArbitrary(median.value, capped ? cap : null).map((m) => ({ ...m, decorrelatedJitterV2: median.text }))
    ),
  orderedDurations.chain(([min, max]) =>
    modifiersArbitrary(undefined).map((m) => ({ ...m, randomBetween: [min.text, max.text] }))
  ),
  fc
    .array(durationArbitrary, { maxLength: 5 })
    .chain((ds) => modifiersArbitrary(undefined).map((m) => ({ ...m, delays: ds.map((d) => d.text) }))),
  fc.nat(6).chain((n) => modifiersArbitrary(undefined).map((m) => ({ ...m, recurs: n }))),
  modifiersArbitrary(undefined).map((m) => ({ ...m, forever: true })),
  modifiersArbitrary(undefined).map((m) => ({ ...m, stop: true }))
)

/** Valid configs as people write them: compact and nested, durations as numbers or strings, keys in any order. */
const configArbitrary: fc.Arbitrary<RawConfig> = fc
  .letrec<{ config: RawConfig }>((tie) => ({
    config: fc.oneof(
      { maxDepth: 2, depthSize: 'small' },
      leafArbitrary,
      fc
        .tuple(
          fc.constantFrom('intersect', 'union', 'andThen'),
          fc.array(tie('config'), { minLength: 1, maxLength: 3 }),
          modifiersArbitrary(undefined)
        )
        .map(([kind, configs, m]): RawConfig => ({ ...m, [kind]: configs }))
    )
  }))
  .config.chain(shuffled)

/** What a generated schedule is run with: a seed, an error (with a code or not), how long each attempt takes. */
interface RunContext {
  readonly seed: number
  readonly input: unknown
  readonly attemptDuration: number
}

const runArbitrary: fc.Arbitrary<RunContext> = fc.record({
  seed: seedArbitrary,
  input: fc.constantFrom<unknown>(undefined, { code: 'ECONNRESET' }, { status: 503 }, 429, new Error('no code')),
  attemptDuration: fc.constantFrom(0, 7, 250.5)
})

const delaysOf = (schedule: Schedule.Schedule<unknown>, run: RunContext): ReadonlyArray<number> =>
  Driver.delays(schedule, {
    random: Random.seeded(run.seed),
    input: run.input,
    attemptDuration: run.attemptDuration,
    limit: 30
  })

/** An independent reading of the grammar, in plain pipes: the schedule a (decoded) config should be. */
const reference = (
  c: ScheduleConfig,
  codeOf: (e: unknown) => Code | undefined = defaultCodeOf
): Schedule.Schedule<unknown> => {
  const r = c as unknown as Record<string, unknown>
  const nested = (key: string, combine: typeof Schedule.intersect): Schedule.Schedule<unknown> => {
    const [first, ...rest] = r[key] as ReadonlyArray<ScheduleConfig>
    let s = reference(first, codeOf)
    for (const next of rest) s = combine(reference(next, codeOf))(s)
    return s
  }
  let s: Schedule.Schedule<unknown> =
    'exponential' in c
      ? Schedule.exponential(c.exponential, c.factor ?? 2)
      : 'constant' in c
      ? Schedule.constant(c.constant)
      : 'linear' in c
      ? Schedule.linear(c.linear)
      : 'fibonacci' in c
      ? Schedule.fibonacci(c.fibonacci)
      : 'truncatedBinaryExponential' in c
      ? Schedule.truncatedBinaryExponential({ maxDoublings: c.maxDoublings, maxDelay: c.truncatedBinaryExponential })
      : 'decorrelatedJitter' in c
      ? Schedule.decorrelatedJitter(c.decorrelatedJitter, c.cap)
      : 'decorrelatedJitterV2' in c
      ? Schedule.decorrelatedJitterV2(c.decorrelatedJitterV2, c.cap)
      : 'randomBetween' in c
      ? Schedule.randomBetween(...c.randomBetween)
      : 'delays' in c
      ? Schedule.fromDelays(c.delays)
      : 'recurs' in c
      ? Schedule.recurs(c.recurs)
      : 'forever' in c
      ? Schedule.forever
      : 'stop' in c
      ? Schedule.stop
      : 'intersect' in c
      ? nested('intersect', Schedule.intersect)
      : 'union' in c
      ? nested('union', Schedule.union)
      : nested('andThen', Schedule.andThen)
  if (c.cap !== undefined && !('decorrelatedJitter' in c) && !('decorrelatedJitterV2' in c))
    s = pipe(s, Schedule.capped(c.cap))
  if (c.jitter === 'full') s = pipe(s, Schedule.fullJitter)
  if (c.jitter === 'equal') s = pipe(s, Schedule.equalJitter)
  if (c.minDelay !== undefined) s = pipe(s, Schedule.minDelay(c.minDelay))
  if (c.maxRetries !== undefined) s = pipe(s, Schedule.intersect(Schedule.recurs(c.maxRetries)))
  if (c.maxElapsed !== undefined) s = pipe(s, Schedule.upTo(c.maxElapsed))
  if (c.maxCumulativeDelay !== undefined) s = pipe(s, Schedule.maxCumulativeDelay(c.maxCumulativeDelay))
  const allow = c.retryOn?.map(String)
  if (allow !== undefined)
    s = pipe(
      s,
      // the codes name the predicate, so that a run stored under other codes is not resumed under these
      Schedule.whileInput((e: unknown) => allow.includes(String(codeOf(e))), {
        description: `code in ${JSON.stringify(c.retryOn)}`
      })
    )
  const deny = c.neverRetryOn?.map(String)
  if (deny !== undefined)
    s = pipe(
      s,
      Schedule.untilInput((e: unknown) => deny.includes(String(codeOf(e))), {
        description: `code in ${JSON.stringify(c.neverRetryOn)}`
      })
    )
  return s
}

const numRuns = 200

/** `{ maxRetries: 1, union: [itself] }` */
const cyclicConfig = (): unknown => {
  const cyclic: { maxRetries: number; union: Array<unknown> } = { maxRetries: 1, union: [] }
  cyclic.union.push(cyclic)
  return cyclic
}

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('ScheduleConfig', () => {
  describe('the compact examples of the issue, exactly as written', () => {
    it('{ "exponential": "100ms", "cap": "10s", "jitter": "full", "maxRetries": 5, "maxElapsed": "30s" }', () => {
      const config = decode(
        JSON.parse('{ "exponential": "100ms", "cap": "10s", "jitter": "full", "maxRetries": 5, "maxElapsed": "30s" }')
      )
      deepStrictEqual<ScheduleConfig>(config, {
        exponential: 100,
        cap: 10_000,
        jitter: 'full',
        maxRetries: 5,
        maxElapsed: 30_000
      })
      const schedule = toSchedule(config)
      // full jitter with a draw of 0.5 halves each delay: 100, 200, 400, 800, 1600 -> 50, ..., 800
      deepStrictEqual(Driver.delays(schedule, { random: Random.fixed(0.5) }), [50, 100, 200, 400, 800])
      sameDelays(
        schedule,
        pipe(
          Schedule.exponential(100),
          Schedule.capped(10_000),
          Schedule.fullJitter,
          Schedule.intersect(Schedule.recurs(5)),
          Schedule.upTo(30_000)
        ),
        { attemptDurations: [0, 5000, 12_000] }
      )
      // 6 s attempts: the fifth retry would start after 5 attempts and 4 sleeps, past 30 s
      deepStrictEqual(
        Driver.delays(schedule, { random: Random.fixed(0.5), attemptDuration: 6000 }),
        [50, 100, 200, 400]
      )
    })

    it('{ "constant": "10ms", "maxRetries": 3 }', () => {
      const config = decode(JSON.parse('{ "constant": "10ms", "maxRetries": 3 }'))
      deepStrictEqual<ScheduleConfig>(config, { constant: 10, maxRetries: 3 })
      deepStrictEqual(Driver.delays(toSchedule(config)), [10, 10, 10])
      sameDelays(toSchedule(config), pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(3))))
    })

    it('{ "decorrelatedJitter": "5ms", "cap": "2s" }', () => {
      const config = decode(JSON.parse('{ "decorrelatedJitter": "5ms", "cap": "2s" }'))
      deepStrictEqual<ScheduleConfig>(config, { decorrelatedJitter: 5, cap: 2000 })
      // min(cap, base + u * (3 * previous - base)) with u = 0.5: 10, 17.5, 28.75, ...
      deepStrictEqual(Driver.delays(toSchedule(config), { random: Random.fixed(0.5), limit: 3 }), [10, 17.5, 28.75])
      deepStrictEqual(Driver.delays(toSchedule(config), { random: Random.fixed(0.999), limit: 12 }).slice(-1), [2000])
      sameDelays(toSchedule(config), Schedule.decorrelatedJitter(5, 2000))
    })

    it('{ "truncatedBinaryExponential": "10s", "maxDoublings": 9 }', () => {
      const config = decode(JSON.parse('{ "truncatedBinaryExponential": "10s", "maxDoublings": 9 }'))
      deepStrictEqual<ScheduleConfig>(config, { truncatedBinaryExponential: 10_000, maxDoublings: 9 })
      // 10 s / 2^9 = 19.53125 ms, doubled nine times to 10 s, then 10 s for good
      const delays = Driver.delays(toSchedule(config), { limit: 12 })
      deepStrictEqual(delays, [...Array.from({ length: 10 }, (_, i) => 10_000 / 2 ** (9 - i)), 10_000, 10_000])
      sameDelays(toSchedule(config), Schedule.truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10_000 }))
    })

    it('{ "decorrelatedJitterV2": "100ms", "cap": "10s" }', () => {
      const config = decode(JSON.parse('{ "decorrelatedJitterV2": "100ms", "cap": "10s" }'))
      deepStrictEqual<ScheduleConfig>(config, { decorrelatedJitterV2: 100, cap: 10_000 })
      // draws pinned at 0.5: the retries come at about 90, 200, 400, 800 ms, ...; the cap is Polly's MaxDelay
      deepStrictEqual(
        Driver.delays(toSchedule(config), { random: Random.fixed(0.5), limit: 5 }).map(Math.round),
        [90, 109, 204, 405, 808]
      )
      deepStrictEqual(
        Driver.delays(toSchedule(config), { random: Random.fixed(0.5), limit: 12 }).slice(-3),
        [10_000, 10_000, 10_000]
      )
      sameDelays(toSchedule(config), Schedule.decorrelatedJitterV2(100, 10_000))
    })
  })

  describe('every constructor and combinator gives the delays of the hand-built schedule', () => {
    const table: ReadonlyArray<readonly [string, unknown, Schedule.Schedule<unknown>]> = [
      ['exponential', { exponential: 100 }, Schedule.exponential(100)],
      ['exponential + factor', { exponential: '100ms', factor: 3 }, Schedule.exponential(100, 3)],
      ['exponential + fractional factor', { exponential: 10, factor: 1.5 }, Schedule.exponential(10, 1.5)],
      ['constant', { constant: '1s' }, Schedule.constant(1000)],
      ['linear', { linear: 50 }, Schedule.linear(50)],
      ['fibonacci', { fibonacci: '10ms' }, Schedule.fibonacci(10)],
      ['decorrelatedJitter + cap', { decorrelatedJitter: 5, cap: '2s' }, Schedule.decorrelatedJitter(5, 2000)],
      [
        'truncatedBinaryExponential + maxDoublings',
        { truncatedBinaryExponential: '8s', maxDoublings: 3 },
        Schedule.truncatedBinaryExponential({ maxDoublings: 3, maxDelay: 8000 })
      ],
      [
        'truncatedBinaryExponential with maxDoublings 0',
        { truncatedBinaryExponential: 250, maxDoublings: 0 },
        Schedule.truncatedBinaryExponential({ maxDoublings: 0, maxDelay: 250 })
      ],
      [
        'truncatedBinaryExponential + cap, jitter, maxRetries',
        { truncatedBinaryExponential: '10s', maxDoublings: 9, cap: '10s', jitter: 'full', maxRetries: 12 },
        pipe(
          Schedule.truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10_000 }),
          Schedule.capped(10_000),
          Schedule.fullJitter,
          Schedule.intersect(Schedule.recurs(12))
        )
      ],
      ['decorrelatedJitterV2', { decorrelatedJitterV2: '100ms' }, Schedule.decorrelatedJitterV2(100)],
      [
        'decorrelatedJitterV2 + cap',
        { decorrelatedJitterV2: '5ms', cap: '2s' },
        Schedule.decorrelatedJitterV2(5, 2000)
      ],
      [
        'decorrelatedJitterV2 + cap equal to the median, minDelay, maxRetries',
        { decorrelatedJitterV2: 100, cap: 100, minDelay: 20, maxRetries: 6 },
        pipe(Schedule.decorrelatedJitterV2(100, 100), Schedule.minDelay(20), Schedule.intersect(Schedule.recurs(6)))
      ],
      ['randomBetween', { randomBetween: ['100ms', '1s'] }, Schedule.randomBetween(100, 1000)],
      ['delays', { delays: [10, '1s', '2m', '1h'] }, Schedule.fromDelays([10, 1000, 120_000, 3_600_000])],
      ['delays, empty', { delays: [] }, Schedule.stop],
      ['recurs', { recurs: 3 }, Schedule.recurs(3)],
      ['recurs(0)', { recurs: 0 }, Schedule.stop],
      ['forever', { forever: true }, Schedule.forever],
      ['stop', { stop: true }, Schedule.stop],
      ['cap', { exponential: 100, cap: 1000 }, pipe(Schedule.exponential(100), Schedule.capped(1000))],
      [
        'minDelay',
        { randomBetween: [0, 100], minDelay: 50 },
        pipe(Schedule.randomBetween(0, 100), Schedule.minDelay(50))
      ],
      ['jitter full', { constant: 1000, jitter: 'full' }, pipe(Schedule.constant(1000), Schedule.fullJitter)],
      ['jitter equal', { constant: 1000, jitter: 'equal' }, pipe(Schedule.constant(1000), Schedule.equalJitter)],
      ['jitter none', { constant: 1000, jitter: 'none' }, Schedule.constant(1000)],
      ['maxRetries', { linear: 10, maxRetries: 4 }, pipe(Schedule.linear(10), Schedule.intersect(Schedule.recurs(4)))],
      ['maxElapsed', { constant: 100, maxElapsed: '1s' }, pipe(Schedule.constant(100), Schedule.upTo(1000))],
      [
        'maxCumulativeDelay',
        { constant: 300, maxCumulativeDelay: '1s' },
        pipe(Schedule.constant(300), Schedule.maxCumulativeDelay(1000))
      ],
      [
        'cap, jitter, minDelay, maxRetries, maxElapsed, maxCumulativeDelay together, keys in reverse order',
        {
          maxCumulativeDelay: '5s',
          maxElapsed: '4s',
          maxRetries: 8,
          minDelay: 50,
          jitter: 'full',
          cap: '1s',
          exponential: 100
        },
        pipe(
          Schedule.exponential(100),
          Schedule.capped(1000),
          Schedule.fullJitter,
          Schedule.minDelay(50),
          Schedule.intersect(Schedule.recurs(8)),
          Schedule.upTo(4000),
          Schedule.maxCumulativeDelay(5000)
        )
      ],
      [
        'intersect',
        { intersect: [{ exponential: 100 }, { recurs: 3 }, { constant: 150 }] },
        pipe(
          Schedule.exponential(100),
          Schedule.intersect(Schedule.recurs(3)),
          Schedule.intersect(Schedule.constant(150))
        )
      ],
      [
        'union',
        { union: [{ delays: [10, 10] }, { constant: '1s', maxRetries: 4 }] },
        pipe(
          Schedule.fromDelays([10, 10]),
          Schedule.union(pipe(Schedule.constant(1000), Schedule.intersect(Schedule.recurs(4))))
        )
      ],
      [
        'andThen',
        { andThen: [{ delays: [0, 0] }, { delays: [500, 1000] }] },
        pipe(Schedule.fromDelays([0, 0]), Schedule.andThen(Schedule.fromDelays([500, 1000])))
      ],
      [
        'nested intersect / union / andThen, with modifiers at each level',
        {
          andThen: [
            {
              union: [
                { constant: 10, maxRetries: 2 },
                { exponential: 50, jitter: 'equal', maxRetries: 3 }
              ]
            },
            { intersect: [{ decorrelatedJitter: '20ms', cap: '500ms' }, { recurs: 4 }], minDelay: 30 }
          ],
          maxElapsed: '3s'
        },
        pipe(
          pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(2))),
          Schedule.union(pipe(Schedule.exponential(50), Schedule.equalJitter, Schedule.intersect(Schedule.recurs(3)))),
          Schedule.andThen(
            pipe(Schedule.decorrelatedJitter(20, 500), Schedule.intersect(Schedule.recurs(4)), Schedule.minDelay(30))
          ),
          Schedule.upTo(3000)
        )
      ]
    ]

    it.each(table)('%s', async (_, config, expected) => {
      sameDelays(fromConfig(config), expected, { attemptDurations: [0, 100, 333.5] })
      // the same metadata: the runner reads the clock for the one exactly when it does for the other
      deepStrictEqual(await clockReads(fromConfig(config)), await clockReads(expected))
    })

    it('every constructor of the grammar should have a case in this table', () => {
      const missing = grammar
        .filter((k) => k.role === 'constructor')
        .filter((k) => !table.some(([, config]) => k.key in (config as object)))
        .map((k) => k.key)
      deepStrictEqual(missing, [])
    })

    it('each case should make some delay, or be meant to make none (the table tests something)', () => {
      const empty = table
        .filter(([, config]) => Driver.delays(fromConfig(config), { limit: 5 }).length === 0)
        .map(([name]) => name)
      deepStrictEqual(empty, ['delays, empty', 'recurs(0)', 'stop'])
    })

    it('should apply the modifiers in one fixed order, whatever the order of the keys', () => {
      // minDelay after the jitter: a full jitter draw of 0 is raised to 100; the other order would not be
      const s = fromConfig({ minDelay: 100, jitter: 'full', constant: 1000 })
      deepStrictEqual(Driver.delays(s, { random: Random.fixed(0), limit: 2 }), [100, 100])
      // the cap before the jitter: full jitter draws below the cap, not below the uncapped delay
      const t = fromConfig({ jitter: 'full', cap: 1000, exponential: 100 })
      deepStrictEqual(Driver.delays(t, { random: Random.fixed(0.5), limit: 6 }), [50, 100, 200, 400, 500, 500])
    })
  })

  describe('retryOn / neverRetryOn', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
    const timeout = Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })
    const http503 = { status: 503 }
    const http404 = { statusCode: 404 }
    const noCode = new Error('no code')

    const retries = (config: unknown, input: unknown, options?: Parameters<typeof toSchedule>[1]): number =>
      Driver.delays(fromConfig(config, options), { input, limit: 10 }).length

    it('retryOn should retry only the listed codes, found by the default codeOf (code, status, statusCode)', () => {
      const config = { constant: 10, maxRetries: 3, retryOn: ['ECONNRESET', 503, 404] }
      deepStrictEqual(
        [reset, timeout, http503, http404, noCode, undefined, 'ECONNRESET', 503, null].map((e) => retries(config, e)),
        [3, 0, 3, 3, 0, 0, 3, 3, 0]
      )
    })

    it('neverRetryOn should retry everything but the listed codes; an error without a code is retried', () => {
      const config = { constant: 10, maxRetries: 3, neverRetryOn: ['ETIMEDOUT', 404] }
      deepStrictEqual(
        [reset, timeout, http503, http404, noCode, undefined].map((e) => retries(config, e)),
        [3, 0, 3, 0, 3, 3]
      )
    })

    it('should compare codes as strings: 503 in the config matches "503" in the error and the other way round', () => {
      deepStrictEqual(retries({ constant: 10, maxRetries: 2, retryOn: [503] }, { code: '503' }), 2)
      deepStrictEqual(retries({ constant: 10, maxRetries: 2, retryOn: ['503'] }, { status: 503 }), 2)
      deepStrictEqual(retries({ constant: 10, maxRetries: 2, neverRetryOn: ['429'] }, 429), 0)
    })

    it('both lists together: retryOn first, then neverRetryOn', () => {
      const config = { constant: 10, maxRetries: 2, retryOn: ['ECONNRESET', 'ETIMEDOUT'], neverRetryOn: ['ETIMEDOUT'] }
      deepStrictEqual(
        [reset, timeout, http503].map((e) => retries(config, e)),
        [2, 0, 0]
      )
    })

    it('a custom codeOf should replace the default one', () => {
      const codeOf = (e: unknown): Code | undefined => (e as { response?: { status?: number } }).response?.status
      const config = { constant: 10, maxRetries: 2, retryOn: [503] }
      deepStrictEqual(retries(config, { response: { status: 503 } }, { codeOf }), 2)
      deepStrictEqual(retries(config, { response: { status: 500 } }, { codeOf }), 0)
      // the default would have read `status`; the custom one does not
      deepStrictEqual(retries(config, http503, { codeOf }), 0)
      deepStrictEqual(retries(config, { response: { status: 503 } }), 0)
    })

    it('should give the delays of whileInput / untilInput on the hand-built schedule', () => {
      const allow = (e: unknown) => ['ECONNRESET', '503'].includes(String(defaultCodeOf(e)))
      sameDelays(
        fromConfig({ exponential: 10, maxRetries: 4, retryOn: ['ECONNRESET', 503] }),
        pipe(Schedule.exponential(10), Schedule.intersect(Schedule.recurs(4)), Schedule.whileInput(allow)),
        { inputs: [reset, timeout, http503, noCode] }
      )
      sameDelays(
        fromConfig({ exponential: 10, maxRetries: 4, neverRetryOn: ['ECONNRESET'] }),
        pipe(
          Schedule.exponential(10),
          Schedule.intersect(Schedule.recurs(4)),
          Schedule.untilInput((e: unknown) => defaultCodeOf(e) === 'ECONNRESET')
        ),
        { inputs: [reset, timeout, http503, noCode] }
      )
    })

    it('should name the codes in the description, so that a run stored under other codes is not resumed', () => {
      const stored = Driver.make(fromConfig({ constant: 10, retryOn: ['ECONNRESET', 503] })).snapshot()
      deepStrictEqual(stored.schedule, 'whileInput(code in ["ECONNRESET",503])(constant(10))')
      const resumed = Driver.restore(fromConfig({ constant: 10, retryOn: ['ECONNRESET'] }), stored)
      ok(E.isLeft(resumed) && resumed.left instanceof Driver.ScheduleMismatch)
      ok(E.isRight(Driver.restore(fromConfig({ constant: 10, retryOn: ['ECONNRESET', 503] }), stored)))
      deepStrictEqual(
        fromConfig({ constant: 10, neverRetryOn: [404] }).description,
        'untilInput(code in [404])(constant(10))'
      )
    })

    it('should stop the runner on the first error whose code is not to be retried', async () => {
      const schedule = fromConfig({ constant: '100ms', maxRetries: 5, retryOn: ['ECONNRESET'] })
      const errors = [reset, reset, timeout, reset]
      let calls = 0
      const action: TE.TaskEither<Error, string> = () => Promise.resolve(E.left(errors[calls++]))
      const clock = TestClock.make()
      const run = pipe(action, retrying(schedule, { clock }))()
      await clock.runAll()
      deepStrictEqual(await run, E.left(timeout))
      deepStrictEqual(calls, 3)
      deepStrictEqual(clock.sleeps, [100, 100])
    })
  })

  describe('bad options', () => {
    const config = { constant: '100ms' } as const
    it.each([
      ['parse', (options: unknown) => parse(config, options as InterpretOptions)],
      ['toSchedule', (options: unknown) => toSchedule(decode(config), options as InterpretOptions)]
    ])('%s should reject them where they are given, naming them', (name, interpret) => {
      throwsTypeError(
        () => interpret(null),
        new RegExp(`^ScheduleConfig\\.${name}: options must be an object, received null$`)
      )
      throwsTypeError(
        () => interpret({ codeOf: 5 }),
        new RegExp(`^ScheduleConfig\\.${name}: options\\.codeOf must be a function, received 5$`)
      )
    })
  })

  describe('defaultCodeOf', () => {
    it('should read the error itself when it is a string or a number, else code, status, statusCode in that order', () => {
      deepStrictEqual(defaultCodeOf('EPIPE'), 'EPIPE')
      deepStrictEqual(defaultCodeOf(503), 503)
      deepStrictEqual(defaultCodeOf({ code: 'E1', status: 500, statusCode: 501 }), 'E1')
      deepStrictEqual(defaultCodeOf({ status: 500, statusCode: 501 }), 500)
      deepStrictEqual(defaultCodeOf({ statusCode: 501 }), 501)
      deepStrictEqual(defaultCodeOf({ code: { nested: 1 }, status: 502 }), 502)
      deepStrictEqual([null, undefined, true, {}, [], new Error('x'), Symbol('s')].map(defaultCodeOf), [
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined
      ])
    })
  })

  describe('Duration', () => {
    it.each([
      [0, 0],
      [250, 250],
      [1.5, 1.5],
      ['250ms', 250],
      ['1.5s', 1500],
      ['2m', 120_000],
      ['1h', 3_600_000],
      ['1d', 86_400_000],
      ['250', 250],
      [' 2 s ', 2000],
      ['2 minutes', 120_000],
      ['1H', 3_600_000],
      [-0, 0]
    ] as const)('should decode %j as %d ms', (input, expected) => {
      const result = Duration.decode(input)
      deepStrictEqual(result, E.right(expected))
      if (E.isRight(result)) assert.ok(Object.is(result.right, expected), 'no -0')
    })

    it.each([
      ['ten'],
      [''],
      ['  '],
      ['-1s'],
      [-1],
      [Infinity],
      [NaN],
      ['1e3'],
      ['Infinity'],
      [null],
      [true],
      [{}],
      [[]],
      ['9'.repeat(101)]
    ])('should reject %j', (input) => {
      assert.ok(E.isLeft(Duration.decode(input)))
      assert.strictEqual(Duration.is(input), false)
    })

    it('should encode to the number of ms, and is() should accept only numbers of ms', () => {
      deepStrictEqual(Duration.encode(1500), 1500)
      assert.ok(Duration.is(1500))
      assert.ok(!Duration.is('1.5s'))
    })

    it('should accept durations as numbers or strings in every duration field', () => {
      deepStrictEqual(
        decode({ exponential: '1.5s', cap: '2m', minDelay: 250, maxElapsed: '1h', maxCumulativeDelay: '30s' }),
        {
          exponential: 1500,
          cap: 120_000,
          minDelay: 250,
          maxElapsed: 3_600_000,
          maxCumulativeDelay: 30_000
        }
      )
      deepStrictEqual(decode({ randomBetween: ['250ms', 1000] }), { randomBetween: [250, 1000] })
    })
  })

  describe('error reporting', () => {
    it('should give the exact message of the issue for a bad cap', () => {
      assert.strictEqual(
        messageOf({ exponential: '100ms', cap: 'ten' }),
        'at schedule.cap: expected a duration like "250ms" or a number of ms, got "ten"'
      )
    })

    it('should report every error at once, each with its path, the expected form and the value found', () => {
      const error = errorOf({
        exponential: '100ms',
        cap: 'ten',
        maxRetries: 2.5,
        jitter: 'half',
        retryOn: ['ECONNRESET', null, {}],
        maxRetry: 3
      })
      deepStrictEqual(error._tag, 'ConfigError')
      deepStrictEqual(error.issues, [
        {
          path: 'schedule.maxRetry',
          expected:
            'one of the keys "exponential", "factor", "cap", "jitter", "minDelay", "maxRetries", "maxElapsed", "maxCumulativeDelay", "retryOn", "neverRetryOn"',
          actual: 'maxRetry',
          hint: 'did you mean "maxRetries"?'
        },
        { path: 'schedule.cap', expected: 'a duration like "250ms" or a number of ms', actual: 'ten' },
        { path: 'schedule.jitter', expected: 'one of "full", "equal", "none"', actual: 'half' },
        { path: 'schedule.maxRetries', expected: 'a whole number >= 0', actual: 2.5 },
        { path: 'schedule.retryOn[1]', expected: 'an error code (a string or a number)', actual: null },
        { path: 'schedule.retryOn[2]', expected: 'an error code (a string or a number)', actual: {} }
      ])
      deepStrictEqual(error.message.split('\n'), [
        `at schedule.maxRetry: expected ${error.issues[0].expected}, got the unknown key "maxRetry" (did you mean "maxRetries"?)`,
        ...error.issues.slice(1).map((i) => `at ${i.path}: expected ${i.expected}, got ${JSON.stringify(i.actual)}`)
      ])
      deepStrictEqual(error.omitted, 0)
    })

    it('should report errors inside nested configs with their full path', () => {
      deepStrictEqual(
        messageOf({
          intersect: [{ exponential: 'fast' }, { union: [{ recurs: -1 }, { delays: [10, '1x'] }] }],
          maxElapsed: '1 fortnight'
        }).split('\n'),
        [
          'at schedule.intersect[0].exponential: expected a duration like "250ms" or a number of ms, got "fast"',
          'at schedule.intersect[1].union[0].recurs: expected a whole number >= 0, got -1',
          'at schedule.intersect[1].union[1].delays[1]: expected a duration like "250ms" or a number of ms, got "1x"',
          'at schedule.maxElapsed: expected a duration like "250ms" or a number of ms, got "1 fortnight"'
        ]
      )
    })

    it.each([
      [
        'a negative delay',
        { constant: -5 },
        'at schedule.constant: expected a duration like "250ms" or a number of ms, got -5'
      ],
      [
        'a negative duration string',
        { linear: '-1s' },
        'at schedule.linear: expected a duration like "250ms" or a number of ms, got "-1s"'
      ],
      [
        'a cap below the base',
        { exponential: '1s', cap: '500ms' },
        'at schedule.cap: expected a cap >= the base delay (1000 ms), got "500ms"'
      ],
      [
        'a decorrelatedJitter cap below the base',
        { decorrelatedJitter: 50, cap: 10 },
        'at schedule.cap: expected a cap >= the base delay (50 ms), got 10'
      ],
      [
        'a factor < 1',
        { exponential: 100, factor: 0.5 },
        'at schedule.factor: expected a growth factor: a finite number >= 1, got 0.5'
      ],
      [
        'a factor that is a string',
        { exponential: 100, factor: '2' },
        'at schedule.factor: expected a growth factor: a finite number >= 1, got "2"'
      ],
      [
        'a factor without exponential',
        { constant: 100, factor: 2 },
        'at schedule.factor: expected no "factor": it goes with "exponential" only, got 2'
      ],
      [
        'truncatedBinaryExponential without maxDoublings',
        { truncatedBinaryExponential: '10s' },
        'at schedule.maxDoublings: expected a number of doublings for "truncatedBinaryExponential", such as {"truncatedBinaryExponential": "10s", "maxDoublings": 9}, got nothing'
      ],
      [
        'a negative maxDoublings',
        { truncatedBinaryExponential: '10s', maxDoublings: -1 },
        'at schedule.maxDoublings: expected a whole number >= 0, got -1'
      ],
      [
        'a fractional maxDoublings',
        { truncatedBinaryExponential: '10s', maxDoublings: 2.5 },
        'at schedule.maxDoublings: expected a whole number >= 0, got 2.5'
      ],
      [
        'a maxDoublings as a string',
        { truncatedBinaryExponential: '10s', maxDoublings: '9' },
        'at schedule.maxDoublings: expected a whole number >= 0, got "9"'
      ],
      [
        'a maxDoublings without truncatedBinaryExponential',
        { exponential: 100, maxDoublings: 9 },
        'at schedule.maxDoublings: expected no "maxDoublings": it goes with "truncatedBinaryExponential" only, got 9'
      ],
      [
        'a truncatedBinaryExponential cap below its longest delay',
        { truncatedBinaryExponential: '10s', maxDoublings: 9, cap: '5s' },
        'at schedule.cap: expected a cap >= the longest delay (10000 ms), got "5s"'
      ],
      [
        'a negative truncatedBinaryExponential',
        { truncatedBinaryExponential: '-10s', maxDoublings: 9 },
        'at schedule.truncatedBinaryExponential: expected a duration like "250ms" or a number of ms, got "-10s"'
      ],
      [
        'a decorrelatedJitterV2 cap below its median first retry delay',
        { decorrelatedJitterV2: '100ms', cap: '50ms' },
        'at schedule.cap: expected a cap >= the median first retry delay (100 ms), got "50ms"'
      ],
      [
        'a decorrelatedJitterV2 that is not a duration',
        { decorrelatedJitterV2: 'soon', cap: '2s' },
        'at schedule.decorrelatedJitterV2: expected a duration like "250ms" or a number of ms, got "soon"'
      ],
      [
        'an unknown key with truncatedBinaryExponential',
        { truncatedBinaryExponential: '10s', maxDoublings: 9, factor: 2 },
        'at schedule.factor: expected no "factor": it goes with "exponential" only, got 2'
      ],
      [
        'a fractional maxRetries',
        { constant: 1, maxRetries: 2.5 },
        'at schedule.maxRetries: expected a whole number >= 0, got 2.5'
      ],
      [
        'a negative maxRetries',
        { constant: 1, maxRetries: -1 },
        'at schedule.maxRetries: expected a whole number >= 0, got -1'
      ],
      [
        'a maxRetries as a string',
        { constant: 1, maxRetries: '3' },
        'at schedule.maxRetries: expected a whole number >= 0, got "3"'
      ],
      ['a fractional recurs', { recurs: 1.5 }, 'at schedule.recurs: expected a whole number >= 0, got 1.5'],
      [
        'an unknown key',
        { constant: 1, retries: 3 },
        'at schedule.retries: expected one of the keys "constant", "cap", "jitter", "minDelay", "maxRetries", "maxElapsed", "maxCumulativeDelay", "retryOn", "neverRetryOn", got the unknown key "retries" (did you mean "maxRetries"?)'
      ],
      [
        'two constructor keys',
        { exponential: 100, constant: 50 },
        'at schedule.constant: expected no constructor key besides "exponential", got 50'
      ],
      [
        'decorrelatedJitter without a cap',
        { decorrelatedJitter: '5ms' },
        'at schedule.cap: expected a cap for "decorrelatedJitter", such as {"decorrelatedJitter": "5ms", "cap": "2s"}, got nothing'
      ],
      [
        'randomBetween with min > max',
        { randomBetween: ['2s', '1s'] },
        'at schedule.randomBetween: expected a pair [min, max] with min <= max, got ["2s","1s"]'
      ],
      [
        'randomBetween not a pair',
        { randomBetween: [1, 2, 3] },
        'at schedule.randomBetween: expected a pair of durations [min, max], got [1,2,3]'
      ],
      [
        'a minDelay above the cap',
        { constant: 10, cap: 100, minDelay: 200 },
        'at schedule.minDelay: expected a minimum delay <= the cap (100 ms), got 200'
      ],
      [
        'an unknown jitter',
        { constant: 10, jitter: 'decorrelated' },
        'at schedule.jitter: expected one of "full", "equal", "none", got "decorrelated"'
      ],
      ['forever: false', { forever: false }, 'at schedule.forever: expected true, got false'],
      [
        'an empty intersect',
        { intersect: [] },
        'at schedule.intersect: expected a non-empty list of schedule configs, got []'
      ],
      [
        'a union that is not a list',
        { union: { constant: 1 } },
        'at schedule.union: expected a non-empty list of schedule configs, got {"constant":1}'
      ],
      ['delays that are not a list', { delays: 100 }, 'at schedule.delays: expected a list of durations, got 100'],
      [
        'retryOn that is not a list',
        { constant: 1, retryOn: 'ECONNRESET' },
        'at schedule.retryOn: expected a list of error codes (strings or numbers), got "ECONNRESET"'
      ],
      [
        'a key that is not an identifier',
        { constant: 1, 'max-retries': 3 },
        'at schedule["max-retries"]: expected one of the keys "constant", "cap", "jitter", "minDelay", "maxRetries", "maxElapsed", "maxCumulativeDelay", "retryOn", "neverRetryOn", got the unknown key "max-retries" (did you mean "maxRetries"?)'
      ],
      [
        'a jitter that is nearly right',
        { constant: 10, jitter: 'ful' },
        'at schedule.jitter: expected one of "full", "equal", "none", got "ful" (did you mean "full"?)'
      ],
      [
        'a config that contains itself, reported where it recurs',
        cyclicConfig(),
        'at schedule.union[0]: expected a schedule config that does not contain itself, got {"maxRetries":1,"union":[<cycle>]}'
      ],
      [
        'a delays list longer than 1000',
        { delays: Array(1001).fill(1) },
        `at schedule.delays: expected a list of at most 1000 durations, got ${JSON.stringify(Array(1001).fill(1)).slice(
          0,
          77
        )}...`
      ],
      [
        'an intersect of more than 100 configs',
        { intersect: Array(101).fill({ recurs: 1 }) },
        `at schedule.intersect: expected a list of at most 100 schedule configs, got ${JSON.stringify(
          Array(101).fill({ recurs: 1 })
        ).slice(0, 77)}...`
      ],
      [
        'a Map',
        new Map([['constant', 1]]),
        expect.stringMatching(/^at schedule: expected an object with exactly one of .*, got \[object Map\]$/)
      ]
    ])('%s', (_, config, message) => {
      expect(messageOf(config)).toEqual(message)
    })

    it('should report a config with no constructor key, and its unknown keys (a typo), and its bad modifiers', () => {
      deepStrictEqual(messageOf({ exponental: '100ms', maxRetries: 'x' }).split('\n'), [
        'at schedule: expected an object with exactly one of "exponential", "constant", "linear", "fibonacci", "truncatedBinaryExponential", "decorrelatedJitter", "decorrelatedJitterV2", "randomBetween", "delays", "recurs", "forever", "stop", "intersect", "union", "andThen", such as {"exponential": "100ms", "maxRetries": 5}, got {"exponental":"100ms","maxRetries":"x"}',
        'at schedule.exponental: expected one of the keys "exponential", "constant", "linear", "fibonacci", "truncatedBinaryExponential", "decorrelatedJitter", "decorrelatedJitterV2", "randomBetween", "delays", "recurs", "forever", "stop", "intersect", "union", "andThen", "factor", "maxDoublings", "cap", "jitter", "minDelay", "maxRetries", "maxElapsed", "maxCumulativeDelay", "retryOn", "neverRetryOn", got the unknown key "exponental" (did you mean "exponential"?)',
        'at schedule.maxRetries: expected a whole number >= 0, got "x"'
      ])
    })

    it('should report two constructor keys and still check the rest', () => {
      deepStrictEqual(messageOf({ exponential: 100, constant: 50, cap: 'ten' }).split('\n'), [
        'at schedule.constant: expected no constructor key besides "exponential", got 50',
        'at schedule.cap: expected a duration like "250ms" or a number of ms, got "ten"'
      ])
    })

    it.each([[null], [[]], ['100ms'], [42], [undefined]])('should reject %j, which is not an object', (u) => {
      const error = errorOf(u)
      deepStrictEqual(error.issues.length, 1)
      deepStrictEqual(error.issues[0].path, 'schedule')
      assert.match(error.message, /^at schedule: expected an object with exactly one of "exponential", .*, got /)
    })

    it('should shorten a long value, and show values that have no JSON', () => {
      const long = messageOf({ constant: 'x'.repeat(200) })
      assert.ok(long.endsWith(`got "${'x'.repeat(76)}...`), long)
      assert.strictEqual(
        messageOf({ constant: BigInt(10) }),
        'at schedule.constant: expected a duration like "250ms" or a number of ms, got 10n'
      )
      assert.strictEqual(messageOf({ stop: 'yes', junk: undefined }), 'at schedule.stop: expected true, got "yes"')
    })

    it('should treat a key whose value is undefined as absent', () => {
      deepStrictEqual(decode({ constant: 10, cap: undefined }), { constant: 10 })
      // a constructor key without a value is no constructor key
      assert.match(messageOf({ exponential: undefined }), /^at schedule: expected an object with exactly one of/)
    })

    it('should report too deep or cyclic configs instead of overflowing the stack', () => {
      let deep: unknown = { constant: 1 }
      for (let i = 0; i < 100_000; i++) deep = { intersect: [deep] }
      const error = errorOf(deep)
      deepStrictEqual(error.issues.length, 1)
      assert.match(error.issues[0].expected, /^a schedule config nested at most 32 levels deep$/)
      // a cycle through a list: reported where the config recurs, not 32 levels down
      const list: Array<unknown> = []
      list.push({ intersect: list })
      assert.strictEqual(
        messageOf({ intersect: list }),
        'at schedule.intersect[0].intersect[0]: expected a schedule config that does not contain itself, got {"intersect":[<cycle>]}'
      )
    })

    it('toConfigError should name paths as the codec does when the config is decoded on its own', () => {
      const result = ScheduleConfigCodec.decode({ constant: 'slow' })
      assert.ok(E.isLeft(result))
      if (E.isLeft(result))
        deepStrictEqual(
          toConfigError(result.left).issues.map((i) => i.path),
          ['schedule.constant']
        )
    })
  })

  describe('every value of every key is checked by its rule', () => {
    /** Where each duration of the grammar is written, as a config with `$` in its place. */
    const durationPlaces: ReadonlyArray<readonly [string, (d: unknown) => unknown]> = [
      ['schedule.exponential', (d) => ({ exponential: d })],
      ['schedule.constant', (d) => ({ constant: d })],
      ['schedule.linear', (d) => ({ linear: d })],
      ['schedule.fibonacci', (d) => ({ fibonacci: d })],
      ['schedule.truncatedBinaryExponential', (d) => ({ truncatedBinaryExponential: d, maxDoublings: 3 })],
      ['schedule.decorrelatedJitter', (d) => ({ decorrelatedJitter: d, cap: '1h' })],
      ['schedule.cap', (d) => ({ decorrelatedJitter: 0, cap: d })],
      ['schedule.decorrelatedJitterV2', (d) => ({ decorrelatedJitterV2: d })],
      ['schedule.randomBetween[0]', (d) => ({ randomBetween: [d, '1h'] })],
      ['schedule.randomBetween[1]', (d) => ({ randomBetween: [0, d] })],
      ['schedule.delays[1]', (d) => ({ delays: [10, d] })],
      ['schedule.cap', (d) => ({ constant: 0, cap: d })],
      ['schedule.minDelay', (d) => ({ constant: 1, minDelay: d })],
      ['schedule.maxElapsed', (d) => ({ constant: 1, maxElapsed: d })],
      ['schedule.maxCumulativeDelay', (d) => ({ constant: 1, maxCumulativeDelay: d })],
      ['schedule.union[1].constant', (d) => ({ union: [{ recurs: 1 }, { constant: d }] })]
    ]
    const badDurations: ReadonlyArray<readonly [unknown, string]> = [
      [-1, '-1'],
      [-0.5, '-0.5'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [-Infinity, '-Infinity'],
      ['-1s', '"-1s"'],
      ['Infinity', '"Infinity"'],
      ['ten', '"ten"'],
      [null, 'null'],
      [true, 'true'],
      [[], '[]'],
      [BigInt(10), '10n']
    ]

    it.each(
      durationPlaces.flatMap(([where, config]) =>
        badDurations.map(([bad, shown]) => [where, shown, config(bad)] as const)
      )
    )('a duration at %s should reject %s: negative, NaN, infinite or unreadable', (where, shown, config) => {
      assert.strictEqual(
        messageOf(config),
        `at ${where}: expected a duration like "250ms" or a number of ms, got ${shown}`
      )
    })

    it.each(durationPlaces)(
      'a duration at %s should accept 0, -0 (as 0), a fraction and a string with a unit',
      (_, config) => {
        for (const [written, ms] of [
          [0, 0],
          [-0, 0],
          [1.5, 1.5],
          ['2s', 2000]
        ] as const) {
          const encoded = JSON.stringify(ScheduleConfigCodec.encode(decode(config(written))))
          assert.ok(!encoded.includes('-0'), encoded)
          assert.ok(encoded.includes(String(ms)), encoded)
        }
      }
    )

    const countPlaces: ReadonlyArray<readonly [string, (n: unknown) => unknown]> = [
      ['schedule.recurs', (n) => ({ recurs: n })],
      ['schedule.maxRetries', (n) => ({ constant: 1, maxRetries: n })],
      ['schedule.maxDoublings', (n) => ({ truncatedBinaryExponential: 1000, maxDoublings: n })]
    ]
    const badCounts: ReadonlyArray<readonly [unknown, string]> = [
      [-1, '-1'],
      [1.5, '1.5'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [2 ** 53, '9007199254740992'],
      ['3', '"3"'],
      [null, 'null']
    ]

    it.each(
      countPlaces.flatMap(([where, config]) => badCounts.map(([bad, shown]) => [where, shown, config(bad)] as const))
    )(
      'a count at %s should reject %s: negative, fractional, NaN, infinite, unsafe or not a number',
      (where, shown, config) => {
        assert.strictEqual(messageOf(config), `at ${where}: expected a whole number >= 0, got ${shown}`)
      }
    )

    it('Duration and the count fields should accept exactly what the shared rules (internal/validate) accept', () => {
      fc.assert(
        fc.property(fc.oneof(fc.double(), fc.integer(), fc.anything()), (u) => {
          deepStrictEqual(Duration.is(u), isDuration(u))
          if (typeof u !== 'string') deepStrictEqual(E.isRight(Duration.decode(u)), isDuration(u))
          deepStrictEqual(E.isRight(ScheduleConfigCodec.decode({ recurs: u })), isCount(u))
        }),
        { numRuns: 500 }
      )
    })
  })

  describe('unknown keys', () => {
    it.each([
      ['maxRetry', 'maxRetries', { exponential: 100, maxRetry: 3 }],
      ['MaxRetries', 'maxRetries', { exponential: 100, MaxRetries: 3 }],
      ['max_retries', 'maxRetries', { exponential: 100, max_retries: 3 }],
      ['retries', 'maxRetries', { exponential: 100, retries: 3 }],
      ['maxRetriesCount', 'maxRetries', { exponential: 100, maxRetriesCount: 3 }],
      ['capped', 'cap', { exponential: 100, capped: 3 }],
      ['mindelay', 'minDelay', { exponential: 100, mindelay: 3 }],
      ['retryon', 'retryOn', { exponential: 100, retryon: [503] }],
      ['exponental (no constructor key: every key is a candidate)', 'exponential', { exponental: 100 }],
      ['fibonaci', 'fibonacci', { fibonaci: 100 }]
    ])('%s: did you mean %s?', (_, meant, config) => {
      const issue = leftOf(config).issues.find((i) => i.hint !== undefined)
      deepStrictEqual(issue?.hint, `did you mean ${JSON.stringify(meant)}?`)
    })

    it.each([
      ['timeout', { constant: 1, timeout: 3 }],
      ['x', { constant: 1, x: 3 }],
      ['a key of 10,000 characters', { constant: 1, ['maxRetries'.repeat(1000)]: 3 }]
    ])('%s: no hint when no key is close', (_, config) => {
      const error = leftOf(config)
      deepStrictEqual(
        error.issues.map((i) => i.hint),
        [undefined]
      )
      assert.ok(error.message.length < 500, error.message)
    })

    it('should name the key, not its value (a value may be a secret)', () => {
      const message = messageOf({ constant: 1, apiToken: 'hunter2' })
      assert.ok(message.includes('"apiToken"'), message)
      assert.ok(!message.includes('hunter2'), message)
    })
  })

  describe('the number of issues reported is bounded', () => {
    it('should list the first 20 issues, then one line "and K more"', () => {
      const error = leftOf({ constant: 1, retryOn: Array.from({ length: 25 }, () => null) })
      deepStrictEqual(error.issues.length, 20)
      deepStrictEqual(error.omitted, 5)
      deepStrictEqual(error.issues[19].path, 'schedule.retryOn[19]')
      const lines = error.message.split('\n')
      deepStrictEqual(lines.length, 21)
      deepStrictEqual(lines[20], 'and 5 more')
    })

    it('should give a short message for 5 MB of nulls (it was 89 MB), a list or an object', () => {
      const nulls = Array.from({ length: 1_000_000 }, () => null)
      const list = leftOf({ constant: 1, retryOn: nulls })
      deepStrictEqual(list.issues.length, 1)
      assert.match(
        list.message,
        /^at schedule\.retryOn: expected a list of at most 1000 error codes \(strings or numbers\), got \[null,null,/
      )
      assert.ok(list.message.length < 300)
      const object = leftOf(Object.fromEntries(nulls.slice(0, 200_000).map((_, i) => [`k${i}`, null])))
      deepStrictEqual(object.issues.length, 20)
      deepStrictEqual(object.omitted, 200_000 - 19)
      assert.ok(object.message.length < 50_000, String(object.message.length))
    })

    it('should bound the issues of configs nested in a list too', () => {
      const error = leftOf({ intersect: Array.from({ length: 100 }, () => ({ constant: -1, maxRetries: -1 })) })
      deepStrictEqual(error.issues.length, 20)
      deepStrictEqual(error.omitted, 180)
    })
  })

  describe('inside your own io-ts type', () => {
    const AppConfig = t.type({ name: t.string, retry: ScheduleConfigCodec })

    it('should report paths from the root of your type, and work with io-ts PathReporter', () => {
      const result = AppConfig.decode({ name: 42, retry: { constant: 'soon', maxRetry: 3 } })
      deepStrictEqual(PathReporter.report(result), [
        'Invalid value 42 supplied to : { name: string, retry: ScheduleConfig }/name: string',
        'at retry.maxRetry: expected one of the keys "constant", "cap", "jitter", "minDelay", "maxRetries", "maxElapsed", "maxCumulativeDelay", "retryOn", "neverRetryOn", got the unknown key "maxRetry" (did you mean "maxRetries"?)',
        'at retry.constant: expected a duration like "250ms" or a number of ms, got "soon"'
      ])
      assert.ok(E.isLeft(result))
      if (E.isLeft(result)) {
        const error = toConfigError(result.left)
        deepStrictEqual(
          error.issues.map((i) => [i.path, i.expected]),
          [
            ['name', 'string'],
            ['retry.maxRetry', error.issues[1].expected],
            ['retry.constant', 'a duration like "250ms" or a number of ms']
          ]
        )
        assert.match(error.message, /^at name: expected string, got 42\n/)
      }
    })

    it('should name list items and nested keys from your type too', () => {
      const Policies = t.record(t.string, t.array(ScheduleConfigCodec))
      const result = Policies.decode({ 'payments-api': [{ constant: 1 }, { intersect: [{ recurs: -1 }] }] })
      deepStrictEqual(PathReporter.report(result), [
        'at ["payments-api"][1].intersect[0].recurs: expected a whole number >= 0, got -1'
      ])
    })

    it('should decode a good config inside your type', () => {
      deepStrictEqual(
        AppConfig.decode({ name: 'api', retry: { constant: '1s', maxRetries: 2 } }),
        E.right({ name: 'api', retry: { constant: 1000, maxRetries: 2 } })
      )
    })
  })

  describe('decoding never throws', () => {
    const neverThrows = (u: unknown): void => {
      const result = ScheduleConfigCodec.decode(u)
      if (E.isLeft(result)) {
        const error = toConfigError(result.left)
        assert.ok(error.issues.length > 0 && error.issues.length <= 20)
        deepStrictEqual(error.message.split('\n').length, error.issues.length + (error.omitted > 0 ? 1 : 0))
      } else {
        // whatever decodes builds a schedule that runs
        const delays = Driver.delays(toSchedule(result.right), { limit: 10, attemptDuration: 1 })
        assert.ok(delays.every((d) => d >= 0 && Number.isFinite(d)))
      }
    }

    it('on fc.anything() (with BigInt, sparse arrays, null prototypes, boxed values, Maps, Dates)', () => {
      fc.assert(
        fc.property(
          fc.anything({
            withBigInt: true,
            withBoxedValues: true,
            withDate: true,
            withMap: true,
            withSet: true,
            withNullPrototype: true,
            withObjectString: true,
            withSparseArray: true,
            withTypedArray: true
          }),
          neverThrows
        ),
        { numRuns: 500 }
      )
    })

    it('on fc.jsonValue()', () => {
      fc.assert(fc.property(fc.jsonValue(), neverThrows), { numRuns: 500 })
    })

    it('on near-configs: the right keys with arbitrary values, nested', () => {
      const key = fc.constantFrom(
        'exponential',
        'factor',
        'cap',
        'decorrelatedJitter',
        'decorrelatedJitterV2',
        'truncatedBinaryExponential',
        'maxDoublings',
        'randomBetween',
        'delays',
        'recurs',
        'forever',
        'intersect',
        'union',
        'andThen',
        'jitter',
        'minDelay',
        'maxRetries',
        'retryOn',
        'neverRetryOn',
        'bogus'
      )
      const value = fc.oneof(fc.anything(), fc.constantFrom('1s', '-1s', 'ten', 0, -0, 1.5, 1e308, true, 'full', []))
      const { near } = fc.letrec<{ near: unknown }>((tie) => ({
        near: fc.oneof(
          { maxDepth: 3 },
          fc.dictionary(key, value, { maxKeys: 4 }),
          fc.dictionary(key, fc.array(tie('near'), { maxLength: 3 }), { maxKeys: 3 }),
          fc.array(tie('near'), { maxLength: 3 })
        )
      }))
      fc.assert(fc.property(near, neverThrows), { numRuns: 1000 })
    })

    const revoked = (): object => {
      const r = Proxy.revocable({}, {})
      r.revoke()
      return r.proxy
    }
    const throwingGetter = (key: string, base: object = {}): object =>
      Object.defineProperty(base, key, {
        enumerable: true,
        get: () => {
          throw new Error('getter')
        }
      })
    const throwingTraps = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('ownKeys')
        }
      }
    )
    const throwingGet = new Proxy(
      { constant: 1 },
      {
        get: () => {
          throw new Error('get')
        }
      }
    )
    const hugeLength = new Proxy([], {
      get: (target, key) => (key === 'length' ? 2 ** 32 - 1 : Reflect.get(target, key))
    })

    it.each<readonly [string, unknown, RegExp]>([
      [
        'a throwing getter on a constructor key',
        throwingGetter('constant'),
        /^at schedule\.constant: expected a value that can be read, got a property whose read threw$/m
      ],
      [
        'a throwing getter on a modifier',
        throwingGetter('cap', { constant: 1 }),
        /^at schedule\.cap: expected a value that can be read/m
      ],
      [
        'a throwing getter on a list item',
        { constant: 1, retryOn: throwingGetter('0', ['E1']) },
        /^at schedule\.retryOn\[0\]: expected a value that can be read/m
      ],
      ['a Proxy whose ownKeys trap throws', throwingTraps, /^at schedule: expected an object with exactly one of/],
      [
        'a Proxy whose get trap throws',
        throwingGet,
        /^at schedule: expected an object with exactly one of .*, got <unreadable>$/
      ],
      [
        'a revoked Proxy as the config',
        revoked(),
        /^at schedule: expected an object with exactly one of .*, got <unreadable>$/
      ],
      [
        'a revoked Proxy as a list',
        { constant: 1, retryOn: revoked() },
        /^at schedule\.retryOn: expected a list of error codes/
      ],
      ['a revoked Proxy nested', { intersect: [revoked()] }, /^at schedule\.intersect\[0\]: expected an object/],
      [
        'a sparse array of length 1e7 as codes',
        { constant: 1, retryOn: new Array(1e7) },
        /^at schedule\.retryOn: expected a list of at most 1000 error codes/
      ],
      [
        'a sparse array of length 1e7 as delays',
        { delays: new Array(1e7) },
        /^at schedule\.delays: expected a list of at most 1000 durations, got \[null,null,/
      ],
      [
        'a sparse array of length 2^32 - 1 as configs',
        { union: new Array(2 ** 32 - 1) },
        /^at schedule\.union: expected a list of at most 100 schedule configs/
      ],
      [
        'a sparse array of length 2^32 - 1 as the config',
        new Array(2 ** 32 - 1),
        /^at schedule: expected an object with exactly one of .*, got \[null,null,.*\.\.\.$/
      ],
      [
        'a Proxy of an array that claims 2^32 - 1 items',
        { constant: 1, neverRetryOn: hugeLength },
        /^at schedule\.neverRetryOn: expected a list of at most 1000/
      ],
      [
        'an array-like object',
        { delays: { length: 1e9 } },
        /^at schedule\.delays: expected a list of durations, got \{"length":1000000000\}$/
      ],
      [
        'a shared config used 100 times at each of 10 levels',
        (() => {
          let c: unknown = { constant: 1 }
          for (let i = 0; i < 10; i++) c = { intersect: Array(100).fill(c) }
          return c
        })(),
        /at most 1000 schedule configs in all/
      ]
    ])('should return a Left, not throw, on %s', (_, u, message) => {
      const error = leftOf(u)
      assert.match(error.message, message)
      assert.ok(error.message.length < 10_000)
    })

    it('defaultCodeOf should not throw on an error whose properties throw', () => {
      deepStrictEqual(defaultCodeOf(throwingGetter('code', { status: 503 })), 503)
      deepStrictEqual(defaultCodeOf(revoked()), undefined)
    })
  })

  describe('round trip', () => {
    it('decode(encode(decode(x))) should equal decode(x), through JSON, and build a schedule with the same delays', () => {
      fc.assert(
        fc.property(configArbitrary, runArbitrary, (raw, run) => {
          const decoded = decode(raw)
          const encoded = ScheduleConfigCodec.encode(decoded)
          const again = decode(JSON.parse(JSON.stringify(encoded)))
          deepStrictEqual(again, decoded)
          deepStrictEqual(ScheduleConfigCodec.encode(again), encoded)
          deepStrictEqual(delaysOf(toSchedule(again), run), delaysOf(toSchedule(decoded), run))
          deepStrictEqual(toSchedule(again).description, toSchedule(decoded).description)
        }),
        { numRuns }
      )
    })

    it('ScheduleConfigCodec.is should accept decoded configs and their encodings, and reject what differs from them', () => {
      fc.assert(
        fc.property(configArbitrary, (raw) => {
          const decoded = decode(raw)
          assert.ok(ScheduleConfigCodec.is(decoded))
          assert.ok(ScheduleConfigCodec.is(ScheduleConfigCodec.encode(decoded)))
          // the config as written is a decoded one only when decoding changes nothing (no duration strings); a key
          // whose value is undefined is an absent one to both (JSON drops it)
          assert.strictEqual(ScheduleConfigCodec.is(raw), equal(JSON.parse(JSON.stringify(raw)), decoded))
        }),
        { numRuns }
      )
      assert.ok(!ScheduleConfigCodec.is({ constant: '10ms' }))
      assert.ok(!ScheduleConfigCodec.is({ constant: 10, extra: 1 }))
      assert.ok(!ScheduleConfigCodec.is({ exponential: 100, cap: 10 }))
      assert.ok(!ScheduleConfigCodec.is(null))
      assert.ok(ScheduleConfigCodec.is({ constant: 10, maxRetries: 3 }))
    })
  })

  describe('a config-built schedule is the schedule written in code', () => {
    it('should have the description of the hand-built schedule, not config(...)', () => {
      const schedule = fromConfig({
        exponential: '100ms',
        cap: '10s',
        jitter: 'full',
        maxRetries: 5,
        maxElapsed: '30s'
      })
      const byHand = pipe(
        Schedule.exponential(100),
        Schedule.capped(10_000),
        Schedule.fullJitter,
        Schedule.intersect(Schedule.recurs(5)),
        Schedule.upTo(30_000)
      )
      assert.strictEqual(schedule.description, byHand.description)
      assert.ok(!schedule.description.startsWith('config('))
      // however the config was written
      assert.strictEqual(
        fromConfig({ maxElapsed: 30_000, maxRetries: 5, jitter: 'full', cap: '10 seconds', exponential: 100 })
          .description,
        byHand.description
      )
    })

    it('should have the description and the delays of an independent reading of the grammar, for generated configs', () => {
      fc.assert(
        fc.property(configArbitrary, runArbitrary, (raw, run) => {
          const decoded = decode(raw)
          assert.strictEqual(toSchedule(decoded).description, reference(decoded).description)
          deepStrictEqual(delaysOf(toSchedule(decoded), run), delaysOf(reference(decoded), run))
        }),
        { numRuns }
      )
    })

    it('should keep the metadata of the built schedule: parse then retrying reads no clock unless the config looks at the time (regression: parse spread the schedule into { ...s, description }, and the runner read the clock at every retry)', async () => {
      const timeless = parse({
        exponential: '100ms',
        cap: '1s',
        jitter: 'full',
        maxRetries: 3,
        retryOn: ['ECONNRESET']
      })
      const timed = parse({ exponential: '100ms', maxRetries: 3, maxElapsed: '10s' })
      assert.ok(E.isRight(timeless) && E.isRight(timed))
      if (E.isRight(timeless) && E.isRight(timed)) {
        deepStrictEqual(await clockReads(timeless.right), 0)
        assert.ok((await clockReads(timed.right)) > 0)
      }
    })
  })

  describe('format', () => {
    it('should be the canonical JSON of the config: stable under key order and duration spelling', () => {
      const a = decode({ exponential: '100ms', cap: '10s', jitter: 'full', maxRetries: 5, maxElapsed: '30s' })
      const b = decode({ maxElapsed: 30_000, maxRetries: 5, jitter: 'full', cap: '10 seconds', exponential: 100 })
      assert.strictEqual(format(a), '{"exponential":100,"cap":10000,"jitter":"full","maxRetries":5,"maxElapsed":30000}')
      assert.strictEqual(format(b), format(a))
      // a hand-built config in another key order formats the same way too
      assert.strictEqual(format({ maxRetries: 5, constant: 10 }), format({ constant: 10, maxRetries: 5 }))
      assert.strictEqual(
        format({ decorrelatedJitter: 5, cap: 2000, minDelay: 10 }),
        '{"decorrelatedJitter":5,"cap":2000,"minDelay":10}'
      )
    })

    it('should be the same for two decodings of one config, and differ exactly when the decoded configs differ', () => {
      fc.assert(
        fc.property(configArbitrary, configArbitrary, (x, y) => {
          const dx = decode(x)
          const dy = decode(y)
          assert.strictEqual(format(dx), format(decode(x)))
          assert.strictEqual(format(dx) === format(dy), equal(dx, dy))
        }),
        { numRuns }
      )
    })

    it('should change when any one value of the config changes', () => {
      fc.assert(
        fc.property(configArbitrary, (raw) => {
          const decoded = ScheduleConfigCodec.encode(decode(raw))
          const text = format(decode(decoded))
          // bump every number of the config, one at a time, keeping the config valid where it stays valid
          const paths: Array<ReadonlyArray<string | number>> = []
          const walk = (v: unknown, path: ReadonlyArray<string | number>): void => {
            if (typeof v === 'number') paths.push(path)
            else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]))
            else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) walk(x, [...path, k])
          }
          walk(decoded, [])
          for (const path of paths) {
            const copy = JSON.parse(JSON.stringify(decoded)) as Record<string | number, unknown>
            let parent = copy
            for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
            const last = path[path.length - 1]
            parent[last] = (parent[last] as number) + 1
            const changed = ScheduleConfigCodec.decode(copy)
            if (E.isRight(changed)) assert.notStrictEqual(format(changed.right), text)
          }
        }),
        { numRuns: 100 }
      )
    })
  })

  describe('types', () => {
    it('ScheduleConfig, read from the grammar, should accept its forms and reject the others at compile time', () => {
      const forms: ReadonlyArray<ScheduleConfig> = [
        { exponential: 100, factor: 3, cap: 1000, jitter: 'full' },
        { truncatedBinaryExponential: 10_000, maxDoublings: 9 },
        { decorrelatedJitter: 5, cap: 2000 },
        { decorrelatedJitterV2: 100 },
        { randomBetween: [1, 2] },
        { intersect: [{ recurs: 2 }, { constant: 1, retryOn: ['ECONNRESET', 503] }], maxElapsed: 1000 }
      ]
      // @ts-expect-error decorrelatedJitter needs its cap
      const noCap: ScheduleConfig = { decorrelatedJitter: 5 }
      // @ts-expect-error truncatedBinaryExponential needs maxDoublings
      const noDoublings: ScheduleConfig = { truncatedBinaryExponential: 10_000 }
      // @ts-expect-error a jitter the table does not have
      const badJitter: ScheduleConfig = { constant: 1, jitter: 'half' }
      // @ts-expect-error durations are numbers of ms once decoded
      const text: ScheduleConfig = { constant: '1s' }
      deepStrictEqual(
        forms.map((c) => ScheduleConfigCodec.is(c)),
        forms.map(() => true)
      )
      deepStrictEqual(
        [noCap, noDoublings, badJitter, text].map((c) => ScheduleConfigCodec.is(c)),
        [false, false, false, false]
      )
    })
  })

  describe('grammar', () => {
    it('should list each key once per role: the constructors, their parameters, the modifiers in the order they apply', () => {
      const keys = (role: string) => grammar.filter((k) => k.role === role).map((k) => k.key)
      deepStrictEqual(keys('constructor'), [
        'exponential',
        'constant',
        'linear',
        'fibonacci',
        'truncatedBinaryExponential',
        'decorrelatedJitter',
        'decorrelatedJitterV2',
        'randomBetween',
        'delays',
        'recurs',
        'forever',
        'stop',
        'intersect',
        'union',
        'andThen'
      ])
      deepStrictEqual(keys('parameter'), ['factor', 'maxDoublings', 'cap'])
      deepStrictEqual(keys('modifier'), [
        'cap',
        'jitter',
        'minDelay',
        'maxRetries',
        'maxElapsed',
        'maxCumulativeDelay',
        'retryOn',
        'neverRetryOn'
      ])
      deepStrictEqual(
        grammar.filter((k) => k.role === 'parameter').map((k) => [k.key, k.with, k.required]),
        [
          ['factor', ['exponential'], false],
          ['maxDoublings', ['truncatedBinaryExponential'], true],
          ['cap', ['decorrelatedJitter', 'decorrelatedJitterV2'], false]
        ]
      )
    })

    /** The docs' list of keys, as generated from the grammar. */
    const renderGrammar = (): string => {
      const row = (cells: ReadonlyArray<string>) => `| ${cells.join(' | ')} |`
      const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
        [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n')
      const of = (role: string) => grammar.filter((k) => k.role === role)
      return [
        '**Constructors**: exactly one per config object.',
        '',
        table(
          ['Key', 'Value', 'Schedule'],
          of('constructor').map((k) => [`\`${k.key}\``, k.value, k.meaning])
        ),
        '',
        '**Parameters**: with the constructors named only.',
        '',
        table(
          ['Key', 'With', 'Value', 'Meaning'],
          of('parameter').map((k) => [`\`${k.key}\``, k.with.map((w) => `\`${w}\``).join(', '), k.value, k.meaning])
        ),
        '',
        '**Modifiers**: optional, on any config, nested ones included; they apply in the order of this table.',
        '',
        table(
          ['Key', 'Value', 'Effect'],
          of('modifier').map((k) => [`\`${k.key}\``, k.value, k.meaning])
        )
      ].join('\n')
    }

    const guide = fs.readFileSync(path.join(__dirname, '..', 'docs', 'configuration.md'), 'utf8')

    it("docs/configuration.md's list of keys should be the one generated from the grammar", () => {
      const start = '<!-- grammar: generated from ScheduleConfig.grammar, checked by test/ScheduleConfig.test.ts -->\n'
      const end = '\n<!-- grammar: end -->'
      const from = guide.indexOf(start)
      const to = guide.indexOf(end)
      assert.ok(from >= 0 && to > from, 'the markers of the generated list are missing')
      const expected = renderGrammar()
      assert.strictEqual(guide.slice(from + start.length, to), expected, `replace the list with:\n${expected}`)
    })

    it("docs/configuration.md's table of errors should show the messages parse gives", () => {
      const rows = [...guide.matchAll(/^\| `(\{.*\})` \| `(at .*)` \|$/gm)]
      assert.ok(rows.length >= 25, String(rows.length))
      for (const [, config, message] of rows) {
        const actual = messageOf(JSON.parse(config))
        if (message.endsWith('...')) assert.ok(actual.startsWith(message.slice(0, -3)), `${config}: ${actual}`)
        else assert.strictEqual(actual, message, config)
      }
    })
  })
})
