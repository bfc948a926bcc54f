import * as fc from 'fast-check'
import * as Bulkhead from '../src/Bulkhead'
import { deepStrictEqual, strictEqual, throwsTypeError } from './util'

const settled = () => new Promise((resolve) => setImmediate(resolve))

describe('Bulkhead.make options.from', () => {
  it("counts the old one's calls in flight until they end, and takes its waiters in order", async () => {
    const old = Bulkhead.make({ maxConcurrent: 2, maxQueue: 5 })
    const held = [old.enter(), old.enter()] as Array<Bulkhead.Release>
    const order: Array<string> = []
    const waiting = ['w1', 'w2', 'w3'].map((name) =>
      (old.enter() as Promise<Bulkhead.Release | undefined>).then((release) => {
        order.push(release === undefined ? `${name} refused` : name)
        return release
      })
    )
    const next = Bulkhead.make({ maxConcurrent: 3, maxQueue: 1, from: old })
    await settled()
    deepStrictEqual(order, []) // taken over at its first use only
    // one free slot: w1 enters; w2 waits in the new queue; w3 is past it, refused
    deepStrictEqual([next.inFlight, next.queued], [3, 1])
    await settled()
    deepStrictEqual(order, ['w1', 'w3 refused'])
    strictEqual(next.enter(), undefined) // full: 2 old calls and w1, the queue holds w2
    held[0]()
    await settled()
    deepStrictEqual(order, ['w1', 'w3 refused', 'w2']) // the old call's slot came back here, to w2
    deepStrictEqual([next.inFlight, next.queued], [3, 0])
    strictEqual(old.inFlight, 3) // the old one answers for the new
    const w1 = (await waiting[0]) as Bulkhead.Release
    w1()
    held[1]()
    deepStrictEqual([next.inFlight, next.queued], [1, 0])
    const later = old.enter() as Bulkhead.Release // a run holding the old one enters the new
    strictEqual(next.inFlight, 2)
    later()
    ;((await waiting[1]) as Bulkhead.Release)()
    strictEqual(next.inFlight, 0)
  })

  it('a bulkhead built and never used leaves the one it would replace as it was', () => {
    const old = Bulkhead.make({ maxConcurrent: 1, maxQueue: 0 })
    const hold = old.enter() as Bulkhead.Release
    Bulkhead.make({ maxConcurrent: 5, maxQueue: 0, from: old })
    deepStrictEqual([old.maxConcurrent, old.inFlight], [1, 1])
    strictEqual(old.enter(), undefined)
    hold()
    strictEqual(old.inFlight, 0)
  })

  it('a moved waiter whose signal aborts leaves the new line', async () => {
    const old = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1 })
    const hold = old.enter() as Bulkhead.Release
    const controller = new AbortController()
    const waiting = old.enter(controller.signal) as Promise<Bulkhead.Release | undefined>
    const next = Bulkhead.make({ maxConcurrent: 1, maxQueue: 1, from: old })
    strictEqual(next.queued, 1)
    controller.abort()
    strictEqual(await waiting, undefined)
    strictEqual(next.queued, 0)
    hold()
    strictEqual(next.inFlight, 0)
  })

  it('with the same options, a replaced bulkhead behaves as the old one would have (property)', async () => {
    const op = fc.oneof(
      fc.constant({ enter: true, which: 0 }),
      fc.record({ enter: fc.constant(false), which: fc.nat(10) })
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.array(op, { maxLength: 30 }), async (before, after) => {
        const options = { maxConcurrent: 2, maxQueue: 2 }
        const run = async (replaceAt: number | undefined): Promise<ReadonlyArray<string>> => {
          let bulkhead = Bulkhead.make(options)
          const releases: Array<Bulkhead.Release> = []
          const trace: Array<string> = []
          const ops = [...before, ...after]
          for (let i = 0; i < ops.length; i++) {
            if (i === replaceAt) bulkhead = Bulkhead.make({ ...options, from: bulkhead })
            const o = ops[i]
            if (o.enter) {
              const entered = bulkhead.enter()
              if (entered === undefined) trace.push(`${i} refused`)
              else if (typeof entered === 'function') releases.push(entered)
              else
                void entered.then((release) => {
                  trace.push(`${i} entered late`)
                  if (release !== undefined) releases.push(release)
                })
            } else if (releases.length > 0) releases.splice(o.which % releases.length, 1)[0]()
            await settled()
            trace.push(`${bulkhead.inFlight}/${bulkhead.queued}`)
          }
          return trace
        }
        deepStrictEqual(await run(before.length), await run(undefined))
      }),
      { numRuns: 200 }
    )
  })

  it('refuses anything but a bulkhead of make, naming it', () => {
    throwsTypeError(
      () =>
        Bulkhead.make({
          maxConcurrent: 1,
          maxQueue: 0,
          from: { maxConcurrent: 1, maxQueue: 0, inFlight: 0, queued: 0, enter: () => undefined }
        }),
      /Bulkhead.make: from must be a bulkhead made by Bulkhead.make, received/
    )
  })
})
