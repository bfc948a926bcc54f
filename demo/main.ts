/**
 * `npm run demo`: fp-ts-retry against a flaky in-process service, in real time, in under 3 seconds.
 *
 * Each line of a run is printed by the runner's hooks (see log.ts): the failed attempt, the delay the schedule
 * chose, and how the run ended.
 */
import * as Clock from '../src/Clock'
import { cliPreview } from './cli-preview'
import { configDriven } from './config'
import { overHttp } from './http'
import { pipelineFromConfig } from './pipeline'
import { ms } from './log'
import { preview } from './preview'
import { givingUp, notRetryable, successAfterRetries } from './scenarios'

const main = async (): Promise<void> => {
  const start = Clock.live.now()
  await successAfterRetries()
  await givingUp()
  await notRetryable()
  preview()
  await overHttp()
  cliPreview()
  configDriven()
  await pipelineFromConfig()
  console.log(`\nDone in ${ms(Clock.live.now() - start)}.`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
