/**
 * Telling a promise from a plain answer: hooks, budgets and breakers may answer either way, and the runners await
 * only a promise, so that a synchronous answer costs no turn of the microtask queue.
 *
 * @internal
 */

/** Whether `value` is a promise (a thenable object). */
export const isPromise = (value: unknown): value is Promise<unknown> =>
  value !== null && typeof value === 'object' && typeof (value as Promise<unknown>).then === 'function'
