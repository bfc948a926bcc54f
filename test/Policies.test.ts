import * as E from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import * as fs from 'fs'
import Redis from 'ioredis'
import * as os from 'os'
import * as path from 'path'
import type * as Breaker from '../src/Breaker'
import type * as Budget from '../src/Budget'
import type * as Bulkhead from '../src/Bulkhead'
import type * as Event from '../src/Event'
import * as Policies from '../src/Policies'
import * as Random from '../src/Random'
import type * as RedisAdaptiveThrottle from '../src/RedisAdaptiveThrottle'
import * as TestClock from '../src/TestClock'
import { describeWithRedis } from './support/redis'
import { waitFor } from './support/wait'
import { deepStrictEqual, ok, strictEqual, throwsTypeError } from './util'

const down: TaskEither<string, string> = () => Promise.resolve(E.left('503'))

const pipeline = (breaker: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  policies: {
    payments: {
      breaker: { kind: 'consecutive', halfOpenAfter: { constant: '30s' }, ...breaker },
      retry: { constant: '100ms', maxRetries: 2 },
      ...extra
    }
  }
})

const collect = () => {
  const events: Array<Event.Event> = []
  return { events, onEvent: (e: Event.Event) => void events.push(e), tags: () => events.map((e) => e._tag) }
}

describe('Policies', () => {
  describe('make', () => {
    it('builds each section, and answers undefined for those the document leaves out', () => {
      const policies = Policies.make({
        policies: {
          full: {
            timeout: '2s',
            rateLimit: { kind: 'gcra', rate: 10, per: '1s', burst: 5 },
            breaker: { kind: 'count', size: 10, failureRate: 0.5, halfOpenAfter: { constant: '5s' } },
            retry: { exponential: '100ms', maxRetries: 3 },
            budget: { kind: 'retryThrottle', maxTokens: 10, tokenRatio: 0.1 },
            bulkhead: { maxConcurrent: 2, maxQueue: 0 },
            fallback: { on: ['breaker'] }
          },
          bare: {}
        }
      })
      const full = policies.get('full')
      strictEqual(full.timeout, 2_000)
      ok(
        full.rateLimiter !== undefined &&
          full.breaker !== undefined &&
          full.budget !== undefined &&
          full.bulkhead !== undefined
      )
      strictEqual(full.schedule?.description, policies.get('full').schedule?.description)
      deepStrictEqual(full.fallbackOn, ['breaker'])
      const bare = policies.get('bare')
      deepStrictEqual(
        [bare.timeout, bare.breaker, bare.schedule, bare.bulkhead],
        [undefined, undefined, undefined, undefined]
      )
      deepStrictEqual(policies.names(), ['full', 'bare'])
    })

    it('refuses a document that does not decode, or that it cannot build, with its error lines', () => {
      throwsTypeError(
        () => Policies.make({ policies: { p: { timeout: 'soon' } } }),
        /the document does not decode:\nat policies.p.timeout: expected a duration/
      )
      throwsTypeError(
        () =>
          Policies.make({
            policies: {
              p: {
                breaker: { kind: 'consecutive', threshold: 1, halfOpenAfter: { constant: 1 } },
                store: { kind: 'redis', prefix: 'x:' }
              }
            }
          }),
        /the pipeline "p" names a store, and no redis client was given/
      )
    })

    it('names an unknown pipeline, or a key field that is missing', () => {
      const policies = Policies.make({ policies: { a: {}, k: { key: { template: '{tenant}', maxKeys: 10 } } } })
      throwsTypeError(() => policies.get('b'), /Policies.get: no pipeline "b"; the document names \["a","k"\]/)
      throwsTypeError(
        () => policies.get('k', {}),
        /kept by "\{tenant\}": fields.tenant must be a string, received undefined/
      )
    })
  })

  describe('run', () => {
    it('applies the layers in the documented order: the timeout on each attempt, the breaker counts attempts, the retry sees the breaker', async () => {
      const clock = TestClock.make()
      const policies = Policies.make(
        {
          policies: {
            p: {
              timeout: '1s',
              breaker: { kind: 'consecutive', threshold: 2, halfOpenAfter: { constant: '30s' } },
              retry: { constant: '100ms', maxRetries: 5 }
            }
          }
        },
        { clock }
      )
      let attempts = 0
      const hangs: TaskEither<string, string> = () => (attempts++, new Promise(() => undefined))
      const run = policies.run('p')(hangs)()
      await clock.runAll()
      deepStrictEqual(
        await run,
        E.left({ _tag: 'PolicyRefused', layer: 'timeout', name: 'p', key: undefined } as const)
      )
      strictEqual(attempts, 2) // the second timeout opened the breaker: the run stopped instead of sleeping toward it
      deepStrictEqual(clock.sleepsOf('backoff'), [100])
      strictEqual(policies.get('p').breaker?.state._tag, 'Open')
      deepStrictEqual(
        await policies.run('p')(hangs)(),
        E.left({ _tag: 'PolicyRefused', layer: 'breaker', name: 'p', key: undefined } as const)
      )
    })

    it('a bulkhead refuses past its bounds, and a fallback answers the reasons the document names', async () => {
      const clock = TestClock.make()
      const policies = Policies.make(
        {
          policies: {
            p: {
              retry: { constant: 10, maxRetries: 0 },
              bulkhead: { maxConcurrent: 1, maxQueue: 0 },
              fallback: { on: ['bulkhead'] }
            }
          }
        },
        { clock }
      )
      const slow: TaskEither<string, string> = () => clock.sleep(50).then(() => E.right('live'))
      const first = policies.run('p')(slow, { fallback: () => () => Promise.resolve(E.right('cached')) })()
      const second = await policies.run('p')(slow, { fallback: () => () => Promise.resolve(E.right('cached')) })()
      deepStrictEqual(second, E.right('cached'))
      const third = await policies.run('p')(slow)()
      deepStrictEqual(third, E.left({ _tag: 'PolicyRefused', layer: 'bulkhead', name: 'p', key: undefined } as const))
      await clock.runAll()
      deepStrictEqual(await first, E.right('live'))
    })

    it("an adaptive limit sheds past its limit, outside the retry, and a fallback on 'shed' answers", async () => {
      const clock = TestClock.make()
      const { events, onEvent } = collect()
      const policies = Policies.make(
        {
          policies: {
            p: {
              retry: { constant: 10, maxRetries: 1 },
              adaptiveLimit: { kind: 'gradient', min: 1, initial: 1, max: 10 },
              fallback: { on: ['shed'] }
            }
          }
        },
        { clock, onEvent }
      )
      const limit = policies.get('p').adaptiveLimit
      ok(limit !== undefined)
      const slow: TaskEither<string, string> = () => clock.sleep(50).then(() => E.right('live'))
      const first = policies.run('p')(slow)()
      deepStrictEqual(
        await policies.run('p')(slow, { fallback: () => () => Promise.resolve(E.right('cached')) })(),
        E.right('cached')
      )
      deepStrictEqual(
        await policies.run('p')(slow)(),
        E.left({ _tag: 'PolicyRefused', layer: 'adaptiveLimit', name: 'p', key: undefined } as const)
      )
      strictEqual(limit.inFlight, 1)
      await clock.runAll()
      deepStrictEqual(await first, E.right('live'))
      deepStrictEqual(
        events.filter((e) => e._tag === 'LoadShed').map((e) => e.source),
        ['adaptiveLimit', 'adaptiveLimit']
      )
    })

    it('an adaptive limit takes a run that ends in the pipeline timeout as a drop', async () => {
      const clock = TestClock.make()
      const policies = Policies.make(
        {
          policies: {
            p: {
              timeout: 100,
              adaptiveLimit: { kind: 'aimd', backoffRatio: 0.5, min: 1, initial: 8, max: 8, window: 1, minSamples: 1 }
            }
          }
        },
        { clock }
      )
      const hang: TaskEither<string, string> = () => clock.sleep(1_000).then(() => E.right('late'))
      const run = policies.run('p')(hang)()
      await clock.advance(100)
      deepStrictEqual(
        await run,
        E.left({ _tag: 'PolicyRefused', layer: 'timeout', name: 'p', key: undefined } as const)
      )
      strictEqual(policies.get('p').adaptiveLimit?.limit, 4)
      await clock.runAll()
    })

    it("a throttle drops attempts while the backend refuses: the run stops with 'shed', and a fallback on 'shed' answers", async () => {
      const clock = TestClock.make()
      const policies = Policies.make(
        { policies: { p: { throttle: { k: 1 }, retry: { constant: 10, maxRetries: 1 }, fallback: { on: ['shed'] } } } },
        { clock, random: Random.fixed(0.4) }
      )
      let calls = 0
      const busy: TaskEither<{ readonly status: number }, string> = () => (
        calls++, Promise.resolve(E.left({ status: 503 }))
      )
      // the first attempt goes (p = 0) and is refused; its retry is dropped by the guard (p = 1/2 > 0.4)
      deepStrictEqual(await policies.run('p')(busy)(), E.left({ status: 503 }))
      deepStrictEqual(clock.sleeps, [])
      // the next run's first attempt is dropped (p = 1/2), and the fallback on 'shed' answers it
      const cached = await policies.run('p')(busy, { fallback: () => () => Promise.resolve(E.right('cached')) })()
      deepStrictEqual(cached, E.right('cached'))
      deepStrictEqual(
        await policies.run('p')(busy)(),
        E.left({ _tag: 'PolicyRefused', layer: 'throttle', name: 'p', key: undefined } as const)
      )
      strictEqual(calls, 1)
      deepStrictEqual([policies.get('p').throttle?.requests, policies.get('p').throttle?.accepts], [3, 0])
    })

    it('a throttle outside the breaker counts an open circuit against the backend, and other failures as accepted', async () => {
      const policies = Policies.make(
        {
          policies: {
            p: { breaker: { kind: 'consecutive', threshold: 1, halfOpenAfter: { constant: '1m' } }, throttle: {} }
          }
        },
        { clock: TestClock.make(), random: Random.fixed(0.99) }
      )
      deepStrictEqual(await policies.run('p')(down)(), E.left('503')) // a failure, not an overload: accepted
      deepStrictEqual(
        await policies.run('p')(down)(),
        E.left({ _tag: 'PolicyRefused', layer: 'breaker', name: 'p', key: undefined } as const)
      )
      deepStrictEqual([policies.get('p').throttle?.requests, policies.get('p').throttle?.accepts], [2, 1])
    })

    it('hedges when the document says hedging', async () => {
      const clock = TestClock.make()
      const policies = Policies.make(
        { policies: { p: { hedging: { delays: { constant: 100, maxRetries: 1 }, maxConcurrent: 2 } } } },
        { clock }
      )
      let calls = 0
      const action: TaskEither<string, number> = () => {
        const n = ++calls
        return n === 1 ? new Promise(() => undefined) : clock.sleep(10).then(() => E.right(n))
      }
      const run = policies.run('p')(action)()
      await clock.runAll()
      deepStrictEqual(await run, E.right(2))
    })
  })

  describe('reload', () => {
    it('a breaker reloaded mid-outage stays open, keeps its count, and tells what changed', async () => {
      const clock = TestClock.make()
      const { events, onEvent } = collect()
      const policies = Policies.make(pipeline({ threshold: 3 }), { clock, onEvent })
      const run = policies.run('payments')(down)()
      await clock.runAll()
      await run
      const open = policies.get('payments').breaker as Breaker.Breaker
      deepStrictEqual(open.state, { _tag: 'Open', since: 200, halfOpenAt: 30_200 })
      events.length = 0
      deepStrictEqual(
        policies.reload(pipeline({ threshold: 5, halfOpenAfter: { constant: '10s' } })),
        E.right({ added: [], changed: ['payments'], removed: [] })
      )
      const reloaded = policies.get('payments').breaker as Breaker.Breaker
      ok(reloaded !== open)
      deepStrictEqual(reloaded.state, { _tag: 'Open', since: 200, halfOpenAt: 30_200 })
      deepStrictEqual(reloaded.metrics, open.metrics)
      deepStrictEqual(events, [
        { _tag: 'ConfigReloaded', source: 'config', run: 0, at: 200, added: [], changed: ['payments'], removed: [] }
      ])
    })

    it('a closed breaker keeps its count where the new window allows', async () => {
      const clock = TestClock.make()
      const policies = Policies.make(pipeline({ threshold: 10 }, { retry: { constant: 1, maxRetries: 3 } }), { clock })
      const run = policies.run('payments')(down)()
      await clock.runAll()
      await run // 4 failures in a row
      policies.reload(pipeline({ threshold: 5 }, { retry: { constant: 1, maxRetries: 3 } }))
      const run2 = policies.run('payments')(down)()
      await clock.runAll()
      await run2
      strictEqual(policies.get('payments').breaker?.state._tag, 'Open') // the fifth in a row, under the new threshold
      strictEqual(policies.get('payments').breaker?.metrics.failures, 5)
    })

    it('a document that does not decode is refused, with ConfigRejected, and the running pipelines stay', () => {
      const clock = TestClock.make()
      const { events, onEvent } = collect()
      const policies = Policies.make(pipeline({ threshold: 3 }), { clock, onEvent })
      const before = policies.get('payments')
      const config = policies.config
      const result = policies.reload(pipeline({ threshold: 0 }))
      ok(E.isLeft(result))
      strictEqual(result.left.message, 'at policies.payments.breaker.threshold: expected a whole number >= 1, got 0')
      strictEqual(policies.get('payments'), before)
      strictEqual(policies.config, config)
      deepStrictEqual(events, [{ _tag: 'ConfigRejected', source: 'config', run: 0, at: 0, error: result.left.message }])
      // nothing half-applied: a document with one good pipeline and one that cannot be built changes neither
      const half = policies.reload({
        policies: {
          payments: { timeout: '1s' },
          shared: { rateLimit: { kind: 'gcra', rate: 1, per: 1, burst: 1 }, store: { kind: 'redis', prefix: 'x:' } }
        }
      })
      ok(E.isLeft(half))
      strictEqual(policies.get('payments'), before)
      deepStrictEqual(policies.names(), ['payments'])
    })

    it('a run in progress keeps the policy it started with', async () => {
      const clock = TestClock.make()
      const policies = Policies.make({ policies: { p: { retry: { constant: '100ms', maxRetries: 3 } } } }, { clock })
      const run = policies.run('p')(down)()
      await clock.advance(100)
      policies.reload({ policies: { p: { retry: { constant: '5s', maxRetries: 1 } } } })
      await clock.runAll()
      deepStrictEqual(await run, E.left('503'))
      deepStrictEqual(clock.sleepsOf('backoff'), [100, 100, 100])
      const next = policies.run('p')(down)()
      await clock.runAll()
      await next
      deepStrictEqual(clock.sleepsOf('backoff'), [100, 100, 100, 5_000])
    })

    it('a limiter keeps its tokens; an unchanged section keeps its very object; a removed pipeline is gone', async () => {
      const clock = TestClock.make()
      const doc = (rate: number) => ({
        policies: {
          p: { rateLimit: { kind: 'gcra', rate, per: '1s', burst: 5 }, bulkhead: { maxConcurrent: 1, maxQueue: 0 } },
          q: {}
        }
      })
      const policies = Policies.make(doc(5), { clock })
      const limiter = policies.get('p').rateLimiter as { take: () => boolean }
      for (let i = 0; i < 4; i++) limiter.take()
      const bulkhead = policies.get('p').bulkhead
      deepStrictEqual(
        policies.reload({ policies: { p: doc(50).policies.p } }),
        E.right({ added: [], changed: ['p'], removed: ['q'] })
      )
      const next = policies.get('p')
      strictEqual(next.bulkhead, bulkhead)
      const taken = [1, 2, 3].map(() => (next.rateLimiter as { take: () => boolean }).take())
      deepStrictEqual(taken, [true, false, false]) // the one token left, not a fresh bucket of 5
      deepStrictEqual(
        policies.reload({ policies: { p: doc(50).policies.p } }),
        E.right({ added: [], changed: [], removed: [] })
      )
      strictEqual(policies.get('p'), next)
    })

    it('a window limiter is built by its kind; changed, it starts a new count', () => {
      const clock = TestClock.make()
      const doc = (kind: string, limit: number) => ({ policies: { p: { rateLimit: { kind, limit, window: '1s' } } } })
      const policies = Policies.make(doc('fixedWindow', 1), { clock })
      const take = () => (policies.get('p').rateLimiter as { take: () => boolean }).take()
      deepStrictEqual([take(), take()], [true, false])
      policies.reload(doc('slidingWindow', 2))
      deepStrictEqual([take(), take(), take()], [true, true, false])
    })

    it('a keyed pipeline keeps one pipeline per key, and a reload hands each key its own state', async () => {
      const clock = TestClock.make()
      const { events, onEvent } = collect()
      const doc = (threshold: number) => ({
        policies: {
          api: {
            key: { template: '{authority}', maxKeys: 10 },
            breaker: { kind: 'consecutive', threshold, halfOpenAfter: { constant: '1m' } }
          }
        }
      })
      const policies = Policies.make(doc(1), { clock, onEvent })
      const a = policies.get('api', { authority: 'a.example' })
      const b = policies.get('api', { authority: 'b.example' })
      ok(a !== b)
      strictEqual(policies.get('api', { authority: 'a.example' }), a)
      strictEqual(a.key, 'a.example')
      void (a.breaker?.enter() as Breaker.Permit).onFailure()
      strictEqual(a.breaker?.state._tag, 'Open')
      const opened = events.find((e) => e._tag === 'BreakerStateChanged')
      strictEqual(opened?.key, 'a.example')
      policies.reload(doc(3))
      strictEqual(policies.get('api', { authority: 'a.example' }).breaker?.state._tag, 'Open')
      strictEqual(policies.get('api', { authority: 'b.example' }).breaker?.state._tag, 'Closed')
    })
  })

  describe('reload keeps the counts of a throttle', () => {
    it('an unchanged throttle is the same object; a changed one starts with the counts of the old', async () => {
      const clock = TestClock.make()
      const policies = Policies.make({ policies: { p: { throttle: { k: 2 } } } }, { clock, random: Random.fixed(0.99) })
      const busy: TaskEither<{ readonly status: number }, string> = () => Promise.resolve(E.left({ status: 429 }))
      for (let i = 0; i < 4; i++) await policies.run('p')(busy)()
      const old = policies.get('p').throttle
      ok(E.isRight(policies.reload({ policies: { p: { throttle: { k: 2 }, timeout: '1s' } } })))
      strictEqual(policies.get('p').throttle, old)
      ok(E.isRight(policies.reload({ policies: { p: { throttle: { k: 3, window: '1m' } } } })))
      const changed = policies.get('p').throttle
      ok(changed !== old)
      deepStrictEqual([changed?.k, changed?.requests, changed?.accepts], [3, 4, 0])
      strictEqual(changed?.dropProbability(), 4 / 5)
    })
  })

  describe('reload keeps the bounds of a bulkhead, a budget and a window limiter', () => {
    it("a bulkhead's maxConcurrent holds across a reload with calls in flight", async () => {
      const clock = TestClock.make()
      const doc = (maxConcurrent: number, maxQueue: number) => ({
        policies: { p: { bulkhead: { maxConcurrent, maxQueue } } }
      })
      const policies = Policies.make(doc(3, 0), { clock })
      const ends: Array<() => void> = []
      const held: TaskEither<string, string> = () => new Promise((resolve) => ends.push(() => resolve(E.right('ok'))))
      const settled = () => new Promise((resolve) => setImmediate(resolve))
      const runs = [1, 2, 3].map(() => policies.run('p')(held)())
      await settled()
      strictEqual(ends.length, 3)
      ok(E.isRight(policies.reload(doc(2, 1))))
      runs.push(policies.run('p')(held)()) // waits: 3 in flight from before the reload, 2 the most
      const refused = await policies.run('p')(held)() // the queue of 1 is full
      deepStrictEqual(refused, E.left({ _tag: 'PolicyRefused', layer: 'bulkhead', name: 'p', key: undefined } as const))
      ends[0]()
      await settled()
      strictEqual(ends.length, 3) // 2 old calls still run: the waiting one stays waiting
      deepStrictEqual([policies.get('p').bulkhead?.inFlight, policies.get('p').bulkhead?.queued], [2, 1])
      ends[1]()
      await settled()
      strictEqual(ends.length, 4) // the old call's slot came back to the new bulkhead's waiter
      ends[2]()
      ends[3]()
      deepStrictEqual(
        await Promise.all(runs),
        [1, 2, 3, 4].map(() => E.right('ok'))
      )
      deepStrictEqual(policies.get('p').bulkhead?.inFlight, 0)
    })

    it('an adaptive limit keeps its learned limit and its calls in flight across a reload that changes it', async () => {
      const clock = TestClock.make()
      const doc = (max: number) => ({
        policies: {
          p: { adaptiveLimit: { kind: 'aimd', backoffRatio: 0.5, min: 1, initial: 4, max, window: 1, minSamples: 1 } }
        }
      })
      const policies = Policies.make(doc(8), { clock })
      const ends: Array<() => void> = []
      const held: TaskEither<string, string> = () => new Promise((resolve) => ends.push(() => resolve(E.right('ok'))))
      const settled = () => new Promise((resolve) => setImmediate(resolve))
      const runs = [1, 2, 3, 4].map(() => policies.run('p')(held)())
      await settled()
      await clock.advance(1)
      ends[0]() // a window that used the limit: 4 → 5
      await settled()
      const old = policies.get('p').adaptiveLimit
      deepStrictEqual([old?.limit, old?.inFlight], [5, 3])
      ok(E.isRight(policies.reload(doc(20))))
      const next = policies.get('p').adaptiveLimit
      ok(next !== undefined && next !== old)
      deepStrictEqual([next.limit, next.inFlight], [5, 3]) // what it learned, not the new initial; the old calls count
      await clock.advance(1)
      ends[1]() // the old call's sample moves the new limit: 5 → 6
      await settled()
      deepStrictEqual([next.limit, next.inFlight], [6, 2])
      ends.slice(2).forEach((end) => end())
      deepStrictEqual(
        await Promise.all(runs),
        [1, 2, 3, 4].map(() => E.right('ok'))
      )
      strictEqual(next.inFlight, 0)
    })

    it('a reload refused after its bulkhead was built leaves the old bulkhead as it was', () => {
      const clock = TestClock.make()
      const bulkheadOf = (maxConcurrent: number) => ({ bulkhead: { maxConcurrent, maxQueue: 0 } })
      const policies = Policies.make({ policies: { p: bulkheadOf(1) } }, { clock })
      const old = policies.get('p').bulkhead as Bulkhead.Bulkhead
      const hold = old.enter() as Bulkhead.Release
      // p is built with its new bulkhead, then q, which names a store and no redis client was given, is refused
      const refused = policies.reload({
        policies: {
          p: bulkheadOf(5),
          q: { rateLimit: { kind: 'gcra', rate: 1, per: '1s', burst: 1 }, store: { kind: 'redis', prefix: 'x:' } }
        }
      })
      ok(E.isLeft(refused))
      strictEqual(policies.get('p').bulkhead, old)
      deepStrictEqual([old.maxConcurrent, old.inFlight], [1, 1])
      strictEqual(old.enter(), undefined) // its own bound, not the refused document's 5
      hold()
      strictEqual(old.inFlight, 0)
    })

    it('a reload mid-outage does not refill a spent budget', () => {
      const clock = TestClock.make()
      const doc = (tokenRatio: number) => ({
        policies: {
          p: {
            retry: { constant: '100ms', maxRetries: 2 },
            budget: { kind: 'retryThrottle', maxTokens: 10, tokenRatio }
          }
        }
      })
      const policies = Policies.make(doc(0.1), { clock })
      const failure = { latency: 1, now: 0, retries: 1, error: '503', retrying: true }
      const spent = policies.get('p').budget as Budget.RetryThrottle
      for (let i = 0; i < 8; i++) spent.onFailure(failure)
      ok(E.isRight(policies.reload(doc(0.2))))
      const next = policies.get('p').budget as Budget.RetryThrottle
      ok(next !== spent)
      strictEqual(next.tokens, 2) // still spent, not a full 10
      strictEqual(next.onFailure(failure), false)
    })

    it('a reload mid-burst lets no new burst of a window limiter through', async () => {
      const clock = TestClock.make()
      for (const kind of ['fixedWindow', 'slidingWindow']) {
        const doc = (limit: number) => ({ policies: { p: { rateLimit: { kind, limit, window: '1s' } } } })
        const policies = Policies.make(doc(5), { clock })
        const take = () => (policies.get('p').rateLimiter as { take: () => boolean }).take()
        const takes = (n: number) => Array.from({ length: n }, take).filter(Boolean).length
        strictEqual(takes(5), 5)
        ok(E.isRight(policies.reload(doc(6))))
        ok(takes(6) === 1, kind) // 6 in the window at most, the 5 before the reload counted
        await clock.advance(1_000)
        ok(takes(10) === 6, kind)
        await clock.advance(1_000)
      }
    })
  })

  describe('watchFile', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'policies-'))
    afterAll(() => fs.rmSync(folder, { recursive: true, force: true }))
    /**
     * Lets the file system's promises settle: the polling is on the TestClock, the reads are real. No time limit of
     * its own (issue 33: a count of real 5 ms turns is a time limit), jest's timeout bounds it.
     */
    const settle = (until: () => boolean): Promise<void> => waitFor(until, { what: 'the watch to act' })
    let n = 0
    const write = (file: string, text: string, mtime: number) => {
      fs.writeFileSync(file, text)
      fs.utimesSync(file, new Date(mtime), new Date(mtime))
    }

    it('reloads on a change, seen on the clock; refuses a file that is not JSON or too big; stops', async () => {
      const file = path.join(folder, `policy-${++n}.json`)
      write(file, JSON.stringify({ policies: { p: { timeout: '1s' } } }), 1_000_000)
      const clock = TestClock.make()
      const { events, onEvent, tags } = collect()
      const policies = Policies.make(JSON.parse(fs.readFileSync(file, 'utf8')), { clock, onEvent })
      const stop = Policies.watchFile(policies, file, { every: 1_000, clock })
      write(file, JSON.stringify({ policies: { p: { timeout: '3s' } } }), 2_000_000)
      await clock.advance(999)
      await new Promise((resolve) => setTimeout(resolve, 20))
      strictEqual(policies.get('p').timeout, 1_000) // not looked at yet
      await clock.advance(1)
      await settle(() => events.length === 1)
      strictEqual(policies.get('p').timeout, 3_000)
      write(file, '{ "policies": ', 3_000_000)
      await clock.advance(1_000)
      await settle(() => events.length === 2)
      const rejected = events[1]
      ok(rejected._tag === 'ConfigRejected' && rejected.error.includes('not JSON'), JSON.stringify(rejected))
      strictEqual(policies.get('p').timeout, 3_000)
      write(file, JSON.stringify({ policies: { p: { timeout: '1s', x: 'y'.repeat(2 * 1024 * 1024) } } }), 4_000_000)
      await clock.advance(1_000)
      await settle(() => events.length === 3)
      ok(events[2]._tag === 'ConfigRejected' && /more than the 1048576/.test(events[2].error))
      stop()
      write(file, JSON.stringify({ policies: { p: { timeout: '9s' } } }), 5_000_000)
      await clock.advance(5_000)
      await new Promise((resolve) => setTimeout(resolve, 30))
      deepStrictEqual(tags(), ['ConfigReloaded', 'ConfigRejected', 'ConfigRejected'])
      strictEqual(clock.pending, 0)
    })
  })
})

describeWithRedis('Policies with a Redis store', (server) => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis({ host: server().host, port: server().port })
  })
  afterAll(() => redis.disconnect())

  it('two processes share the breaker through the store, and a reload keeps the fleet state', async () => {
    const doc = (threshold: number) => ({
      policies: {
        p: {
          breaker: { kind: 'consecutive', threshold, halfOpenAfter: { constant: '1m' } },
          // a store call waited for 5 s: under load, one past the default 100 ms would be decided locally
          store: { kind: 'redis', prefix: `t${Date.now()}:`, timeout: '5s' }
        }
      }
    })
    const document = doc(2)
    const [a, b] = [Policies.make(document, { redis }), Policies.make(document, { redis })]
    for (const policies of [a, b]) await (await (policies.get('p').breaker as Breaker.Breaker).enter())?.onFailure()
    strictEqual(await (a.get('p').breaker as Breaker.Breaker).enter(), undefined) // the fleet's two failures opened it
    a.reload({ policies: { p: { ...document.policies.p, breaker: { ...document.policies.p.breaker, threshold: 5 } } } })
    strictEqual(await (a.get('p').breaker as Breaker.Breaker).enter(), undefined)
    strictEqual(a.get('p').breaker?.state._tag, 'Open')
  })

  it('two processes share the throttle through the store', async () => {
    const document = {
      policies: { p: { throttle: {}, store: { kind: 'redis', prefix: `t${Date.now()}:`, timeout: '5s' } } }
    }
    const [a, b] = [Policies.make(document, { redis }), Policies.make(document, { redis })]
    const busy: TaskEither<{ readonly status: number }, string> = () => Promise.resolve(E.left({ status: 503 }))
    await a.run('p')(busy)()
    await b.run('p')(busy)()
    const throttle = a.get('p').throttle as RedisAdaptiveThrottle.RedisAdaptiveThrottle
    await throttle.refresh()
    deepStrictEqual([throttle.requests, throttle.accepts], [2, 0])
  })
})
