/**
 * `npm run test:unit`: jest.config.js without the suites that pack the packages, type-check with the compilers,
 * run the command, start Redis or worker processes: the inner loop.
 *
 * In a file rather than on the command line: jest's `--testPathIgnorePatterns` takes every argument after it (with
 * `=` too), so `npm run test:unit -- test/Random.test.ts` ignored that file instead of running it alone.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest loads this file as CommonJS, untranspiled
const config = require('./jest.config.js')

/** @type {import('jest').Config} */
module.exports = {
  ...config,
  testPathIgnorePatterns: [
    '/node_modules/',
    '/cli/test/',
    '/(package|types|fleet|durable|BullMQ|Redis[A-Za-z]*|FileEngine)[.]test[.]ts$'
  ]
}
