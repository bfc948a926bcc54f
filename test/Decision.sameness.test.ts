/**
 * One test of sameness (issue 25): the same outcomes, hints, guards and clock steps (forward and back), driven
 * through `retrying`, `Durable.deliver` (the step of both durable engines), `FileEngine` and `hedging` with one
 * attempt, must give the same decisions, delays, budget tokens, events (kinds and order) and stop reasons.
 */
import * as assert from 'assert'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type * as TE from 'fp-ts/TaskEither'
import * as fs from 'fs'
import * as t from 'io-ts'
import * as os from 'os'
import * as path from 'path'
import * as Breaker from '../src/Breaker'
import * as Budget from '../src/Budget'
import type * as Clock from '../src/Clock'
import * as Durable from '../src/Durable'
import type * as Event from '../src/Event'
import * as FileEngine from '../src/FileEngine'
import type * as Guard from '../src/Guard'
import { hedging } from '../src/Hedging'
import * as Random from '../src/Random'
import * as RateLimiter from '../src/RateLimiter'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import { deepStrictEqual } from './util'

type Kind = 'ok' | 'transient' | 'timeout' | 'bad'

/** One attempt: how it ends, how the clock moves while it runs (back when negative), the hint its error gives. */
interface Outcome {
  readonly kind: Kind
  readonly latency: number
  readonly hint: number | undefined
}

interface Case {
  readonly outcomes: ReadonlyArray<Outcome>
  readonly seed: number
  readonly retries: number
  readonly budget: 'none' | 'quota' | 'counted'
  readonly breaker: boolean
  readonly limiter: boolean
}

interface Failure {
  readonly kind: Kind | 'open'
  readonly hint?: number | undefined
}

const outcome: fc.Arbitrary<Outcome> = fc.record({
  kind: fc.constantFrom<Kind>('ok', 'transient', 'transient', 'timeout', 'bad'),
  latency: fc.integer({ min: -5, max: 40 }),
  hint: fc.option(fc.oneof(fc.integer({ min: 0, max: 400 }), fc.constant(Number.NaN), fc.constant(-3)), {
    nil: undefined
  })
})

const aCase: fc.Arbitrary<Case> = fc.record({
  outcomes: fc.array(outcome, { minLength: 1, maxLength: 7 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  retries: fc.integer({ min: 0, max: 6 }),
  budget: fc.constantFrom<Case['budget']>('none', 'quota', 'counted'),
  breaker: fc.boolean(),
  limiter: fc.boolean()
})

/**
 * The schedule of a case: exponential, jittered unless `whole` (an engine's timers fire on whole milliseconds,
 * never before the due time: with whole delays they fire exactly then), a hint, a count.
 */
const scheduleOf = (c: Case, whole = false): Schedule.Schedule<Failure> =>
  pipe(
    Schedule.exponential(10),
    whole ? (s) => s : Schedule.fullJitter,
    Schedule.withHint((e: Failure) => e.hint, { max: 300 }),
    Schedule.intersect(Schedule.recurs(c.retries))
  )

/** A clock a test moves: an attempt moves it by its latency, a sleep by its length. */
const scripted = (): { readonly clock: Clock.Clock; now: number } => {
  const state = {
    now: 1_000,
    clock: {
      now: () => state.now,
      sleep: (ms: number): Promise<void> => {
        state.now += ms
        return Promise.resolve()
      }
    }
  }
  return state
}

/** What one engine is given and what it tells: its clock, guards, a budget's log, its events. */
interface Harness {
  readonly time: { readonly clock: Clock.Clock; now: number }
  readonly guards: ReadonlyArray<Guard.Guard>
  readonly quota: Budget.RetryQuota | undefined
  readonly told: Array<unknown>
  readonly events: Array<Event.Event>
  /** The attempt: scripted, through the breaker when there is one. */
  readonly attempt: () => TE.TaskEither<Failure, number>
}

const harness = (c: Case): Harness => {
  const time = scripted()
  const told: Array<unknown> = []
  const guards: Array<Guard.Guard> = []
  let breaker: Breaker.Breaker | undefined
  if (c.breaker) {
    breaker = Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.constant(50), clock: time.clock })
    guards.push(Breaker.asGuard(breaker, { refused: (e) => (e as Failure).kind === 'open' }))
  }
  let quota: Budget.RetryQuota | undefined
  if (c.budget !== 'none') {
    const inner = Budget.retryQuota({ tokens: 20, isTimeout: (e) => (e as Failure).kind === 'timeout' })
    const spied: Budget.RetryQuota = {
      onSuccess: (a) => (told.push(['success', a.now, a.retries, a.error]), inner.onSuccess(a)),
      onFailure: (a) => (told.push(['failure', a.now, a.retries, a.error, a.retrying]), inner.onFailure(a)),
      get tokens() {
        return inner.tokens
      }
    }
    quota = spied
    guards.push(
      Budget.asGuard(spied, c.budget === 'counted' ? { counts: (e) => (e as Failure).kind !== 'bad' } : undefined)
    )
  }
  if (c.limiter) guards.push(RateLimiter.asGuard(RateLimiter.gcra({ rate: 1, per: 30, burst: 2, clock: time.clock })))
  let calls = 0
  const scriptedAttempt: TE.TaskEither<Failure, number> = () => {
    const o = c.outcomes[calls] ?? { kind: 'ok', latency: 0, hint: undefined }
    const n = calls++
    time.now += o.latency
    return Promise.resolve(o.kind === 'ok' ? E.right(n) : E.left({ kind: o.kind, hint: o.hint }))
  }
  const attempt = (): TE.TaskEither<Failure, number> =>
    breaker === undefined
      ? scriptedAttempt
      : Breaker.protect(breaker, (): Failure => ({ kind: 'open' }))(scriptedAttempt)
  return { time, guards, quota, told, events: [], attempt }
}

/** What is compared: each engine's own events (a delivery, a launch) left out, and what names a run. */
const comparable = (events: ReadonlyArray<Event.Event>): ReadonlyArray<unknown> =>
  events
    .filter((e) => !['RunDelivered', 'RunRetried', 'RunCompleted', 'HedgeLaunched', 'HedgeWon'].includes(e._tag))
    .map((e) => {
      const rest: Record<string, unknown> = { ...e }
      for (const key of ['run', 'source', 'id', 'definition']) delete rest[key]
      return rest
    })

interface Ended {
  readonly result: E.Either<unknown, unknown>
  readonly reason: string
  readonly tokens: number | undefined
  readonly told: ReadonlyArray<unknown>
  readonly events: ReadonlyArray<unknown>
}

const byRunner = async (c: Case, schedule: Schedule.Schedule<Failure>): Promise<Ended> => {
  const h = harness(c)
  let reason = ''
  const result = await pipe(
    h.attempt(),
    retrying(schedule, {
      clock: h.time.clock,
      random: Random.seeded(c.seed),
      guards: h.guards,
      onEvent: (e) => void h.events.push(e),
      onDone: (ended) => void (reason = ended.reason)
    })
  )()
  return { result, reason, tokens: h.quota?.tokens, told: h.told, events: comparable(h.events) }
}

const definition = (h: Harness, schedule: Schedule.Schedule<Failure>) =>
  Durable.define({ name: 'same', schedule, payload: t.null, action: () => h.attempt() })

const byDeliver = async (c: Case, schedule: Schedule.Schedule<Failure>): Promise<Ended> => {
  const h = harness(c)
  const def = definition(h, schedule)
  let ended: Durable.RunDone<Failure, number> | undefined
  const options: Durable.WorkOptions<Failure, number> = {
    random: () => Random.seeded(c.seed),
    guards: h.guards,
    onEvent: (e) => void h.events.push(e),
    onDone: (done) => void (ended = done)
  }
  let stored: unknown = { id: 'run-1', payload: null, retry: null, outcome: null }
  const context = { now: () => h.time.now, signal: new AbortController().signal, options }
  for (;;) {
    const d = await Durable.deliver(def, 'run-1', stored, context)
    if (d._tag === 'Retry') {
      stored = d.run
      // an engine's timer: the run is delivered when due (never before: a due time is on the engine's clock)
      h.time.now = d.dueAt
      continue
    }
    assert.ok(d._tag === 'Done')
    await d.notify()
    break
  }
  assert.ok(ended !== undefined)
  return {
    result: ended.result,
    reason: ended.reason,
    tokens: h.quota?.tokens,
    told: h.told,
    events: comparable(h.events)
  }
}

/** The errors as a stored run gives them back: plain JSON (`hint: undefined` is not kept). */
/**
 * The errors as a stored run gives them back: plain JSON (`hint: undefined` is not kept); and the times to the
 * nanosecond. A clock that stepped back is waited out by a runner from its own reading (`reading + delay + lag`)
 * and by an engine at the due time (`decision + delay`): the same instant, summed in another order, so the last
 * bit of a float may differ. Delays are compared exactly.
 */
const plain = (ended: Ended): Ended => {
  const time = (t: unknown): unknown => (typeof t === 'number' ? Math.round(t * 1e6) / 1e6 : t)
  const json = JSON.parse(JSON.stringify({ result: ended.result, told: ended.told, events: ended.events })) as {
    readonly result: unknown
    readonly told: ReadonlyArray<ReadonlyArray<unknown>>
    readonly events: ReadonlyArray<Record<string, unknown>>
  }
  return {
    ...ended,
    result: json.result as Ended['result'],
    told: json.told.map((call) => call.map((x, i) => (i === 1 ? time(x) : x))),
    events: json.events.map((e) => ({
      ...e,
      at: time(e.at),
      ...('elapsed' in e ? { elapsed: time(e.elapsed) } : {}),
      ...('latency' in e ? { latency: time(e.latency) } : {})
    }))
  }
}

describe('one decision for every engine', () => {
  it('retrying and Durable.deliver should decide alike: delays, tokens, events, reasons', async () => {
    await fc.assert(
      fc.asyncProperty(aCase, async (c) => {
        const schedule = scheduleOf(c)
        const runner = await byRunner(c, schedule)
        const deliver = await byDeliver(c, schedule)
        deepStrictEqual(plain(deliver), plain(runner))
      }),
      { numRuns: 200 }
    )
  })

  it('hedging with one attempt should decide as retrying does', async () => {
    await fc.assert(
      fc.asyncProperty(aCase, async (c) => {
        const one: Case = { ...c, outcomes: c.outcomes.slice(0, 1) }
        const runner = await byRunner(one, Schedule.recurs(0) as Schedule.Schedule<Failure>)
        const h = harness(one)
        let reason = ''
        const result = await pipe(
          () => h.attempt(),
          hedging<Failure, number>(Schedule.recurs(0), {
            clock: h.time.clock,
            guards: h.guards,
            onEvent: (e) => void h.events.push(e),
            onDone: (summary) => void (reason = summary.reason)
          })
        )()
        deepStrictEqual({ result, reason, tokens: h.quota?.tokens, told: h.told, events: comparable(h.events) }, runner)
      }),
      { numRuns: 100 }
    )
  })

  it('FileEngine should decide as retrying does', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sameness-'))
    try {
      await fc.assert(
        fc.asyncProperty(aCase, async (c) => {
          const schedule = scheduleOf(c, true)
          const runner = await byRunner(c, schedule)
          const h = harness(c)
          const def = definition(h, schedule)
          const engine = FileEngine.make({ dir: fs.mkdtempSync(path.join(dir, 'run-')), clock: h.time.clock })
          const ended = new Promise<Durable.RunDone<Failure, number>>(
            (resolve) =>
              void engine.work(def, {
                random: () => Random.seeded(c.seed),
                guards: h.guards,
                onEvent: (e) => void h.events.push(e),
                onDone: resolve
              })
          )
          await engine.submit(def, 'run-1', null)
          const done = await ended
          await engine.close()
          deepStrictEqual(
            plain({
              result: done.result,
              reason: done.reason,
              tokens: h.quota?.tokens,
              told: h.told,
              events: comparable(h.events.filter((e) => e._tag !== 'RunSubmitted'))
            }),
            plain(runner)
          )
        }),
        { numRuns: 25 }
      )
    } finally {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 })
    }
  })
})
