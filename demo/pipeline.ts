/**
 * A whole resilience pipeline from one JSON document (PolicyConfig), kept per host (Policies keys it through
 * Keyed), reloaded mid-outage without losing a breaker's state, and a bad document refused while the running
 * pipelines stay. On a TestClock: the half-minute of the outage takes no real time.
 */
import * as E from 'fp-ts/Either'
import type { TaskEither } from 'fp-ts/TaskEither'
import type { Event } from '../src/Event'
import * as Policies from '../src/Policies'
import * as TestClock from '../src/TestClock'
import { heading } from './log'

const document = (threshold: number): unknown => ({
  policies: {
    payments: {
      timeout: '2s',
      breaker: { kind: 'consecutive', threshold, halfOpenAfter: { constant: '30s' } },
      retry: { exponential: '100ms', maxRetries: 2 },
      key: { template: '{host}', maxKeys: 1_000 }
    }
  }
})

const down: TaskEither<string, string> = () => Promise.resolve(E.left('503'))
const up: TaskEither<string, string> = () => Promise.resolve(E.right('ok'))

export const pipelineFromConfig = async (): Promise<void> => {
  heading('9. A whole pipeline from one document: kept per host, reloaded mid-outage, a bad document refused')
  const clock = TestClock.make()
  const told: Array<string> = []
  const onEvent = (event: Event): void => {
    if (event._tag === 'BreakerStateChanged') told.push(`${event.key ?? ''} ${event.from} -> ${event.to}`)
    if (event.source === 'config') told.push(event._tag)
  }
  const policies = Policies.make(document(3), { clock, onEvent })
  const state = (host: string): string => policies.get('payments', { host }).breaker?.state._tag ?? 'none'
  const show = (what: string): void =>
    console.log(`  ${`t=${clock.now()} ms`.padEnd(12)} ${what.padEnd(44)} a: ${state('a.example')}, b: ${state('b.example')}`)

  show('start: threshold 3')
  const outage = policies.run('payments', { host: 'a.example' })(down)()
  await clock.runAll()
  await outage
  show('a.example failed 3 times in a row')
  const reloaded = policies.reload(document(10))
  console.log(`  reload, threshold 10: ${E.isRight(reloaded) ? `changed ${reloaded.right.changed.join(', ')}` : 'refused?'}`)
  show('the new breaker of a.example is still open')
  const refused = policies.reload(document(-1))
  console.log(`  reload, threshold -1: ${E.isLeft(refused) ? refused.left.message : 'accepted?'}`)
  show('refused: the running pipelines stay')
  await clock.advance(30_000)
  const probe = await policies.run('payments', { host: 'a.example' })(up)()
  show(`30 s later, a probe: ${E.isRight(probe) ? probe.right : probe.left}`)
  console.log(`  events  ${told.join('; ')}`)
}
