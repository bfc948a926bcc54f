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
      const reason = error instanceof Error && 'code' in error && error.code === 'ENOENT' ? 'no such file' : String(error)
      throw new UsageError(`cannot read the config file ${source.slice(1)}: ${reason}`)
    }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new UsageError(
      `${origin} is not valid JSON (${reason}): ${JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)}\n` +
        `A config looks like ${DEFAULT_CONFIG}; in a shell, put it in single quotes.`
    )
  }
  const parsed = ScheduleConfig.parse(json)
  if (parsed._tag === 'Left') {
    throw new UsageError(`${origin} is not a valid schedule config:\n${indent(parsed.left.message)}`)
  }
  const name = label ?? (source.startsWith('@') ? path.basename(source.slice(1), '.json') : JSON.stringify(json))
  return { name, schedule: parsed.right }
}

const indent = (text: string): string =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')
