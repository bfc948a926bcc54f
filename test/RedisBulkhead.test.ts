import * as fc from 'fast-check'
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type { TaskEither } from 'fp-ts/TaskEither'
import Redis from 'ioredis'
import * as Bulkhead from '../src/Bulkhead'
import type { Event } from '../src/Event'
import * as RedisBulkhead from '../src/RedisBulkhead'
import { retrying, type StopReason } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import type { Signalled } from '../src/Timeout'
import { deadlinedScript } from '../src/internal/redis'
import { decode, SLOTS, type Answer } from '../src/internal/slots'
import { killChildren, startChild, type Child } from './support/fleet'
import { outages, withOutage } from './support/outage'
import { describeWithRedis } from './support/redis'
import { waitFor } from './support/wait'
import { deepStrictEqual, ok, strictEqual, throwsRangeError, throwsTypeError } from './util'

describe('RedisBulkhead.make (no server needed)', () => {
  const redis: RedisBulkhead.BulkheadOptions['redis'] = { evalsha: async () => 0, eval: async () => 0 }
  const options = { redis, key: 'k', maxConcurrent: 2, lease: 1_000 }

  it('should name a bad option in its error: TypeError for a wrong type, RangeError for a value out of range', () => {
    throwsTypeError(() => RedisBulkhead.make(null as never), /RedisBulkhead\.make: options must be an object/)
    throwsTypeError(
      () => RedisBulkhead.make({ ...options, redis: {} as never }),
      /RedisBulkhead\.make: options\.redis must be a Redis client with evalsha and eval/
    )
    throwsTypeError(
      () => RedisBulkhead.make({ ...options, key: '' }),
      /RedisBulkhead\.make: options\.key must be a non-empty string, received ""/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, maxConcurrent: 0 }),
      /options\.maxConcurrent must be a whole number >= 1, received 0/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, maxQueue: -1 }),
      /options\.maxQueue must be a whole number >= 0, received -1/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, maxQueue: null as never }),
      /options\.maxQueue must be a whole number >= 0, received null/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, lease: NaN }),
      /options\.lease must be a finite number > 3 x options\.timeout \(300\), received NaN/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, lease: 300 }),
      /options\.lease must be a finite number > 3 x options\.timeout \(300\), received 300/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, timeout: 500 }),
      /options\.lease must be a finite number > 3 x options\.timeout \(1500\), received 1000/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, pollInterval: 0 }),
      /options\.pollInterval must be a finite number > 0, received 0/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, maxWait: Infinity }),
      /options\.maxWait must be a finite number >= 0, received Infinity/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, processes: 1.5 }),
      /options\.processes must be a whole number >= 1, received 1\.5/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, timeout: -1 }),
      /options\.timeout must be a finite number > 0, received -1/
    )
    throwsRangeError(
      () => RedisBulkhead.make({ ...options, fallback: 'wait' as never }),
      /options\.fallback must be 'local', 'allow' or 'refuse'/
    )
    throwsTypeError(() => RedisBulkhead.make({ ...options, onEvent: 1 as never }), /options\.onEvent must be a function/)
    throwsTypeError(() => RedisBulkhead.make({ ...options, clock: {} as never }), /options\.clock must be a Clock/)
  })

  it('should take a script that answers nonsense as Redis failing: the fallback answers, and says so', async () => {
    const events: Array<Event> = []
    const bulkhead = RedisBulkhead.make({ ...options, fallback: 'refuse', onEvent: (e) => void events.push(e) })
    strictEqual(await bulkhead.enter(), undefined)
    expect(events).toMatchObject([
      { _tag: 'ServiceUnavailable', source: 'bulkhead', service: 'bulkhead', fallback: 'refuse' },
      { _tag: 'BulkheadRefused', source: 'bulkhead', inFlight: 0, queued: 0 }
    ])
  })

  it('should answer by the fallback within the timeout when Redis never answers', async () => {
    const silent: RedisBulkhead.BulkheadOptions['redis'] = {
      evalsha: () => new Promise(() => undefined),
      eval: () => new Promise(() => undefined)
    }
    const bulkhead = RedisBulkhead.make({ ...options, redis: silent, timeout: 50, processes: 2 })
    const began = Date.now()
    const release = await bulkhead.enter()
    ok(release !== undefined)
    strictEqual(await bulkhead.enter(), undefined) // the local bulkhead: 2 / 2 processes, one slot
    ok(Date.now() - began < 3_000, `took ${Date.now() - began} ms`)
    strictEqual(bulkhead.inFlight, 1)
    release()
    release()
    strictEqual(bulkhead.inFlight, 0)
  })
})

/**
 * One step of the slots script, and the reference model's rule for it. An enter's tickets: a number is the ticket
 * of that index (in line, or not yet), `'new'` a new one, `'once'` a call that does not wait.
 */
type Op =
  | { readonly _tag: 'enter'; readonly lease: number; readonly tickets: ReadonlyArray<number | 'new' | 'once'> }
  | {
      readonly _tag: 'beat'
      readonly lease: number
      readonly slots: ReadonlyArray<number>
      readonly tickets: ReadonlyArray<number>
    }
  | { readonly _tag: 'release'; readonly ids: ReadonlyArray<number> }
  | { readonly _tag: 'count' }
  | { readonly _tag: 'advance'; readonly seconds: number }

/**
 * Leases and advances in whole seconds: every lease end is a multiple of 1000 ms away from the time it is compared
 * with, so the few ms the test itself takes on the server's clock change no answer.
 */
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    _tag: fc.constant('enter' as const),
    lease: fc.integer({ min: 1, max: 4 }),
    tickets: fc.array(fc.oneof(fc.nat(12), fc.constantFrom('new' as const, 'once' as const)), {
      minLength: 1,
      maxLength: 4
    })
  }),
  fc.record({
    _tag: fc.constant('beat' as const),
    lease: fc.integer({ min: 1, max: 4 }),
    slots: fc.array(fc.nat(12), { maxLength: 4 }),
    tickets: fc.array(fc.nat(12), { maxLength: 4 })
  }),
  fc.record({ _tag: fc.constant('release' as const), ids: fc.array(fc.nat(12), { minLength: 1, maxLength: 2 }) }),
  fc.constant<Op>({ _tag: 'count' }),
  fc.record({ _tag: fc.constant('advance' as const), seconds: fc.integer({ min: 1, max: 4 }) })
)

/** An {@link Op} with the names its numbers stand for. */
type Concrete =
  | { readonly _tag: 'enter'; readonly lease: number; readonly tickets: ReadonlyArray<string> }
  | {
      readonly _tag: 'beat'
      readonly lease: number
      readonly slots: ReadonlyArray<string>
      readonly tickets: ReadonlyArray<string>
    }
  | { readonly _tag: 'release'; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: 'count' }
  | { readonly _tag: 'advance'; readonly seconds: number }

/**
 * The slots as a map of members to the end of their lease, and the line as a list of tickets oldest first with the
 * end of each one's lease, on the model's own time: written for clarity.
 */
class Model {
  now = 0
  readonly slots = new Map<string, number>()
  line: Array<{ readonly ticket: string; end: number }> = []
  constructor(readonly max: number) {}

  /** `op` with its tickets and members as `id` names them: see {@link Concrete}. */
  apply(op: Concrete): Answer {
    if (op._tag === 'advance') this.now += op.seconds * 1_000
    for (const [m, end] of this.slots) if (end <= this.now) this.slots.delete(m)
    this.line = this.line.filter(({ end }) => end > this.now)
    const answer = (entered: number, lost: ReadonlyArray<string> = []): Answer => ({
      entered,
      held: this.slots.size,
      waiting: this.line.length,
      lost
    })
    switch (op._tag) {
      case 'enter': {
        let entered = 0
        let open = true
        for (const ticket of op.tickets) {
          const waits = !ticket.startsWith('-')
          const at = this.line.findIndex((w) => w.ticket === ticket)
          // the live waiters ahead of it: all of them, for a call not in line
          const ahead = at < 0 ? this.line.length : at
          open = open && this.slots.size < this.max && ahead < this.max - this.slots.size
          if (open) {
            this.slots.set(ticket, this.now + op.lease * 1_000)
            if (at >= 0) this.line.splice(at, 1)
            entered++
          } else if (waits) {
            if (at < 0) this.line.push({ ticket, end: 0 })
            const waiter = this.line.find((w) => w.ticket === ticket)
            if (waiter !== undefined) waiter.end = this.now + op.lease * 1_000
          }
        }
        return answer(entered)
      }
      case 'beat': {
        const lost: Array<string> = []
        for (const m of op.slots) {
          if (this.slots.has(m)) this.slots.set(m, this.now + op.lease * 1_000)
          else lost.push(m)
        }
        for (const w of this.line) if (op.tickets.includes(w.ticket)) w.end = this.now + op.lease * 1_000
        return answer(0, lost)
      }
      case 'release': {
        // the ids with no slot: a waiter's, or a slot whose lease ran out
        const lost = op.ids.filter((m) => !this.slots.delete(m))
        for (const m of op.ids) this.line = this.line.filter((w) => w.ticket !== m)
        return answer(0, lost)
      }
    }
    return answer(0)
  }
}

describeWithRedis('RedisBulkhead on a real Redis', (server) => {
  let redis: Redis
  let n = 0
  const key = (): string => `bulkhead-${++n}`
  const serverTime = async (): Promise<number> => {
    const [s, us] = await redis.time()
    return Number(s) * 1_000 + Math.floor(Number(us) / 1_000)
  }
  const make = (options: Partial<RedisBulkhead.BulkheadOptions> & { readonly key: string }): RedisBulkhead.RedisBulkhead =>
    RedisBulkhead.make({ redis, maxConcurrent: 1, timeout: 1_000, ...options, lease: options.lease ?? 5_000 })

  beforeAll(() => {
    redis = new Redis({ host: server().host, port: server().port })
  })
  afterAll(async () => {
    await killChildren()
    redis.disconnect()
  })

  it('should answer as the reference model does, for the same enters, heartbeats, releases and time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(opArbitrary, { maxLength: 30 }), async (max, ops) => {
        const k = key()
        const script = deadlinedScript('test', redis, k, SLOTS)
        const run = async (...args: Array<string | number>): Promise<Answer> => decode(await script(undefined, ...args))
        const model = new Model(max)
        let issued = 0
        // how long the key should last, as of the last write that set its expiry
        let bound = 0
        const id = (ticket: number | 'new' | 'once'): string =>
          ticket === 'new' ? `t${++issued}` : ticket === 'once' ? `-t${++issued}` : `t${ticket}`
        for (const abstract of ops) {
          // an enter names a ticket once, and none that holds a slot (as the bulkhead never does)
          const op: Concrete =
            abstract._tag === 'enter'
              ? { ...abstract, tickets: [...new Set(abstract.tickets.map(id))].filter((t) => !model.slots.has(t)) }
              : abstract._tag === 'beat'
              ? { ...abstract, slots: abstract.slots.map(id), tickets: abstract.tickets.map(id) }
              : abstract._tag === 'release'
              ? { ...abstract, ids: abstract.ids.map(id) }
              : abstract
          const expected = model.apply(op)
          let actual: Answer
          switch (op._tag) {
            case 'enter':
              actual = await run('e', max, op.lease * 1_000, ...op.tickets)
              break
            case 'beat':
              actual = await run('h', op.lease * 1_000, op.slots.length, ...op.slots, ...op.tickets)
              break
            case 'release':
              actual = await run('r', ...op.ids)
              break
            case 'count':
              actual = await run('c')
              break
            case 'advance':
              // the server's clock cannot be moved: the leases are moved back instead, which the script cannot tell apart
              for (const m of await redis.zrange(k, '0', '-1')) await redis.zincrby(k, -op.seconds * 1_000, m)
              actual = await run('c')
          }
          deepStrictEqual(actual, expected)
          if (op._tag !== 'count' && op._tag !== 'advance' && op._tag !== 'release')
            bound = Math.max(0, ...model.slots.values(), ...model.line.map((w) => w.end)) - model.now
          // the slots, then the live waiters in the order of their places in the line
          const members = await redis.zrange(k, '0', '-1')
          const leases = new Set(members.filter((m) => m.startsWith('l')).map((m) => m.slice(1)))
          deepStrictEqual(
            [
              members.filter((m) => !m.startsWith('l') && !m.startsWith('q')).sort(),
              members.filter((m) => m.startsWith('q') && leases.has(m.slice(1))).map((m) => m.slice(1))
            ],
            [[...model.slots.keys()].sort(), model.line.map((w) => w.ticket)]
          )
        }
        // the key lasts no longer than the last lease it held when it was written, and is gone with its last lease
        const ttl = await redis.pttl(k)
        const empty = model.slots.size === 0 && model.line.length === 0
        ok(ttl > 0 ? ttl <= bound : empty && ttl === -2, `ttl ${ttl}, written for ${bound}`)
      }),
      { numRuns: 60 }
    )
  }, 30_000)

  it('should let maxConcurrent calls in across bulkheads, refuse the next, and give a slot back once per release', async () => {
    const k = key()
    const a = make({ key: k, maxConcurrent: 2 })
    const b = make({ key: k, maxConcurrent: 2 })
    const first = await a.enter()
    const second = await b.enter()
    ok(first !== undefined && second !== undefined)
    strictEqual(await a.enter(), undefined)
    strictEqual(await b.enter(), undefined)
    deepStrictEqual([a.inFlight, b.inFlight, (await a.fleetCounts()).inFlight], [1, 1, 2])
    first()
    first() // idempotent: one slot back, not two
    await waitFor(() => a.inFlight === 0)
    const third = await b.enter()
    ok(third !== undefined)
    strictEqual(await a.enter(), undefined)
    deepStrictEqual((await a.fleetCounts()).inFlight, 2)
    second()
    third()
    // the releases reach Redis in the background
    for (;;) if ((await a.fleetCounts()).inFlight === 0) break
    strictEqual(await redis.exists(k), 0)
  }, 20_000)

  it('should let the oldest waiter in when a slot is given back, at once, and poll on the clock for one given back elsewhere', async () => {
    const k = key()
    const clock = TestClock.make()
    const events: Array<Event> = []
    const a = make({ key: k, maxQueue: 2, maxWait: 60_000, clock, pollInterval: 50, onEvent: (e) => void events.push(e) })
    const b = make({ key: k })
    const held = await a.enter()
    ok(held !== undefined)
    const first = a.enter()
    await waitFor(() => a.queued === 1)
    const second = a.enter()
    await waitFor(() => a.queued === 2)
    strictEqual(await a.enter(), undefined) // the line is full
    held()
    const next = await first
    ok(next !== undefined)
    // the release asks for the line at once, not at the next poll (the clock has not moved)
    deepStrictEqual([a.inFlight, a.queued, (await a.fleetCounts()).inFlight], [1, 1, 1])
    next()
    const last = await second
    ok(last !== undefined)
    last()
    for (;;) if ((await a.fleetCounts()).inFlight === 0) break
    expect(events.map((e) => e._tag)).toEqual(['BulkheadQueued', 'BulkheadQueued', 'BulkheadRefused'])

    // a slot given back by another process: the waiter's next poll gets it
    const other = await b.enter()
    ok(other !== undefined)
    const waiting = a.enter()
    await waitFor(() => a.queued === 1)
    await clock.advance(50)
    strictEqual(a.queued, 1) // polled, and refused: still waiting
    other()
    for (;;) if ((await b.fleetCounts()).inFlight === 0) break
    let got: Bulkhead.Release | undefined
    void waiting.then((r) => (got = r))
    // poll after poll (each a round trip to the server), a bounded number of them
    for (let polls = 0; got === undefined && polls < 100; polls++) {
      await waitFor(() => got !== undefined || clock.pendingTimers.some((t) => t.kind === 'throttle'))
      if (got === undefined) await clock.next('throttle')
    }
    ok(got !== undefined, 'no poll got the slot given back')
    deepStrictEqual([a.inFlight, a.queued], [1, 0])
    got()
    await waitFor(() => clock.pending === 0)
  }, 20_000)

  it('should take a waiter out at once when its signal aborts, and never let it in afterwards', async () => {
    const k = key()
    const clock = TestClock.make()
    const events: Array<Event> = []
    const a = make({ key: k, maxQueue: 5, clock, onEvent: (e) => void events.push(e) })
    const b = make({ key: k })
    const held = await b.enter()
    ok(held !== undefined)
    const controller = new AbortController()
    const waiting = a.enter(controller.signal)
    await waitFor(() => a.queued === 1)
    controller.abort('gave up')
    strictEqual(await waiting, undefined)
    strictEqual(a.queued, 0)
    expect(events).toMatchObject([
      { _tag: 'BulkheadQueued', inFlight: 0, queued: 1 },
      { _tag: 'BulkheadAborted', inFlight: 0, queued: 0 }
    ])
    strictEqual(await a.enter(controller.signal), undefined) // aborted already: no slot asked for
    await waitFor(() => clock.pending === 0) // neither the poll nor the wait's bound is left sleeping

    held()
    for (;;) if ((await b.fleetCounts()).inFlight === 0) break

    // aborted while the poll that finds the slot free is on its way to Redis: the slot goes back
    let onSend = (): void => undefined
    const watched: RedisBulkhead.BulkheadOptions['redis'] = {
      evalsha: (...args) => (onSend(), redis.evalsha(...args)),
      eval: (...args) => redis.eval(...args)
    }
    const c = make({ key: k, maxQueue: 1, clock, redis: watched, onEvent: (e) => void events.push(e) })
    const holder = await b.enter()
    ok(holder !== undefined)
    const late = new AbortController()
    const racing = c.enter(late.signal)
    await waitFor(() => c.queued === 1)
    holder()
    for (;;) if ((await b.fleetCounts()).inFlight === 0) break
    onSend = () => late.abort()
    await clock.advance(50)
    strictEqual(await racing, undefined)
    await waitFor(() => c.inFlight === 0)
    for (;;) if ((await c.fleetCounts()).inFlight === 0) break
    expect(events.map((e) => e._tag)).toEqual(['BulkheadQueued', 'BulkheadAborted', 'BulkheadQueued', 'BulkheadAborted'])
  }, 20_000)

  it('should refuse a waiter after maxWait on the clock', async () => {
    const k = key()
    const clock = TestClock.make()
    const events: Array<Event> = []
    const a = make({ key: k, maxQueue: 1, maxWait: 1_000, clock, onEvent: (e) => void events.push(e) })
    const held = await a.enter()
    ok(held !== undefined)
    let answered = false
    const waiting = a.enter().then((r) => ((answered = true), r))
    await waitFor(() => a.queued === 1)
    await clock.advance(950)
    strictEqual(answered, false)
    await clock.advance(50)
    strictEqual(await waiting, undefined)
    expect(events.map((e) => e._tag)).toEqual(['BulkheadQueued', 'BulkheadRefused'])
    held()
  }, 20_000)

  it('should keep the slot of a call longer than its lease (heartbeat), and give it back when the call ends', async () => {
    const k = key()
    // a short lease, and a prober that refuses rather than let a slow answer in by its fallback
    const a = make({ key: k, lease: 750, timeout: 200 })
    const b = make({ key: k, lease: 750, timeout: 200, fallback: 'refuse' })
    const held = await a.enter()
    ok(held !== undefined)
    const began = Date.now()
    let tries = 0
    // three leases and more
    while (Date.now() - began < 2_400) {
      strictEqual(await b.enter(), undefined)
      tries++
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    ok(tries >= 10, `${tries} tries`)
    held()
    for (;;) if ((await b.fleetCounts()).inFlight === 0) break
    const mine = await b.enter()
    ok(mine !== undefined)
    mine()
  }, 20_000)

  it('should count the calls of every bulkhead on the key in asGuard and fleetCounts (issue 33)', async () => {
    const k = key()
    const a = make({ key: k, maxConcurrent: 2 })
    const b = make({ key: k, maxConcurrent: 2, maxQueue: 1 })
    const guard = Bulkhead.asGuard(a)
    const retry = { ok: false, error: 'x', latency: 0, now: 0, retries: 0, retrying: true, delay: 10 }
    strictEqual(await guard.admit(retry), true)
    const held = [await b.enter(), await b.enter()]
    // b holds every slot of the fleet and a has no line: a retry through a would be refused
    strictEqual(await guard.admit(retry), false)
    strictEqual(await guard.allows?.(0), false)
    const waiting = b.enter()
    await waitFor(() => b.queued === 1)
    deepStrictEqual(await a.fleetCounts(), { inFlight: 2, queued: 1 })
    for (const release of held) release?.()
    const last = await waiting
    ok(last !== undefined)
    const mine = await a.enter()
    ok(mine !== undefined)
    // each sees the other's
    deepStrictEqual([await b.fleetCounts(), a.inFlight, b.inFlight], [{ inFlight: 2, queued: 0 }, 1, 1])
    strictEqual(await Bulkhead.asGuard(b).admit(retry), true) // b's line has room: the retry would wait
    mine()
    last()
    strictEqual(await guard.admit(retry), true)
  }, 20_000)

  it('should let protect, protectSignalled and asGuard use it as they are', async () => {
    const k = key()
    const bulkhead = make({ key: k })
    const hold = await make({ key: k }).enter()
    ok(hold !== undefined)
    const reasons: Array<StopReason> = []
    let attempts = 0
    const result = await pipe(
      (() => (attempts++, Promise.resolve(E.right('ok')))) as TaskEither<never, string>,
      Bulkhead.protect(bulkhead, (rejected) => rejected),
      retrying(pipe(Schedule.constant(1), Schedule.intersect(Schedule.recurs(3))), {
        guards: [Bulkhead.asGuard(bulkhead)],
        onDone: ({ reason }) => void reasons.push(reason)
      })
    )()
    deepStrictEqual(result, E.left({ _tag: 'BulkheadRejected' as const, maxConcurrent: 1, maxQueue: 0 }))
    deepStrictEqual([attempts, reasons], [0, ['bulkhead' as StopReason]])
    hold()
    for (;;) if ((await bulkhead.fleetCounts()).inFlight === 0) break
    const signalled = pipe(
      (_: Signalled): TaskEither<never, string> =>
        () =>
          TE_ok,
      Bulkhead.protectSignalled(bulkhead, () => 'full', (reason) => `aborted: ${String(reason)}`)
    )
    deepStrictEqual(await signalled()(), E.right('ok'))
    const controller = new AbortController()
    controller.abort('no')
    deepStrictEqual(await signalled({ signal: controller.signal })(), E.left('aborted: no'))
  }, 20_000)

  describe('processes sharing one bulkhead', () => {
    let children: Array<Child> = []
    const start = (k: string, max: number, maxQueue: number, lease: number): Child =>
      startChild('fleet-bulkhead.ts', [String(server().port), k, String(max), String(maxQueue), String(lease)])

    afterEach(async () => {
      for (const c of children) c.process.stdin?.end()
      await Promise.all(children.map((c) => c.exited))
      children = []
    }, 20_000)

    it('four processes hammering one key should never have more than maxConcurrent calls in flight in all', async () => {
      const k = key()
      const MAX = 5
      children = Array.from({ length: 4 }, () => start(k, MAX, 4, 8_000))
      await Promise.all(children.map((c) => c.waitFor('ready', (l) => l === 'ready')))
      const at = Date.now() + 200
      for (const c of children) c.process.stdin?.write(`go ${at} 2000 4\n`)
      const results = await Promise.all(
        children.map(async (c) => (await c.waitFor('done', (l) => l.startsWith('done '))).split(' ').slice(1).map(Number))
      )
      const most = Math.max(...results.map(([m]) => m))
      const calls = results.reduce((sum, [, c]) => sum + c, 0)
      // at most MAX at once, and MAX reached: the test loaded the bulkhead to its bound
      strictEqual(most, MAX)
      ok(calls > 100, `${calls} calls`)
      ok(
        children.every((c) => !c.lines.includes('event ServiceUnavailable')),
        'a process fell back: the count was not the fleet'
      )
      strictEqual(Number(await redis.get(`${k}:inside`)), 0)
      for (;;) if ((await redis.zcard(k)) === 0) break
    }, 30_000)

    it('should let the waiters of several processes in in the order they came, across the fleet (issue 33)', async () => {
      const k = key()
      children = Array.from({ length: 3 }, () => start(k, 1, 2, 4_000))
      await Promise.all(children.map((c) => c.waitFor('ready', (l) => l === 'ready')))
      const holder = make({ key: k, lease: 4_000 })
      const held = await holder.enter()
      ok(held !== undefined)
      // A1 B1 C1 A2 B2 C2: each queued (Redis said it waits) before the next asks
      const arrivals: Array<string> = []
      for (const round of [1, 2])
        for (const [i, child] of children.entries()) {
          const label = `${'ABC'[i]}${round}`
          const from = child.lines.length
          child.process.stdin?.write(`wait ${label} 20\n`)
          await child.waitFor(`${label} queued`, (l) => l === 'event BulkheadQueued', from)
          arrivals.push(label)
        }
      held()
      const entered = await Promise.all(
        arrivals.map(async (label) => {
          const line = await children['ABC'.indexOf(label[0])].waitFor(label, (l) => l.startsWith(`entered ${label} `))
          return { label, order: Number(line.split(' ')[2]) }
        })
      )
      deepStrictEqual(
        entered.sort((x, y) => x.order - y.order).map(({ label }) => label),
        arrivals
      )
    }, 30_000)

    it('should tell a process stalled past its lease that it lost its slot, once, at its next heartbeat (issue 33)', async () => {
      const k = key()
      const LEASE = 900
      const stalled = start(k, 1, 0, LEASE)
      children = [stalled]
      await stalled.waitFor('ready', (l) => l === 'ready')
      stalled.process.stdin?.write('hold 1\n')
      await stalled.waitFor('held', (l) => l === 'held 1')
      process.kill(stalled.pid, 'SIGSTOP')
      try {
        // its lease runs out on the server's clock, and the slot goes to another call
        const [, end] = await redis.zrange(k, '0', '0', 'WITHSCORES')
        while ((await serverTime()) <= Number(end)) await new Promise((resolve) => setTimeout(resolve, 50))
        const other = await make({ key: k, lease: LEASE, timeout: 200, fallback: 'refuse' }).enter()
        ok(other !== undefined, 'the slot did not come back')
      } finally {
        process.kill(stalled.pid, 'SIGCONT')
      }
      const told = await Promise.race([
        stalled.waitFor('the lease lost', (l) => l === 'event BulkheadLeaseLost'),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3 * LEASE))
      ])
      strictEqual(told, 'event BulkheadLeaseLost')
      // heartbeats go on (the call still runs): told once, not at each of the next two
      await new Promise((resolve) => setTimeout(resolve, (2 * LEASE) / 3 + 100))
      strictEqual(stalled.lines.filter((l) => l === 'event BulkheadLeaseLost').length, 1)
    }, 30_000)

    it("should tell a call that ends after its slot's lease ran out, before a heartbeat could, at its release (issue 33)", async () => {
      const k = key()
      const events: Array<string> = []
      // a lease of 30 s: no heartbeat comes during the test
      const bulkhead = make({ key: k, lease: 30_000, onEvent: (e) => void events.push(e._tag) })
      const release = await bulkhead.enter()
      ok(release !== undefined, 'no slot')
      // the lease runs out, as it would have over a stall (the server's clock cannot be moved: the lease is moved
      // back, which the script cannot tell apart), and the slot goes to another call
      const [member] = await redis.zrange(k, '0', '0')
      await redis.zincrby(k, -60_000, member)
      const other = await make({ key: k, lease: 30_000 }).enter()
      ok(other !== undefined, 'the slot did not come back')
      release()
      for (let i = 0; i < 100 && !events.includes('BulkheadLeaseLost'); i++)
        await new Promise((resolve) => setTimeout(resolve, 10))
      deepStrictEqual(events, ['BulkheadLeaseLost'])
      // the slot is the other call's: the late release took nothing from it
      strictEqual(await bulkhead.fleetCounts().then((c) => c.inFlight), 1)
      // told once: a release again does nothing
      release()
      await new Promise((resolve) => setTimeout(resolve, 50))
      deepStrictEqual(events, ['BulkheadLeaseLost'])
      other()
    })

    it('the slots of a process killed with SIGKILL should come back after their lease, and not before', async () => {
      const k = key()
      const LEASE = 1_500
      const victim = start(k, 2, 0, LEASE)
      children = [victim]
      await victim.waitFor('ready', (l) => l === 'ready')
      victim.process.stdin?.write('hold 2\n')
      await victim.waitFor('held', (l) => l === 'held 2')
      // a heartbeat or two: the leases it renewed are the ones that must run out
      await new Promise((resolve) => setTimeout(resolve, LEASE / 2))
      victim.process.kill('SIGKILL')
      strictEqual((await victim.exited).signal, 'SIGKILL')
      const killedAt = await serverTime()
      const ends = (await redis.zrange(k, '0', '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number)
      strictEqual(ends.length, 2)
      const first = Math.min(...ends)
      ok(first > killedAt && Math.max(...ends) <= killedAt + LEASE, `leases end at ${ends}, killed at ${killedAt}`)
      const probe = make({ key: k, maxConcurrent: 2, lease: LEASE, timeout: 100 })
      let refusals = 0
      for (;;) {
        const before = await serverTime()
        const release = await probe.enter()
        const after = await serverTime()
        if (release === undefined) {
          // refused: the server's time was before the first lease's end
          ok(before < first, `refused at ${before}, after the lease ended at ${first}`)
          refusals++
        } else {
          ok(after >= first, `a slot came back at ${after}, before its lease ended at ${first}`)
          release()
          break
        }
        ok(after < killedAt + 3 * LEASE, 'the slots never came back')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      ok(refusals >= 5, `${refusals} refusals before the lease ran out`)
    }, 30_000)
  })
    it('with Redis stopped (SIGSTOP), should answer by each fallback within the timeout, say so, and answer the waiters too: nothing hangs', async () => {
      // the file's server, stopped and resumed: nothing else runs meanwhile
      const stopped = server()
      const redis = new Redis({ host: stopped.host, port: stopped.port })
      try {
        await redis.ping()
        const events: Array<Event> = []
        const options = { redis, maxConcurrent: 4, lease: 5_000, onEvent: (e: Event) => void events.push(e) }
        const local = RedisBulkhead.make({ ...options, key: 'local', processes: 2 })
        const allow = RedisBulkhead.make({ ...options, key: 'allow', fallback: 'allow' })
        const refuse = RedisBulkhead.make({ ...options, key: 'refuse', fallback: 'refuse' })
        const waiting = RedisBulkhead.make({ ...options, key: 'w', maxConcurrent: 1, maxQueue: 1, fallback: 'allow', pollInterval: 20 })
        // held by another bulkhead: this one asks Redis while its call waits
        const held = await RedisBulkhead.make({ ...options, key: 'w', maxConcurrent: 1 }).enter()
        ok(held !== undefined)
        const waiter = waiting.enter()
        await waitFor(() => waiting.queued === 1)
        // stopped (SIGSTOP): the connection stays open and nothing answers, the hardest case for a deadline
        process.kill(stopped.pid, 'SIGSTOP')
        const began = Date.now()
        const fromLocal = [await local.enter(), await local.enter(), await local.enter()]
        deepStrictEqual(
          fromLocal.map((r) => typeof r),
          ['function', 'function', 'undefined']
        ) // 4 slots / 2 processes
        ok((await allow.enter()) !== undefined)
        strictEqual(await refuse.enter(), undefined)
        const late = await waiter
        ok(late !== undefined) // the waiter, answered by the fallback
        held()
        late()
        const took = Date.now() - began
        // seven calls bounded by 100 ms each, and room for a busy machine: never the client's own wait, which has none
        ok(took < 4_000, `took ${took} ms on a stopped Redis`)
        deepStrictEqual(
          [...new Set(events.flatMap((e) => (e._tag === 'ServiceUnavailable' ? [e.fallback] : [])))].sort(),
          ['allow', 'local', 'refuse']
        )
        await expect(local.fleetCounts()).rejects.toThrow()
        process.kill(stopped.pid, 'SIGCONT')
        // the connection stayed open: the enters that timed out run now, past their deadline, and take no slot
        await redis.ping()
        deepStrictEqual(await Promise.all(['local', 'allow', 'refuse', 'w'].map((k) => redis.zcard(k))), [0, 0, 0, 0])
      } finally {
        process.kill(stopped.pid, 'SIGCONT')
        redis.disconnect()
      }
    }, 20_000)
})

const TE_ok: Promise<E.Either<never, string>> = Promise.resolve(E.right('ok'))

describe('RedisBulkhead: an enter that timed out never takes a slot late', () => {
  for (const outage of outages) {
    it(`${outage}: Redis back, no slot is left behind, at once (not after a lease)`, async () => {
      await withOutage(outage, 3, async ({ clients: [raw, ...bulkheadClients], begin, end }) => {
        // a has entered before the outage (it knows the server's clock), c makes its first call during it
        const [a, c] = bulkheadClients.map((redis) =>
          RedisBulkhead.make({ redis, key: 'slots', maxConcurrent: 4, lease: 60_000, timeout: 100, fallback: 'allow' })
        )
        const before = await a.enter()
        ok(before !== undefined)
        before()
        await bulkheadClients[0].ping()
        await begin()
        // answered by the fallback within the bound: both let in
        const [fromA, fromC] = [await a.enter(), await c.enter()]
        ok(fromA !== undefined && fromC !== undefined)
        await end()
        // nothing the bulkheads gave up on holds a slot (a lease of a minute: not one run out)
        deepStrictEqual(await raw.zcard('slots'), 0)
        fromA()
        fromC()
      })
    }, 30_000)
  }
})
