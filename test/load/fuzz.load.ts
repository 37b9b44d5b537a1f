/** Long form: 10,000 fuzzed JSON-RPC messages over HTTP and over stdio (`npm run test:load`). */
import { fuzzSuite } from './suites';

describe('10,000 fuzzed JSON-RPC messages', () => {
  fuzzSuite(10_000);
});
