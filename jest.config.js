/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // the library's tests, and the command's (the cli/ workspace)
  roots: ['<rootDir>/test', '<rootDir>/cli/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm run lint` type-checks the tests (tsc -p tsconfig.json), and tsconfig.jest.json sets
  // isolatedModules, so ts-jest makes no program of its own (a type-check per worker would cost more than the tests).
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  // Two workers even on two cores (jest's default is one fewer than the cores: one, in band): the longest files
  // wait on child processes and Redis, and another file runs meanwhile.
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/support/sequencer.js',
  // the library by its package name, as the command imports it: its sources (tsconfig.json "paths" does the same
  // for the type-check)
  moduleNameMapper: { '^fp-ts-retry$': '<rootDir>/src/index.ts', '^fp-ts-retry/(.*)$': '<rootDir>/src/$1' },
  collectCoverageFrom: ['src/**/*.ts', 'cli/src/**/*.ts']
}
