/** Unit tests run from source through ts-jest; integration tests drive the built binaries in dist/. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The long load and fault suite runs with `npm run test:load`, not in `npm test`.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/load/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  testTimeout: 60000,
  setupFilesAfterEnv: ['<rootDir>/test/setup/state-home.ts'],
  // Real processes and Chromium: two cores, so keep parallelism modest.
  maxWorkers: 2,
};
