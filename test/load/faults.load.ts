/** Long form: every fault five times under 16 sessions of bystander load (`npm run test:load`). */
import { faultSuite } from './faults-suite';

describe('faults under load', () => {
  faultSuite({ rounds: 5, loadClients: 16 });
});
