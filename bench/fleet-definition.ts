/**
 * What `npm run bench:fleet` measures: the library as its users run it, compiled, and the definition of the jobs, a
 * job that fails its first attempt and succeeds on its retry, `exponential(10)` limited to 3 retries, so the retry
 * comes 10 ms after the failure.
 *
 * The library is the tests' compiled copy of the sources (`test/support/child.ts`: TypeScript's transpiler, as
 * `npm run build`), not the sources through tsx, whose CommonJS interop makes every access to another module's
 * export a getter call and names every closure as it is made: some 30 µs per job that users do not pay (measured
 * for issue 20), as `npm run bench` measures `lib/` for the same reason.
 */
import * as E from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import * as t from 'io-ts'
import * as path from 'path'
import type * as BullMQ from '../src/BullMQ'
import type * as Driver from '../src/Driver'
import type * as Durable from '../src/Durable'
import type * as Random from '../src/Random'
import type * as Schedule from '../src/Schedule'
import { compiledSources } from '../test/support/child'

/** The modules of the library the benchmark uses, compiled. */
export interface Library {
  readonly BullMQ: typeof BullMQ
  readonly Driver: typeof Driver
  readonly Durable: typeof Durable
  readonly Random: typeof Random
  readonly Schedule: typeof Schedule
}

/**
 * The compiled library under `root` (a folder of `compiledSources`; made now when not given): the benchmark's
 * process and its workers load the same one.
 */
export const library = (root: string = compiledSources()): Library => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled copy, typed by its sources
  const load = <M>(name: string): M => require(path.join(root, 'src', `${name}.js`)) as M
  return {
    BullMQ: load('BullMQ'),
    Driver: load('Driver'),
    Durable: load('Durable'),
    Random: load('Random'),
    Schedule: load('Schedule')
  }
}

/** The definition of the jobs, made with `lib`. */
export const definition = (lib: Library, queue: string): Durable.Definition<number, string, string> =>
  lib.Durable.define<number, string, string>({
    name: queue,
    schedule: pipe(lib.Schedule.exponential(10), lib.Schedule.intersect(lib.Schedule.recurs(3))),
    payload: t.number,
    action: (_, run) => () => Promise.resolve(run.status.iterNumber === 0 ? E.left('503') : E.right('200'))
  })
