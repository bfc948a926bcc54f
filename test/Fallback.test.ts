import { expectTypeOf } from 'expect-type'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as TE from 'fp-ts/TaskEither'
import * as Breaker from '../src/Breaker'
import * as Bulkhead from '../src/Bulkhead'
import type { Event, FallbackUsed } from '../src/Event'
import * as Fallback from '../src/Fallback'
import type { Guard, GuardReason } from '../src/Guard'
import { repeating, retrying, retryingWithContext } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import * as Timeout from '../src/Timeout'
import { caught, deepStrictEqual, itThrowsTypeErrors, ok, rejectsWith, strictEqual, throwsTypeError } from './util'

/** A guard that refuses every retry, for `reason`: the run it guards stops for that reason after its first failure. */
const refusing = (reason: GuardReason): Guard => ({ reason, readsTime: false, admit: (o) => !o.retrying })

/** The events an observer was told, and the observer. */
const recorder = (): { readonly events: Array<Event>; readonly onEvent: (event: Event) => void } => {
  const events: Array<Event> = []
  return { events, onEvent: (event) => void events.push(event) }
}

const GUARD_REASONS: ReadonlyArray<GuardReason> = ['budget', 'breaker', 'rateLimit', 'bulkhead']

describe('Fallback', () => {
  describe('fallback', () => {
    it('should answer a chosen failure from the fallback, and let a success and an unchosen failure through', async () => {
      const useCache = Fallback.fallback(
        ({ error }: Fallback.Stopped<string>) => error === 'timeout',
        ({ error }) => TE.right(`cached (${error})`)
      )
      deepStrictEqual(await pipe(TE.left('timeout'), useCache)(), E.right('cached (timeout)'))
      deepStrictEqual(await pipe(TE.left('404'), useCache)(), E.left('404'))
      deepStrictEqual(await pipe(TE.right('fresh'), useCache)(), E.right('fresh'))
    })

    it('should see no reason around an action not made with telling, and not run the fallback twice', async () => {
      const seen: Array<Fallback.Stopped<string>> = []
      let fallbacks = 0
      const call = pipe(
        TE.left('503'),
        retrying(Schedule.recurs(2)),
        Fallback.fallback(
          (stopped: Fallback.Stopped<string>) => (seen.push(stopped), true),
          () => (fallbacks++, TE.left('still down'))
        )
      )
      deepStrictEqual(await call(), E.left('still down'))
      deepStrictEqual(seen, [{ error: '503', reason: undefined }])
      strictEqual(fallbacks, 1)
    })

    it('should answer what the fallback answers, a Left too, and tell FallbackUsed with whether it succeeded', async () => {
      const clock = TestClock.make(5)
      const { events, onEvent } = recorder()
      const call = (to: TaskEither<string, string>) =>
        pipe(
          TE.left('503'),
          Fallback.fallback(Fallback.always, () => to, { clock, onEvent })
        )()
      deepStrictEqual(await call(TE.right('default')), E.right('default'))
      deepStrictEqual(await call(TE.left('cache down')), E.left('cache down'))
      const used: ReadonlyArray<FallbackUsed> = [
        { _tag: 'FallbackUsed', source: 'fallback', run: 0, at: 5, error: '503', succeeded: true },
        { _tag: 'FallbackUsed', source: 'fallback', run: 0, at: 5, error: '503', succeeded: false }
      ]
      deepStrictEqual<ReadonlyArray<Event>>(events, used)
      // plain JSON: a log line keeps it all
      deepStrictEqual(JSON.parse(JSON.stringify(events[0])), used[0])
    })

    it('should date FallbackUsed when the fallback has answered, on the clock given', async () => {
      const clock = TestClock.make()
      const { events, onEvent } = recorder()
      const slowCache: TaskEither<string, string> = () => clock.sleep(40).then(() => E.right('cached'))
      const call = pipe(
        TE.left('503'),
        Fallback.fallback(Fallback.always, () => slowCache, { clock, onEvent })
      )()
      await clock.runAll()
      deepStrictEqual(await call, E.right('cached'))
      deepStrictEqual(
        events.map((e) => e.at),
        [40]
      )
    })

    it('should tell nothing when the fallback is not used', async () => {
      const { events, onEvent } = recorder()
      const call = Fallback.fallback(Fallback.stoppedBy('breaker'), () => TE.right(0), { onEvent })
      await pipe(TE.right(1), call)()
      await pipe(TE.left('503'), call)()
      deepStrictEqual(events, [])
    })

    it('should not answer a defect: an action that rejects rejects the call, and the fallback is not asked', async () => {
      const boom = new Error('boom')
      let asked = 0
      const call = pipe(
        (() => Promise.reject(boom)) as TaskEither<string, string>,
        Fallback.fallback(
          () => (asked++, true),
          () => TE.right('default')
        )
      )
      await rejectsWith(call(), boom)
      strictEqual(asked, 0)
    })

    it('a fallback that rejects or throws should reject the call, told as a FallbackUsed that did not succeed', async () => {
      const { events, onEvent } = recorder()
      const down = new Error('cache down')
      const rejecting = pipe(
        TE.left('503'),
        Fallback.fallback(Fallback.always, () => () => Promise.reject(down), { onEvent })
      )
      await rejectsWith(rejecting(), down)
      const throwing = pipe(
        TE.left('503'),
        Fallback.fallback(
          Fallback.always,
          (): TaskEither<never, string> => {
            throw down
          },
          { onEvent }
        )
      )
      await rejectsWith(throwing(), down)
      deepStrictEqual(
        events.map((e) => (e as FallbackUsed).succeeded),
        [false, false]
      )
    })

    it('a when that throws should reject the call, the fallback unused', async () => {
      const boom = new Error('when down')
      const { events, onEvent } = recorder()
      const call = pipe(
        TE.left('503'),
        Fallback.fallback(
          () => {
            throw boom
          },
          () => TE.right('default'),
          { onEvent }
        )
      )
      await rejectsWith(call(), boom)
      deepStrictEqual(events, [])
    })

    it('an onEvent that throws should be a process warning, and the answer the same', async () => {
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
      try {
        const call = pipe(
          TE.left('503'),
          Fallback.fallback(Fallback.always, () => TE.right('default'), {
            onEvent: () => {
              throw new Error('observer down')
            }
          })
        )
        deepStrictEqual(await call(), E.right('default'))
        deepStrictEqual(
          [...warn.mock.calls].map(([message, options]) => [message, (options as { type: string }).type]),
          [['fp-ts-retry: an observer threw, and was ignored: observer down', 'ObserverWarning']]
        )
      } finally {
        warn.mockRestore()
      }
    })

    it('a fallback that answers no TaskEither should reject the call with a TypeError naming it', async () => {
      const call = pipe(
        TE.left('503'),
        Fallback.fallback(Fallback.always, (() => Promise.resolve(E.right(1))) as never)
      )
      const error = await caught(call)
      ok(error instanceof TypeError)
      ok(/Fallback\.fallback: to\(stopped\) must be a function, received \{\}/.test(error.message))
    })

    it('should choose the fallback exactly when when holds, and tell it exactly then (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof(fc.integer().map(E.right), fc.string({ maxLength: 3 }).map(E.left)), { maxLength: 20 }),
          fc.func(fc.boolean()),
          async (results, chooses) => {
            const { events, onEvent } = recorder()
            const when = (stopped: Fallback.Stopped<string>): boolean => chooses(stopped.error)
            const call = Fallback.fallback(when, ({ error }) => TE.right(`fallback for ${error}`), { onEvent })
            const expected = results.map((r) =>
              r._tag === 'Left' && chooses(r.left) ? E.right(`fallback for ${r.left}`) : r
            )
            const answers: Array<E.Either<string, number | string>> = []
            for (const r of results) answers.push(await pipe(() => Promise.resolve(r), call)())
            deepStrictEqual(answers, expected)
            deepStrictEqual(
              events.map((e) => (e as FallbackUsed).error),
              results.flatMap((r) => (r._tag === 'Left' && chooses(r.left) ? [r.left] : []))
            )
          }
        )
      )
    })

    describe('bad arguments', () => {
      itThrowsTypeErrors([
        [
          'when: a number',
          () => Fallback.fallback(1 as never, () => TE.right(1)),
          /Fallback\.fallback: when must be a function, received 1/
        ],
        [
          'to: a TaskEither result',
          () => Fallback.fallback(Fallback.always, null as never),
          /Fallback\.fallback: to must be a function, received null/
        ],
        [
          'options: null',
          () => Fallback.fallback(Fallback.always, () => TE.right(1), null as never),
          /Fallback\.fallback: options must be an object, received null/
        ],
        [
          'options.clock: not a Clock',
          () => Fallback.fallback(Fallback.always, () => TE.right(1), { clock: {} as never }),
          /Fallback\.fallback: options\.clock must be a Clock, received \{\}/
        ],
        [
          'options.onEvent: a string',
          () => Fallback.fallback(Fallback.always, () => TE.right(1), { onEvent: 'log' as never }),
          /Fallback\.fallback: options\.onEvent must be a function, received "log"/
        ],
        [
          'action: not a TaskEither',
          () => Fallback.fallback(Fallback.always, () => TE.right(1))(42 as never),
          /Fallback\.fallback: action must be a function, received 42/
        ]
      ])
    })
  })

  describe('telling', () => {
    it('should tell the fallback the stop reason of its run: a guard that refused the retry', async () => {
      for (const reason of GUARD_REASONS) {
        const seen: Array<Fallback.Stopped<string>> = []
        const call = pipe(
          Fallback.telling((tell) =>
            pipe(TE.left('503'), retrying(Schedule.recurs(3), tell({ guards: [refusing(reason)] })))
          ),
          Fallback.fallback(
            (stopped) => (seen.push(stopped), true),
            () => TE.right('fallback')
          )
        )
        deepStrictEqual(await call(), E.right('fallback'))
        deepStrictEqual(seen, [{ error: '503', reason }])
      }
    })

    it("should tell 'schedule' for a spent schedule, a last attempt timed out too", async () => {
      const { result, clock } = await TestClock.run((clock) =>
        pipe(
          Fallback.telling((tell) =>
            pipe(
              ({ signal }: { signal: AbortSignal }): TaskEither<string, string> =>
                () =>
                  new Promise((resolve) => signal.addEventListener('abort', () => resolve(E.left('aborted')))),
              retryingWithContext(
                Schedule.fromDelays([100]),
                tell({ clock, attemptTimeout: 1_000, onTimeout: () => 'timeout' })
              )
            )
          ),
          Fallback.fallback(
            ({ error, reason }) => error === 'timeout' && reason === 'schedule',
            ({ reason }) => TE.right(`fallback after ${reason}`)
          )
        )
      )
      deepStrictEqual(result, E.right('fallback after schedule'))
      strictEqual(clock.now(), 2_100)
    })

    it("should tell repeating's 'failed'", async () => {
      const call = pipe(
        Fallback.telling((tell) =>
          repeating(
            Schedule.recurs(5),
            tell({})
          )({ initial: 0, action: (n: number) => (n < 2 ? TE.right(n + 1) : TE.left(`stuck at ${n}`)), next: (n) => n })
        ),
        Fallback.fallback(Fallback.stoppedBy('failed'), ({ error }) => TE.right([`recovered from ${error}`]))
      )
      deepStrictEqual(await call(), E.right(['recovered from stuck at 2']))
    })

    it("should still call the run's own onDone, typed by the action", async () => {
      const ended: Array<string> = []
      const action: TaskEither<'down', number> = TE.left('down')
      const call = pipe(
        Fallback.telling((tell) =>
          pipe(
            action,
            retrying(
              Schedule.recurs(1),
              tell({
                onDone: ({ result, reason }) => {
                  expectTypeOf(result).toEqualTypeOf<E.Either<'down', number>>()
                  ended.push(`${reason}: ${JSON.stringify(result)}`)
                }
              })
            )
          )
        ),
        Fallback.fallback(Fallback.stoppedBy('schedule'), () => TE.right(0))
      )
      deepStrictEqual(await call(), E.right(0))
      deepStrictEqual(ended, ['schedule: {"_tag":"Left","left":"down"}'])
    })

    it('should run alone as its run, its build called for each call', async () => {
      let builds = 0
      let attempts = 0
      const run = Fallback.telling((tell) => {
        builds++
        return pipe(
          () => Promise.resolve(++attempts < 2 ? E.left('busy') : E.right(attempts)),
          retrying(Schedule.recurs(3), tell({}))
        )
      })
      deepStrictEqual(await run(), E.right(2))
      deepStrictEqual(await run(), E.right(3))
      strictEqual(builds, 2)
    })

    it('should keep the reasons of two calls in flight at once apart, their runs answering the very same Left at once', async () => {
      // One Left object for every attempt, answered to both runs in one turn: both runs end (and tell their
      // onDone) before either fallback reads its reason, so a reason kept by result, or a last reason, would mix
      // them up.
      const down = E.left('down')
      let open: () => void = () => undefined
      const gate = new Promise<void>((resolve) => (open = resolve))
      let calls = 0
      const call = pipe(
        Fallback.telling((tell) => {
          // the first call's run is refused by a budget; the second's schedule allows no retry
          const guards = calls++ === 0 ? [refusing('budget')] : []
          return pipe(() => gate.then(() => down), retrying(Schedule.recurs(calls === 1 ? 3 : 0), tell({ guards })))
        }),
        Fallback.fallback(
          (stopped: Fallback.Stopped<string>) => stopped.reason === 'budget',
          ({ reason }) => TE.right(`fallback after ${reason}`)
        )
      )
      const first = call()
      const second = call()
      open()
      deepStrictEqual(await first, E.right('fallback after budget'))
      strictEqual(await second, down)
    })

    it('should tell the reason the run stopped for in a stack: breaker, then bulkhead', async () => {
      const clock = TestClock.make()
      const { events, onEvent } = recorder()
      const breaker = Breaker.consecutive({ threshold: 2, halfOpenAfter: Schedule.constant(60_000), clock })
      const bulkhead = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
      const query: TaskEither<string, string> = () => clock.sleep(10).then(() => E.left('503'))
      const call = pipe(
        Fallback.telling((tell) =>
          pipe(
            query,
            Timeout.timeout(1_000, () => 'timeout', { clock }),
            Breaker.protect(breaker, () => 'circuit open'),
            Bulkhead.protect(bulkhead, (rejected) => rejected),
            retrying(
              pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3))),
              tell({ clock, breaker, guards: [Bulkhead.asGuard(bulkhead)] })
            )
          )
        ),
        Fallback.fallback(Fallback.always, ({ reason }) => TE.right(`cached (${reason})`), { clock, onEvent })
      )
      const first = call()
      const second = call() // the bulkhead's only slot is taken
      await clock.runAll()
      deepStrictEqual(await first, E.right('cached (breaker)'))
      deepStrictEqual(await second, E.right('cached (bulkhead)'))
      deepStrictEqual(
        events.map((e) => [(e as FallbackUsed).reason, e.at]),
        [
          ['bulkhead', 0],
          ['breaker', 120] // 10 ms attempts, a 100 ms backoff: opened by the second failure
        ]
      )
    })

    it('a run whose options are not wrapped should leave the reason undefined', async () => {
      const seen: Array<Fallback.Stopped<string>> = []
      const call = pipe(
        Fallback.telling(() => pipe(TE.left('503'), retrying(Schedule.recurs(1)))),
        Fallback.fallback(
          (stopped) => (seen.push(stopped), false),
          () => TE.right(0)
        )
      )
      deepStrictEqual(await call(), E.left('503'))
      deepStrictEqual(seen, [{ error: '503', reason: undefined }])
    })

    it('should choose exactly the runs that stopped for a chosen reason (property)', async () => {
      const reasons = fc.constantFrom<'schedule' | GuardReason>('schedule', ...GUARD_REASONS)
      await fc.assert(
        fc.asyncProperty(
          fc.array(reasons, { minLength: 1, maxLength: 7 }),
          fc.uniqueArray(reasons),
          async (runs, chosen) => {
            const { events, onEvent } = recorder()
            const when = chosen.length === 0 ? () => false : Fallback.stoppedBy(...chosen)
            const answers = await Promise.all(
              runs.map((reason) =>
                pipe(
                  Fallback.telling((tell) =>
                    pipe(
                      TE.left(reason),
                      retrying(Schedule.recurs(1), tell({ guards: reason === 'schedule' ? [] : [refusing(reason)] }))
                    )
                  ),
                  Fallback.fallback(when, ({ reason: r }) => TE.right(`fallback after ${r}`), { onEvent })
                )()
              )
            )
            deepStrictEqual(
              answers,
              runs.map((reason) => (chosen.includes(reason) ? E.right(`fallback after ${reason}`) : E.left(reason)))
            )
            // the runs are in flight at once: their fallbacks are told in the order they end
            deepStrictEqual(
              events.map((e) => String((e as FallbackUsed).reason)).sort(),
              runs.filter((reason) => chosen.includes(reason)).sort()
            )
          }
        )
      )
    })

    it('bad arguments should be TypeErrors naming them', async () => {
      throwsTypeError(
        () => Fallback.telling('run' as never),
        /Fallback\.telling: build must be a function, received "run"/
      )
      const notATask = Fallback.telling(() => 42 as never)
      const error = await caught(notATask)
      ok(
        error instanceof TypeError &&
          /Fallback\.telling: build\(tell\) must be a function, received 42/.test(error.message)
      )
      const badOptions = Fallback.telling((tell) =>
        pipe(TE.left('x'), retrying(Schedule.recurs(1), tell(null as never)))
      )
      const e2 = await caught(badOptions)
      ok(
        e2 instanceof TypeError && /Fallback\.telling: tell: options must be an object, received null/.test(e2.message)
      )
      const badOnDone = Fallback.telling((tell) =>
        pipe(TE.left('x'), retrying(Schedule.recurs(1), tell({ onDone: 'log' as never })))
      )
      const e3 = await caught(badOnDone)
      ok(e3 instanceof TypeError && /options\.onDone must be a function, received "log"/.test(e3.message))
    })
  })

  describe('stoppedBy', () => {
    it('should choose by reason, and never a failure whose reason is unknown', () => {
      const when = Fallback.stoppedBy('breaker', 'rateLimit')
      deepStrictEqual(
        (['breaker', 'rateLimit', 'budget', 'schedule', undefined] as const).map((reason) =>
          when({ error: 'x', reason })
        ),
        [true, true, false, false, false]
      )
    })

    itThrowsTypeErrors([
      ['no reason', () => Fallback.stoppedBy(), /Fallback\.stoppedBy: give at least one stop reason, received none/],
      [
        "'succeeded'",
        () => Fallback.stoppedBy('breaker', 'succeeded' as never),
        /Fallback\.stoppedBy: reasons\[1\] must be one of failed, schedule, aborted, budget, breaker, rateLimit, bulkhead, shed, received "succeeded"/
      ],
      ["'timeout'", () => Fallback.stoppedBy('timeout' as never), /reasons\[0\] must be one of .*, received "timeout"/],
      ['a number', () => Fallback.stoppedBy(3 as never), /reasons\[0\] must be one of .*, received 3/]
    ])
  })

  describe('types', () => {
    const action: TaskEither<'503' | 'timeout', number> = TE.left('503')

    it('a fallback that cannot fail, for every failure, should make a call whose error type is never', () => {
      expectTypeOf(
        pipe(
          action,
          Fallback.fallback(Fallback.always, () => TE.right(0))
        )
      ).toEqualTypeOf<TaskEither<never, number>>()
      expectTypeOf(
        pipe(
          action,
          Fallback.fallback(Fallback.always, () => TE.right('cached'))
        )
      ).toEqualTypeOf<TaskEither<never, number | string>>()
    })

    it('a predicate should keep the action’s errors, and add the fallback’s', () => {
      expectTypeOf(
        pipe(
          action,
          Fallback.fallback(Fallback.stoppedBy('breaker'), () => TE.right(0))
        )
      ).toEqualTypeOf<TaskEither<'503' | 'timeout', number>>()
      expectTypeOf(
        pipe(
          action,
          Fallback.fallback(
            ({ error }) => error === 'timeout',
            () => TE.left(new Error('no cache'))
          )
        )
      ).toEqualTypeOf<TaskEither<'503' | 'timeout' | Error, number>>()
    })

    it('a refinement should take the errors it chooses out of the type', () => {
      const isTimeout = (s: Fallback.Stopped<'503' | 'timeout'>): s is Fallback.Stopped<'timeout'> =>
        s.error === 'timeout'
      expectTypeOf(
        pipe(
          action,
          Fallback.fallback(isTimeout, ({ error }) => {
            expectTypeOf(error).toEqualTypeOf<'timeout'>()
            return TE.right(0)
          })
        )
      ).toEqualTypeOf<TaskEither<'503', number>>()
    })

    it('when and to should be typed by the action in a pipe, a telling run too', () => {
      pipe(
        action,
        Fallback.fallback(
          (stopped) => {
            expectTypeOf(stopped).toEqualTypeOf<Fallback.Stopped<'503' | 'timeout'>>()
            return true
          },
          () => TE.right(0)
        )
      )
      const run = Fallback.telling((tell) => pipe(action, retrying(Schedule.recurs(1), tell({}))))
      expectTypeOf(run).toMatchTypeOf<TaskEither<'503' | 'timeout', number>>()
      expectTypeOf(
        pipe(
          run,
          Fallback.fallback(Fallback.always, () => TE.right(0))
        )
      ).toEqualTypeOf<TaskEither<never, number>>()
    })
  })
})
