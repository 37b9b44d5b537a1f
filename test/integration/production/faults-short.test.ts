/**
 * The short form of the fault suite (the long form is test/load/faults.load.ts, run by
 * `npm run test:load`): every fault once, four sessions of bystander calls.
 */
import { faultSuite } from '../../load/faults-suite';

jest.setTimeout(90_000);

describe('faults under load (short form)', () => {
  faultSuite({ rounds: 1, loadClients: 4 });
});
