/**
 * An in-process stand-in for a remote service: it fails as a script says, then answers. Nothing leaves the
 * process, so the demo runs anywhere and always tells the same story.
 */
import * as E from 'fp-ts/Either'
import type * as TE from 'fp-ts/TaskEither'

/** What the fake service can fail with: `Unavailable` is worth retrying, `BadRequest` never is. */
export type ServiceError =
  | { readonly _tag: 'Unavailable'; readonly status: 503 }
  | { readonly _tag: 'BadRequest'; readonly status: 400; readonly reason: string }

export const isTransient = (error: ServiceError): boolean => error._tag === 'Unavailable'

export const showError = (error: ServiceError): string =>
  error._tag === 'Unavailable' ? '503 Unavailable' : `400 Bad Request (${error.reason})`

export interface Script {
  /** How many calls fail with `Unavailable` before the service answers (Infinity: it never does). */
  readonly unavailableFor: number
  /** The call (1-based) that fails with a `BadRequest` instead, if any. */
  readonly badRequestOn?: number
  /** How long each call takes, in ms. */
  readonly latency: number
}

export interface FakeService {
  readonly call: TE.TaskEither<ServiceError, string>
  readonly calls: () => number
}

export const makeService = (answer: string, script: Script): FakeService => {
  let calls = 0
  const call: TE.TaskEither<ServiceError, string> = () =>
    new Promise((resolve) => {
      const n = ++calls
      setTimeout(() => {
        if (n === script.badRequestOn) resolve(E.left({ _tag: 'BadRequest', status: 400, reason: 'unknown SKU' }))
        else if (n <= script.unavailableFor) resolve(E.left({ _tag: 'Unavailable', status: 503 }))
        else resolve(E.right(answer))
      }, script.latency)
    })
  return { call, calls: () => calls }
}
