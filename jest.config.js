/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // the library's tests, and the command's (the cli/ workspace)
  roots: ['<rootDir>/test', '<rootDir>/cli/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  // the library by its package name, as the command imports it: its sources (tsconfig.json "paths" does the same
  // for the type-check)
  moduleNameMapper: { '^fp-ts-retry$': '<rootDir>/src/index.ts', '^fp-ts-retry/(.*)$': '<rootDir>/src/$1' },
  collectCoverageFrom: ['src/**/*.ts', 'cli/src/**/*.ts']
}
