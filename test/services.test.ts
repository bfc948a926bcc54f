/**
 * Every entry point that is given services (a clock, a random, a budget, a breaker, a signal) checks them where
 * they are given: a `TypeError` naming the bad one, not a failure deep inside a run or a request.
 */
import * as Breaker from '../src/Breaker'
import type { RetryBudget } from '../src/Budget'
import type { Clock } from '../src/Clock'
import { hedging } from '../src/Hedging'
import * as Http from '../src/Http'
import type { Random } from '../src/Random'
import { retrying } from '../src/Retry'
import * as Schedule from '../src/Schedule'
import { throwsTypeError } from './util'

const notAClock = {} as Clock
const notARandom = 5 as unknown as Random
const notABudget = {} as RetryBudget
const notASignal = {} as AbortSignal
const halfOpenAfter = Schedule.constant(1_000)

// Regression: each of these was accepted, and failed later with "c.clock.now is not a function" and the like.
describe('services given to an entry point', () => {
  it.each<readonly [string, () => unknown, RegExp]>([
    [
      'retrying, a signal',
      () => retrying(Schedule.recurs(1), { signal: notASignal }),
      /^retrying: options\.signal must be an AbortSignal, received \{\}$/
    ],
    [
      'hedging, a clock',
      () => hedging(Schedule.recurs(1), { clock: notAClock }),
      /^hedging: options\.clock must be a Clock, received \{\}$/
    ],
    [
      'hedging, a random',
      () => hedging(Schedule.recurs(1), { random: notARandom }),
      /^hedging: options\.random must be a Random, received 5$/
    ],
    [
      'hedging, a budget',
      () => hedging(Schedule.recurs(1), { budget: notABudget }),
      /^hedging: options\.budget must be a RetryBudget, received \{\}$/
    ],
    [
      'hedging, a signal',
      () => hedging(Schedule.recurs(1), { signal: notASignal }),
      /^hedging: options\.signal must be an AbortSignal, received \{\}$/
    ],
    [
      'Breaker.consecutive, a clock',
      () => Breaker.consecutive({ threshold: 1, halfOpenAfter, clock: notAClock }),
      /^Breaker\.consecutive: options\.clock must be a Clock, received \{\}$/
    ],
    [
      'Breaker.sampling, a random',
      () => Breaker.sampling({ window: 1_000, failureRate: 0.5, minThroughput: 1, halfOpenAfter, random: notARandom }),
      /^Breaker\.sampling: options\.random must be a Random, received 5$/
    ],
    [
      'Http.request, a clock',
      () => Http.request('http://127.0.0.1/', {}, { clock: notAClock }),
      /^Http\.request: options\.clock must be a Clock, received \{\}$/
    ],
    [
      'Http.hedgingFetch, a clock',
      () => Http.hedgingFetch(Schedule.recurs(1), { clock: notAClock }),
      /^Http\.hedgingFetch: options\.clock must be a Clock, received \{\}$/
    ],
    [
      'Http.hedgingFetch, a budget',
      () => Http.hedgingFetch(Schedule.recurs(1), { budget: notABudget }),
      /^Http\.hedgingFetch: options\.budget must be a RetryBudget, received \{\}$/
    ],
    [
      'Http.retryingFetch, a schedule',
      () => Http.retryingFetch(undefined as unknown as Schedule.Schedule<Http.HttpError>),
      /^Http\.retryingFetch: schedule must be a Schedule, received undefined$/
    ]
  ])('%s that is not one should be a TypeError naming it', (_, f, message) => {
    throwsTypeError(f, message)
  })
})
