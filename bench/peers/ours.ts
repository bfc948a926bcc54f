/**
 * fp-ts-retry as `npm run build` makes it (`lib/`, what npm ships), typed by its sources so that type-checking
 * the benchmark needs no build.
 *
 * Measured built rather than through tsx: esbuild's CommonJS interop turns every access to another module's
 * export into a getter call, which would make the library look slower than what its users run.
 */
import type * as Sources from '../../src'

// A plain `require` of the built output: an `import` would be resolved (and typed) against lib/, which a fresh
// checkout has not built yet.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const built: typeof Sources = require('../../lib')

export const { AdaptiveLimit, Bulkhead, Clock, Driver, Keyed, Random, RetryStatus, Schedule, TestClock, retrying } = built
