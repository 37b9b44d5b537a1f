/**
 * The load and fault suite: `npm run test:load` (`jest --config test/load/jest.config.js`).
 * Files are `*.load.ts` so the main jest config (`*.test.ts`) never picks them up; their short
 * forms live in test/integration/production and run with `npm test`. One file at a time: each
 * loads the two cores on its own. Needs a build (dist/) like the integration tests.
 */
const path = require('node:path');

module.exports = {
  rootDir: path.join(__dirname, '..', '..'),
  testEnvironment: 'node',
  roots: ['<rootDir>/test/load'],
  testMatch: ['**/*.load.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  testTimeout: 600_000,
  maxWorkers: 1,
};
