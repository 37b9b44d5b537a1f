import { existsSync } from 'node:fs';
import { WebSearcher } from '../../../workers/web/web-searcher';
import { chromium, faultyLaunches, killFailed, processGroup, profileDirs, type LaunchFault } from '../../helpers/chromium';
import { eventually } from '../../helpers/processes';
import type { LocalSite } from '../../fixtures/web/local-site';
import { startSerpSite } from '../../fixtures/web/serp-site';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
/**
 * Short enough for a test, long enough for a real launch under load (measured up to 5.3 s here
 * with the cores oversubscribed three times).
 */
const LAUNCH_TIMEOUT_MS = 15_000;
let site: LocalSite;

beforeAll(async () => {
  site = await startSerpSite();
});
afterAll(async () => {
  await site.close();
});

describe('WebSearcher when a browser launch hangs', () => {
  it.each<[LaunchFault, string]>([
    ['never-answers', 'a browser that never answers on its DevTools pipe'],
    ['stopped-while-launching', 'a real Chromium stopped while it launches'],
  ])('fails the search with BROWSER_LAUNCH_TIMEOUT at the launch timeout for %s (%s), kills the launch with its process group and profile, and the next search launches afresh', async (how) => {
    const launches = faultyLaunches(how);
    launches.failNext();
    // A budget past the launch timeout: the launch's own bound, not the search's, must end it.
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/ddg1`, executablePath: launches.executable, launchTimeoutMs: LAUNCH_TIMEOUT_MS, rateLimit: false, timeoutMs: 45_000, log: quiet });
    try {
      await expect(searcher.searchDetailed('while the launch hangs')).rejects.toMatchObject({
        code: 'BROWSER_LAUNCH_TIMEOUT',
        message: expect.stringContaining(`did not finish within ${LAUNCH_TIMEOUT_MS} ms`),
      });
      const [hung] = launches.failed();
      expect(hung).toBeDefined();
      expect(await eventually(() => processGroup(hung.pid).length === 0, 5000)).toBe(true);
      expect(existsSync(hung.profile)).toBe(false);
      expect(profileDirs()).toEqual([]);
      expect((await searcher.searchDetailed('after the hung launch')).results.length).toBeGreaterThan(0);
      expect(chromium('browser')).toHaveLength(1);
      expect(profileDirs()).toHaveLength(1);
    } finally {
      killFailed(launches);
      await searcher.close();
    }
  }, 90_000);

  it('closes at once while a launch hangs: the launch is killed and its profile removed', async () => {
    const launches = faultyLaunches('never-answers');
    launches.failNext();
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/ddg1`, executablePath: launches.executable, rateLimit: false, timeoutMs: 45_000, log: quiet });
    try {
      const searching = searcher.searchDetailed('while the launch hangs');
      searching.catch(() => {});
      expect(await eventually(() => launches.failed().length === 1, 10_000)).toBe(true);
      const [hung] = launches.failed();
      // Before, close waited for the launch, which puppeteer gave up on after 180 s.
      await searcher.close();
      await expect(searching).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
      expect(await eventually(() => processGroup(hung.pid).length === 0, 5000)).toBe(true);
      expect(existsSync(hung.profile)).toBe(false);
    } finally {
      killFailed(launches);
      await searcher.close();
    }
  }, 30_000);
});
