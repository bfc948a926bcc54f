/**
 * Type-level tests of the public signatures. Jest only transpiles, so these expectations are checked by the type
 * check of `npm run lint` (`tsc -p tsconfig.json`): a broken expectation or an unused `@ts-expect-error` fails it.
 * The `it` blocks give each group a name; the last one compiles a fixture with `exactOptionalPropertyTypes` through
 * the TypeScript API, so that check runs in jest as well.
 */
import { expectTypeOf } from 'expect-type'
import type { Either } from 'fp-ts/Either'
import { pipe } from 'fp-ts/function'
import type * as RTE from 'fp-ts/ReaderTaskEither'
import * as TE from 'fp-ts/TaskEither'
import type { Monoid } from 'fp-ts/Monoid'
import * as path from 'path'
import * as ts from 'typescript'
import type * as Breaker from '../src/Breaker'
import type * as machine from '../src/breaker/machine'
import type * as store from '../src/breaker/store'
import * as Clock from '../src/Clock'
import type { Driver } from '../src/Driver'
import * as DriverModule from '../src/Driver'
import type * as model from '../src/internal/model'
import * as Http from '../src/Http'
import { repeating, retrying, retryingReaderTaskEither, retryingWithStatus } from '../src/index'
import * as Random from '../src/Random'
import type { Ended, Retried, RetryEnv, RetryOptions, StopReason } from '../src/Retry'
import { retryingWithContext } from '../src/Retry'
import * as RetryState from '../src/RetryState'
import type { RetryStatus } from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, strictEqual } from './util'

interface HttpError {
  readonly status: number
}

interface NotFound extends HttpError {
  readonly status: 404
  readonly path: string
}

interface Timeout {
  readonly timeoutMs: number
}

interface Env extends RetryEnv {
  readonly endpoint: string
}

const onServerErrors = pipe(
  Schedule.constant(100),
  Schedule.whileInput((e: HttpError) => e.status >= 500)
)

const stringFailure: TE.TaskEither<string, number> = TE.left('down')
const httpFailure: TE.TaskEither<HttpError, number> = TE.left({ status: 503 })
const notFoundFailure: TE.TaskEither<NotFound, { readonly id: string }> = TE.left({ status: 404, path: '/users' })
const timeoutFailure: TE.TaskEither<Timeout, number> = TE.left({ timeoutMs: 100 })
const httpSchedule: Schedule.Schedule<HttpError> = onServerErrors
const timeoutSchedule: Schedule.Schedule<Timeout> = Schedule.recurs(1)

/** Type-checks an expression without evaluating it (some would throw at run time). */
const typeOnly = (_expression: () => unknown): void => undefined

describe('types', () => {
  it('retrying with a Schedule<unknown> should accept any TaskEither<E, A> and return a TaskEither<E, A>', () => {
    const retry = retrying(Schedule.recurs(3))
    expectTypeOf(retry(stringFailure)).toEqualTypeOf<TE.TaskEither<string, number>>()
    expectTypeOf(retry(httpFailure)).toEqualTypeOf<TE.TaskEither<HttpError, number>>()
    expectTypeOf(retry(TE.right<never, ReadonlyArray<boolean>>([true]))).toEqualTypeOf<
      TE.TaskEither<never, ReadonlyArray<boolean>>
    >()
    expectTypeOf(pipe(stringFailure, retrying(Schedule.exponential(10)))).toEqualTypeOf<TE.TaskEither<string, number>>()
  })

  it('retrying with a Schedule<HttpError> should accept HttpError and its subtypes, and nothing else', () => {
    expectTypeOf(retrying(onServerErrors)(httpFailure)).toEqualTypeOf<TE.TaskEither<HttpError, number>>()
    expectTypeOf(retrying(onServerErrors)(notFoundFailure)).toEqualTypeOf<
      TE.TaskEither<NotFound, { readonly id: string }>
    >()
    typeOnly(() =>
      // @ts-expect-error a Schedule<HttpError> cannot look at a string error
      retrying(onServerErrors)(stringFailure)
    )
    typeOnly(() =>
      // @ts-expect-error nor at an unrelated error type
      pipe(timeoutFailure, retrying(onServerErrors))
    )
  })

  it('retrying options should see the schedule input type in hooks', () => {
    expectTypeOf<RetryOptions<HttpError>['onRetry']>().toEqualTypeOf<
      ((retried: Retried<HttpError, HttpError>) => unknown) | undefined
    >()
    const retry = retrying(onServerErrors, {
      onRetry: ({ error, status, delay, driver }) => {
        expectTypeOf(error).toEqualTypeOf<HttpError>()
        expectTypeOf(status).toEqualTypeOf<RetryStatus>()
        expectTypeOf(delay).toEqualTypeOf<number>()
        expectTypeOf(driver).toEqualTypeOf<Driver<HttpError>>()
      }
    })
    // given apart from an action, a runner with a typed hook is typed by its hooks: the value is unknown here
    expectTypeOf(retry(httpFailure)).toEqualTypeOf<TE.TaskEither<HttpError, unknown>>()
  })

  it('given the action first, the hooks should see its error and value types without type arguments (issue 19)', () => {
    interface User {
      readonly name: string
    }
    const fetchUser: TE.TaskEither<Error, User> = TE.left(new Error('down'))
    const policy = pipe(Schedule.exponential(100), Schedule.intersect(Schedule.recurs(3)))
    const run = retrying(fetchUser, policy, {
      onRetry: ({ error }) => {
        expectTypeOf(error).toEqualTypeOf<Error>()
        return error.message
      },
      onDone: ({ result }) => expectTypeOf(result).toEqualTypeOf<Either<Error, User>>()
    })
    expectTypeOf(run).toEqualTypeOf<TE.TaskEither<Error, User>>()
    const withContext = retryingWithContext(({ signal }) => (signal.aborted ? fetchUser : fetchUser), policy, {
      onRetry: ({ error }) => expectTypeOf(error).toEqualTypeOf<Error>()
    })
    expectTypeOf(withContext).toEqualTypeOf<TE.TaskEither<Error, User>>()
    // in a pipe, as TE.map is, the runner is typed by the action it is applied to (issue 26)
    const piped = pipe(
      fetchUser,
      retrying(policy, {
        onRetry: ({ error }) => {
          expectTypeOf(error).toEqualTypeOf<Error>()
          return error.message
        },
        onDone: ({ result }) => expectTypeOf(result).toEqualTypeOf<Either<Error, User>>()
      })
    )
    expectTypeOf(piped).toEqualTypeOf<TE.TaskEither<Error, User>>()
    typeOnly(() =>
      pipe(
        fetchUser,
        // @ts-expect-error a field the error does not have
        retrying(policy, { onRetry: ({ error }) => error.nope })
      )
    )
    typeOnly(() =>
      pipe(
        fetchUser,
        // @ts-expect-error nor the value
        retrying(policy, { onDone: ({ result }) => result._tag === 'Right' && result.right.age })
      )
    )
    // every runner, with a Schedule<Error> too
    const onErrors: Schedule.Schedule<Error> = Schedule.recurs(2)
    expectTypeOf(
      pipe(
        () => fetchUser,
        retryingWithStatus(onErrors, { onRetry: ({ error }) => expectTypeOf(error).toEqualTypeOf<Error>() })
      )
    ).toEqualTypeOf<TE.TaskEither<Error, User>>()
    expectTypeOf(
      pipe(
        () => fetchUser,
        retryingWithContext(onErrors, {
          onDone: ({ result }) => expectTypeOf(result).toEqualTypeOf<Either<Error, User>>()
        })
      )
    ).toEqualTypeOf<TE.TaskEither<Error, User>>()
    // a schedule whose input the action's error does not fit is refused where it is given
    const onNumbers = Schedule.whileInput((n: number) => n > 0)(Schedule.recurs(1))
    // @ts-expect-error an Error is not a number
    typeOnly(() => retrying(fetchUser, onNumbers))
  })

  it('onRetry may return a promise (the run awaits it), and its driver is the one to snapshot', () => {
    const saved: Array<unknown> = []
    const retry = retrying(onServerErrors, {
      onRetry: async ({ driver }) => {
        saved.push(driver.snapshot())
        await Promise.resolve()
      }
    })
    expectTypeOf(retry(httpFailure)).toEqualTypeOf<TE.TaskEither<HttpError, unknown>>()
  })

  it('regression: onDone should see the Either of the run, Either<E, A>, when annotated', () => {
    const retry = retrying(onServerErrors, {
      onDone: ({ result, status, reason }: Ended<HttpError, number>) => {
        expectTypeOf(result).toEqualTypeOf<Either<HttpError, number>>()
        expectTypeOf(status).toEqualTypeOf<RetryStatus>()
        expectTypeOf(reason).toEqualTypeOf<StopReason>()
      }
    })
    expectTypeOf(retry(httpFailure)).toEqualTypeOf<TE.TaskEither<HttpError, number>>()
    // the action's error and value must fit the annotation
    expectTypeOf(retry(notFoundFailure as unknown as TE.TaskEither<NotFound, number>)).toEqualTypeOf<
      TE.TaskEither<HttpError, number>
    >()
    typeOnly(() =>
      // @ts-expect-error the run succeeds with a string, onDone expects a number
      retry(TE.left<HttpError, string>({ status: 503 }))
    )
    typeOnly(() =>
      pipe(
        // @ts-expect-error onDone expects an HttpError, the run fails with a string
        stringFailure,
        retrying(Schedule.recurs(1), { onDone: ({ result }: Ended<HttpError, number>) => void result })
      )
    )
    // without an annotation, onDone sees unknown: nothing is claimed that the run does not know
    retrying(Schedule.recurs(1), {
      onDone: ({ result }) => {
        expectTypeOf(result).toEqualTypeOf<Either<unknown, unknown>>()
      }
    })
  })

  it('retryingWithStatus should give the action a RetryStatus', () => {
    const run = pipe(
      (status: RetryStatus) => TE.left<HttpError, string>({ status: status.iterNumber }),
      retryingWithStatus(onServerErrors)
    )
    expectTypeOf(run).toEqualTypeOf<TE.TaskEither<HttpError, string>>()
    typeOnly(() =>
      // @ts-expect-error the action takes a RetryStatus, not a string
      retryingWithStatus(Schedule.recurs(1))((s: string) => TE.right(s))
    )
  })

  it('whileInput and untilInput should narrow the input type by intersection', () => {
    expectTypeOf(onServerErrors).toEqualTypeOf<Schedule.Schedule<HttpError>>()
    const both = pipe(
      httpSchedule,
      Schedule.whileInput((e: Timeout) => e.timeoutMs > 0)
    )
    expectTypeOf(both).toEqualTypeOf<Schedule.Schedule<HttpError & Timeout>>()
    const until = pipe(
      httpSchedule,
      Schedule.untilInput((e: Timeout) => e.timeoutMs > 0)
    )
    expectTypeOf(until).toEqualTypeOf<Schedule.Schedule<HttpError & Timeout>>()
  })

  it('intersect, union and andThen should combine input types by intersection', () => {
    expectTypeOf(pipe(httpSchedule, Schedule.intersect(timeoutSchedule))).toEqualTypeOf<
      Schedule.Schedule<HttpError & Timeout>
    >()
    expectTypeOf(pipe(httpSchedule, Schedule.union(timeoutSchedule))).toEqualTypeOf<
      Schedule.Schedule<HttpError & Timeout>
    >()
    expectTypeOf(pipe(httpSchedule, Schedule.andThen(timeoutSchedule))).toEqualTypeOf<
      Schedule.Schedule<HttpError & Timeout>
    >()
    expectTypeOf(pipe(httpSchedule, Schedule.intersect(Schedule.recurs(3)))).toEqualTypeOf<
      Schedule.Schedule<HttpError>
    >()
    // the combination retries only errors that are both
    const combined = pipe(httpSchedule, Schedule.intersect(timeoutSchedule))
    typeOnly(() =>
      // @ts-expect-error an HttpError that is not also a Timeout
      retrying(combined)(httpFailure)
    )
  })

  it('the monoids should keep the input type', () => {
    expectTypeOf(Schedule.getIntersectionMonoid<HttpError>()).toEqualTypeOf<Monoid<Schedule.Schedule<HttpError>>>()
    expectTypeOf(Schedule.getUnionMonoid<HttpError>()).toEqualTypeOf<Monoid<Schedule.Schedule<HttpError>>>()
  })

  it('Schedule should be contravariant in its input', () => {
    expectTypeOf<Schedule.Schedule<unknown>>().toExtend<Schedule.Schedule<Error>>()
    expectTypeOf<Schedule.Schedule<HttpError>>().toExtend<Schedule.Schedule<NotFound>>()
    expectTypeOf<Schedule.Schedule<Error>>().not.toExtend<Schedule.Schedule<unknown>>()
    expectTypeOf<Schedule.Schedule<NotFound>>().not.toExtend<Schedule.Schedule<HttpError>>()
    const general: Schedule.Schedule<HttpError> = Schedule.recurs(1)
    // @ts-expect-error a schedule of HttpError cannot stand for one of any input
    const tooGeneral: Schedule.Schedule<unknown> = general
    expectTypeOf(tooGeneral).toEqualTypeOf<Schedule.Schedule<unknown>>()
  })

  it('Driver.restore should answer a ScheduleMismatch or an InvalidState, and the core types be those of one model', () => {
    expectTypeOf(DriverModule.restore(Schedule.recurs(1), RetryState.start(Schedule.recurs(1), 0))).toEqualTypeOf<
      Either<DriverModule.ScheduleMismatch | DriverModule.InvalidState, Driver<unknown>>
    >()
    expectTypeOf<Schedule.Schedule<HttpError>>().toEqualTypeOf<model.Schedule<HttpError>>()
    expectTypeOf<RetryState.RetryState>().toEqualTypeOf<model.RetryState>()
    expectTypeOf<RetryStatus>().toEqualTypeOf<model.RetryStatus>()
    expectTypeOf<model.StopReason>().toEqualTypeOf<
      | 'succeeded'
      | 'failed'
      | 'schedule'
      | 'aborted'
      | 'defect'
      | 'budget'
      | 'breaker'
      | 'rateLimit'
      | 'bulkhead'
      | 'shed'
    >()
    expectTypeOf<StopReason>().toEqualTypeOf<model.StopReason>()
  })

  it("Breaker's implementation should work on the public types of Breaker, declared again in src/breaker/", () => {
    expectTypeOf<Breaker.State>().toEqualTypeOf<machine.State>()
    expectTypeOf<Breaker.Permit>().toEqualTypeOf<machine.Permit>()
    expectTypeOf<Breaker.StoredState>().toEqualTypeOf<store.StoredState>()
    expectTypeOf<Breaker.Transition>().toEqualTypeOf<store.Transition>()
    expectTypeOf<Breaker.StoreAnswer>().toEqualTypeOf<store.StoreAnswer>()
    expectTypeOf<Breaker.Store>().toEqualTypeOf<store.Store>()
  })

  it('retryingReaderTaskEither should ask for R & RetryEnv', () => {
    const fetchUser: RTE.ReaderTaskEither<Env, HttpError, string> = (env) => TE.right(env.endpoint)
    expectTypeOf(pipe(fetchUser, retryingReaderTaskEither(onServerErrors))).toEqualTypeOf<
      RTE.ReaderTaskEither<Env & RetryEnv, HttpError, string>
    >()
  })

  it('retryingReaderTaskEither and repeating should type their hooks from the action in a pipe (issue 26)', () => {
    const fetchUser: RTE.ReaderTaskEither<Env, HttpError, string> = (env) => TE.right(env.endpoint)
    const piped = pipe(
      fetchUser,
      retryingReaderTaskEither(Schedule.recurs(2), {
        onRetry: ({ error }) => expectTypeOf(error).toEqualTypeOf<HttpError>(),
        onDone: ({ result }) => expectTypeOf(result).toEqualTypeOf<Either<HttpError, string>>()
      })
    )
    expectTypeOf(piped).toEqualTypeOf<RTE.ReaderTaskEither<Env & RetryEnv, HttpError, string>>()
    typeOnly(() =>
      pipe(
        fetchUser,
        // @ts-expect-error an HttpError has no message
        retryingReaderTaskEither(Schedule.recurs(2), { onRetry: ({ error }) => error.message })
      )
    )
    const program = {
      initial: 0,
      action: (n: number) => TE.right<HttpError, number>(n + 1),
      next: (n: number) => n
    }
    const repeated = pipe(
      program,
      repeating(Schedule.whileInput((n: number) => n < 3)(Schedule.forever), {
        onDone: ({ result }) => expectTypeOf(result).toEqualTypeOf<Either<HttpError, number>>()
      })
    )
    expectTypeOf(repeated).toEqualTypeOf<TE.TaskEither<HttpError, ReadonlyArray<number>>>()
  })

  it('regression: retryingReaderTaskEither over an action whose environment lacks a clock should report it where the environment is given', () => {
    const noClock: RTE.ReaderTaskEither<{ readonly endpoint: string }, HttpError, string> = (env) =>
      TE.right(env.endpoint)
    // the action need not mention RetryEnv: wrapping it is fine
    const retried = pipe(noClock, retryingReaderTaskEither(onServerErrors))
    expectTypeOf(retried).toEqualTypeOf<
      RTE.ReaderTaskEither<{ readonly endpoint: string } & RetryEnv, HttpError, string>
    >()
    retried({ endpoint: 'users', clock: Clock.live, random: Random.live })
    typeOnly(() =>
      // @ts-expect-error the environment must provide a clock and a random source
      retried({ endpoint: 'users' })
    )
    typeOnly(() =>
      // @ts-expect-error and the action's own environment
      retried({ clock: Clock.live, random: Random.live })
    )
    const wrongError: RTE.ReaderTaskEither<Env, string, string> = (env) => TE.right(env.endpoint)
    typeOnly(() =>
      // @ts-expect-error a Schedule<HttpError> cannot look at a string error
      retryingReaderTaskEither(onServerErrors)(wrongError)
    )
    typeOnly(() =>
      // @ts-expect-error hooks only: the clock comes from the environment
      retryingReaderTaskEither(onServerErrors, { clock: TestClock.make() })
    )
  })

  it('repeating should return TaskEither<E, ReadonlyArray<A>>', () => {
    const run = repeating(Schedule.whileInput((n: number) => n < 3)(Schedule.forever))({
      initial: 'start',
      action: (s: string) => TE.right<HttpError, number>(s.length),
      next: (n, s) => s + String(n)
    })
    expectTypeOf(run).toEqualTypeOf<TE.TaskEither<HttpError, ReadonlyArray<number>>>()
    typeOnly(() =>
      repeating(Schedule.whileInput((n: number) => n < 3)(Schedule.forever))({
        initial: 0,
        // @ts-expect-error the schedule looks at numbers, the action succeeds with strings
        action: (n: number) => TE.right<never, string>(String(n)),
        next: () => 0
      })
    )
  })

  it('combinators should be data-last and usable in pipe', () => {
    const policy = pipe(
      Schedule.exponential(100),
      Schedule.capped(10_000),
      Schedule.fullJitter,
      Schedule.equalJitter,
      Schedule.minDelay(10),
      Schedule.modifyDelay((d) => d + 1),
      Schedule.upTo(60_000),
      Schedule.maxCumulativeDelay(30_000),
      Schedule.intersect(Schedule.recurs(5)),
      Schedule.union(Schedule.fromDelays([1])),
      Schedule.andThen(Schedule.constant(5)),
      Schedule.whileInput((e: HttpError) => e.status >= 500)
    )
    expectTypeOf(policy).toEqualTypeOf<Schedule.Schedule<HttpError>>()
    expectTypeOf(Schedule.capped).parameters.toEqualTypeOf<[max: number]>()
    expectTypeOf(Schedule.capped(1)).toBeFunction()
    typeOnly(() =>
      // @ts-expect-error no data-first form
      Schedule.capped(Schedule.exponential(100), 1000)
    )
    typeOnly(() =>
      // @ts-expect-error no data-first form
      Schedule.intersect(Schedule.exponential(100), Schedule.recurs(3))
    )
  })

  it('Schedule.make should infer the state and input types from the step', () => {
    const s = Schedule.make(0, (n: number, { input }: Schedule.StepContext<HttpError>) =>
      input.status >= 500 && n < 3 ? Schedule.continueAfter(10, n + 1) : Schedule.done
    )
    expectTypeOf(s).toEqualTypeOf<Schedule.Schedule<HttpError>>()
    typeOnly(() =>
      // @ts-expect-error the step takes one context record, not the input as a second argument
      Schedule.make(0, (n: number, e: HttpError, _status: RetryStatus) =>
        e.status >= 500 && n < 3 ? Schedule.continueAfter(10, n + 1) : Schedule.done
      )
    )
    typeOnly(() =>
      // @ts-expect-error a state must be plain JSON data
      Schedule.make(new Date(), () => Schedule.done)
    )
  })

  it('regression: Http.retryAfter should refuse, where it is applied, a schedule whose input cannot be an HttpError', () => {
    expectTypeOf(pipe(Schedule.constant(1), Http.retryAfter(5000))).toEqualTypeOf<Schedule.Schedule<Http.HttpError>>()
    const onHttpErrors: Schedule.Schedule<Http.HttpError> = Schedule.constant(1)
    expectTypeOf(pipe(onHttpErrors, Http.retryAfter(5000))).toEqualTypeOf<Schedule.Schedule<Http.HttpError>>()
    const onErrors: Schedule.Schedule<Error | Http.HttpError> = Schedule.constant(1)
    expectTypeOf(pipe(onErrors, Http.retryAfter(5000))).toEqualTypeOf<
      Schedule.Schedule<(Error | Http.HttpError) & Http.HttpError>
    >()
    typeOnly(() =>
      // @ts-expect-error a schedule of strings never sees an HttpError
      pipe(Schedule.constant(1) as Schedule.Schedule<string>, Http.retryAfter(5000))
    )
    typeOnly(() =>
      // @ts-expect-error nor does one of numbers
      pipe(Schedule.constant(1) as Schedule.Schedule<number>, Http.retryAfter(5000))
    )
    typeOnly(() =>
      // @ts-expect-error nor one whose _tag is not an HttpError's
      pipe(Schedule.constant(1) as Schedule.Schedule<{ readonly _tag: 'Conflict' }>, Http.retryAfter(5000))
    )
  })

  it('regression: RetryOptions and the other options should accept undefined for an optional property under exactOptionalPropertyTypes', () => {
    const fixtures = path.join(__dirname, 'fixtures', 'exact-optional')
    const read = ts.readConfigFile(path.join(fixtures, 'tsconfig.json'), ts.sys.readFile)
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, fixtures)
    deepStrictEqual(
      parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      []
    )
    strictEqual(parsed.options.exactOptionalPropertyTypes, true)
    // A control, compiled in the same program: with the option on, a property without `| undefined` refuses it.
    const control = path.join(fixtures, 'control.ts')
    const controlText = 'interface O { readonly x?: number }\nexport const o: O = { x: undefined }\n'
    const host = ts.createCompilerHost(parsed.options)
    const getSourceFile = host.getSourceFile.bind(host)
    const fileExists = host.fileExists.bind(host)
    host.getSourceFile = (file, language, ...rest) =>
      path.resolve(file) === control
        ? ts.createSourceFile(file, controlText, language)
        : getSourceFile(file, language, ...rest)
    host.fileExists = (file) => path.resolve(file) === control || fileExists(file)
    const program = ts.createProgram([...parsed.fileNames, control], parsed.options, host)
    const errorsIn = (file: string): ReadonlyArray<string> => {
      const source = program.getSourceFile(file)
      if (source === undefined) return [`${file} was not compiled`]
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(
        (d) => `${path.basename(file)}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
      )
    }
    deepStrictEqual(program.getOptionsDiagnostics().length, 0)
    deepStrictEqual(parsed.fileNames.flatMap(errorsIn), [])
    deepStrictEqual(
      errorsIn(control).map((e) => e.includes("with 'exactOptionalPropertyTypes: true'")),
      [true]
    )
  }, 60_000)
})
