/** Long form: 1,000 concurrent Streamable HTTP sessions on one process (`npm run test:load`). */
import { sessionsSuite } from './suites';

describe('1,000 concurrent sessions on one process', () => {
  sessionsSuite(1000);
});
