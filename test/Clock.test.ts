import * as FakeTimers from '@sinonjs/fake-timers'
import * as assert from 'assert'
import { getEventListeners } from 'events'
import * as Clock from '../src/Clock'
import { killLeftoverChildren, runFixture } from './support/child'
import { caught, deepStrictEqual, trackTimers } from './util'

/** Node's and browsers' largest timer delay: a longer one fires after 1 ms. */
const MAX_TIMER = 2 ** 31 - 1

/** Tracks whether a promise has settled. */
const track = (p: Promise<void>): { readonly done: () => boolean } => {
  let done = false
  void p.then(() => {
    done = true
  })
  return { done: () => done }
}

afterEach(() => {
  jest.restoreAllMocks()
})

afterAll(killLeftoverChildren)

describe('Clock', () => {
  describe('live.now', () => {
    it('should be close to Date.now()', () => {
      // Bracketed by two readings of Date.now() (issue 33): a pause of a loaded machine between the reads widens the
      // bracket, it cannot fail the test. The slack is for how far the monotonic clock (anchored at the process's
      // start) may have drifted from the wall clock since, and for Date.now()'s whole milliseconds.
      const before = Date.now()
      const now = Clock.live.now()
      const after = Date.now()
      expect(now).toBeGreaterThanOrEqual(before - 100)
      expect(now).toBeLessThanOrEqual(after + 100)
    })

    it('should be monotonic', () => {
      const readings = Array.from({ length: 10_000 }, () => Clock.live.now())
      const backwards = readings.filter((t, i) => i > 0 && t < readings[i - 1])
      deepStrictEqual(backwards, [])
    })
  })

  describe('live.sleep', () => {
    it('should resolve after at least ms milliseconds by Clock.live.now()', async () => {
      const start = Clock.live.now()
      await Clock.live.sleep(5)
      expect(Clock.live.now() - start).toBeGreaterThanOrEqual(5)
    })

    it('should resolve at once, with no timer, for 0 ms or an already-aborted signal', async () => {
      const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout')
      const controller = new AbortController()
      controller.abort()
      const aborted = track(Clock.live.sleep(60_000, controller.signal))
      const zero = track(Clock.live.sleep(0))
      await Promise.resolve()
      await Promise.resolve()
      deepStrictEqual(aborted.done(), true)
      deepStrictEqual(zero.done(), true)
      expect(setTimeoutSpy).not.toHaveBeenCalled()
    })

    it('should end at once on abort, clearing its timer and its abort listener', async () => {
      const timers = trackTimers()
      const controller = new AbortController()
      const slept = track(Clock.live.sleep(60_000, controller.signal))
      deepStrictEqual(timers.live(), 1)
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
      controller.abort()
      // ended by the abort itself, in promise jobs, before any timer could fire
      await Promise.resolve()
      deepStrictEqual(slept.done(), true)
      deepStrictEqual(timers.live(), 0)
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    it('should remove its abort listener when it ends normally', async () => {
      const controller = new AbortController()
      const slept = Clock.live.sleep(1, controller.signal)
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
      await slept
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    // Regression: each sleep added its own 'abort' listener, so more than ten runs sharing one AbortSignal made
    // Node print "MaxListenersExceededWarning: Possible EventTarget memory leak detected".
    it('10,000 concurrent sleeps on one signal should share one abort listener, all end on abort, and leave none', async () => {
      const controller = new AbortController()
      const sleeps = Array.from({ length: 10_000 }, () => track(Clock.live.sleep(60_000, controller.signal)))
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
      controller.abort()
      await Promise.resolve()
      deepStrictEqual(sleeps.filter((s) => !s.done()).length, 0)
      deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
    })

    // The warning itself, seen where Node emits it: the test runner's process object does not receive it.
    it('10,000 concurrent sleeps on one signal should emit no process warning (MaxListenersExceededWarning)', async () => {
      const exited = await runFixture('shared-signal.ts', ['live', '10000'])
      deepStrictEqual([exited.code, exited.stderr], [0, ''])
      deepStrictEqual(JSON.parse(exited.stdout) as unknown, {
        warnings: [],
        ended: 10_000,
        listenersWhileAsleep: 1,
        listenersAfter: 0
      })
    }, 30_000)

    it('should be a RangeError naming a negative, NaN or infinite ms', async () => {
      for (const [ms, shown] of [
        [-1, '-1'],
        [NaN, 'NaN'],
        [Infinity, 'Infinity'],
        [-Infinity, '-Infinity']
      ] as const) {
        const error = await caught(() => Clock.live.sleep(ms))
        expect(error).toBeInstanceOf(RangeError)
        expect((error as RangeError).message).toMatch(/^Clock\.sleep: ms must be/)
        expect((error as RangeError).message).toContain(`received ${shown}`)
      }
    })

    describe('with fake timers', () => {
      let clock: ReturnType<ReturnType<typeof FakeTimers.withGlobal>['install']>

      beforeEach(() => {
        clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
      })

      afterEach(() => {
        // Spies first: one made while the fake timers were installed would otherwise be restored, by the outer
        // afterEach, to the fake setTimeout, leaving later tests with timers that never fire.
        jest.restoreAllMocks()
        clock.uninstall()
      })

      // Issue 33: on real timers, 1 ms and 50 ms apart; a loaded machine's first timer fires late enough to find both
      // due (it wakes whatever is), and the first sleep then left no listener behind for the second.
      it('sleeps on one signal that end one by one should each leave, the last removing the listener', async () => {
        const controller = new AbortController()
        const first = track(Clock.live.sleep(1, controller.signal))
        const second = track(Clock.live.sleep(50, controller.signal))
        deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
        await clock.tickAsync(1)
        deepStrictEqual([first.done(), second.done()], [true, false])
        deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 1)
        await clock.tickAsync(49)
        deepStrictEqual(second.done(), true)
        deepStrictEqual(getEventListeners(controller.signal, 'abort').length, 0)
        // the signal is free to be used again, and an abort now reaches a new sleep
        const third = track(Clock.live.sleep(60_000, controller.signal))
        controller.abort()
        await Promise.resolve()
        deepStrictEqual(third.done(), true)
      })

      it('should not wake early from a sleep longer than 2^31 - 1 ms: no timer is asked for more', async () => {
        const delays: Array<number> = []
        const fakeSetTimeout = globalThis.setTimeout
        jest.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms: number) => {
          delays.push(ms)
          return fakeSetTimeout(f, ms)
        }) as typeof setTimeout)
        const slept = track(Clock.live.sleep(2 ** 31 + 5_000))
        // checked first: a timer of more than 2^31 - 1 ms would fire after 1 ms
        expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER)
        await clock.tickAsync(1)
        deepStrictEqual(slept.done(), false)
        await clock.tickAsync(MAX_TIMER - 1) // the first piece fires and is re-armed for the rest
        deepStrictEqual(slept.done(), false)
        await clock.tickAsync(5_000)
        deepStrictEqual(slept.done(), false)
        await clock.tickAsync(1)
        deepStrictEqual(slept.done(), true)
        expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER)
        deepStrictEqual(delays, [MAX_TIMER, 5_001])
      })

      // Issue 18: a Node timer per sleep weighed about 200 bytes of every run waiting out its backoff.
      it('1,000 concurrent sleeps should share one timer, wake in deadline order, and leave no timer', async () => {
        const timers = trackTimers()
        const controller = new AbortController()
        const woke: Array<number> = []
        // armed latest deadline first, so that each new sleep is due before every earlier one
        const sleeps = Array.from({ length: 1_000 }, (_, i) =>
          Clock.live.sleep(1_000 - i, i === 500 ? controller.signal : undefined).then(() => woke.push(1_000 - i))
        )
        deepStrictEqual(timers.live(), 1)
        controller.abort()
        await clock.tickAsync(1_000)
        await Promise.all(sleeps)
        const rest = Array.from({ length: 1_000 }, (_, i) => i + 1).filter((ms) => ms !== 500)
        deepStrictEqual(woke, [500, ...rest])
        deepStrictEqual(timers.live(), 0)
      })

      it('should top up a timer that fires before the deadline by now()', async () => {
        const fakeNow = performance.now.bind(performance)
        let lag = 0
        jest.spyOn(performance, 'now').mockImplementation(() => fakeNow() - lag)
        const slept = track(Clock.live.sleep(10))
        // from here on, the monotonic clock runs 3 ms behind the timers
        lag = 3
        await clock.tickAsync(10)
        deepStrictEqual(slept.done(), false)
        await clock.tickAsync(2)
        deepStrictEqual(slept.done(), false)
        await clock.tickAsync(1)
        deepStrictEqual(slept.done(), true)
      })

      it('should re-arm for a fraction of a millisecond left', async () => {
        const fakeNow = performance.now.bind(performance)
        let lag = 0
        jest.spyOn(performance, 'now').mockImplementation(() => fakeNow() - lag)
        const slept = track(Clock.live.sleep(10))
        lag = 0.25
        await clock.tickAsync(10)
        deepStrictEqual(slept.done(), false)
        await clock.tickAsync(1)
        deepStrictEqual(slept.done(), true)
      })
    })
  })
  describe('make', () => {
    it('should be a clock of real time, as live', async () => {
      for (const clock of [Clock.make(), Clock.make({}), Clock.make({ unref: false }), Clock.make({ unref: true })]) {
        // the same monotonic clock as live: between two of its readings, however long the machine paused between them
        const before = Clock.live.now()
        const now = clock.now()
        expect([before <= now, now <= Clock.live.now()]).toEqual([true, true])
        const start = clock.now()
        await clock.sleep(2)
        expect(clock.now() - start).toBeGreaterThanOrEqual(2)
      }
    })

    it('should be a TypeError naming options or unref that are not what they should be', () => {
      for (const [options, message] of [
        [null, 'Clock.make: options must be an object or undefined, received null'],
        [true, 'Clock.make: options must be an object or undefined, received true'],
        [{ unref: 'yes' }, 'Clock.make: options.unref must be a boolean or undefined, received "yes"'],
        [{ unref: 1 }, 'Clock.make: options.unref must be a boolean or undefined, received 1']
      ] as const) {
        assert.throws(
          () => Clock.make(options as unknown as Clock.ClockOptions),
          (e: unknown) => e instanceof TypeError && e.message === message
        )
      }
    })

    it('sleep should keep its RangeError for a bad ms', async () => {
      const error = await caught(() => Clock.make({ unref: true }).sleep(-1))
      expect(error).toBeInstanceOf(RangeError)
      expect((error as RangeError).message).toBe('Clock.sleep: ms must be a finite number >= 0, received -1')
    })

    it('unref: true should unref every timer of a sleep, re-armed ones included; live and unref: false none', async () => {
      const clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
      try {
        const fakeSetTimeout = globalThis.setTimeout
        const timers: Array<{ readonly hasRef: () => boolean }> = []
        jest.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms: number) => {
          const timer = fakeSetTimeout(f, ms)
          timers.push(timer)
          return timer
        }) as typeof setTimeout)
        const refs = async (c: Clock.Clock): Promise<ReadonlyArray<boolean>> => {
          timers.length = 0
          // longer than one timer can wait: a first timer, then a re-armed one
          const slept = track(c.sleep(2 ** 31 + 5_000))
          await clock.tickAsync(2 ** 31 + 5_000)
          deepStrictEqual(slept.done(), true)
          return timers.map((t) => t.hasRef())
        }
        deepStrictEqual(await refs(Clock.make({ unref: true })), [false, false])
        deepStrictEqual(await refs(Clock.make({ unref: false })), [true, true])
        deepStrictEqual(await refs(Clock.live), [true, true])
      } finally {
        jest.restoreAllMocks()
        clock.uninstall()
      }
    })

    // p-retry's `unref`, cockatiel#11: a pending retry sleep should not keep the process alive when asked not to.
    it('unref: true: a pending sleep (10 minutes) should not keep a process alive, which exits by itself', async () => {
      const exited = await runFixture('unref-sleep.ts', ['unref', String(10 * 60_000)])
      deepStrictEqual(exited, { code: 0, signal: null, stdout: 'sleeping\n', stderr: '' })
    }, 30_000)

    it('unref: false (the default): a pending sleep should keep the process alive until it ends', async () => {
      const exited = await runFixture('unref-sleep.ts', ['ref', '50'])
      deepStrictEqual([exited.code, exited.signal, exited.stderr], [0, null, ''])
      const [first, second, ...rest] = exited.stdout.split('\n')
      deepStrictEqual([first, rest], ['sleeping', ['']])
      const slept = /^woke after (\d+(?:\.\d+)?) ms$/.exec(second)
      assert.ok(slept !== null, exited.stdout)
      expect(Number(slept[1])).toBeGreaterThanOrEqual(50)
    }, 30_000)
  })
})
