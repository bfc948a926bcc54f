import * as FakeTimers from '@sinonjs/fake-timers'
import * as Clock from '../src/Clock'
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

describe('Clock', () => {
  describe('live.now', () => {
    it('should be close to Date.now()', () => {
      expect(Math.abs(Clock.live.now() - Date.now())).toBeLessThan(100)
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
      const removeSpy = jest.spyOn(controller.signal, 'removeEventListener')
      const started = Date.now()
      const slept = Clock.live.sleep(60_000, controller.signal)
      deepStrictEqual(timers.live(), 1)
      controller.abort()
      await slept
      expect(Date.now() - started).toBeLessThan(1_000)
      deepStrictEqual(timers.live(), 0)
      expect(removeSpy).toHaveBeenCalledWith('abort', expect.any(Function))
    })

    it('should remove its abort listener when it ends normally', async () => {
      const controller = new AbortController()
      const addSpy = jest.spyOn(controller.signal, 'addEventListener')
      const removeSpy = jest.spyOn(controller.signal, 'removeEventListener')
      await Clock.live.sleep(1, controller.signal)
      deepStrictEqual(addSpy.mock.calls.length, 1)
      deepStrictEqual(removeSpy.mock.calls.length, 1)
      expect(removeSpy.mock.calls[0][1]).toBe(addSpy.mock.calls[0][1])
    })

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
      let clock: ReturnType<ReturnType<typeof FakeTimers.withGlobal>["install"]>

      beforeEach(() => {
        clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
      })

      afterEach(() => {
        clock.uninstall()
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
})
