/**
 * The layers of fp-ts-retry, checked by `npm run lint` (dependency-cruiser). From the bottom up:
 *
 * 1. `src/internal/` — the foundation: small helpers (validation, abort, sleepers, JSON, the shared model types).
 *    It imports nothing of the library above it, type or value.
 * 2. The algebra and its interpreter: `Schedule` (values), `Driver` (the one interpreter), `Random`, `Clock`,
 *    `RetryStatus`, `RetryState`, `Event`. `Schedule` does not import `Driver`: stepping a schedule to a list of
 *    delays is the interpreter's job (`Driver.delays`).
 * 3. The guards protocol (`Guard`), below every resource it adapts: a breaker, a budget, a rate limiter or a
 *    bulkhead exports its own `asGuard`, and `Guard` imports none of them.
 * 4. `Decision`: what follows an attempt, above the `Driver` and the guards, below every module that retries.
 * 5. The runners and engines (`Retry`, `Hedging`, `Durable`, `FileEngine`, `BullMQ`, `Http`, ...). Private code
 *    that builds on the public core but is no foundation lives in its own folder, imported only by its owners:
 *    `src/durable/` (the step the durable engines share), `src/runner/` (the runner's loop and its attempts) and
 *    `src/breaker/` (the breaker's state machine, its fleet sync and the memory store).
 * 6. `Fallback` and `Chaos`, combinators over any `TaskEither`: a fallback wraps a whole call, chaos stands in
 *    for its dependency. They build on the foundation only (`Clock`, `Random`, `Event`, `src/internal/`), learn a
 *    run's stop reason through its `onDone`, not by importing a runner, and nothing but the index imports them.
 *
 * Across all layers: no cycle; an optional peer (bullmq, ioredis, @opentelemetry/api, fast-check) is loaded only by
 * the module reached by its subpath, never through the index; no runtime import of a development dependency.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'internal-is-a-foundation',
      comment: 'src/internal/ imports only src/internal/ and packages: it is what everything else builds on.',
      severity: 'error',
      from: { path: '^src/internal/' },
      to: { path: '^src/', pathNot: '^src/internal/' }
    },
    {
      name: 'schedule-is-the-algebra',
      comment: 'Schedule describes; Driver interprets. Schedule imports no interpreter.',
      severity: 'error',
      from: { path: '^src/Schedule[.]ts$' },
      to: { path: '^src/(Driver|Decision|Retry|Hedging|Durable)[.]ts$' }
    },
    {
      name: 'guard-below-resources',
      comment: 'Guard is the protocol; each resource adapts itself to it (its own asGuard).',
      severity: 'error',
      from: { path: '^src/Guard[.]ts$' },
      to: { path: '^src/(Breaker|Budget|RateLimiter|Bulkhead|Adaptive[A-Za-z]+|Redis[A-Za-z]+)[.]ts$' }
    },
    {
      name: 'decision-below-runners',
      comment: 'Decision is what every runner and engine decides with: it imports none of them.',
      severity: 'error',
      from: { path: '^src/Decision[.]ts$' },
      to: { path: '^src/(Retry|Hedging|Durable|FileEngine|BullMQ|Http|OpenTelemetry)[.]ts$|^src/(durable|runner)/' }
    },
    {
      name: 'durable-folder-is-private',
      comment: "src/durable/ is the durable engines' shared code: only they import it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(durable/|(Durable|FileEngine|BullMQ)[.]ts$)' },
      to: { path: '^src/durable/' }
    },
    {
      name: 'runner-folder-is-private',
      comment: "src/runner/ is the runner's loop and attempts: only Retry imports it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(runner/|Retry[.]ts$)' },
      to: { path: '^src/runner/' }
    },
    {
      name: 'breaker-folder-is-private',
      comment: "src/breaker/ is the breaker's state machine, fleet sync and memory store: only Breaker imports it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(breaker/|Breaker[.]ts$)' },
      to: { path: '^src/breaker/' }
    },
    {
      name: 'fallback-and-chaos-on-the-foundation',
      comment: 'Fallback and Chaos wrap any TaskEither: they import the foundation only, no runner, guard or resource.',
      severity: 'error',
      from: { path: '^src/(Fallback|Chaos)[.]ts$' },
      to: { path: '^src/', pathNot: '^src/(internal/|(Clock|Random|Event)[.]ts$)' }
    },
    {
      name: 'nothing-builds-on-fallback-or-chaos',
      comment:
        'Fallback and Chaos are outermost (chaos, a test tool): no module of the library but the index, and Policies (which assembles a whole pipeline from a document, the fallback outermost), imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(index|Fallback|Chaos|Policies)[.]ts$' },
      to: { path: '^src/(Fallback|Chaos)[.]ts$' }
    },
    {
      name: 'optional-peers-by-subpath-only',
      comment: 'An optional peer is loaded only by the module reached by its own subpath (see test/index.test.ts).',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^src/(BullMQ|RedisBudget|RedisBreaker|RedisRateLimiter|OpenTelemetry|Arbitrary)[.]ts$'
      },
      to: { path: 'node_modules/(bullmq|ioredis|@opentelemetry/api|fast-check)/', dependencyTypesNot: ['type-only'] }
    },
    {
      name: 'no-dev-dependency-at-run-time',
      comment: 'The library runs on its dependencies and peers alone.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['npm-peer', 'type-only'] }
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' }
  }
}
