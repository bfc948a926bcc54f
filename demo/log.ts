/**
 * The demo's logger, built on the runner's hooks: `onRetry` sees each failure and the delay the schedule chose,
 * `onDone` sees the final result and why the run ended.
 */
import * as Clock from '../src/Clock'
import type { Hooks } from '../src/Retry'

export const ms = (n: number): string => `${Math.round(n)} ms`

export const showDelays = (delays: ReadonlyArray<number>): string =>
  `[${delays.map((d) => (Number.isInteger(d) ? String(d) : d.toFixed(1))).join(', ')}]`

export const heading = (title: string): void => {
  console.log(`\n${title}\n${'-'.repeat(title.length)}`)
}

/**
 * Hooks that print one line per attempt. The attempt number is counted here, from the `onRetry` calls: every
 * retry is announced by exactly one `onRetry`, so attempts = retries + 1.
 */
export const attemptLogger = <E>(show: (error: E) => string): Hooks<E> => {
  const start = Clock.live.now()
  let retries = 0
  const at = (): string => `+${ms(Clock.live.now() - start)}`.padStart(8)
  return {
    onRetry: ({ error, delay }) => {
      retries++
      console.log(`  ${at()}  attempt ${retries} failed: ${show(error)}; retry ${retries} in ${ms(delay)}`)
    },
    onDone: ({ result, reason }) => {
      const attempts = retries + 1
      const outcome =
        result._tag === 'Right'
          ? `succeeded: ${JSON.stringify(result.right)}`
          : `failed: ${show(result.left as E)}${reason === 'schedule' ? '; the schedule stops here' : ` (${reason})`}`
      console.log(`  ${at()}  attempt ${attempts} ${outcome}`)
      const retried = retries === 1 ? '1 retry' : `${retries} retries`
      console.log(`  => ${result._tag} after ${attempts} attempt(s), ${retried}; reason: ${reason}`)
    }
  }
}
