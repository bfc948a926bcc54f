/**
 * The definition `npm run bench:fleet` measures: a job that fails its first attempt and succeeds on its retry,
 * `exponential(10)` limited to 3 retries, so the retry comes 10 ms after the failure.
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as t from 'io-ts'
import * as Durable from '../src/Durable'
import * as Schedule from '../src/Schedule'

export const definition = (queue: string): Durable.Definition<number, string, string> =>
  Durable.define<number, string, string>({
    name: queue,
    schedule: pipe(Schedule.exponential(10), Schedule.intersect(Schedule.recurs(3))),
    payload: t.number,
    action: (_, run) => () => Promise.resolve(run.status.iterNumber === 0 ? E.left('503') : E.right('200'))
  })
