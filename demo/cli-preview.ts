/**
 * What the `fp-ts-retry` CLI prints, from the same functions: `simulate` for the default schedule, and `compare`
 * (the contention simulation) at one client count, with Polly's decorrelated jitter V2 beside the AWS strategies.
 */
import * as Contention from '../src/Contention'
import * as Schedule from '../src/Schedule'
import { DEFAULT_CONFIG, readConfig } from '../cli/src/config'
import { compareReport } from '../cli/src/contention'
import { sample, sampleReport } from '../cli/src/sample'
import { heading } from './log'

const indent = (text: string): string =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n')

export const cliPreview = (): void => {
  heading('6. fp-ts-retry simulate: the default schedule over 1000 sampled runs of failures')
  const { name, schedule } = readConfig(DEFAULT_CONFIG)
  const options = { runs: 1000, retries: 10, seed: 0, attemptDuration: 0 }
  console.log(indent(sampleReport(name, sample(schedule, options), options)))

  const clients = 50
  heading(`7. fp-ts-retry compare at ${clients} clients: the AWS article's strategies, and Polly's decorrelated jitter V2`)
  const candidates = [
    ...Contention.awsStrategies(),
    { name: 'Polly V2 (median 5 ms)', schedule: Schedule.decorrelatedJitterV2(5, 2000) }
  ]
  const runs = 100
  const rows = Contention.compare({ candidates, clients: [clients], runs })
  console.log(indent(compareReport(rows, { runs, seed: 0, network: Contention.awsNetwork })))
}
