/**
 * Three runs against the fake service, in real time (`Clock.live`) with small delays, logged through the hooks.
 */
import { pipe } from 'fp-ts/function'
import * as Clock from '../src/Clock'
import * as Random from '../src/Random'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import * as Driver from '../src/Driver'
import { attemptLogger, heading, showDelays } from './log'
import { isTransient, makeService, showError, type ServiceError } from './service'

/** The README's policy, scaled down to demo time: at most 5 retries (6 attempts), jittered, within 2 s. */
const backoff = pipe(
  Schedule.exponential(100), //             100, 200, 400, ... ms
  Schedule.capped(400), //                  ... never more than 400 ms
  Schedule.fullJitter, //                   ... each drawn in [0, d)
  Schedule.intersect(Schedule.recurs(5)), // 5 retries, 6 attempts
  Schedule.upTo(2000) //                    no retry that would start after 2 s
)

export const successAfterRetries = async (): Promise<void> => {
  heading('1. Success after retries: the service is unavailable for 3 calls, then answers')
  // A seeded Random makes the jitter repeatable, so `Driver.delays` can show the plan before the run.
  console.log(`  planned delays (seed 7): ${showDelays(Driver.delays(backoff, { random: Random.seeded(7) }))}`)
  const service = makeService('42 items in stock', { unavailableFor: 3, latency: 10 })
  // `retrying<ServiceError>`: the schedule accepts any error; naming the type gives the hooks a typed error.
  const retried = pipe(
    service.call,
    retrying<ServiceError>(backoff, { clock: Clock.live, random: Random.seeded(7), ...attemptLogger(showError) })
  )
  await retried()
}

export const givingUp = async (): Promise<void> => {
  heading('2. Giving up: the service stays unavailable; recurs(3) allows 3 retries, so 4 attempts')
  const service = makeService('never', { unavailableFor: Infinity, latency: 10 })
  const threeRetries = pipe(Schedule.constant(100), Schedule.intersect(Schedule.recurs(3)))
  await pipe(service.call, retrying<ServiceError>(threeRetries, attemptLogger(showError)))()
  console.log(`  the service was called ${service.calls()} times`)
}

export const notRetryable = async (): Promise<void> => {
  heading('3. A non-retryable error: whileInput retries 503s only, so a 400 stops the run at once')
  const service = makeService('never', { unavailableFor: Infinity, badRequestOn: 2, latency: 10 })
  const transientOnly = pipe(backoff, Schedule.whileInput(isTransient))
  await pipe(service.call, retrying(transientOnly, { random: Random.seeded(7), ...attemptLogger(showError) }))()
  console.log(`  the service was called ${service.calls()} times: a 400 is not retried, whatever the budget left`)
}
