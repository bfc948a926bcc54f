import * as fc from 'fast-check'
import { pipe } from 'fp-ts/function'
import * as O from 'fp-ts/Option'
import * as Driver from '../src/Driver'
import * as Random from '../src/Random'
import type { RetryState } from '../src/RetryState'
import * as RetryStatus from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import {
  advanceRun,
  driverFor,
  numbersIn,
  replayCursor,
  runPlanArbitrary,
  scheduleArbitrary,
  trace,
  traceDecisions
} from './support/schedules'
import { deepStrictEqual, leftOf, ok, rightOf, strictEqual, throwsRangeError, throwsTypeError } from './util'

// Kept moderate so that the whole file runs in a few seconds.
const numRuns = 200

const schedule = scheduleArbitrary()

/** A schedule built by hand, not by a constructor, whose stepper answers `answer`: to reach the Driver's checks. */
const answering = (answer: unknown): Schedule.Schedule<unknown> => ({
  ...Schedule.forever,
  description: 'answering',
  stepper: () => ({ next: () => answer as number, state: () => null })
})

/** A schedule that records the context of every step, and retries after 10 ms three times. */
const recording = (): {
  readonly schedule: Schedule.Schedule<string>
  readonly seen: ReadonlyArray<Omit<Schedule.StepContext<string>, 'random'>>
} => {
  const seen: Array<Omit<Schedule.StepContext<string>, 'random'>> = []
  return {
    schedule: Schedule.make(0, (n: number, { input, status, now, dueAt }: Schedule.StepContext<string>) => {
      seen.push({ input, status, now, dueAt })
      return n < 3 ? Schedule.continueAfter(10, n + 1) : Schedule.done
    }),
    seen
  }
}

/** A JSON round trip, as a store would make it. */
const throughJson = <A>(a: A): A => JSON.parse(JSON.stringify(a)) as A

/** Freezes a JSON value all the way down, so that any write to it throws (test files are strict mode). */
const deepFreeze = <A>(a: A): A => {
  if (a !== null && typeof a === 'object') {
    Object.values(a).forEach(deepFreeze)
    Object.freeze(a)
  }
  return a
}

describe('Driver', () => {
  describe('make', () => {
    it('should start a run at options.start, due at once, with no retry made', () => {
      const s = Schedule.recurs(2)
      const driver = Driver.make(s, { start: 1000 })
      expect(driver.schedule).toBe(s)
      deepStrictEqual(
        {
          start: driver.start,
          dueAt: driver.dueAt,
          done: driver.done,
          iterNumber: driver.iterNumber,
          cumulativeDelay: driver.cumulativeDelay,
          previousDelay: driver.previousDelay
        },
        { start: 1000, dueAt: 1000, done: false, iterNumber: 0, cumulativeDelay: 0, previousDelay: O.none }
      )
      deepStrictEqual(driver.status, RetryStatus.initial)
    })

    it('should start at 0 by default', () => {
      const driver = Driver.make(Schedule.forever)
      deepStrictEqual([driver.start, driver.dueAt], [0, 0])
    })

    it.each([NaN, Infinity, -Infinity])('should reject a start of %p', (start) => {
      throwsRangeError(
        () => Driver.make(Schedule.forever, { start }),
        new RegExp(`Driver\\.make: options\\.start .*received ${String(start)}$`)
      )
    })

    it.each([null, 5, {}, 'recurs(3)'])('should reject %p, which is not a schedule, with a TypeError', (value) => {
      throwsTypeError(
        () => Driver.make(value as unknown as Schedule.Schedule<unknown>),
        /^Driver\.make: schedule must be a Schedule/
      )
    })
  })

  describe('advance', () => {
    // Regression: a NaN or infinite time was taken, and stored as the run's dueAt (which JSON turns into null).
    it.each<readonly [string, unknown]>([
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
      ['"5"', '5']
    ])('should be a RangeError naming a time of %s', (shown, now) => {
      const driver = Driver.make(Schedule.constant(100))
      throwsRangeError(
        () => driver.advance('busy', now as number),
        new RegExp(`^Driver\\.advance: now must be a finite number, received ${shown}$`)
      )
      strictEqual(driver.iterNumber, 0)
    })

    // Regression: any negative answer was taken for a stop, so a delay computed negative ended the run quietly.
    it.each([-5, -0.5, -Infinity])('should be a RangeError when a stepper answers %s, not -1', (answer) => {
      const stepper: Schedule.Stepper<unknown> = { next: () => answer, state: () => null }
      const custom: Schedule.Schedule<unknown> = { ...Schedule.forever, stepper: () => stepper }
      throwsRangeError(
        () => Driver.make(custom).advance('busy', 0),
        new RegExp(`^Driver: the schedule forever answered the delay ${answer}; a delay must be`)
      )
    })

    it('should read a time of -0 as 0', () => {
      const driver = Driver.make(Schedule.constant(100))
      driver.advance('busy', -0)
      ok(!Object.is(driver.status.elapsed, -0))
      ok(!Object.is(driver.now, -0))
    })

    it('should answer each delay, then -1 once the schedule stops', () => {
      const driver = Driver.make(pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(2))))
      deepStrictEqual(
        [driver.advance('busy', 10), driver.advance('busy', 120), driver.advance('busy', 330)],
        [100, 200, -1]
      )
      deepStrictEqual(driver.done, true)
    })

    it('should count the retry, add the delay to cumulativeDelay and set dueAt to now + delay', () => {
      const driver = Driver.make(Schedule.fromDelays([50, 80]), { start: 1000 })
      driver.advance(undefined, 1010)
      deepStrictEqual(
        [driver.iterNumber, driver.cumulativeDelay, driver.previousDelay, driver.dueAt],
        [1, 50, O.some(50), 1060]
      )
      driver.advance(undefined, 1070)
      deepStrictEqual(
        [driver.iterNumber, driver.cumulativeDelay, driver.previousDelay, driver.dueAt],
        [2, 130, O.some(80), 1150]
      )
    })

    it('should leave the bookkeeping and dueAt as they were on a stop', () => {
      const driver = Driver.make(Schedule.fromDelays([50]), { start: 0 })
      driver.advance(undefined, 5)
      driver.advance(undefined, 60)
      deepStrictEqual(
        [driver.done, driver.iterNumber, driver.cumulativeDelay, driver.previousDelay, driver.dueAt],
        [true, 1, 50, O.some(50), 55]
      )
    })

    it('should stay stopped once stopped, without stepping the schedule again', () => {
      let steps = 0
      const once = Schedule.make(0, (n: number, { input }: Schedule.StepContext<boolean>) => {
        steps++
        return input || n > 0 ? Schedule.done : Schedule.continueAfter(1, n + 1)
      })
      const driver = Driver.make(once)
      deepStrictEqual([driver.advance(true, 0), driver.advance(false, 1), driver.advance(false, 2)], [-1, -1, -1])
      deepStrictEqual(steps, 1)
    })

    it('should hand each step its input, the time and the status at that time', () => {
      const { schedule: s, seen } = recording()
      const driver = Driver.make(s, { start: 100 })
      driver.advance('a', 105)
      driver.advance('b', 125)
      deepStrictEqual(seen, [
        {
          input: 'a',
          now: 105,
          dueAt: 100,
          status: { iterNumber: 0, elapsed: 5, cumulativeDelay: 0, previousDelay: O.none }
        },
        {
          input: 'b',
          now: 125,
          dueAt: 115,
          status: { iterNumber: 1, elapsed: 25, cumulativeDelay: 10, previousDelay: O.some(10) }
        }
      ])
    })

    it('should draw from options.random', () => {
      const driver = Driver.make(pipe(Schedule.constant(1000), Schedule.fullJitter), { random: Random.fixed(0.25) })
      deepStrictEqual(driver.advance(undefined, 0), 250)
    })

    it.each([NaN, Infinity, Number.MAX_SAFE_INTEGER + 2, '5', null, undefined])(
      'should reject a stepper answer of %p with a RangeError naming the schedule',
      (answer) => {
        throwsRangeError(
          () => Driver.make(answering(answer)).advance(undefined, 0),
          /^Driver: the schedule answering answered the delay .*; a delay must be a finite number/
        )
      }
    )

    it('should answer 0, never -0, and store it as 0', () => {
      const driver = Driver.make(answering(-0))
      const delay = driver.advance(undefined, 0)
      ok(Object.is(delay, 0) && Object.is(driver.cumulativeDelay, 0) && Object.is(driver.dueAt, 0))
      deepStrictEqual(
        numbersIn(driver.snapshot()).filter((n) => Object.is(n, -0)),
        []
      )
    })
  })

  describe('status', () => {
    it('should be the initial status before any decision', () => {
      const driver = Driver.make(Schedule.recurs(1), { start: 50 })
      expect(driver.status).toBe(RetryStatus.initial)
    })

    it('should be the status the latest decision was made with', () => {
      const { schedule: s, seen } = recording()
      const driver = Driver.make(s, { start: 1000 })
      for (const [input, now] of [
        ['a', 1010],
        ['b', 1030],
        ['c', 1060]
      ] as const) {
        driver.advance(input, now)
        deepStrictEqual(driver.status, seen[seen.length - 1].status)
      }
      deepStrictEqual(driver.status, {
        iterNumber: 2,
        elapsed: 60,
        cumulativeDelay: 20,
        previousDelay: O.some(10)
      })
    })
  })

  describe('statusAt', () => {
    it('should be the status the next decision would see at now', () => {
      const { schedule: s, seen } = recording()
      const driver = Driver.make(s, { start: 1000 })
      driver.advance('a', 1010)
      const expected = driver.statusAt(1070)
      deepStrictEqual(expected, { iterNumber: 1, elapsed: 70, cumulativeDelay: 10, previousDelay: O.some(10) })
      driver.advance('b', 1070)
      deepStrictEqual(seen[1].status, expected)
    })

    it('should be the initial status at the start, before any decision', () => {
      expect(Driver.make(Schedule.forever, { start: 7 }).statusAt(7)).toBe(RetryStatus.initial)
    })
  })

  describe('snapshot', () => {
    it('should give the run as a plain RetryState, with the position of a seeded random', () => {
      const random = Random.seeded(5)
      const driver = Driver.make(pipe(Schedule.exponential(100), Schedule.fullJitter), { start: 1000, random })
      const delay = driver.advance('e', 1010)
      deepStrictEqual<RetryState>(driver.snapshot(), {
        schedule: 'fullJitter(exponential(100, 2))',
        scheduleState: 200,
        iterNumber: 1,
        cumulativeDelay: delay,
        previousDelay: delay,
        startedAt: 1000,
        dueAt: 1010 + delay,
        random: random.getState()
      })
    })

    it('should store no random position for a Random that cannot give one', () => {
      deepStrictEqual(Driver.make(Schedule.forever, { random: Random.fixed(0.5) }).snapshot().random, null)
      deepStrictEqual(Driver.make(Schedule.forever).snapshot().random, null)
    })

    it('should be plain JSON: a JSON round trip leaves it unchanged', () => {
      fc.assert(
        fc.property(schedule, runPlanArbitrary(), fc.nat(25), (s, plan, k) => {
          const driver = driverFor(s, plan)
          advanceRun(driver, plan, k)
          const snapshot = driver.snapshot()
          deepStrictEqual(throughJson(snapshot), snapshot)
        }),
        { numRuns }
      )
    })

    it('regression: a start of -0 is stored as 0, so that the snapshot survives a JSON round trip', () => {
      const snapshot = Driver.make(Schedule.recurs(2), { start: -0 }).snapshot()
      deepStrictEqual(snapshot, throughJson(snapshot))
      deepStrictEqual(
        numbersIn(snapshot).filter((n) => Object.is(n, -0)),
        []
      )
    })
  })

  describe('restore', () => {
    it('regression: should read the -0 of a stored state (JSON text can hold "-0") as 0', () => {
      const stored = JSON.parse(
        '{"schedule":"recurs(3)","scheduleState":1,"iterNumber":-0,"cumulativeDelay":-0,"previousDelay":-0,' +
          '"startedAt":-0,"dueAt":-0,"random":null}'
      ) as RetryState
      const restored = Driver.restore(Schedule.recurs(3), stored)
      ok(restored._tag === 'Right')
      deepStrictEqual(
        numbersIn(restored.right.snapshot()).filter((n) => Object.is(n, -0)),
        []
      )
    })

    it('should go on exactly as an uninterrupted run, when interrupted at any point and restored from JSON', () => {
      fc.assert(
        fc.property(schedule, runPlanArbitrary(), fc.nat(25), (s, plan, at) => {
          const uninterrupted = driverFor(s, plan)
          const straight = advanceRun(uninterrupted, plan)
          // interrupted while it runs: after at most as many retries as the uninterrupted run made
          const k = Math.min(at, straight.filter((d) => d.delay >= 0).length)
          const first = driverFor(s, plan)
          const before = advanceRun(first, plan, k)
          const resumed = rightOf(Driver.restore(s, throughJson(first.snapshot())))
          const after = advanceRun(resumed, plan)
          deepStrictEqual([...before, ...after], straight)
          deepStrictEqual(resumed.snapshot(), uninterrupted.snapshot())
        }),
        { numRuns }
      )
    })

    it('should keep the stored bookkeeping, start and due time', () => {
      const driver = Driver.make(Schedule.fromDelays([50, 80, 120]), { start: 1000 })
      driver.advance(undefined, 1010)
      driver.advance(undefined, 1070)
      const resumed = rightOf(Driver.restore(Schedule.fromDelays([50, 80, 120]), throughJson(driver.snapshot())))
      deepStrictEqual(
        [resumed.start, resumed.dueAt, resumed.iterNumber, resumed.cumulativeDelay, resumed.previousDelay],
        [1000, 1150, 2, 130, O.some(80)]
      )
      deepStrictEqual(resumed.statusAt(1160), driver.statusAt(1160))
      deepStrictEqual(resumed.advance(undefined, 1160), 120)
    })

    it('should draw from random when given, rather than from the stored position', () => {
      const s = pipe(Schedule.constant(1000), Schedule.fullJitter)
      const driver = Driver.make(s, { random: Random.seeded(1) })
      driver.advance(undefined, 0)
      const resumed = rightOf(Driver.restore(s, driver.snapshot(), Random.fixed(0.5)))
      deepStrictEqual(resumed.advance(undefined, 1000), 500)
    })

    it('should return a ScheduleMismatch for a run of another schedule', () => {
      const stored = Driver.make(Schedule.recurs(3)).snapshot()
      const mismatch = leftOf(Driver.restore(Schedule.recurs(4), stored))
      ok(mismatch instanceof Driver.ScheduleMismatch)
      deepStrictEqual(
        [mismatch._tag, mismatch.name, mismatch.expected, mismatch.found, mismatch.message],
        [
          'ScheduleMismatch',
          'ScheduleMismatch',
          'recurs(4)',
          'recurs(3)',
          'Driver: the stored run belongs to the schedule recurs(3), not to recurs(4)'
        ]
      )
    })

    const stored: RetryState = Driver.make(Schedule.recurs(3), { random: Random.seeded(1) }).snapshot()
    it.each<readonly [string, Partial<RetryState>, RegExp]>([
      ['a negative count', { iterNumber: -1 }, /Driver\.restore: state\.iterNumber .*received -1$/],
      ['a fractional count', { iterNumber: 1.5 }, /Driver\.restore: state\.iterNumber .*received 1\.5$/],
      ['a NaN count', { iterNumber: NaN }, /Driver\.restore: state\.iterNumber .*received NaN$/],
      ['a negative time slept', { cumulativeDelay: -1 }, /Driver\.restore: state\.cumulativeDelay .*received -1$/],
      ['an infinite time slept', { cumulativeDelay: Infinity }, /state\.cumulativeDelay .*received Infinity$/],
      ['a NaN previous delay', { previousDelay: NaN }, /Driver\.restore: state\.previousDelay .*received NaN$/],
      ['a negative previous delay', { previousDelay: -5 }, /Driver\.restore: state\.previousDelay .*received -5$/],
      ['a NaN start', { startedAt: NaN }, /Driver\.restore: state\.startedAt .*received NaN$/],
      ['an infinite start', { startedAt: -Infinity }, /Driver\.restore: state\.startedAt .*received -Infinity$/],
      ['a NaN due time', { dueAt: NaN }, /Driver\.restore: state\.dueAt .*received NaN$/],
      ['an infinite due time', { dueAt: Infinity }, /Driver\.restore: state\.dueAt .*received Infinity$/],
      ['an all-zero random position', { random: [0, 0, 0, 0] }, /Random\.fromState: state .*received \[0,0,0,0\]$/],
      ['a short random position', { random: [1, 2, 3] }, /Random\.fromState: state .*received \[1,2,3\]$/]
    ])('should throw a RangeError for impossible bookkeeping: %s', (_, change, message) => {
      throwsRangeError(() => Driver.restore(Schedule.recurs(3), { ...stored, ...change }), message)
    })

    it('should reject a value that is not a schedule with a TypeError', () => {
      throwsTypeError(
        () => Driver.restore(null as unknown as Schedule.Schedule<unknown>, stored),
        /^Driver\.restore: schedule must be a Schedule/
      )
    })

    describe('a stored state checked against its schedule (regression: issue 18, defect 8)', () => {
      const recurs3 = Driver.make(Schedule.recurs(3)).snapshot()
      it.each<readonly [string, Schedule.Json, string]>([
        ['{}', {}, '{}'],
        ['"abc"', 'abc', '"abc"'],
        ['-1e9', -1e9, '-1000000000'],
        ['a count past n', 4, '4'],
        ['a fraction', 1.5, '1.5']
      ])(
        'recurs(3) restored from %s should be an InvalidState, not a run that retries for ever at 0 ms',
        (_, bad, shown) => {
          const invalid = leftOf(Driver.restore(Schedule.recurs(3), { ...recurs3, scheduleState: bad }))
          ok(invalid instanceof Driver.InvalidState)
          deepStrictEqual(
            [invalid._tag, invalid.name, invalid.schedule, invalid.state, invalid.message],
            [
              'InvalidState',
              'InvalidState',
              'recurs(3)',
              bad,
              `Driver: the stored state ${shown} is not a state of the schedule recurs(3)`
            ]
          )
        }
      )

      it('should refuse junk in a composite state with an InvalidState, not a TypeError "state is not iterable"', () => {
        const s = pipe(Schedule.exponential(100), Schedule.capped(1000), Schedule.intersect(Schedule.recurs(3)))
        const stored = Driver.make(s).snapshot()
        for (const bad of [{}, 'abc', -1e9, [100], [100, 'x'], [50, 0], [100, 0, 0]]) {
          ok(leftOf(Driver.restore(s, { ...stored, scheduleState: bad })) instanceof Driver.InvalidState)
        }
      })

      it('should refuse a state whose check throws, and accept any state of a make without a check', () => {
        const throwing = Schedule.make(0, () => Schedule.done, {
          isState: () => {
            throw new Error('boom')
          }
        })
        ok(leftOf(Driver.restore(throwing, Driver.make(throwing).snapshot())) instanceof Driver.InvalidState)
        const unchecked = Schedule.make(0, () => Schedule.done)
        ok(Driver.restore(unchecked, { ...Driver.make(unchecked).snapshot(), scheduleState: 'abc' })._tag === 'Right')
      })

      /** Junk for a state: any JSON, or the schedule's own state with one number or item replaced. */
      const junkFor = (state: Schedule.Json): fc.Arbitrary<Schedule.Json> => {
        const junk = fc.oneof(
          fc.constantFrom<Schedule.Json>(null, {}, 'abc', -1e9, -1, 0, 1, 2, 3, 1.5, 1e300, true, [], [0]),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.integer({ min: -5, max: 20 })
        )
        const replaced = (value: Schedule.Json): fc.Arbitrary<Schedule.Json> =>
          Array.isArray(value) && value.length > 0
            ? fc
                .nat(value.length - 1)
                .chain((i) =>
                  fc
                    .oneof(junk, replaced(value[i] as Schedule.Json))
                    .map((item) => value.map((v: Schedule.Json, j: number) => (j === i ? item : v)))
                )
            : junk
        return fc.oneof(fc.jsonValue() as fc.Arbitrary<Schedule.Json>, replaced(state))
      }

      it('should restore every snapshot a schedule made, and either refuse junk or go on from it without a throw or a bad delay', () => {
        const cases = fc.tuple(schedule, runPlanArbitrary(), fc.nat(10)).chain(([s, plan, at]) => {
          const driver = driverFor(s, plan)
          advanceRun(driver, plan, at)
          const snapshot = driver.snapshot()
          return junkFor(snapshot.scheduleState).map((bad) => ({ s, plan, snapshot, bad }))
        })
        fc.assert(
          fc.property(cases, ({ s, plan, snapshot, bad }) => {
            ok(s.isState(snapshot.scheduleState))
            ok(Driver.restore(s, snapshot)._tag === 'Right')
            const restored = Driver.restore(s, { ...snapshot, scheduleState: bad })
            if (restored._tag === 'Left') {
              ok(restored.left instanceof Driver.InvalidState)
            } else {
              // accepted: then it is a state of the schedule, and the run goes on as from any other
              ok(s.isState(bad))
              for (const d of advanceRun(restored.right, plan, 30)) ok(d.delay === -1 || d.delay >= 0)
            }
          }),
          { numRuns: numRuns * 5 }
        )
      })
    })
  })

  describe('stepper', () => {
    it('should agree with the pure step of every schedule, decision by decision', () => {
      fc.assert(
        fc.property(schedule, runPlanArbitrary(), (s, plan) => {
          deepStrictEqual(advanceRun(driverFor(s, plan), plan), traceDecisions(trace(s, plan)))
        }),
        { numRuns }
      )
    })

    it('should never change the JSON state it starts from, and give its state as plain JSON', () => {
      fc.assert(
        fc.property(schedule, runPlanArbitrary(10), (s, plan) => {
          for (const step of trace(s, plan)) {
            const frozen = deepFreeze(throughJson(step.state))
            // A write to the frozen state throws: the stepper must copy what it changes.
            const stepper = s.stepper(frozen)
            const delay = stepper.next(replayCursor(step))
            deepStrictEqual(frozen, throughJson(step.state))
            if (delay >= 0) deepStrictEqual(throughJson(stepper.state()), stepper.state())
          }
        }),
        { numRuns }
      )
    })
  })
})
