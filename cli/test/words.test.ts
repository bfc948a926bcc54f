/** `check`'s schedules in words: a phrase for every key of the schedule grammar. */
import * as assert from 'assert'
import * as ScheduleConfig from 'fp-ts-retry/ScheduleConfig'
import { inWords } from '../src/words'

/** Configs as a user writes them, and their words. */
const EXAMPLES: ReadonlyArray<readonly [unknown, string]> = [
  [
    { exponential: '100ms', cap: '2s', jitter: 'full', maxRetries: 5 },
    'exponential from 100 ms (×2), at most 2 s, full jitter (each delay drawn from 0 to itself); at most 5 retries'
  ],
  [
    { exponential: 50, factor: 3, jitter: 'equal', minDelay: 10, maxCumulativeDelay: '10s', neverRetryOn: [400] },
    'exponential from 50 ms (×3), equal jitter (each delay drawn from half of itself to itself), at least 10 ms; at most 10 s of waiting in all; never errors with code 400'
  ],
  [{ constant: '1s', maxElapsed: '1m' }, '1 s each time; no retry after 1 min from the first attempt'],
  [{ linear: 200, jitter: 'none' }, 'linear: 200 ms, then 400 ms, ...'],
  [
    { fibonacci: '10ms', retryOn: [503, 'ECONNRESET'] },
    'fibonacci from 10 ms; only errors with code 503, "ECONNRESET"'
  ],
  [{ truncatedBinaryExponential: '10s', maxDoublings: 4 }, 'doubling 4 times up to 10 s, then staying there'],
  [{ decorrelatedJitter: '5ms', cap: '2s' }, 'decorrelated jitter from 5 ms, at most 2 s'],
  [
    { decorrelatedJitterV2: '1s', cap: '30s' },
    "decorrelated jitter (Polly's V2), a median first delay of 1 s, at most 30 s"
  ],
  [{ randomBetween: ['1s', '2s'] }, 'a random delay from 1 s to 2 s'],
  [{ delays: [100, 250] }, 'the delays 100 ms, 250 ms, then stop'],
  [{ delays: [] }, 'no retry (no delays listed)'],
  [{ recurs: 1 }, '1 retry at once'],
  [{ forever: true }, 'retry at once, for ever'],
  [{ stop: true }, 'no retry'],
  [
    { intersect: [{ constant: '1s' }, { recurs: 3 }] },
    'while all go on, the longest delay of (1 s each time) and (3 retries at once)'
  ],
  [
    { union: [{ constant: '1s' }, { exponential: '10ms', maxRetries: 2 }] },
    'while any goes on, the shortest delay of (1 s each time) and (exponential from 10 ms (×2); at most 2 retries)'
  ],
  [{ andThen: [{ delays: [10] }, { constant: '1s' }] }, '(the delays 10 ms, then stop), then (1 s each time)']
]

const words = (raw: unknown): string => {
  const decoded = ScheduleConfig.ScheduleConfigCodec.decode(raw)
  assert.ok(decoded._tag === 'Right', `not a config: ${JSON.stringify(raw)}`)
  return inWords(ScheduleConfig.ScheduleConfigCodec.encode(decoded.right))
}

describe('schedules in words', () => {
  it.each(EXAMPLES)('%j', (raw, expected) => {
    assert.strictEqual(words(raw), expected)
  })

  it('should have an example of every key of the grammar', () => {
    const used = new Set(EXAMPLES.flatMap(([raw]) => JSON.stringify(raw).match(/"[a-zA-Z0-9]+":/g) ?? []))
    const missing = ScheduleConfig.grammar.map((g) => g.key).filter((key) => !used.has(`"${key}":`))
    assert.deepStrictEqual(missing, [])
  })
})
