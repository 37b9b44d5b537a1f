/** Unit tests run from source through ts-jest; integration tests drive the built binaries in dist/. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  testTimeout: 60000,
  // Real processes and Chromium: two cores, so keep parallelism modest.
  maxWorkers: 2,
};
