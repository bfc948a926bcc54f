import * as fs from 'fs'
import * as path from 'path'
import * as index from '../src/index'
import * as Clock from '../src/Clock'
import * as Driver from '../src/Driver'
import * as Durable from '../src/Durable'
import * as FileEngine from '../src/FileEngine'
import * as Random from '../src/Random'
import * as Retry from '../src/Retry'
import * as RetryStatus from '../src/RetryStatus'
import * as Schedule from '../src/Schedule'
import * as TestClock from '../src/TestClock'
import { deepStrictEqual, ok, strictEqual } from './util'

const root = path.join(__dirname, '..')

/** Every public module: each `.ts` file directly under `src/`, except the index. */
// spread into an array of this realm: jest compares prototypes, and fs answers with the host's arrays
const modules: ReadonlyArray<string> = [...fs.readdirSync(path.join(root, 'src'))]
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && file !== 'index.ts')
  .map((file) => file.slice(0, -'.ts'.length))
  .sort()

/**
 * The modules that load optional peer dependencies (bullmq, ioredis, fast-check, @opentelemetry/api): reached by
 * their subpath only, never through the index, which every user loads.
 */
const subpathOnly: ReadonlyArray<string> = [
  'Arbitrary',
  'BullMQ',
  'OpenTelemetry',
  'RedisAdaptiveThrottle',
  'RedisBreaker',
  'RedisBudget',
  'RedisBulkhead',
  'RedisRateLimiter'
]

interface PackageJson {
  readonly exports: Record<string, string | { readonly types: string; readonly default: string }>
}

const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as PackageJson

/** The module's runtime exports (types leave no trace at runtime). */
const load = (name: string): Record<string, unknown> => jest.requireActual(path.join(root, 'src', name))

describe('index', () => {
  it('should export the namespaces Schedule, RetryStatus, Clock, Random, TestClock and Driver', () => {
    strictEqual<unknown>(index.Schedule, Schedule)
    strictEqual<unknown>(index.RetryStatus, RetryStatus)
    strictEqual<unknown>(index.Clock, Clock)
    strictEqual<unknown>(index.Random, Random)
    strictEqual<unknown>(index.TestClock, TestClock)
    strictEqual<unknown>(index.Driver, Driver)
  })

  it('should export the durable modules Durable and FileEngine (not BullMQ: it is reached by its subpath)', () => {
    strictEqual<unknown>(index.Durable, Durable)
    strictEqual<unknown>(index.FileEngine, FileEngine)
    strictEqual((index as unknown as Record<string, unknown>).BullMQ, undefined)
  })

  it('should export the runners retrying, retryingWithStatus, retryingReaderTaskEither and repeating, and their Retry namespace', () => {
    strictEqual<unknown>(index.retrying, Retry.retrying)
    strictEqual<unknown>(index.retryingWithStatus, Retry.retryingWithStatus)
    strictEqual<unknown>(index.retryingReaderTaskEither, Retry.retryingReaderTaskEither)
    strictEqual<unknown>(index.repeating, Retry.repeating)
    strictEqual<unknown>(index.Retry, Retry)
  })

  it('should export nothing but the modules under src and the runners of Retry', () => {
    const retry = Retry as unknown as Record<string, unknown>
    const exported = index as unknown as Record<string, unknown>
    const extra = Object.keys(index).filter(
      (key) => !modules.includes(key) && !(typeof retry[key] === 'function' && exported[key] === retry[key])
    )
    deepStrictEqual(extra, [])
  })

  it('should re-export every module under src as a namespace or its functions', () => {
    ok(modules.length >= 6, `${modules.length} modules`)
    const exported = index as unknown as Record<string, unknown>
    const missing = modules.filter((name) => {
      if (subpathOnly.includes(name)) return false
      const module = load(name)
      if (exported[name] === module) return false
      const values = Object.keys(module)
      return values.length === 0 || values.some((key) => exported[key] !== module[key])
    })
    deepStrictEqual(missing, [])
  })

  it('should have a package.json "exports" subpath for every module under src', () => {
    const missing = modules.filter((name) => {
      const entry = packageJson.exports[`./${name}`]
      return typeof entry !== 'object' || entry.types !== `./lib/${name}.d.ts` || entry.default !== `./lib/${name}.js`
    })
    deepStrictEqual(missing, [])
  })

  it('should have no package.json "exports" subpath without a module under src', () => {
    const subpaths = Object.keys(packageJson.exports)
      .filter((key) => key !== '.' && key !== './package.json')
      .map((key) => key.slice('./'.length))
      .sort()
    deepStrictEqual(subpaths, [...modules])
    deepStrictEqual(packageJson.exports['.'], { types: './lib/index.d.ts', default: './lib/index.js' })
  })
})
