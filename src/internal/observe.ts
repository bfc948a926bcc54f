/**
 * The one rule for an observer that throws (`onEvent`, in every module): watching a run never changes what it does.
 * The observer's error is reported as a process warning (`ObserverWarning`, with its stack) and the module goes on
 * as if the observer had returned. A hook the run waits on (`onRetry`, `onDone`) is not an observer: its error is a
 * defect of the call (see `Event`'s module docs, where the rule is written for users).
 *
 * @internal
 */

/** Reports an observer's error as a process warning: never thrown, never an unhandled rejection. */
export const reportObserverError = (error: unknown): void => {
  const text = error instanceof Error ? error.message : String(error)
  process.emitWarning(`fp-ts-retry: an observer threw, and was ignored: ${text}`, {
    type: 'ObserverWarning',
    detail: error instanceof Error ? error.stack : undefined
  })
}

/** Tells `observer` of `event`; an error it throws is reported, and the caller goes on. */
export const observe = <E>(observer: ((event: E) => void) | undefined, event: E): void => {
  if (observer === undefined) return
  try {
    observer(event)
  } catch (error) {
    reportObserverError(error)
  }
}

/** `observer`, told every event with `key` set: the events of a keyed policy, or of a run given a key. */
export const withKey =
  <E extends { readonly key?: string | undefined }>(key: string, observer: (event: E) => void) =>
  (event: E): void =>
    observer({ ...event, key })
