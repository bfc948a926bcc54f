/**
 * Calls to a shared service (a breaker's store, a budget or a limiter kept in Redis): each bounded by a deadline,
 * whatever client the user passed, and its outages told once as events, not thrown.
 *
 * The style guide's rule, written once: every call to a server has a deadline; when a shared service is gone, the
 * work it guards goes on by a documented local rule and says so.
 *
 * @internal
 */
import type { Clock, ServiceEvent, Source } from './model'
import { observe } from './observe'
import { isPromise } from './promise'
import * as validate from './validate'

/** What a call that did not answer within its bound rejects with. */
export class ServiceTimeout extends Error {
  constructor(readonly service: string, readonly ms: number) {
    super(`${service} did not answer within ${ms} ms`)
    this.name = 'ServiceTimeout'
  }
}

/**
 * `value` if it settles within `ms` on `clock`, else a rejection with {@link ServiceTimeout}. A plain value (or a
 * throw) comes back at once and arms no timer; the timer is dropped as soon as the promise settles.
 */
export const within = <A>(clock: Clock, ms: number, service: string, call: () => A | Promise<A>): A | Promise<A> => {
  const value = call()
  if (!isPromise(value)) return value
  const controller = new AbortController()
  const timer = clock.sleep(ms, controller.signal, 'timeout').then(() => {
    if (!controller.signal.aborted) throw new ServiceTimeout(service, ms)
  })
  return Promise.race([value, timer as Promise<never>]).finally(() => controller.abort())
}

/** Whether a service answers, as last seen; tells `ServiceUnavailable` and `ServiceRecovered` once per change. */
export interface Health {
  readonly available: () => boolean
  readonly failed: (error: unknown) => void
  readonly answered: () => void
}

export const health = (
  source: Source,
  service: string,
  fallback: string,
  now: () => number,
  tell: ((event: ServiceEvent) => void) | undefined
): Health => {
  let available = true
  return {
    available: () => available,
    failed: (error) => {
      if (!available) return
      available = false
      observe(tell, { _tag: 'ServiceUnavailable', source, run: 0, at: now(), service, fallback, error })
    },
    answered: () => {
      if (available) return
      available = true
      observe(tell, { _tag: 'ServiceRecovered', source, run: 0, at: now(), service })
    }
  }
}

/** What a shared service does when it cannot answer: go on with a local copy, or let everything through, or none. */
export type Fallback = 'local' | 'allow' | 'refuse'

/**
 * The options every service kept in Redis takes, checked: the bound on each call (default 100 ms), the fallback
 * (default `'local'`) and the observer told when it is taken.
 */
export const serviceOptions = (
  where: string,
  options: {
    readonly timeout?: number | undefined
    readonly fallback?: Fallback | undefined
    readonly onEvent?: ((event: ServiceEvent) => void) | undefined
  }
): { readonly timeout: number; readonly fallback: Fallback } => {
  if (options.onEvent !== undefined) validate.callable(where, 'options.onEvent', options.onEvent)
  return {
    timeout: options.timeout === undefined ? 100 : validate.positive(where, 'options.timeout', options.timeout),
    fallback: validate.that(
      where,
      'options.fallback',
      "'local', 'allow' or 'refuse'",
      (f) => f === 'local' || f === 'allow' || f === 'refuse',
      options.fallback ?? 'local'
    )
  }
}
