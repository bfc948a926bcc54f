/**
 * fp-ts-retry: purely functional retry schedules for fp-ts.
 *
 * @since 0.1.0
 */
import * as AdaptiveLimit from './AdaptiveLimit'
import * as AdaptiveThrottle from './AdaptiveThrottle'
import * as Breaker from './Breaker'
import * as Budget from './Budget'
import * as Bulkhead from './Bulkhead'
import * as Chaos from './Chaos'
import * as Clock from './Clock'
import * as Contention from './Contention'
import * as Decision from './Decision'
import * as Driver from './Driver'
import * as Event from './Event'
import * as Durable from './Durable'
import * as Fallback from './Fallback'
import * as FileEngine from './FileEngine'
import * as FileStore from './FileStore'
import * as Guard from './Guard'
import * as Hedging from './Hedging'
import * as Http from './Http'
import * as Keyed from './Keyed'
import * as Overload from './Overload'
import * as Policies from './Policies'
import * as PolicyConfig from './PolicyConfig'
import * as Random from './Random'
import * as RateLimiter from './RateLimiter'
import * as Retry from './Retry'
import * as RetryState from './RetryState'
import * as RetryStatus from './RetryStatus'
import * as Schedule from './Schedule'
import * as ScheduleConfig from './ScheduleConfig'
import * as TestClock from './TestClock'
import * as Timeout from './Timeout'

export {
  /**
   * Adaptive concurrency limits: a limit on the calls in flight learned from their latencies and drops (AIMD,
   * Gradient2), with a queue by priority that sheds the lowest first; a combinator and a guard.
   *
   * @category model
   * @since 1.0.0
   */
  AdaptiveLimit,
  /**
   * Client-side adaptive throttling (the SRE book's): drops a share of the requests locally once the backend refuses
   * more than `1 / k` of them; a combinator and a guard.
   *
   * @category model
   * @since 1.0.0
   */
  AdaptiveThrottle,
  /**
   * Circuit breakers shared by the calls to one dependency, their half-open waits a `Schedule`: `consecutive`,
   * `sampling`, `protect`.
   *
   * @category model
   * @since 1.0.0
   */
  Breaker,
  /**
   * Retry budgets: shared limits on retrying, consulted before every retry.
   *
   * @category model
   * @since 0.1.0
   */
  Budget,
  /**
   * Bulkheads: at most N calls in flight and a bounded queue; a combinator and a guard.
   *
   * @category model
   * @since 1.0.0
   */
  Bulkhead,
  /**
   * Deterministic chaos: inject a fault, a latency, an outcome or a behaviour into a share of the calls, drawn from a
   * `Random` (seeded: the same experiment on every run).
   *
   * @category testing
   * @since 1.0.0
   */
  Chaos,
  /**
   * Time as a service: `Clock.live` and the `Clock` interface.
   *
   * @category model
   * @since 0.1.0
   */
  Clock,
  /**
   * The contention simulation of the AWS "Exponential Backoff and Jitter" article: compare schedules under load.
   *
   * @category interpreters
   * @since 0.1.0
   */
  Contention,
  /**
   * What follows an attempt, decided once: the schedule, then the guards, then the events; every run ends once.
   *
   * @category interpreters
   * @since 1.0.0
   */
  Decision,
  /**
   * The one interpreter of a schedule: feed it inputs and times, get decisions; snapshot and restore a run.
   *
   * @category interpreters
   * @since 1.0.0
   */
  Driver,
  /**
   * One event vocabulary for every module: plain records told to `onEvent`.
   *
   * @category model
   * @since 1.0.0
   */
  Event,
  /**
   * Durable retries: `define` a run, `submit` it to an `Engine` (the embedded `FileEngine.make`, or
   * `BullMQ.make`), `work` it; one `deliver` step decides for every engine.
   *
   * @category interpreters
   * @since 1.0.0
   */
  Durable,
  /**
   * A fallback, outermost: answer a failed call from another task, chosen by its error and by why its run stopped;
   * told as `FallbackUsed`.
   *
   * @category combinators
   * @since 1.0.0
   */
  Fallback,
  /**
   * The embedded durable engine, for one machine: runs stored as files, timers for due runs.
   *
   * @category interpreters
   * @since 1.0.0
   */
  FileEngine,
  /**
   * A file-backed store for a persisted run: atomic `save`, `load`, `clear`.
   *
   * @category model
   * @since 0.1.0
   */
  FileStore,
  /**
   * Guards: one protocol for whatever may refuse a retry (breaker, budget, rate limiter, bulkhead).
   *
   * @category model
   * @since 1.0.0
   */
  Guard,
  /**
   * Hedged requests: another attempt after each of a schedule's delays, the first success wins, the others aborted.
   *
   * @category interpreters
   * @since 1.0.0
   */
  Hedging,
  /**
   * HTTP retries done right: a classified `fetch`, the retry condition, idempotency, `Retry-After`, timeouts.
   *
   * @category interpreters
   * @since 0.1.0
   */
  Http,
  /**
   * Policies per key: a breaker per host, a rate limiter per tenant, made on first use; at most `maxKeys` of them,
   * least recently used evicted first, idle ones dropped.
   *
   * @category model
   * @since 1.0.0
   */
  Keyed,
  /**
   * The overload simulation: a fleet of clients against a server whose latency rises with load, behind no limit, a
   * fixed bulkhead or an adaptive limit: throughput, tail latency and drops, interval by interval.
   *
   * @category interpreters
   * @since 1.0.0
   */
  Overload,
  /**
   * A whole resilience pipeline as configuration: one io-ts codec for a JSON document of pipelines (timeout, rate
   * limit, breaker, retry, budget, hedging, bulkhead, fallback, key, store), with paths and hints in its errors.
   *
   * @category codecs
   * @since 1.0.0
   */
  PolicyConfig,
  /**
   * A registry of the pipelines a `PolicyConfig` document describes, by name and by key, run in the documented
   * order and reloaded while running without losing a breaker's or a limiter's state; `watchFile` reloads from a file.
   *
   * @category model
   * @since 1.0.0
   */
  Policies,
  /**
   * Uniform draws in `[0, 1)`: `Random.live`, `Random.seeded`, `Random.fromState`, `Random.fixed`.
   *
   * @category model
   * @since 0.1.0
   */
  Random,
  /**
   * Rate limiters: a token bucket (GCRA) on a clock, as a guard and as a combinator that waits for a token.
   *
   * @category model
   * @since 1.0.0
   */
  RateLimiter,
  /**
   * The runners and their options, hooks and environment types (`RetryOptions`, `Hooks`, `RetryEnv`, ...).
   *
   * @category interpreters
   * @since 0.1.0
   */
  Retry,
  /**
   * Retries that survive a restart: the stored state of an in-flight run, and one step at a time.
   *
   * @category model
   * @since 0.1.0
   */
  RetryState,
  /**
   * The retry status a schedule decides with.
   *
   * @category model
   * @since 0.1.0
   */
  RetryStatus,
  /**
   * Retry policies as values: constructors, combinators, instances and the pure `delays` interpreter.
   *
   * @category model
   * @since 0.1.0
   */
  Schedule,
  /**
   * Schedules as configuration: the io-ts codec of a JSON schedule config and its interpreter.
   *
   * @category codecs
   * @since 0.1.0
   */
  ScheduleConfig,
  /**
   * A clock for deterministic tests.
   *
   * @category testing
   * @since 0.1.0
   */
  TestClock,
  /**
   * A timeout as a combinator of its own, on a clock.
   *
   * @category combinators
   * @since 1.0.0
   */
  Timeout
}

export {
  /**
   * Retries a `TaskEither` as a schedule says.
   *
   * @category interpreters
   * @since 0.1.0
   */
  retrying,
  /**
   * Retries an action that receives the retry status.
   *
   * @category interpreters
   * @since 0.1.0
   */
  retryingWithStatus,
  /**
   * Retries a cancellable action: each attempt receives its status and an `AbortSignal` (run abort, timeout).
   *
   * @category interpreters
   * @since 1.0.0
   */
  retryingWithContext,
  /**
   * Retries a `ReaderTaskEither` whose environment provides the clock and random.
   *
   * @category interpreters
   * @since 0.1.0
   */
  retryingReaderTaskEither,
  /**
   * Runs again after each success while a schedule continues, collecting the results.
   *
   * @category interpreters
   * @since 0.1.0
   */
  repeating
} from './Retry'
