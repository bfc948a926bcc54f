/**
 * The bookkeeping of one run of a schedule, shared by every interpreter (`Schedule.delays` and the runners), so
 * that the status a schedule sees and the checks on the delays it returns are defined once.
 *
 * @internal
 */
import * as O from 'fp-ts/Option'
import type { Random } from '../Random'
import * as RetryStatus from '../RetryStatus'
import type { Decision, Json, Schedule } from '../Schedule'
import { MAX_DELAY } from './validate'

export class Progress<In> {
  state: Json
  iterNumber = 0
  cumulativeDelay = 0
  previousDelay: O.Option<number> = O.none
  /** The status the latest decision was made with. */
  status: RetryStatus.RetryStatus = RetryStatus.initial

  constructor(
    readonly schedule: Schedule<In>,
    readonly start: number
  ) {
    this.state = schedule.initial
  }

  /** The status at `now`. */
  statusAt(now: number): RetryStatus.RetryStatus {
    return this.iterNumber === 0 && now === this.start
      ? RetryStatus.initial
      : {
          iterNumber: this.iterNumber,
          elapsed: now - this.start,
          cumulativeDelay: this.cumulativeDelay,
          previousDelay: this.previousDelay
        }
  }

  /** Asks the schedule about `input` at `now`; on a retry, counts it and moves to the schedule's next state. */
  decide(input: In, now: number, random: Random): Decision {
    const status = (this.status = this.statusAt(now))
    const decision = this.schedule.step(this.state, input, status, now, random)
    if (decision._tag === 'Continue') {
      const delay = decision.delay
      if (!(delay >= 0 && delay <= MAX_DELAY)) {
        throw new RangeError(
          `Schedule: a step returned the delay ${String(delay)}; delays must be finite numbers of ms in [0, ${MAX_DELAY}]`
        )
      }
      this.state = decision.state
      this.iterNumber++
      this.cumulativeDelay += delay
      // Options are immutable values: a run of equal delays (zero-delay retries, a capped backoff) shares one.
      const previous = this.previousDelay
      if (previous._tag === 'None' || !Object.is(previous.value, delay)) this.previousDelay = O.some(delay)
    }
    return decision
  }
}
