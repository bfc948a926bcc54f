import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as Breaker from '../src/Breaker'
import * as Budget from '../src/Budget'
import * as Guard from '../src/Guard'
import * as Decision from '../src/Decision'
import * as Random from '../src/Random'
import { retrying, retryingReaderTaskEither, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, strictEqual, throwsTypeError } from './util'

const failure: Guard.Outcome = { ok: false, error: 'down', latency: 3, now: 10, retries: 0, retrying: true, delay: 100 }

/** A guard that answers `answers` in turn (a promise where the answer is one) and records what it was told. */
const scripted = (
  reason: Guard.GuardReason,
  answers: ReadonlyArray<boolean | Promise<boolean>>
): Guard.Guard & { readonly told: Array<Guard.Outcome> } => {
  const told: Array<Guard.Outcome> = []
  return {
    reason,
    readsTime: false,
    told,
    admit: (outcome) => {
      told.push(outcome)
      return answers[(told.length - 1) % answers.length]
    }
  }
}

/** A guard whose `admit` throws `error`. */
const throwingGuard = (error: unknown): Guard.Guard => ({
  reason: 'budget',
  readsTime: false,
  admit: () => {
    throw error
  }
})

/** What `f` throws (`undefined` when it returns). */
const thrownBy = (f: () => unknown): unknown => {
  try {
    f()
  } catch (e) {
    return e
  }
  return undefined
}

describe('Guard', () => {
  describe('decide', () => {
    it('should admit when no guard refuses, answering synchronously while every answer is a boolean', () => {
      const a = scripted('breaker', [true])
      const b = scripted('budget', [true])
      strictEqual(Guard.decide([a, b], failure), undefined)
      deepStrictEqual([a.told, b.told], [[failure], [failure]])
      strictEqual(Guard.decide([], failure), undefined)
    })

    it('should name the first that refused, and tell those after it that no retry will be made', () => {
      const a = scripted('breaker', [false])
      const b = scripted('budget', [false])
      strictEqual(Guard.decide([a, b], failure), 'breaker')
      deepStrictEqual(b.told, [{ ...failure, retrying: false, delay: -1 }])
    })

    it('should await only the answers that are promises, in order, with the same result', async () => {
      const a = scripted('breaker', [Promise.resolve(true)])
      const b = scripted('budget', [false])
      const c = scripted('breaker', [Promise.resolve(false)])
      const answer = Guard.decide([a, b, c], failure)
      strictEqual(answer instanceof Promise, true)
      strictEqual(await answer, 'budget')
      deepStrictEqual([a.told.length, b.told.length, c.told], [1, 1, [{ ...failure, retrying: false, delay: -1 }]])
    })

    it('should read no answer of an outcome that asks for no retry', () => {
      const no = scripted('breaker', [false])
      strictEqual(Guard.decide([no], { ...failure, retrying: false, delay: -1 }), undefined)
      strictEqual(Guard.decide([no], { ...failure, ok: true, retrying: false, delay: -1 }), undefined)
    })

    it('should agree with the reference (first refusal wins; every guard told) for any answers', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ answer: fc.boolean(), promised: fc.boolean(), breaker: fc.boolean() }), {
            maxLength: 5
          }),
          fc.boolean(),
          async (specs, retrying) => {
            const guards = specs.map((s) =>
              scripted(s.breaker ? 'breaker' : 'budget', [s.promised ? Promise.resolve(s.answer) : s.answer])
            )
            const outcome = { ...failure, retrying, delay: retrying ? 100 : -1 }
            const first = retrying ? specs.findIndex((s) => !s.answer) : -1
            const expected = first < 0 ? undefined : specs[first].breaker ? 'breaker' : 'budget'
            strictEqual(await Guard.decide(guards, outcome), expected)
            guards.forEach((g, i) => {
              strictEqual(g.told.length, 1)
              strictEqual(g.told[0].retrying, retrying && (first < 0 || i <= first))
            })
          }
        )
      )
    })

    it('should throw, or reject, with the error of a guard that does', async () => {
      const boom = new Error('boom')
      const throwing = throwingGuard(boom)
      const rejecting: Guard.Guard = { reason: 'budget', readsTime: false, admit: () => Promise.reject(boom) }
      strictEqual(
        thrownBy(() => Guard.decide([throwing], failure)),
        boom
      )
      await expect(Guard.decide([scripted('breaker', [Promise.resolve(true)]), rejecting], failure)).rejects.toBe(boom)
    })
  })

  describe('allows', () => {
    it('should ask only guards that have allows, in order, and name the first that refuses', async () => {
      const asked: Array<string> = []
      const g = (name: string, answer: boolean | Promise<boolean> | undefined): Guard.Guard => ({
        reason: name === 'b' ? 'breaker' : 'budget',
        readsTime: false,
        admit: () => true,
        allows:
          answer === undefined
            ? undefined
            : (now) => {
                asked.push(`${name}@${now}`)
                return answer
              }
      })
      strictEqual(Guard.allows([g('a', undefined), g('c', true)], 7), undefined)
      strictEqual(await Guard.allows([g('a', Promise.resolve(true)), g('b', false), g('c', true)], 8), 'breaker')
      deepStrictEqual(asked, ['c@7', 'a@8', 'b@8'])
    })
  })

  describe('budget', () => {
    it('should tell a success with onSuccess and a failure with onFailure, with the outcome’s fields', () => {
      const calls: Array<readonly [string, Budget.BudgetAttempt]> = []
      const budget: Budget.RetryBudget = {
        onSuccess: (attempt) => void calls.push(['s', attempt]),
        onFailure: (attempt) => (calls.push(['f', attempt]), false)
      }
      const guard = Budget.asGuard(budget)
      strictEqual(guard.admit(failure), false)
      strictEqual(guard.admit({ ...failure, ok: true, retries: 1, retrying: false, delay: -1 }), true)
      deepStrictEqual(calls, [
        ['f', { latency: 3, now: 10, retries: 0, error: 'down', retrying: true }],
        ['s', { latency: 3, now: 10, retries: 1, error: 'down', retrying: false }]
      ])
      // one record, its fields in the order every hook uses: what happened first, then the run's count
      for (const [, attempt] of calls)
        deepStrictEqual(Object.keys(attempt), ['latency', 'now', 'retries', 'error', 'retrying'])
    })

    it('should not tell the failures that do not count, and admit them', () => {
      const bucket = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.5 })
      const guard = Budget.asGuard(bucket, { counts: (e) => e !== 'bad request' })
      strictEqual(guard.admit({ ...failure, error: 'bad request' }), true)
      strictEqual(bucket.tokens, 10)
      strictEqual(guard.admit(failure), true)
      strictEqual(bucket.tokens, 9)
    })

    it('should refuse what is not a budget, naming it', () => {
      throwsTypeError(
        () => Budget.asGuard({} as never),
        /^Budget\.asGuard: budget must be a RetryBudget, received \{\}$/
      )
      throwsTypeError(
        () => Budget.asGuard(Budget.retryThrottle({ maxTokens: 1, tokenRatio: 1 }), { counts: 1 as never }),
        /^Budget\.asGuard: options\.counts must be a function, received 1$/
      )
    })
  })

  describe('Decision.guardsOf', () => {
    it('should put the breaker before the budget before the run’s own guards, and check them', () => {
      const breaker = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1) })
      const budget = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
      const own = scripted('budget', [true])
      const guards = Decision.guardsOf('here', { guards: [own], budget, breaker })
      deepStrictEqual(
        guards.map((g) => g.reason),
        ['breaker', 'budget', 'budget']
      )
      strictEqual(guards[2], own)
      throwsTypeError(
        () => Decision.guardsOf('here', { guards: {} as never }),
        /^here: options\.guards must be an array/
      )
      throwsTypeError(
        () => Decision.guardsOf('here', { guards: [{ admit: () => true }] as never }),
        /^here: options\.guards\[0\]/
      )
    })
  })

  describe('in the runner', () => {
    const recorded = (): {
      readonly reasons: Array<StopReason>
      readonly onDone: (ended: { readonly reason: StopReason }) => void
    } => {
      const reasons: Array<StopReason> = []
      return { reasons, onDone: ({ reason }) => void reasons.push(reason) }
    }

    it('should end a run with the reason of its own guard that refused, and sleep no more', async () => {
      const clock = TestClock.make()
      const quota = scripted('budget', [true, false])
      const log = recorded()
      const run = pipe(
        TE.left('down'),
        retrying(pipe(Schedule.constant(10), Schedule.intersect(Schedule.recurs(5))), {
          clock,
          guards: [quota],
          onDone: log.onDone
        })
      )()
      await clock.runAll()
      deepStrictEqual(await run, E.left('down'))
      deepStrictEqual([clock.sleeps, log.reasons], [[10], ['budget']])
      deepStrictEqual(
        quota.told.map((o) => [o.retries, o.retrying, o.delay]),
        [
          [0, true, 10],
          [1, true, 10]
        ]
      )
    })

    it('should tell a success to the guards with the error of the failure before it', async () => {
      const clock = TestClock.make()
      const spy = scripted('budget', [true])
      let calls = 0
      const action: TE.TaskEither<string, number> = () => Promise.resolve(++calls < 2 ? E.left('busy') : E.right(1))
      const run = pipe(action, retrying(Schedule.recurs(3), { clock, guards: [spy] }))()
      await clock.runAll()
      deepStrictEqual(await run, E.right(1))
      deepStrictEqual(
        spy.told.map((o) => [o.ok, o.error, o.retries]),
        [
          [false, 'busy', 0],
          [true, 'busy', 1]
        ]
      )
    })

    it('should keep a success whose guard failed to hear of it, telling the error as an event (issue 20, fault 3)', async () => {
      const boom = new Error('redis down')
      const budget = {
        onSuccess: () => Promise.reject(boom),
        onFailure: () => true
      }
      const events: Array<string> = []
      const { result } = await TestClock.run((clock) =>
        pipe(
          TE.right(1),
          retrying(Schedule.recurs(1), {
            clock,
            budget,
            onEvent: (e) =>
              void (e._tag === 'ServiceUnavailable' && events.push(`${e.service} ${e.fallback} ${String(e.error)}`))
          })
        )
      )
      deepStrictEqual([result, events], [E.right(1), ['budget success stands Error: redis down']])
      // told of a failure, the same error ends the run: a retry must not go on a guard's error
      await expect(
        pipe(
          TE.left('down'),
          retrying(Schedule.recurs(1), {
            budget: { onSuccess: () => undefined, onFailure: () => Promise.reject(boom) }
          })
        )()
      ).rejects.toBe(boom)
    })

    it('decide should tell every guard even when one throws, then throw the first error on a failure', () => {
      const boom = new Error('boom')
      const throwing = throwingGuard(boom)
      const after = scripted('breaker', [true])
      deepStrictEqual([thrownBy(() => Guard.decide([throwing, after], failure)), after.told.length], [boom, 1])
      const reported: Array<unknown> = []
      strictEqual(
        Guard.decide([throwing, after], { ...failure, ok: true, retrying: false }, (e) => void reported.push(e)),
        undefined
      )
      deepStrictEqual(reported, [boom])
    })

    it('should take guards from a ReaderTaskEither environment', async () => {
      const log = recorded()
      const env = { clock: TestClock.make(), random: Random.seeded(1), guards: [scripted('breaker', [false])] }
      const result = await pipe(
        () => TE.left('down'),
        retryingReaderTaskEither(Schedule.recurs(3), { onDone: log.onDone })
      )(env)()
      deepStrictEqual([result, log.reasons], [E.left('down'), ['breaker']])
    })

    it('should say which refused, the breaker or the budget, when both are given', async () => {
      const clock = TestClock.make()
      const breaker = Breaker.consecutive({ threshold: 1, halfOpenAfter: Schedule.constant(1_000), clock })
      const budget = Budget.retryThrottle({ maxTokens: 10, tokenRatio: 0.1 })
      const log = recorded()
      const action = Breaker.protect(breaker, () => 'open')(TE.left('down'))
      const run = pipe(action, retrying(Schedule.constant(10), { clock, breaker, budget, onDone: log.onDone }))()
      await clock.runAll()
      deepStrictEqual([await run, log.reasons], [E.left('down'), ['breaker']])
      // the budget heard of the failure, as one that would not be retried: it paid nothing for it
      strictEqual(budget.tokens, 9)
    })
  })
})
