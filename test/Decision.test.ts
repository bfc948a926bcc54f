/**
 * The one decision step, and the defects of issue 25 ("One attempt, decided once") it fixed, each pinned by the
 * engine it was measured on.
 */
import * as assert from 'assert'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as t from 'io-ts'
import * as Budget from '../src/Budget'
import type * as Clock from '../src/Clock'
import * as Decision from '../src/Decision'
import * as Durable from '../src/Durable'
import type * as Event from '../src/Event'
import { hedging } from '../src/Hedging'
import * as Random from '../src/Random'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, strictEqual } from './util'

/** Delivers a stored run again and again, as an engine would, at each due time; the events and the last delivery. */
const deliverAll = async <P, E, A>(
  def: Durable.Definition<P, E, A>,
  id: string,
  payload: unknown,
  options: Durable.WorkOptions<E, A>,
  clock: { now: number }
): Promise<Durable.Delivery> => {
  let stored: unknown = { id, payload, retry: null, outcome: null }
  const context = { now: () => clock.now, signal: new AbortController().signal, options }
  for (;;) {
    const d = await Durable.deliver(def, id, stored, context)
    if (d._tag !== 'Retry') return d
    stored = d.run
    clock.now = d.dueAt
  }
}

const tags = (events: ReadonlyArray<Event.Event>): ReadonlyArray<string> => events.map((e) => e._tag)

describe('Decision', () => {
  it('make: decide should answer a delay, then a stop reason, telling the events in order and one RunStopped', () => {
    const events: Array<Event.Event> = []
    const decision = Decision.make({ schedule: Schedule.fromDelays([100]), onEvent: (e) => void events.push(e) })
    decision.begin(0)
    strictEqual(decision.decide(E.left('busy'), 5), 100)
    decision.begin(105)
    strictEqual(decision.decide(E.left('busy'), 110), 'schedule')
    strictEqual(decision.end('defect', 120), 'schedule') // a run that ended stays as it ended
    deepStrictEqual(tags(events), [
      'AttemptStarted',
      'AttemptFailed',
      'RetryScheduled',
      'AttemptStarted',
      'AttemptFailed',
      'RunStopped'
    ])
    decision.emit({ _tag: 'AttemptStarted', source: 'retry', run: 0, at: 130, attempt: 3 })
    strictEqual(events.length, 6) // nothing of a run after its RunStopped
  })

  // Issue 25, item 1: the budget's refund differed by engine.
  it('should refund the same tokens through retrying and Durable.deliver, telling onSuccess the error before it', async () => {
    const isTimeout = (e: unknown): boolean => e === 'timeout'
    const told: Array<Record<string, ReadonlyArray<unknown>>> = []
    const spied = (): Budget.RetryQuota => {
      const quota = Budget.retryQuota({ isTimeout })
      const seen: Array<unknown> = []
      told.push({ seen })
      return {
        onSuccess: (a) => (seen.push(['success', a.retries, a.error]), quota.onSuccess(a)),
        onFailure: (a) => (seen.push(['failure', a.retries, a.error]), quota.onFailure(a)),
        get tokens() {
          return quota.tokens
        }
      }
    }
    const byRunner = spied()
    let calls = 0
    const action: TE.TaskEither<string, string> = () =>
      Promise.resolve(calls++ === 0 ? E.left('timeout') : E.right('ok'))
    await TestClock.run((clock) => pipe(action, retrying(Schedule.constant(10), { clock, budget: byRunner })))
    const byEngine = spied()
    let attempts = 0
    const def = Durable.define({
      name: 'refund',
      schedule: Schedule.constant(10),
      payload: t.null,
      action: () => () => Promise.resolve(attempts++ === 0 ? E.left('timeout') : E.right('ok'))
    })
    const done = await deliverAll(def, 'r-1', null, { budget: byEngine, random: () => Random.seeded(1) }, { now: 0 })
    strictEqual(done._tag, 'Done')
    deepStrictEqual([byRunner.tokens, byEngine.tokens], [500, 500])
    deepStrictEqual(told[1].seen, told[0].seen)
    deepStrictEqual(told[1].seen, [
      ['failure', 0, 'timeout'],
      ['success', 1, 'timeout']
    ])
  })

  // Issue 25, item 2: durable runs dropped the schedule's events.
  it("should tell a durable run's ignored hint as the runner does, with its id and definition", async () => {
    const schedule = pipe(
      Schedule.constant(10),
      Schedule.withHint(() => Number.NaN, { max: 1_000 }),
      Schedule.intersect(Schedule.recurs(2))
    )
    const def = Durable.define({ name: 'hinted', schedule, payload: t.null, action: () => TE.left('busy') })
    const durable: Array<Event.Event> = []
    await deliverAll(def, 'h-1', null, { onEvent: (e) => void durable.push(e) }, { now: 0 })
    const runner: Array<Event.Event> = []
    await TestClock.run((clock) =>
      pipe(TE.left('busy'), retrying(schedule, { clock, onEvent: (e) => void runner.push(e) }))
    )
    const hints = (events: ReadonlyArray<Event.Event>) => events.filter((e) => e._tag === 'HintIgnored')
    strictEqual(hints(durable).length, 3)
    deepStrictEqual(
      hints(durable).map(({ _tag, hint, attempt }) => ({ _tag, hint, attempt })),
      hints(runner).map(({ _tag, hint, attempt }) => ({ _tag, hint, attempt }))
    )
    for (const e of hints(durable)) deepStrictEqual([e.id, e.definition], ['h-1', 'hinted'])
  })

  // Issue 25, item 3: an uncounted failure was refunded.
  it('Budget.asGuard with counts: a success after an uncounted failure should refund nothing', async () => {
    const quota = Budget.retryQuota({ tokens: 12 })
    const failure = { latency: 0, now: 0, retries: 0, error: 'timeout', retrying: true }
    quota.onFailure(failure)
    quota.onFailure(failure)
    strictEqual(quota.tokens, 2) // the outage
    const guard = Budget.asGuard(quota, { counts: (e) => e !== 'bad request' })
    for (let run = 0; run < 3; run++) {
      let calls = 0
      const action: TE.TaskEither<string, string> = () =>
        Promise.resolve(calls++ === 0 ? E.left('bad request') : E.right('ok'))
      const { result } = await TestClock.run((clock) =>
        pipe(action, retrying(Schedule.recurs(1), { clock, guards: [guard] }))
      )
      deepStrictEqual(result, E.right('ok'))
    }
    strictEqual(quota.tokens, 5) // three successes that needed no charged retry: 1 each, not 5
  })

  // Issue 25, item 4: a run that rejects never ended.
  describe('every run should end exactly once, a defect too', () => {
    const boom = new Error('boom')
    const lastIsStop = (events: ReadonlyArray<Event.Event>, reason: string): void => {
      const stops = events.filter((e) => e._tag === 'RunStopped')
      strictEqual(stops.length, 1)
      strictEqual(events[events.length - 1], stops[0])
      strictEqual((stops[0] as Event.RunStopped).reason, reason)
    }

    it('retrying: an action that rejects, at once or after a wait', async () => {
      for (const failFirst of [false, true]) {
        const events: Array<Event.Event> = []
        let calls = 0
        const action: TE.TaskEither<string, string> = () =>
          failFirst && calls++ === 0 ? Promise.resolve(E.left('busy')) : Promise.reject(boom)
        const clock = TestClock.make()
        const run = pipe(action, retrying(Schedule.constant(10), { clock, onEvent: (e) => void events.push(e) }))()
        const rejected = assert.rejects(run, (e) => e === boom)
        await clock.runAll()
        await rejected
        lastIsStop(events, 'defect')
      }
    })

    it('retrying: a hook that throws (onRetry, onDone)', async () => {
      const events: Array<Event.Event> = []
      const onEvent = (e: Event.Event): void => void events.push(e)
      await assert.rejects(
        pipe(TE.left('busy'), retrying(Schedule.recurs(1), { onEvent, onRetry: () => Promise.reject(boom) }))(),
        (e) => e === boom
      )
      lastIsStop(events, 'defect')
      events.length = 0
      await assert.rejects(
        pipe(
          TE.left('busy'),
          retrying(Schedule.recurs(0), {
            onEvent,
            onDone: () => {
              throw boom
            }
          })
        )(),
        (e) => e === boom
      )
      lastIsStop(events, 'schedule') // told before onDone, which threw: the run had ended
    })

    it('hedging: an attempt that rejects', async () => {
      const events: Array<Event.Event> = []
      await assert.rejects(
        pipe(() => () => Promise.reject(boom), hedging(Schedule.recurs(0), { onEvent: (e) => void events.push(e) }))(),
        (e) => e === boom
      )
      lastIsStop(events, 'defect')
    })

    it('Durable.deliver: an action that throws', async () => {
      const events: Array<Event.Event> = []
      const def = Durable.define({
        name: 'd',
        schedule: Schedule.recurs(1),
        payload: t.null,
        action: () => () => Promise.reject(boom)
      })
      const d = await deliverAll(
        def,
        'x',
        null,
        { onEvent: (e) => void events.push(e), onDone: () => undefined },
        { now: 0 }
      )
      assert.ok(d._tag === 'Done')
      strictEqual(d.reason, 'defect')
      lastIsStop(events, 'defect')
    })
  })

  // Issue 25, item 5: upTo started a retry after its deadline when an awaited onRetry was slow.
  it('upTo: a retry whose onRetry ends past the deadline should not be made', async () => {
    const reasons: Array<string> = []
    let calls = 0
    const action: TE.TaskEither<string, string> = () => (calls++, Promise.resolve(E.left('busy')))
    const { result, clock } = await TestClock.run((clock) =>
      pipe(
        action,
        retrying(pipe(Schedule.constant(100), Schedule.upTo(200)), {
          clock,
          onRetry: () => clock.sleep(300),
          attemptTimeout: 1_000,
          onTimeout: () => 'timeout',
          onDone: ({ reason }) => void reasons.push(reason)
        })
      )
    )
    deepStrictEqual(result, E.left('busy'))
    deepStrictEqual([calls, reasons], [1, ['schedule']])
    deepStrictEqual(clock.sleepsOf('timeout'), [200]) // the first attempt's, clamped to the limit; no 0 ms one
    // a hook that ends in time: the retry is made, at its due time
    calls = 0
    const times: Array<number> = []
    await TestClock.run((clock) =>
      pipe(
        () => (times.push(clock.now()), Promise.resolve(E.left('busy'))),
        retrying(pipe(Schedule.constant(100), Schedule.upTo(200)), { clock, onRetry: () => clock.sleep(50) })
      )
    )
    deepStrictEqual(times, [0, 100, 200])
  })

  // Issue 25, item 6: a clock that steps back crashed a run.
  it('a clock that steps back should not crash a run (Budget.adaptive told a latency >= 0)', async () => {
    let now = 1_000
    const clock: Clock.Clock = { now: () => now, sleep: (ms) => ((now += ms), Promise.resolve()) }
    const budget = Budget.adaptive({ window: 10_000, minSuccessRate: 0.1, minSamples: 100 })
    const action: TE.TaskEither<string, string> = () => ((now -= 5), Promise.resolve(E.left('busy')))
    const events: Array<Event.Event> = []
    const result = await pipe(
      action,
      retrying(Schedule.recurs(2), { clock, budget, onEvent: (e) => void events.push(e) })
    )()
    deepStrictEqual(result, E.left('busy'))
    for (const e of events) if ('latency' in e) assert.ok(e.latency >= 0)
    const ats = events.map((e) => e.at)
    deepStrictEqual(
      ats,
      [...ats].sort((a, b) => a - b)
    )
  })

  // Issue 25, item 7: durable events carried no definition.
  it('two definitions running one id should tell events that say which is which', async () => {
    const events: Array<Event.Event> = []
    const onEvent = (e: Event.Event): void => void events.push(e)
    for (const name of ['charge', 'email']) {
      const def = Durable.define({ name, schedule: Schedule.recurs(1), payload: t.null, action: () => TE.left('x') })
      await deliverAll(def, 'order-7', null, { onEvent }, { now: 0 })
    }
    const definitions = events.map((e) => ('definition' in e ? e.definition : undefined))
    strictEqual(definitions.filter((d) => d === 'charge').length, events.length / 2)
    strictEqual(definitions.filter((d) => d === 'email').length, events.length / 2)
  })

  // Issue 25, item 9: events were not plain JSON for every value.
  it('HintIgnored should survive JSON.stringify for NaN, Infinity and a string', async () => {
    const hints = [Number.NaN, Infinity, -Infinity, 'soon']
    const events: Array<Event.Event> = []
    let i = 0
    const schedule = pipe(
      Schedule.constant(1),
      Schedule.withHint(() => hints[i++] as number, { max: 10 }),
      Schedule.intersect(Schedule.recurs(hints.length - 1))
    )
    await TestClock.run((clock) =>
      pipe(TE.left('x'), retrying(schedule, { clock, onEvent: (e) => void events.push(e) }))
    )
    const ignored = events.filter((e) => e._tag === 'HintIgnored')
    deepStrictEqual(
      ignored.map((e) => (e as Event.HintIgnored).hint),
      ['NaN', 'Infinity', '-Infinity', 'soon']
    )
    for (const e of events) deepStrictEqual(JSON.parse(JSON.stringify(e)), e)
  })

  it('a used hint should be the hint of its RetryScheduled', async () => {
    const events: Array<Event.Event> = []
    const schedule = pipe(
      Schedule.constant(10),
      Schedule.withHint(() => 250, { max: 200 }),
      Schedule.intersect(Schedule.recurs(1))
    )
    await TestClock.run((clock) =>
      pipe(TE.left('x'), retrying(schedule, { clock, onEvent: (e) => void events.push(e) }))
    )
    const scheduled = events.filter((e) => e._tag === 'RetryScheduled') as ReadonlyArray<Event.RetryScheduled>
    deepStrictEqual(
      scheduled.map((e) => [e.delay, e.hint]),
      [[200, 200]]
    )
  })
})

describe('the one rule for an observer that throws', () => {
  it('should never change the run: the error is a process warning, the run goes on and ends as it would', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
    try {
      let calls = 0
      const action: TE.TaskEither<string, number> = () => Promise.resolve(calls++ < 2 ? E.left('busy') : E.right(7))
      const reasons: Array<string> = []
      const { result } = await TestClock.run((clock) =>
        pipe(
          action,
          retrying(Schedule.recurs(3), {
            clock,
            onEvent: () => {
              throw new Error('observer down')
            },
            onDone: ({ reason }) => void reasons.push(reason)
          })
        )
      )
      deepStrictEqual(result, E.right(7))
      deepStrictEqual(reasons, ['succeeded'])
      // every event was told, and each error reported: 3 attempts started and ended, 2 retries, the stop
      strictEqual(warn.mock.calls.length, 9)
      for (const [message, options] of warn.mock.calls) {
        strictEqual(message, 'fp-ts-retry: an observer threw, and was ignored: observer down')
        strictEqual((options as { type: string }).type, 'ObserverWarning')
      }
    } finally {
      warn.mockRestore()
    }
  })
})
