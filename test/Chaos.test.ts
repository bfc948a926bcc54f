import { expectTypeOf } from 'expect-type'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as TE from 'fp-ts/TaskEither'
import * as Breaker from '../src/Breaker'
import * as Chaos from '../src/Chaos'
import type { ChaosInjected, Event } from '../src/Event'
import * as Random from '../src/Random'
import { retryingWithContext } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import {
  caught,
  deepStrictEqual,
  itThrowsRangeErrors,
  itThrowsTypeErrors,
  notDurations,
  ok,
  rejectsWith,
  seedArbitrary,
  strictEqual
} from './util'

/** A `Random` that answers `draws` in turn, and counts what it was asked. */
const scripted = (draws: ReadonlyArray<number>): Random.Random & { readonly asked: () => number } => {
  let i = 0
  return { next: () => draws[i++ % draws.length], asked: () => i }
}

/** An action that counts its calls. */
const counted = <A>(value: A): { readonly action: TaskEither<string, A>; readonly calls: () => number } => {
  let calls = 0
  return { action: () => (calls++, Promise.resolve(E.right(value))), calls: () => calls }
}

/** Every combinator, made with `options`, as one list, so that what they share is tested once for all. */
const all = (options: Chaos.ChaosOptions) =>
  [
    ['fault', Chaos.fault('injected', options)],
    ['latency', Chaos.latency(0, options)],
    ['outcome', Chaos.outcome(E.left('injected'), options)],
    ['behaviour', Chaos.behaviour(() => undefined, options)]
  ] as const

const base: Chaos.ChaosOptions = { injectionRate: 0.5, random: Random.seeded(1) }

describe('Chaos', () => {
  describe('fault', () => {
    it('should answer Left(error) without running the action when the draw is below the rate, else run it', async () => {
      const { action, calls } = counted('ok')
      const call = pipe(action, Chaos.fault('injected', { injectionRate: 0.5, random: scripted([0.2, 0.5, 0.7, 0]) }))
      const answers = [await call(), await call(), await call(), await call()]
      deepStrictEqual<ReadonlyArray<E.Either<string, string>>>(answers, [
        E.left('injected'),
        E.right('ok'),
        E.right('ok'),
        E.left('injected')
      ])
      strictEqual(calls(), 2)
    })

    it('should inject every call at rate 1 and none at rate 0, drawing once a call either way', async () => {
      const r1 = scripted([0.999])
      const r0 = scripted([0])
      deepStrictEqual(await pipe(TE.right(1), Chaos.fault('x', { injectionRate: 1, random: r1 }))(), E.left('x'))
      deepStrictEqual(await pipe(TE.right(1), Chaos.fault('x', { injectionRate: 0, random: r0 }))(), E.right(1))
      deepStrictEqual([r1.asked(), r0.asked()], [1, 1])
    })
  })

  describe('latency', () => {
    it('should sleep ms on the clock, of kind chaos, before running the action', async () => {
      const clock = TestClock.make()
      const ran: Array<number> = []
      const action: TaskEither<string, string> = () => (ran.push(clock.now()), Promise.resolve(E.right('ok')))
      const slow = Chaos.latency(300, { injectionRate: 0.5, random: scripted([0.1, 0.9]), clock })
      const first = pipe(action, slow)()
      await clock.runAll()
      deepStrictEqual(await first, E.right('ok'))
      deepStrictEqual(await pipe(action, slow)(), E.right('ok'))
      deepStrictEqual(ran, [300, 300])
      deepStrictEqual([clock.sleepsOf('chaos'), clock.sleeps], [[300], []])
    })

    it('should never sleep a negative, NaN or infinite time: any duration is slept exactly (property)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.double({ min: 0, max: 1e9, noNaN: true }), seedArbitrary, async (ms, seed) => {
          const clock = TestClock.make()
          const call = pipe(TE.right(ms), Chaos.latency(ms, { injectionRate: 1, random: Random.seeded(seed), clock }))()
          await clock.runAll()
          deepStrictEqual(await call, E.right(ms))
          const slept = clock.sleepsOf('chaos')
          ok(slept.every((s) => Number.isFinite(s) && s >= 0))
          deepStrictEqual(slept, ms === 0 ? [] : [ms + 0])
          strictEqual(clock.now(), ms + 0)
        })
      )
    })

    it('0 should be told but sleep not at all', async () => {
      const clock = TestClock.make()
      const events: Array<Event> = []
      const call = pipe(
        TE.right(1),
        Chaos.latency(0, { injectionRate: 1, random: Random.seeded(2), clock, onEvent: (e) => void events.push(e) })
      )
      deepStrictEqual(await call(), E.right(1))
      deepStrictEqual(clock.timers, [])
      deepStrictEqual(
        events.map((e) => (e as ChaosInjected & { kind: 'latency' }).latency),
        [0]
      )
    })

    itThrowsRangeErrors(
      notDurations.map(([name, ms]) => [
        `Chaos.latency(${name})`,
        () => Chaos.latency(ms, base),
        new RegExp(`Chaos\\.latency: ms must be a finite number >= 0, received ${name}`)
      ])
    )
  })

  describe('outcome', () => {
    it('should answer the given Either instead of running the action, a Right too', async () => {
      const { action, calls } = counted(42)
      const call = pipe(action, Chaos.outcome(E.right(null), { injectionRate: 0.5, random: scripted([0.3, 0.6]) }))
      expectTypeOf(call).toEqualTypeOf<TaskEither<string, number | null>>()
      deepStrictEqual<E.Either<string, number | null>>(await call(), E.right(null))
      deepStrictEqual<E.Either<string, number | null>>(await call(), E.right(42))
      strictEqual(calls(), 1)
    })

    itThrowsTypeErrors([
      ['a value', () => Chaos.outcome(42 as never, base), /Chaos\.outcome: result must be an Either, received 42/],
      ['null', () => Chaos.outcome(null as never, base), /Chaos\.outcome: result must be an Either, received null/]
    ])
  })

  describe('behaviour', () => {
    it('should run the effect before the action, awaiting its promise, for the injected calls only', async () => {
      const clock = TestClock.make()
      const log: Array<string> = []
      const action: TaskEither<string, string> = () => (log.push(`action at ${clock.now()}`), TE.right('ok')())
      const call = pipe(
        action,
        Chaos.behaviour(() => clock.sleep(50).then(() => void log.push('effect')), {
          injectionRate: 0.5,
          random: scripted([0.4, 0.8])
        })
      )
      const first = call()
      await clock.runAll()
      deepStrictEqual(await first, E.right('ok'))
      deepStrictEqual(await call(), E.right('ok'))
      deepStrictEqual(log, ['effect', 'action at 50', 'action at 50'])
    })

    it('an effect that throws or rejects should reject the call, the action not run', async () => {
      const boom = new Error('boom')
      const { action, calls } = counted(1)
      const options = { injectionRate: 1, random: Random.seeded(4) }
      await rejectsWith(
        pipe(
          action,
          Chaos.behaviour(() => {
            throw boom
          }, options)
        )(),
        boom
      )
      await rejectsWith(
        pipe(
          action,
          Chaos.behaviour(() => Promise.reject(boom), options)
        )(),
        boom
      )
      strictEqual(calls(), 0)
    })
  })

  describe('options', () => {
    it('enabled false should let the call through untouched and draw nothing; it is asked at each call', async () => {
      let on = false
      const random = scripted([0])
      for (const [name, chaos] of all({ injectionRate: 1, random, enabled: () => on })) {
        const { action, calls } = counted(name)
        deepStrictEqual(await pipe(action, chaos)(), E.right(name))
        strictEqual(calls(), 1)
      }
      strictEqual(random.asked(), 0)
      on = true
      deepStrictEqual(
        await pipe(TE.right(1), all({ injectionRate: 1, random, enabled: () => on })[0][1])(),
        E.left('injected')
      )
      strictEqual(random.asked(), 1)
    })

    it('enabled answering no boolean should reject the call with a TypeError naming the answer', async () => {
      for (const [name, chaos] of all({ ...base, enabled: (() => 'yes') as never })) {
        const error = await caught(pipe(TE.right(1), chaos))
        ok(error instanceof TypeError, name)
        ok(
          new RegExp(`Chaos\\.${name}: options\\.enabled\\(\\) must answer a boolean, received "yes"`).test(
            error.message
          )
        )
      }
    })

    it('a random that draws outside [0, 1) should reject the call with a RangeError naming the draw', async () => {
      for (const [name, chaos] of all({ injectionRate: 0.5, random: { next: () => 1 } })) {
        const error = await caught(pipe(TE.right(1), chaos))
        ok(error instanceof RangeError, name)
        ok(error.message.startsWith(`Chaos.${name}: random.next() returned 1`), error.message)
      }
    })

    it('should tell ChaosInjected at each injection, of its kind, dated on the clock; nothing for a call let through', async () => {
      const clock = TestClock.make(7)
      const events: Array<Event> = []
      const options = {
        injectionRate: 0.5,
        random: scripted([0.1, 0.9]),
        clock,
        onEvent: (e: Event) => void events.push(e)
      }
      for (const [, chaos] of all(options)) {
        await pipe(TE.right(1), chaos)()
        await pipe(TE.right(1), chaos)()
      }
      const injected: ReadonlyArray<ChaosInjected> = [
        { _tag: 'ChaosInjected', source: 'chaos', run: 0, at: 7, kind: 'fault' },
        { _tag: 'ChaosInjected', source: 'chaos', run: 0, at: 7, kind: 'latency', latency: 0 },
        { _tag: 'ChaosInjected', source: 'chaos', run: 0, at: 7, kind: 'outcome' },
        { _tag: 'ChaosInjected', source: 'chaos', run: 0, at: 7, kind: 'behaviour' }
      ]
      deepStrictEqual<ReadonlyArray<Event>>(events, injected)
    })

    it('an onEvent that throws should be a process warning, and the call injected all the same', async () => {
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
      try {
        const call = pipe(
          TE.right(1),
          Chaos.fault('injected', {
            injectionRate: 1,
            random: Random.seeded(1),
            onEvent: () => {
              throw new Error('observer down')
            }
          })
        )
        deepStrictEqual(await call(), E.left('injected'))
        deepStrictEqual(
          [...warn.mock.calls].map(([message, options]) => [message, (options as { type: string }).type]),
          [['fp-ts-retry: an observer threw, and was ignored: observer down', 'ObserverWarning']]
        )
      } finally {
        warn.mockRestore()
      }
    })

    describe('bad options', () => {
      const makers = [
        ['fault', (o: Chaos.ChaosOptions) => Chaos.fault('x', o)],
        ['latency', (o: Chaos.ChaosOptions) => Chaos.latency(1, o)],
        ['outcome', (o: Chaos.ChaosOptions) => Chaos.outcome(E.right(1), o)],
        ['behaviour', (o: Chaos.ChaosOptions) => Chaos.behaviour(() => undefined, o)]
      ] as const
      itThrowsRangeErrors(
        makers.flatMap(([name, make]) =>
          (
            [
              ['-0.1', -0.1],
              ['1.5', 1.5],
              ['NaN', NaN],
              ['Infinity', Infinity],
              ['"0.5"', '0.5']
            ] as const
          ).map(
            ([shown, rate]) =>
              [
                `Chaos.${name} injectionRate ${shown}`,
                () => make({ injectionRate: rate as number, random: Random.seeded(1) }),
                new RegExp(`Chaos\\.${name}: options\\.injectionRate must be a number from 0 to 1, received ${shown}`)
              ] as const
          )
        )
      )
      itThrowsTypeErrors(
        makers.flatMap(([name, make]) => [
          [
            `Chaos.${name} without a random`,
            () => make({ injectionRate: 0.5 } as never),
            new RegExp(`Chaos\\.${name}: options\\.random must be a Random \\(required\\), received undefined`)
          ],
          [
            `Chaos.${name} options null`,
            () => make(null as never),
            new RegExp(`Chaos\\.${name}: options must be an object, received null`)
          ],
          [
            `Chaos.${name} enabled true`,
            () => make({ ...base, enabled: true as never }),
            new RegExp(`Chaos\\.${name}: options\\.enabled must be a function, received true`)
          ],
          [
            `Chaos.${name} clock {}`,
            () => make({ ...base, clock: {} as never }),
            new RegExp(`Chaos\\.${name}: options\\.clock must be a Clock, received \\{\\}`)
          ],
          [
            `Chaos.${name} onEvent "log"`,
            () => make({ ...base, onEvent: 'log' as never }),
            new RegExp(`Chaos\\.${name}: options\\.onEvent must be a function, received "log"`)
          ]
        ])
      )
      itThrowsTypeErrors([
        [
          'Chaos.behaviour effect',
          () => Chaos.behaviour(1 as never, base),
          /Chaos\.behaviour: effect must be a function, received 1/
        ]
      ])
    })
  })

  describe('properties', () => {
    it('should inject a share of the calls within a statistical bound of the rate, whatever the seed', async () => {
      const N = 1_000
      await fc.assert(
        fc.asyncProperty(seedArbitrary, fc.double({ min: 0, max: 1, noNaN: true }), async (seed, rate) => {
          const call = pipe(TE.right(0), Chaos.fault(1, { injectionRate: rate, random: Random.seeded(seed) }))
          let injected = 0
          for (let i = 0; i < N; i++) if (E.isLeft(await call())) injected++
          // a binomial count: within 5 standard deviations (and one call, for a rate near 0 or 1) of N · rate
          const bound = 5 * Math.sqrt(N * rate * (1 - rate)) + 1
          ok(Math.abs(injected - N * rate) <= bound, `${injected} of ${N} at rate ${rate}`)
        }),
        { numRuns: 40 }
      )
    })

    it('should inject the same calls for the same seed, and draw once per call, whatever the combinators', async () => {
      await fc.assert(
        fc.asyncProperty(seedArbitrary, fc.double({ min: 0, max: 1, noNaN: true }), async (seed, rate) => {
          const experiment = async (): Promise<ReadonlyArray<string>> => {
            const random = Random.seeded(seed)
            const log: Array<string> = []
            const onEvent = (e: Event) => void log.push((e as ChaosInjected).kind)
            const call = pipe(
              TE.right('ok'),
              Chaos.latency(0, { injectionRate: rate, random, onEvent }),
              Chaos.behaviour(() => undefined, { injectionRate: rate, random, onEvent }),
              Chaos.fault('503', { injectionRate: rate, random, onEvent })
            )
            for (let i = 0; i < 20; i++) log.push(JSON.stringify(await call()))
            return log
          }
          const first = await experiment()
          deepStrictEqual(await experiment(), first)
          // one draw per combinator per call that reached it: the seed's sequence, read in that order
          const random = Random.seeded(seed)
          let injections = 0
          for (let i = 0; i < 20; i++) {
            if (random.next() < rate) {
              injections++ // the fault: nothing inside it runs
              continue
            }
            if (random.next() < rate) injections++
            if (random.next() < rate) injections++
          }
          strictEqual(first.filter((line) => !line.startsWith('{')).length, injections)
        }),
        { numRuns: 50 }
      )
    })
  })

  describe('under a breaker and a timeout', () => {
    it('under 50 % injected faults the breaker opens, and no call waits past its timeout (property over seeds)', async () => {
      await fc.assert(
        fc.asyncProperty(seedArbitrary, async (seed) => {
          const random = Random.seeded(seed)
          const { result } = await TestClock.run((clock) => async () => {
            const latencies: Array<number> = []
            const onEvent = (e: Event) => {
              if (e._tag === 'AttemptSucceeded' || e._tag === 'AttemptFailed' || e._tag === 'AttemptTimedOut')
                latencies.push(e.latency)
            }
            const breaker = Breaker.consecutive({ threshold: 3, halfOpenAfter: Schedule.constant(60_000), clock })
            // the service answers in 20 ms; chaos makes half of its calls fail, and a tenth of the others hang 5 s
            const service: TaskEither<string, string> = () => clock.sleep(20).then(() => E.right('ok'))
            const slow = Chaos.latency(5_000, { injectionRate: 0.1, random, clock })
            const faulty = Chaos.fault('injected fault', { injectionRate: 0.5, random, clock })
            const call = pipe(
              ({ signal }: { signal: AbortSignal }) =>
                pipe(
                  service,
                  slow,
                  faulty,
                  Breaker.protect(breaker, () => 'circuit open', { signal })
                ),
              retryingWithContext(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(2))), {
                clock,
                breaker,
                attemptTimeout: 1_000,
                onTimeout: () => 'timeout',
                onEvent
              })
            )
            let calls = 0
            while (breaker.state._tag === 'Closed' && calls < 200) {
              calls++
              await call()
            }
            return { opened: breaker.state._tag === 'Open', latencies }
          })
          ok(result.opened, `seed ${seed}: the breaker never opened`)
          ok(result.latencies.length > 0)
          ok(
            result.latencies.every((ms) => ms <= 1_000),
            `seed ${seed}: ${Math.max(...result.latencies)} ms`
          )
        }),
        { numRuns: 30 }
      )
    })
  })
})
