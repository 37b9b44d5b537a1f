/**
 * The short form of the load suite (the long form is test/load/*.load.ts, `npm run test:load`):
 * 100 concurrent sessions and 1,000 fuzzed messages over HTTP and stdio.
 */
import { fuzzSuite, sessionsSuite } from '../../load/suites';

jest.setTimeout(60_000);

describe('100 concurrent sessions on one process (short form)', () => {
  sessionsSuite(100);
});

describe('1,000 fuzzed JSON-RPC messages (short form)', () => {
  fuzzSuite(1000);
});
