import { RestartPolicy } from '../../../supervisor/restart-policy';

const config = { maxRestarts: 3, windowMs: 10_000, backoffBaseMs: 100, backoffMaxMs: 1_000 };

describe('RestartPolicy', () => {
  it('doubles the backoff with each restart in the window, up to the maximum', () => {
    const policy = new RestartPolicy(config);
    expect([0, 1, 2].map((t) => policy.next(t).delayMs)).toEqual([100, 200, 400]);
  });

  it('marks more than maxRestarts restarts in the window as over the intensity, with slow retries', () => {
    const policy = new RestartPolicy(config);
    for (let t = 0; t < 3; t++) expect(policy.next(t).overIntensity).toBe(false);
    expect(policy.next(3)).toEqual({ delayMs: 800, overIntensity: true });
    expect(policy.isOverIntensity(4)).toBe(true);
  });

  it('keeps doubling over the intensity until the maximum, rather than jumping to it', () => {
    const policy = new RestartPolicy(config);
    expect([0, 1, 2, 3, 4, 5].map((t) => policy.next(t).delayMs)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('forgets restarts older than the window', () => {
    const policy = new RestartPolicy(config);
    for (let t = 0; t < 4; t++) policy.next(t);
    expect(policy.isOverIntensity(10_005)).toBe(false);
    expect(policy.next(20_000)).toEqual({ delayMs: 100, overIntensity: false });
  });
});
