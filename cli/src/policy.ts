/**
 * The policy document of `check` and `simulate --policy`: a `PolicyConfig` JSON file, read, decoded and described
 * layer by layer in the order the pipeline runs them.
 */
import * as fs from 'fs'
import type { PipelineConfig, PolicyConfig } from 'fp-ts-retry/PolicyConfig'
import * as Policy from 'fp-ts-retry/PolicyConfig'
import type { Schedule } from 'fp-ts-retry/Schedule'
import * as ScheduleConfig from 'fp-ts-retry/ScheduleConfig'
import { UsageError } from './config'
import { duration } from './format'
import { inWords } from './words'

/** A larger file is refused unread, as `Policies.watchFile` refuses it. */
const MAX_BYTES = 1024 * 1024

const indent = (text: string): string =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')

/** Reads and decodes a policy document; a {@link UsageError} naming the file and every problem in it otherwise. */
export const readPolicy = (file: string): PolicyConfig => {
  let text: string
  try {
    const { size } = fs.statSync(file)
    if (size > MAX_BYTES)
      throw new UsageError(`${file}: ${size} bytes, more than the ${MAX_BYTES} a policy document may have`)
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if (error instanceof UsageError) throw error
    const reason = error instanceof Error && 'code' in error && error.code === 'ENOENT' ? 'no such file' : String(error)
    throw new UsageError(`cannot read the policy file ${file}: ${reason}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  const parsed = Policy.parse(json)
  if (parsed._tag === 'Left')
    throw new UsageError(`${file} is not a valid policy document:\n${indent(parsed.left.message)}`)
  return parsed.right
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** A schedule in words (the combinator form, `intersect(recurs(5))(...)`, reads inside out). */
const scheduleOf = (config: ScheduleConfig.ScheduleConfig): string =>
  inWords(ScheduleConfig.ScheduleConfigCodec.encode(config))

/** The layers of one pipeline, in the order they run (docs/resilience-order.md), from the inside out. */
const layers = (p: PipelineConfig): ReadonlyArray<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  if (p.timeout !== undefined) out.push(['timeout', `${duration(p.timeout)} for each attempt`])
  const r = p.rateLimit
  if (r !== undefined) {
    out.push([
      'rate limit',
      r.kind === 'gcra'
        ? `gcra: ${r.rate} every ${duration(r.per)}, ${r.burst} at once`
        : `${r.kind}: ${plural(r.limit, 'call')} in ${r.kind === 'fixedWindow' ? 'each' : 'any'} ${duration(r.window)}`
    ])
  }
  const b = p.breaker
  if (b !== undefined) {
    const rule =
      b.kind === 'consecutive'
        ? `${plural(b.threshold, 'failure')} in a row`
        : b.kind === 'count'
        ? `${b.failureRate * 100}% of the last ${plural(b.size, 'call')} failed (at least ${b.minimumCalls ?? b.size})`
        : `${b.failureRate * 100}% of the last ${duration(b.window)} failed (at least ${b.minThroughput})`
    out.push([
      'breaker',
      `${b.kind}: opens when ${rule}; half-open after ${scheduleOf(b.halfOpenAfter)}, ${plural(b.probes ?? 1, 'probe')}`
    ])
  }
  const t = p.throttle
  if (t !== undefined) {
    out.push([
      'throttle',
      `adaptive: drops attempts once more than 1/${t.k ?? 2} are refused for overload, over the last ${duration(
        t.window ?? 120_000
      )}`
    ])
  }
  if (p.retry !== undefined) out.push(['retry', scheduleOf(p.retry)])
  if (p.hedging !== undefined) {
    out.push([
      'hedging',
      `${scheduleOf(p.hedging.delays)}, at most ${p.hedging.maxConcurrent ?? 'the schedule allows'} in flight`
    ])
  }
  if (p.budget !== undefined)
    out.push(['budget', `retryThrottle: ${p.budget.maxTokens} tokens, ${p.budget.tokenRatio} back per success`])
  if (p.bulkhead !== undefined) {
    out.push(['bulkhead', `${plural(p.bulkhead.maxConcurrent, 'run')} at once, ${p.bulkhead.maxQueue} waiting`])
  }
  if (p.fallback !== undefined) out.push(['fallback', `when the run stopped for ${p.fallback.on.join(', ')}`])
  return out
}

/** What `check` prints: each pipeline, where it is kept, and its layers in order. */
export const describePolicy = (file: string, config: PolicyConfig): string => {
  const names = Object.keys(config.policies)
  const lines = [`${file}: a valid policy document, ${plural(names.length, 'pipeline')}.`]
  for (const name of names) {
    const p = config.policies[name]
    const kept = [
      p.key === undefined
        ? undefined
        : `one per ${p.key.template} (at most ${p.key.maxKeys}${
            p.key.idleAfter === undefined ? '' : `, dropped after ${duration(p.key.idleAfter)} unused`
          })`,
      p.store === undefined ? undefined : `shared through Redis under "${p.store.prefix}${name}:"`
    ].filter((s): s is string => s !== undefined)
    lines.push('', `${name}${kept.length === 0 ? '' : `: ${kept.join('; ')}`}`)
    const list = layers(p)
    if (list.length === 0) lines.push('  (no layer: the action runs as it is)')
    const width = Math.max(...list.map(([layer]) => layer.length))
    list.forEach(([layer, what], i) => lines.push(`  ${i + 1}. ${layer.padEnd(width)}  ${what}`))
  }
  return lines.join('\n')
}

/** What `simulate --policy` samples: the named pipeline's retry (or hedging) schedule, and what else bears on it. */
export interface PolicySchedule {
  readonly name: string
  readonly schedule: Schedule<unknown>
  readonly config: unknown
  /** The pipeline's attempt timeout, in ms, when it bears on the start times: a retry's (hedges start while others run). */
  readonly timeout: number | undefined
  /** The layers that may stop or refuse a retry, which a sample of one run's failures does not model. */
  readonly notSimulated: ReadonlyArray<string>
}

/** The layers around the retry that can end a run sooner than its schedule, in words. */
const notSimulated = (p: PipelineConfig): ReadonlyArray<string> =>
  [
    p.budget === undefined
      ? undefined
      : // Budget.retryThrottle: a retry only while tokens > maxTokens / 2, each failure spending one
        `the budget (retryThrottle): in an outage, a full one allows ${plural(
          Math.max(0, Math.ceil(p.budget.maxTokens / 2) - 1),
          'retry',
          'retries'
        )} in all, across the runs that share it`,
    p.breaker === undefined ? undefined : `the breaker (${p.breaker.kind}) refuses the attempts while it is open`,
    p.rateLimit === undefined ? undefined : `the rate limit (${p.rateLimit.kind}) refuses the attempts past its pace`,
    p.throttle === undefined ? undefined : 'the adaptive throttle drops attempts while the backend refuses them',
    p.bulkhead === undefined ? undefined : 'the bulkhead refuses a run while it is full'
  ].filter((s): s is string => s !== undefined)

/** The schedule `simulate --policy` samples: the named pipeline's retry (or hedging) schedule. */
export const policySchedule = (file: string, config: PolicyConfig, pipeline: string | undefined): PolicySchedule => {
  const names = Object.keys(config.policies)
  const chosen = pipeline ?? (names.length === 1 ? names[0] : undefined)
  if (chosen === undefined)
    throw new UsageError(
      `${file} names ${plural(names.length, 'pipeline')} (${names.join(', ')}): choose one with --pipeline.`
    )
  const p = config.policies[chosen]
  if (p === undefined) throw new UsageError(`${file} names no pipeline "${chosen}"; it names ${names.join(', ')}.`)
  const retry = p.retry ?? p.hedging?.delays
  if (retry === undefined)
    throw new UsageError(`the pipeline "${chosen}" of ${file} has no retry or hedging schedule to simulate.`)
  return {
    name: `${chosen} (${file})`,
    schedule: ScheduleConfig.toSchedule(retry),
    config: ScheduleConfig.ScheduleConfigCodec.encode(retry),
    timeout: p.retry === undefined ? undefined : p.timeout,
    notSimulated: notSimulated(p)
  }
}

/**
 * How long each sampled attempt takes: the pipeline's timeout cuts `--attempt-duration`; when that is not given,
 * each attempt takes the whole timeout (every attempt timed out: the longest a failing run can last).
 */
export const attemptDurationOf = (
  policy: PolicySchedule,
  attemptDuration: number,
  given: boolean
): { readonly attemptDuration: number; readonly note: string | undefined } => {
  const { timeout } = policy
  if (timeout === undefined) return { attemptDuration, note: undefined }
  if (!given)
    return {
      attemptDuration: timeout,
      note: `Each attempt takes the pipeline's whole timeout (${duration(
        timeout
      )}): every attempt timed out, the longest a failing run lasts (--attempt-duration for another).`
    }
  return attemptDuration > timeout
    ? {
        attemptDuration: timeout,
        note: `The pipeline's timeout (${duration(timeout)}) cuts each attempt: --attempt-duration ${duration(
          attemptDuration
        )} counted as ${duration(timeout)}.`
      }
    : { attemptDuration, note: undefined }
}
