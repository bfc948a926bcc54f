/**
 * `Driver.delays`: what a schedule would sleep through a run of failures, computed without sleeping.
 */
import { pipe } from 'fp-ts/function'
import * as Random from '../src/Random'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import { heading, showDelays } from './log'

const fiveRetries = Schedule.intersect(Schedule.recurs(5))
const backoff = pipe(Schedule.exponential(100), Schedule.capped(1000))
// Each jittered row gets a fresh generator with the same seed, so the rows are comparable draw for draw.
const seeded = (): Driver.DelaysOptions<unknown> => ({ random: Random.seeded(1) })

const rows: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
  ['recurs(3): 3 retries (4 attempts), no delay', Driver.delays(Schedule.recurs(3))],
  ['exponential(100), capped(1000), intersect(recurs(5))', Driver.delays(pipe(backoff, fiveRetries))],
  ['... + fullJitter (Random.seeded(1))', Driver.delays(pipe(backoff, Schedule.fullJitter, fiveRetries), seeded())],
  ['... + equalJitter (Random.seeded(1))', Driver.delays(pipe(backoff, Schedule.equalJitter, fiveRetries), seeded())],
  [
    'decorrelatedJitter(100, 1000), intersect(recurs(5)) (Random.seeded(1))',
    Driver.delays(pipe(Schedule.decorrelatedJitter(100, 1000), fiveRetries), seeded())
  ],
  [
    'truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10_000 }), 11 retries',
    Driver.delays(Schedule.truncatedBinaryExponential({ maxDoublings: 9, maxDelay: 10_000 }), { limit: 11 })
  ],
  [
    'exponential(100), upTo(1000), if each attempt takes 150 ms',
    Driver.delays(pipe(Schedule.exponential(100), Schedule.upTo(1000)), { attemptDuration: 150 })
  ],
  [
    'fromDelays([0, 0]), andThen(fromDelays([500, 1000]))',
    Driver.delays(pipe(Schedule.fromDelays([0, 0]), Schedule.andThen(Schedule.fromDelays([500, 1000]))))
  ]
]

export const preview = (): void => {
  heading('4. Driver.delays: what a schedule would do, without running anything')
  for (const [name, delays] of rows) console.log(`  ${name}\n      ${showDelays(delays)}`)
}
