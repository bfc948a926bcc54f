/**
 * The "did you mean" of the config codecs (`ScheduleConfig`, `PolicyConfig`), and the one form of their error lines.
 *
 * @internal
 */
import { distance } from 'fastest-levenshtein'

/**
 * The key (or choice) a misspelt `word` most likely meant, as a hint: the closest in edit distance when it is close
 * ("maxRetry", "exponental", "MaxRetries"), else a key that contains it or that it contains ("retries",
 * "capped", "maxRetriesCount"). None for a word far from every candidate, or too long to be a typo.
 */
export const didYouMean = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  if (word.length > 64) return undefined
  const lower = word.toLowerCase()
  const byDistance = candidates
    .map((candidate) => ({ candidate, distance: distance(lower, candidate.toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance)
  const related = (candidate: string): boolean => {
    const key = candidate.toLowerCase()
    return (lower.length >= 4 && key.includes(lower)) || (key.length >= 3 && lower.includes(key))
  }
  const meant =
    byDistance.find((c) => c.distance <= Math.max(2, Math.round(word.length * 0.4))) ??
    byDistance.find((c) => related(c.candidate))
  return meant === undefined ? undefined : `did you mean ${JSON.stringify(meant.candidate)}?`
}

/** One issue of a config as a line: `at retry.cap: expected a duration ..., got "ten" (did you mean ...?)`. */
export const issueLine = (path: string, expected: string, got: string, hint: string | undefined): string =>
  `at ${path}: expected ${expected}, got ${got}${hint === undefined ? '' : ` (${hint})`}`
