/**
 * A schedule from configuration: a JSON policy, as an operator would set it in a config file or an environment
 * variable, decoded by ScheduleConfig into the same Schedule one would write by hand.
 */
import * as E from 'fp-ts/Either'
import * as Random from '../src/Random'
import * as Driver from '../src/Driver'
import * as ScheduleConfig from '../src/ScheduleConfig'
import { heading, showDelays } from './log'

// What RETRY_POLICY could hold: the compact form, durations as strings.
const policy =
  '{ "exponential": "100ms", "cap": "2s", "jitter": "full", "maxRetries": 5, "retryOn": ["ECONNRESET", 503] }'

// A config with three mistakes: every one is reported, each with its path.
const mistaken = '{ "exponential": "100ms", "cap": "ten", "maxRetry": 5, "jitter": "half" }'

export const configDriven = (): void => {
  heading('8. A schedule from configuration: JSON in, the same Schedule out, every mistake reported at once')
  console.log(`  config       ${policy}`)
  const schedule = ScheduleConfig.parse(JSON.parse(policy))
  if (E.isLeft(schedule)) throw new Error(schedule.left.message)
  console.log(`  description  ${schedule.right.description}`)
  const reset = { code: 'ECONNRESET' }
  console.log(
    `  delays       ${showDelays(
      Driver.delays(schedule.right, { random: Random.seeded(1), input: reset })
    )} (ECONNRESET, Random.seeded(1))`
  )
  console.log(
    `  delays       ${showDelays(Driver.delays(schedule.right, { input: { status: 400 } }))} (a 400 is not in retryOn)`
  )
  console.log(`\n  config       ${mistaken}`)
  const bad = ScheduleConfig.parse(JSON.parse(mistaken))
  if (E.isRight(bad)) throw new Error('expected the mistaken config to fail')
  for (const line of bad.left.message.split('\n')) console.log(`  ${line}`)
}
