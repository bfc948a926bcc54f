/**
 * The order jest starts the test files in: the long ones first, so that on two workers the last file to end is a
 * short one. Jest orders by the durations it cached on the previous run, and without them (a fresh clone, a
 * cleared cache, CI) by file size, which starts the packaging and fleet suites last. Files not listed follow in
 * jest's own order.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest loads this file as CommonJS, untranspiled
const Sequencer = require('@jest/test-sequencer').default

/**
 * Measured with `npx jest --json` (each file's end minus start, two workers, a cold cache), longest first; the
 * files that wait on Redis, child processes or real time (cluster-failover among them: unlisted, it started last)
 * before the shorter ones that keep a core busy.
 */
const LONGEST = [
  'test/package.test.ts',
  'cli/test/cli.test.ts',
  'test/RedisRateLimiter.test.ts',
  'test/cluster-failover.test.ts',
  'test/fleet.test.ts',
  'test/BullMQ.test.ts',
  'test/Contention.test.ts',
  'test/RedisBulkhead.test.ts',
  'test/RedisBreaker.test.ts',
  'test/types.test.ts',
  'test/ScheduleConfig.test.ts',
  'test/PolicyConfig.test.ts',
  'test/OpenTelemetry.test.ts',
  'test/RedisBudget.test.ts',
  'test/Keyed.fleet.test.ts',
  'test/FileEngine.test.ts',
  'test/Clock.test.ts',
  'test/durable.test.ts'
]

class LongestFirst extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = LONGEST.findIndex((file) => test.path.endsWith(file))
      return i < 0 ? LONGEST.length : i
    }
    // Array.prototype.sort is stable: the files not listed keep jest's order
    return super.sort(tests).sort((a, b) => rank(a) - rank(b))
  }
}

module.exports = LongestFirst
