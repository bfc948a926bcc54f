import * as assert from 'assert'
import { getEventListeners } from 'events'
import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as TE from 'fp-ts/TaskEither'
import * as http from 'http'
import type { AddressInfo } from 'net'
import * as Breaker from '../src/Breaker'
import { hedging } from '../src/Hedging'
import { retrying, retryingWithContext, type AttemptContext } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { killLeftoverChildren, runFixture } from './support/child'
import { caught, deepStrictEqual } from './util'

afterAll(killLeftoverChildren)

/**
 * Checks that `TestClock.<method>` rejects a negative, NaN or infinite ms with a RangeError naming it; returns
 * the clock, for what the rejections must have left unchanged.
 */
const rejectsBadMs = async (method: 'sleep' | 'advance'): Promise<TestClock.TestClock> => {
  const clock = TestClock.make()
  for (const [ms, shown] of [
    [-1, '-1'],
    [NaN, 'NaN'],
    [Infinity, 'Infinity']
  ] as const) {
    const error = await caught(() => clock[method](ms))
    expect(error).toBeInstanceOf(RangeError)
    expect((error as RangeError).message).toBe(
      `TestClock.${method}: ms must be a finite number >= 0, received ${shown}`
    )
  }
  return clock
}

describe('TestClock', () => {
  describe('make', () => {
    it('should read start, 0 by default', () => {
      deepStrictEqual(TestClock.make().now(), 0)
      deepStrictEqual(TestClock.make(1_700_000_000_000).now(), 1_700_000_000_000)
      deepStrictEqual(TestClock.make(-50).now(), -50)
    })

    it('regression: should start a start of -0 at 0, so that no run on it reports an elapsed time of -0', () => {
      deepStrictEqual(TestClock.make(-0).now(), 0)
    })

    it('regression: should record a sleep of -0 as 0', async () => {
      const clock = TestClock.make()
      await clock.sleep(-0)
      deepStrictEqual(clock.sleeps, [0])
    })

    it('should start with no sleeps and no sleepers', () => {
      const clock = TestClock.make()
      deepStrictEqual(clock.sleeps, [])
      deepStrictEqual(clock.pending, 0)
    })

    it('should be a RangeError naming a start that is not finite', () => {
      expect(() => TestClock.make(NaN)).toThrow(RangeError)
      expect(() => TestClock.make(NaN)).toThrow('TestClock.make: start must be a finite number, received NaN')
      expect(() => TestClock.make(Infinity)).toThrow(/received Infinity/)
    })
  })

  describe('sleep', () => {
    it('should record the durations in order, without moving time', () => {
      const clock = TestClock.make(10)
      void clock.sleep(300)
      void clock.sleep(100)
      void clock.sleep(0)
      void clock.sleep(200)
      deepStrictEqual(clock.sleeps, [300, 100, 0, 200])
      deepStrictEqual(clock.now(), 10)
      deepStrictEqual(clock.pending, 3)
    })

    it('should resolve sleep(0) at once, without a sleeper', async () => {
      const clock = TestClock.make()
      await clock.sleep(0)
      deepStrictEqual(clock.pending, 0)
      deepStrictEqual(clock.sleeps, [0])
    })

    it('should not wake a sleeper before the clock reaches its wake-up time', async () => {
      const clock = TestClock.make()
      let woken = false
      void clock.sleep(100).then(() => {
        woken = true
      })
      await clock.advance(99)
      deepStrictEqual(woken, false)
      await clock.advance(1)
      deepStrictEqual(woken, true)
    })

    it('should resolve at once for an already-aborted signal, leaving no sleeper', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      controller.abort()
      await clock.sleep(1_000, controller.signal)
      deepStrictEqual(clock.pending, 0)
      deepStrictEqual(clock.now(), 0)
    })

    it('an abort should wake and remove the sleeper, without moving time', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const order: Array<string> = []
      void clock.sleep(100).then(() => order.push('other'))
      const slept = clock.sleep(1_000, controller.signal).then(() => order.push('aborted'))
      deepStrictEqual(clock.pending, 2)
      controller.abort()
      await slept
      deepStrictEqual(clock.pending, 1)
      deepStrictEqual(clock.now(), 0)
      await clock.runAll()
      deepStrictEqual(order, ['aborted', 'other'])
      deepStrictEqual(clock.now(), 100)
    })

    it('an abort after the wake-up should change nothing', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      void clock.sleep(10, controller.signal)
      void clock.sleep(20)
      await clock.advance(10)
      controller.abort()
      deepStrictEqual(clock.pending, 1)
    })

    it('should be a RangeError naming a negative, NaN or infinite ms', async () => {
      const clock = await rejectsBadMs('sleep')
      deepStrictEqual(clock.sleeps, [])
    })
  })

  describe('advance', () => {
    it('should wake the due sleepers one at a time in wake-up order, ties in the order they slept, each at its time', async () => {
      const clock = TestClock.make(1_000)
      const woken: Array<readonly [string, number]> = []
      const sleeper = (name: string, ms: number): void => {
        void clock.sleep(ms).then(() => woken.push([name, clock.now()]))
      }
      sleeper('c', 30)
      sleeper('a1', 10)
      sleeper('b', 20)
      sleeper('a2', 10)
      sleeper('d', 26)
      await clock.advance(25)
      deepStrictEqual(woken, [
        ['a1', 1_010],
        ['a2', 1_010],
        ['b', 1_020]
      ])
      deepStrictEqual(clock.now(), 1_025)
      deepStrictEqual(clock.pending, 2)
      await clock.advance(5)
      deepStrictEqual(woken.slice(3), [
        ['d', 1_026],
        ['c', 1_030]
      ])
    })

    it('should let each woken sleeper run before waking the next', async () => {
      const clock = TestClock.make()
      const log: Array<string> = []
      void clock
        .sleep(10)
        .then(() => log.push('first woke'))
        .then(() => Promise.resolve())
        .then(() => log.push('first ran on'))
      void clock.sleep(20).then(() => log.push('second woke'))
      await clock.advance(20)
      deepStrictEqual(log, ['first woke', 'first ran on', 'second woke'])
    })

    it('should wake again, within the same advance, a sleeper that goes back to sleep within the window', async () => {
      const clock = TestClock.make()
      const times: Array<number> = []
      const loop = async (): Promise<void> => {
        for (let i = 0; i < 3; i++) {
          await clock.sleep(10)
          times.push(clock.now())
        }
      }
      void loop()
      await clock.advance(25)
      deepStrictEqual(times, [10, 20])
      deepStrictEqual(clock.now(), 25)
      deepStrictEqual(clock.pending, 1)
      await clock.advance(5)
      deepStrictEqual(times, [10, 20, 30])
    })

    it('should leave time at exactly start + ms, with or without sleepers', async () => {
      const clock = TestClock.make(7)
      await clock.advance(100)
      deepStrictEqual(clock.now(), 107)
      void clock.sleep(10)
      await clock.advance(0.5)
      deepStrictEqual(clock.now(), 107.5)
      await clock.advance(0)
      deepStrictEqual(clock.now(), 107.5)
      deepStrictEqual(clock.pending, 1)
    })

    it('should let pending promise jobs settle first, so a run started just before sleeps in time', async () => {
      const clock = TestClock.make()
      const run = pipe(TE.left('boom'), retrying(Schedule.fromDelays([100]), { clock }))()
      await clock.advance(100)
      deepStrictEqual(clock.pending, 0)
      deepStrictEqual(await run, E.left('boom'))
    })

    it('should be a RangeError naming a negative, NaN or infinite ms', async () => {
      const clock = await rejectsBadMs('advance')
      deepStrictEqual(clock.now(), 0)
    })
  })

  describe('concurrent advance and runAll', () => {
    // Regression: each advance computed its target from the time it started with, so two concurrent
    // advance(100) both aimed at 100 and the clock ended at 100 instead of 200.
    it('Promise.all([advance(100), advance(100)]) should end at 200 (concurrent advances lost time)', async () => {
      const clock = TestClock.make()
      await Promise.all([clock.advance(100), clock.advance(100)])
      deepStrictEqual(clock.now(), 200)
    })

    // Regression: with sleepers to wake, the advance that finished last set the time back to its own target.
    it('time should never go back: concurrent advance(100) and advance(50), with sleepers, end at 150', async () => {
      const clock = TestClock.make()
      const seen: Array<number> = []
      for (const ms of [30, 60, 90, 120, 150]) void clock.sleep(ms).then(() => seen.push(clock.now()))
      await Promise.all([clock.advance(100), clock.advance(50)])
      // every sleeper woke at its time, so the clock read 30, 60, ..., 150 in turn: it never went back
      deepStrictEqual(seen, [30, 60, 90, 120, 150])
      deepStrictEqual(clock.now(), 150)
    })

    it('should take turns in call order: runAll after advance wakes the rest, advance after runAll adds to it', async () => {
      const clock = TestClock.make()
      const woken: Array<readonly [number, number]> = []
      for (const ms of [10, 40, 70]) void clock.sleep(ms).then(() => woken.push([ms, clock.now()]))
      await Promise.all([clock.advance(20), clock.runAll(), clock.advance(5)])
      deepStrictEqual(woken, [
        [10, 10],
        [40, 40],
        [70, 70]
      ])
      deepStrictEqual(clock.now(), 75)
    })

    it('a call that rejects should not stop the ones queued after it', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const run = pipe(
        TE.left('down'),
        retrying(pipe(Schedule.forever, Schedule.intersect(Schedule.constant(1))), { clock, signal: controller.signal })
      )()
      const [tooMany, after] = await Promise.allSettled([clock.runAll(3), clock.advance(10)])
      deepStrictEqual(tooMany.status, 'rejected')
      deepStrictEqual(after.status, 'fulfilled')
      deepStrictEqual(clock.now(), 13)
      controller.abort()
      deepStrictEqual(await run, E.left('down'))
    })

    it('any set of concurrent advances should end at their sum, waking every due sleeper in order at its time', async () => {
      const duration = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true }))
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: -1_000, max: 1_000 }),
          fc.array(duration, { minLength: 1, maxLength: 8 }),
          fc.array(duration, { maxLength: 12 }),
          async (start, advances, sleeps) => {
            const clock = TestClock.make(start)
            const woken: Array<readonly [number, number]> = []
            sleeps.forEach((ms, i) => void clock.sleep(ms).then(() => woken.push([i, clock.now()])))
            await Promise.all(advances.map((ms) => clock.advance(ms)))
            // each advance starts where the previous one left the clock: the same sums, in the same order
            const end = advances.reduce((t, ms) => t + ms, start)
            deepStrictEqual(clock.now(), end)
            // sleep(0) resolves at once; the others wake at their time, by wake-up time then in call order
            const zeros = sleeps.flatMap((ms, i) => (ms === 0 ? [[i, start] as const] : []))
            const due = sleeps
              .flatMap((ms, i) => (ms > 0 && start + ms <= end ? [[i, start + ms] as const] : []))
              .sort(([i, a], [j, b]) => a - b || i - j)
            deepStrictEqual(woken, [...zeros, ...due])
            deepStrictEqual(clock.pending, sleeps.filter((ms) => ms > 0 && start + ms > end).length)
          }
        ),
        { numRuns: 200 }
      )
    })
  })

  describe('sleeps on one AbortSignal', () => {
    // Regression: each sleep added its own 'abort' listener, so more than ten runs sharing one AbortSignal made
    // Node print "MaxListenersExceededWarning: Possible EventTarget memory leak detected".
    it('10,000 concurrent sleeps should share one abort listener, all end on abort, and leave no listener', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      let ended = 0
      const sleeps = Array.from({ length: 10_000 }, () => clock.sleep(60_000, controller.signal).then(() => ended++))
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
      deepStrictEqual(clock.pending, 10_000)
      controller.abort()
      await Promise.all(sleeps)
      deepStrictEqual([ended, clock.pending, clock.now()], [10_000, 0, 0])
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    it('sleeps that wake normally should leave no listener on the signal', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const sleeps = Array.from({ length: 50 }, (_, i) => clock.sleep(i + 1, controller.signal))
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
      await clock.advance(25)
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
      await clock.runAll()
      await Promise.all(sleeps)
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    // The warning itself, seen where Node emits it: the test runner's process object does not receive it.
    it('10,000 concurrent sleeps on one signal should emit no process warning (MaxListenersExceededWarning)', async () => {
      const exited = await runFixture('shared-signal.ts', ['test', '10000'])
      deepStrictEqual([exited.code, exited.stderr], [0, ''])
      assert.deepStrictEqual(JSON.parse(exited.stdout), {
        warnings: [],
        ended: 10_000,
        listenersWhileAsleep: 1,
        listenersAfter: 0
      })
    }, 30_000)
  })

  describe('wakes', () => {
    it('should let woken work that waits on process.nextTick or setImmediate go back to sleep before the next wake', async () => {
      const clock = TestClock.make()
      const times: Array<readonly [string, number]> = []
      // Each loop hops through a tick or an immediate between its sleeps: the clock must not move on meanwhile.
      const loop = async (name: string, period: number, hop: () => Promise<void>): Promise<void> => {
        for (let i = 0; i < 3; i++) {
          await clock.sleep(period)
          times.push([name, clock.now()])
          await hop()
        }
      }
      const tick = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve))
      const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
      const done = Promise.all([loop('tick', 30, tick), loop('immediate', 20, immediate)])
      await clock.runAll()
      await done
      deepStrictEqual(times, [
        ['immediate', 20],
        ['tick', 30],
        ['immediate', 40],
        ['tick', 60],
        ['immediate', 60],
        ['tick', 90]
      ])
    })

    it('should wake many runs that go straight back to sleep in wake-up order, each at its time', async () => {
      const clock = TestClock.make()
      const run = (delays: ReadonlyArray<number>) =>
        pipe(
          TE.left('down'),
          retrying(Schedule.fromDelays(delays), {
            clock,
            onRetry: ({ delay: d }) => {
              log.push([d, clock.now()])
            }
          })
        )()
      const log: Array<readonly [number, number]> = []
      const runs = Promise.all([run([10, 10, 10]), run([15, 15]), run([7, 7, 7, 7])])
      await clock.runAll()
      await runs
      deepStrictEqual(clock.now(), 30)
      // Each retry is decided at the time its run woke: 0 for the first, then the end of the previous sleep.
      deepStrictEqual(log, [
        [10, 0],
        [15, 0],
        [7, 0],
        [7, 7],
        [10, 10],
        [7, 14],
        [15, 15],
        [10, 20],
        [7, 21]
      ])
    })
  })

  describe('runAll', () => {
    it('should advance until no sleeper is left, to the last wake-up time', async () => {
      const clock = TestClock.make(100)
      const times: Array<number> = []
      const loop = async (): Promise<void> => {
        for (const ms of [50, 10, 40]) {
          await clock.sleep(ms)
          times.push(clock.now())
        }
      }
      const done = loop()
      void clock.sleep(70)
      await clock.runAll()
      await done
      deepStrictEqual(times, [150, 160, 200])
      deepStrictEqual(clock.now(), 200)
      deepStrictEqual(clock.pending, 0)
      deepStrictEqual(clock.sleeps, [50, 70, 10, 40])
    })

    it('should do nothing when no sleeper is waiting', async () => {
      const clock = TestClock.make(3)
      await clock.runAll()
      deepStrictEqual(clock.now(), 3)
    })

    it('should throw a clear Error when it wakes more than maxWakes sleepers', async () => {
      const clock = TestClock.make()
      const controller = new AbortController()
      const run = pipe(
        TE.left('down'),
        retrying(pipe(Schedule.forever, Schedule.intersect(Schedule.constant(1))), { clock, signal: controller.signal })
      )()
      const error = await caught(() => clock.runAll(5))
      expect(error).toBeInstanceOf(Error)
      deepStrictEqual(
        (error as Error).message,
        'TestClock.runAll: woke 5 sleepers and more are waiting; does a schedule never stop?'
      )
      deepStrictEqual(clock.now(), 5)
      deepStrictEqual(clock.sleeps.length, 6)
      controller.abort()
      deepStrictEqual(await run, E.left('down'))
    })

    it('should wake exactly maxWakes sleepers without throwing', async () => {
      const clock = TestClock.make()
      const run = pipe(TE.left('down'), retrying(Schedule.fromDelays([1, 1, 1]), { clock }))()
      await clock.runAll(3)
      deepStrictEqual(await run, E.left('down'))
    })

    it('should be a RangeError naming a maxWakes that is not a whole number >= 0', async () => {
      const clock = TestClock.make()
      for (const [n, shown] of [
        [-1, '-1'],
        [1.5, '1.5'],
        [NaN, 'NaN']
      ] as const) {
        const error = await caught(() => clock.runAll(n))
        expect(error).toBeInstanceOf(RangeError)
        expect((error as RangeError).message).toBe(
          `TestClock.runAll: maxWakes must be a whole number >= 0, received ${shown}`
        )
      }
    })
  })

  describe('pending', () => {
    it('should count the sleepers still waiting', async () => {
      const clock = TestClock.make()
      void clock.sleep(10)
      void clock.sleep(20)
      void clock.sleep(30)
      deepStrictEqual(clock.pending, 3)
      await clock.advance(10)
      deepStrictEqual(clock.pending, 2)
      await clock.advance(15)
      deepStrictEqual(clock.pending, 1)
      await clock.runAll()
      deepStrictEqual(clock.pending, 0)
    })
  })

  describe('kinds', () => {
    it('should record every sleep with its kind and list the backoffs and the user’s own as sleeps', async () => {
      const clock = TestClock.make()
      const slept = Promise.all([
        clock.sleep(2_000, undefined, 'timeout'),
        clock.sleep(100, undefined, 'backoff'),
        clock.sleep(50),
        clock.sleep(10, undefined, 'hedge')
      ])
      deepStrictEqual(clock.pendingTimers, [
        { kind: 'hedge', wake: 10 },
        { kind: 'user', wake: 50 },
        { kind: 'backoff', wake: 100 },
        { kind: 'timeout', wake: 2_000 }
      ])
      await clock.runAll()
      await slept
      deepStrictEqual(clock.sleeps, [100, 50])
      deepStrictEqual([clock.sleepsOf('timeout'), clock.sleepsOf('hedge'), clock.sleepsOf('due')], [[2_000], [10], []])
      deepStrictEqual(clock.timers[0], { kind: 'timeout', ms: 2_000, at: 0 })
    })

    it('should refuse a kind that is not one, naming it', () => {
      const clock = TestClock.make()
      expect(() => clock.sleep(1, undefined, 'later' as never)).toThrow(
        new TypeError('TestClock.sleep: kind must be a SleepKind, received "later"')
      )
    })

    // 'halfOpen' was a kind nothing ever slept with: a breaker compares halfOpenAt with now(), it never waits
    it("should refuse 'halfOpen', no longer a kind, in sleep and in next", async () => {
      const clock = TestClock.make()
      expect(() => clock.sleep(1, undefined, 'halfOpen' as never)).toThrow(
        new TypeError('TestClock.sleep: kind must be a SleepKind, received "halfOpen"')
      )
      await expect(clock.next('halfOpen' as never)).rejects.toThrow(
        new TypeError('TestClock.next: kind must be a SleepKind, received "halfOpen"')
      )
    })
  })

  describe('next', () => {
    it('should move to the next timer of a kind, waking the earlier ones on the way, and no further', async () => {
      const clock = TestClock.make()
      const woken: Array<string> = []
      const sleep = (ms: number, kind: 'timeout' | 'backoff') =>
        void clock.sleep(ms, undefined, kind).then(() => woken.push(`${kind} ${clock.now()}`))
      sleep(2_000, 'timeout')
      sleep(100, 'timeout')
      sleep(300, 'backoff')
      await clock.next('backoff')
      deepStrictEqual([woken, clock.now()], [['timeout 100', 'backoff 300'], 300])
      await clock.next()
      deepStrictEqual([woken.length, clock.now()], [3, 2_000])
    })

    it('should wait on the real event loop for a timer of the kind to be asked (work on real I/O)', async () => {
      const clock = TestClock.make()
      // a timer asked 5 real ms from now, as after a response from a server
      setTimeout(() => void clock.sleep(700, undefined, 'backoff'), 5)
      await clock.next('backoff')
      deepStrictEqual(clock.now(), 700)
    })

    it('should reject, naming the kind and what is pending, when none comes within the bound', async () => {
      const clock = TestClock.make()
      void clock.sleep(5, undefined, 'timeout')
      await expect(clock.next('backoff', { within: 20 })).rejects.toThrow(
        'TestClock.next: no backoff became pending within 20 ms of real time (pending: timeout at 5)'
      )
    })
  })

  describe('run', () => {
    // A service call: each attempt is hedged (a second replica after 50 ms), under a 2 s timeout, behind a breaker.
    // Replicas answer as `script` says: a number of ms then 'ok', or 'hang'.
    const service = (
      script: ReadonlyArray<'hang' | number>,
      breaker: (clock: TestClock.TestClock) => Breaker.Breaker
    ) => {
      let calls = 0
      return (clock: TestClock.TestClock) => {
        const replica = (signal: AbortSignal): TE.TaskEither<string, string> => {
          const step = script[calls++] ?? 'hang'
          return () =>
            step === 'hang'
              ? new Promise((resolve) => signal.addEventListener('abort', () => resolve(E.left('aborted'))))
              : clock.sleep(step, signal).then(() => (signal.aborted ? E.left('aborted') : E.right(`ok after ${step}`)))
        }
        const hedged = ({ signal }: AttemptContext): TE.TaskEither<string, string> =>
          hedging(pipe(Schedule.constant(50), Schedule.intersect(Schedule.recurs(1))), { clock, signal })(
            ({ signal: attemptSignal }) => replica(attemptSignal)
          )
        const circuit = breaker(clock)
        const guarded = (context: AttemptContext) => Breaker.protect(circuit, () => 'open')(hedged(context))
        const policy = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3)))
        return pipe(
          guarded,
          retryingWithContext(policy, { clock, breaker: circuit, attemptTimeout: 2_000, onTimeout: () => 'timeout' })
        )
      }
    }
    const fragile = (clock: TestClock.TestClock) =>
      Breaker.consecutive({ threshold: 5, halfOpenAfter: Schedule.constant(30_000), clock })

    it('should run a program with a timeout, hedging and a breaker to its end in three lines', async () => {
      const { result, clock } = await TestClock.run(service(['hang', 'hang', 'hang', 30], fragile))
      deepStrictEqual(result, E.right('ok after 30'))
      deepStrictEqual(
        [clock.sleepsOf('backoff'), clock.sleepsOf('timeout'), clock.sleepsOf('hedge'), clock.now()],
        [[100], [2_000, 2_000], [50, 50], 2_180]
      )
    })

    it('should reject with the program’s rejection', async () => {
      const boom = new Error('boom')
      await expect(TestClock.run((clock) => () => clock.sleep(10).then(() => Promise.reject(boom)))).rejects.toBe(boom)
    })

    it('should reject, naming the wait, when the program waits on nothing the clock can move', async () => {
      await expect(TestClock.run(() => () => new Promise<never>(() => undefined), { within: 20 })).rejects.toThrow(
        'TestClock.run: the program waited 20 ms of real time with no timer pending on its clock'
      )
    })

    it('with quiet, should give real I/O time to answer before firing a pending timeout', async () => {
      // issue 33: `quiet: 50` lost the race under load (a loaded machine's first fetch alone takes longer), and the
      // timeout fired. The quiet time ends when the program settles, so a long one costs nothing here: the test
      // waits as long as the answer takes, and a `run` that ignored `quiet` still fires the timeout at once.
      const server = http.createServer((_, res) => void setTimeout(() => res.end('pong'), 5))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as AddressInfo
      try {
        const ping = ({ signal }: AttemptContext): TE.TaskEither<string, string> =>
          TE.tryCatch(
            () => fetch(`http://127.0.0.1:${port}/`, { signal }).then((r) => r.text()),
            () => 'failed'
          )
        const { result, clock } = await TestClock.run(
          (clock) =>
            pipe(
              ping,
              retryingWithContext(Schedule.recurs(1), { clock, attemptTimeout: 1_000, onTimeout: () => 'timeout' })
            ),
          { quiet: 4_000 }
        )
        deepStrictEqual([result, clock.now(), clock.sleepsOf('timeout')], [E.right('pong'), 0, [1_000]])
      } finally {
        server.closeAllConnections()
        server.close()
      }
    })

    it('should refuse a program that is not a function, or options out of range', async () => {
      await expect(TestClock.run(1 as never)).rejects.toThrow(TypeError)
      await expect(TestClock.run(() => () => Promise.resolve(1), { quiet: -1 })).rejects.toThrow(RangeError)
    })
  })
})
