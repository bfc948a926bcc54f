/**
 * The `<config>` argument of every command: a `ScheduleConfig` as inline JSON or `@file.json`, optionally named
 * (`name=<config>`, for tables and legends).
 */
import * as fs from 'fs'
import * as path from 'path'
import type { Schedule } from 'fp-ts-retry/Schedule'
import * as ScheduleConfig from 'fp-ts-retry/ScheduleConfig'

/** A config argument that could not be read, parsed or decoded: the CLI prints `message` and exits 2. */
export class UsageError extends Error {
  readonly _tag = 'UsageError'
}

/** The schedule a command uses when no config is given: the README's example policy. */
export const DEFAULT_CONFIG = '{"exponential":"100ms","cap":"2s","jitter":"full","maxRetries":5,"maxElapsed":"10s"}'

export interface NamedSchedule {
  readonly name: string
  readonly schedule: Schedule<unknown>
  /** The config as read (parsed JSON), for {@link codeCondition}. */
  readonly config: unknown
}

/**
 * Reads one `<config>` argument: `{...}` inline, `@path/to/file.json`, either optionally prefixed by `name=`.
 * Throws a {@link UsageError} naming the argument and every problem in it.
 */
export const readConfig = (argument: string, cwd = process.cwd()): NamedSchedule => {
  const labelled = /^([^{@=][^=]*)=([{@][\s\S]*)$/.exec(argument)
  const label = labelled?.[1]?.trim()
  const source = labelled === null ? argument.trim() : labelled[2].trim()
  let text = source
  let origin = 'the inline config'
  if (source.startsWith('@')) {
    const file = path.resolve(cwd, source.slice(1))
    origin = source.slice(1)
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch (error) {
      const reason =
        error instanceof Error && 'code' in error && error.code === 'ENOENT' ? 'no such file' : String(error)
      throw new UsageError(`cannot read the config file ${source.slice(1)}: ${reason}`)
    }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new UsageError(
      `${origin} is not valid JSON (${reason}): ${JSON.stringify(
        text.length > 80 ? `${text.slice(0, 77)}...` : text
      )}\n` + `A config looks like ${DEFAULT_CONFIG}; in a shell, put it in single quotes.`
    )
  }
  const parsed = ScheduleConfig.parse(json)
  if (parsed._tag === 'Left') {
    throw new UsageError(`${origin} is not a valid schedule config:\n${indent(parsed.left.message)}`)
  }
  const name = label ?? (source.startsWith('@') ? path.basename(source.slice(1), '.json') : JSON.stringify(json))
  return { name, schedule: parsed.right, config: json }
}

/** A `retryOn` or `neverRetryOn` of a config, with its codes. */
export interface CodeCondition {
  readonly key: 'retryOn' | 'neverRetryOn'
  readonly codes: ReadonlyArray<ScheduleConfig.Code>
}

/**
 * The first `retryOn` / `neverRetryOn` of a config, nested ones included, that stops a failure with this code
 * (`undefined`: a failure without one), if any: how a command tells why a schedule made no retry. Codes compare
 * as strings, as `ScheduleConfig.toSchedule` compares them.
 */
export const codeCondition = (config: unknown, code: ScheduleConfig.Code | undefined): CodeCondition | undefined => {
  if (typeof config !== 'object' || config === null) return undefined
  const record = config as Readonly<Record<string, unknown>>
  for (const key of ['retryOn', 'neverRetryOn'] as const) {
    const codes = record[key]
    if (!Array.isArray(codes)) continue
    const listed = code !== undefined && codes.map(String).includes(String(code))
    if (listed === (key === 'neverRetryOn')) return { key, codes: codes as ReadonlyArray<ScheduleConfig.Code> }
  }
  for (const value of Object.values(record)) {
    const nested = Array.isArray(value) ? value : [value]
    for (const item of nested) {
      const found = codeCondition(item, code)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** How a command names a {@link CodeCondition} that stopped a failure with `code`, e.g. "exit code 3 is not in retryOn [75]". */
export const showCodeCondition = (
  condition: CodeCondition,
  code: ScheduleConfig.Code | undefined,
  what: string
): string => {
  const list = `${condition.key} ${JSON.stringify(condition.codes)}`
  if (condition.key === 'neverRetryOn') return `${what} ${JSON.stringify(code)} is in ${list}`
  return code === undefined
    ? `${list} retries only failures with one of these codes, and these carry none`
    : `${what} ${JSON.stringify(code)} is not in ${list}`
}

const indent = (text: string): string =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')
