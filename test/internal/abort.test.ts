import * as assert from 'assert'
import * as fc from 'fast-check'
import { getEventListeners } from 'events'
import { onAbort, subscribe, unsubscribe, type Waiter } from '../../src/internal/abort'
import { deepStrictEqual } from '../util'

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length

describe('internal/abort', () => {
  describe('onAbort', () => {
    it('should add one listener per signal, however many callbacks, and call each once on abort, in order', () => {
      const controller = new AbortController()
      const calls: Array<number> = []
      for (let i = 0; i < 100; i++) onAbort(controller.signal, () => calls.push(i))
      deepStrictEqual(listeners(controller.signal), 1)
      controller.abort()
      deepStrictEqual(
        calls,
        Array.from({ length: 100 }, (_, i) => i)
      )
      deepStrictEqual(listeners(controller.signal), 0)
    })

    // Regression: one listener per sleep made Node warn (MaxListenersExceededWarning) past ten sleeps on a signal.
    it('10,000 callbacks on one signal should share one listener, none left once all have unsubscribed', () => {
      const controller = new AbortController()
      const unsubscribes = Array.from({ length: 10_000 }, () => onAbort(controller.signal, () => assert.fail('called')))
      deepStrictEqual(listeners(controller.signal), 1)
      unsubscribes.forEach((unsubscribe) => unsubscribe())
      deepStrictEqual(listeners(controller.signal), 0)
      controller.abort()
    })

    it('should keep signals apart', () => {
      const a = new AbortController()
      const b = new AbortController()
      const calls: Array<string> = []
      onAbort(a.signal, () => calls.push('a'))
      onAbort(b.signal, () => calls.push('b'))
      a.abort()
      deepStrictEqual(calls, ['a'])
      deepStrictEqual([listeners(a.signal), listeners(b.signal)], [0, 1])
      b.abort()
      deepStrictEqual(calls, ['a', 'b'])
    })

    it('unsubscribing should remove only that callback, and the listener with the last one; twice is a no-op', () => {
      const controller = new AbortController()
      const calls: Array<string> = []
      const first = onAbort(controller.signal, () => calls.push('first'))
      const second = onAbort(controller.signal, () => calls.push('second'))
      first()
      first()
      deepStrictEqual(listeners(controller.signal), 1)
      second()
      deepStrictEqual(listeners(controller.signal), 0)
      // a new callback after that adds the listener again
      onAbort(controller.signal, () => calls.push('third'))
      deepStrictEqual(listeners(controller.signal), 1)
      controller.abort()
      deepStrictEqual(calls, ['third'])
    })

    it('one function registered twice should be two registrations', () => {
      const controller = new AbortController()
      let calls = 0
      const callback = (): void => {
        calls++
      }
      const once = onAbort(controller.signal, callback)
      onAbort(controller.signal, callback)
      once()
      controller.abort()
      deepStrictEqual(calls, 1)
    })

    it('should not call, nor register, a callback on a signal that has already aborted', () => {
      const controller = new AbortController()
      controller.abort()
      let called = false
      const unsubscribe = onAbort(controller.signal, () => {
        called = true
      })
      deepStrictEqual(listeners(controller.signal), 0)
      unsubscribe()
      deepStrictEqual(called, false)
    })

    it('unsubscribing after the abort should be a no-op, and the signal should hold nothing', () => {
      const controller = new AbortController()
      const unsubscribe = onAbort(controller.signal, () => undefined)
      controller.abort()
      unsubscribe()
      deepStrictEqual(listeners(controller.signal), 0)
    })

    it('a callback may unsubscribe itself or one not yet called, which is then skipped, as with listeners', () => {
      const controller = new AbortController()
      const calls: Array<string> = []
      const self: () => void = onAbort(controller.signal, () => {
        calls.push('self')
        self()
        later()
      })
      const later = onAbort(controller.signal, () => calls.push('later'))
      onAbort(controller.signal, () => calls.push('last'))
      controller.abort()
      deepStrictEqual(calls, ['self', 'last'])
      deepStrictEqual(listeners(controller.signal), 0)
    })

    it('every callback should run even if some throw; the listener throws the error after, or an AggregateError', () => {
      for (const throwers of [1, 2]) {
        const controller = new AbortController()
        const calls: Array<number> = []
        for (let i = 0; i < 4; i++) {
          onAbort(controller.signal, () => {
            calls.push(i)
            if (i < throwers) throw new Error(`callback ${i}`)
          })
        }
        // Called directly: an exception thrown by a listener during a real abort is reported as an uncaught exception.
        // The listener is an EventListener object (no closure per signal).
        const [listener] = getEventListeners(controller.signal, 'abort') as unknown as ReadonlyArray<{ handleEvent: (event: Event) => void }>
        assert.throws(() => listener.handleEvent(new Event('abort')), (e: unknown) =>
          throwers === 1
            ? e instanceof Error && e.message === 'callback 0'
            : e instanceof AggregateError && e.errors.length === 2
        )
        deepStrictEqual(calls, [0, 1, 2, 3])
      }
    })

    it('any interleaving of subscribes and unsubscribes should leave one listener exactly while some are subscribed', () => {
      // A command list: true subscribes a new callback, false unsubscribes the oldest still subscribed.
      fc.assert(
        fc.property(fc.array(fc.boolean(), { maxLength: 60 }), fc.boolean(), (commands, abortAtEnd) => {
          const controller = new AbortController()
          const subscribed: Array<{ readonly id: number; readonly unsubscribe: () => void }> = []
          const called: Array<number> = []
          commands.forEach((subscribe, id) => {
            if (subscribe) subscribed.push({ id, unsubscribe: onAbort(controller.signal, () => called.push(id)) })
            else subscribed.shift()?.unsubscribe()
            deepStrictEqual(listeners(controller.signal), subscribed.length > 0 ? 1 : 0)
          })
          if (abortAtEnd) controller.abort()
          deepStrictEqual(called, abortAtEnd ? subscribed.map((s) => s.id) : [])
          deepStrictEqual(listeners(controller.signal), abortAtEnd ? 0 : Math.min(subscribed.length, 1))
        })
      )
    })

    it('waiters taken off anywhere should leave the others called once, in the order they came', () => {
      // A command list: a number subscribes a new waiter (through `subscribe` or `onAbort`), a fraction takes off
      // the waiter at that place among those still on.
      fc.assert(
        fc.property(
          fc.array(fc.oneof(fc.boolean(), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })), {
            maxLength: 40
          }),
          (commands) => {
            const controller = new AbortController()
            const on: Array<{ readonly id: number; readonly off: () => void }> = []
            const called: Array<number> = []
            commands.forEach((command, id) => {
              if (typeof command === 'number') {
                if (on.length > 0) on.splice(Math.floor(command * on.length), 1)[0].off()
              } else if (command) {
                const waiter: Waiter = { aborted: () => called.push(id) }
                subscribe(controller.signal, waiter)
                on.push({ id, off: () => unsubscribe(controller.signal, waiter) })
              } else on.push({ id, off: onAbort(controller.signal, () => called.push(id)) })
              deepStrictEqual(listeners(controller.signal), on.length > 0 ? 1 : 0)
            })
            controller.abort()
            deepStrictEqual(called, on.map((w) => w.id))
            deepStrictEqual(listeners(controller.signal), 0)
          }
        )
      )
    })

    it('a waiter that takes a later one off while the signal aborts should keep it from being called', () => {
      const controller = new AbortController()
      const called: Array<string> = []
      const later: Waiter = { aborted: () => called.push('later') }
      subscribe(controller.signal, { aborted: () => (called.push('first'), unsubscribe(controller.signal, later)) })
      subscribe(controller.signal, later)
      controller.abort()
      deepStrictEqual(called, ['first'])
    })
  })
})
