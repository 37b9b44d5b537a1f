import { chmodSync, existsSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findChromium } from '../../../workers/web/browser';
import { WebSearcher } from '../../../workers/web/web-searcher';
import { chromium, expectReplaced, processGroup, profileDirs, profileOf, resumeAndClose } from '../../helpers/chromium';
import { eventually } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';
import type { LocalSite } from '../../fixtures/web/local-site';
import { startSerpSite } from '../../fixtures/web/serp-site';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
let site: LocalSite;

beforeAll(async () => {
  site = await startSerpSite();
});
afterAll(async () => {
  await site.close();
});

/**
 * Chromium, started by a script that first leaves a process in its process group writing into
 * its profile (every 10 ms) until it is killed: what Chromium's own children (network service,
 * renderers) do for a moment after their browser is killed with -9.
 */
function chromiumWithProfileWriter(): string {
  const script = path.join(tempDir('mcpvisor-browser-script-'), 'chromium');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      'for arg; do case "$arg" in --user-data-dir=*) profile="${arg#--user-data-dir=}";; esac; done',
      // Not holding Chromium's output or its DevTools pipe (fds 3 and 4), as its children do not.
      '( while :; do mkdir -p "$profile/Default/writer" && : > "$profile/Default/writer/file"; sleep 0.01; done ) </dev/null >/dev/null 2>&1 3>&- 4>&- &',
      `exec '${findChromium()}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return script;
}

/** Kills the running browser with -9 and waits until it is gone; returns its pid. */
async function killBrowser(): Promise<number> {
  const [browser] = chromium('browser');
  expect(browser).toBeDefined();
  process.kill(browser, 'SIGKILL');
  expect(await eventually(() => !chromium('browser').includes(browser), 10_000)).toBe(true);
  return browser;
}

/** Searches that hang (the result page never answers) until `timeoutMs`, once their pages are open. */
async function hangingSearches(searcher: WebSearcher, count: number, timeoutMs: number): Promise<Array<Promise<unknown>>> {
  const before = site.countHits('/router/html/');
  const searches = Array.from({ length: count }, (_, index) => searcher.searchDetailed(`hang ${index}`, { timeoutMs }));
  for (const search of searches) search.catch(() => {});
  expect(await eventually(() => site.countHits('/router/html/') >= before + count, 15_000)).toBe(true);
  return searches;
}

describe('WebSearcher when its browser must be relaunched', () => {
  it('kills what is left of a browser killed with -9 when it relaunches, even a process still writing into its profile, and removes the profile', async () => {
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/ddg1`, executablePath: chromiumWithProfileWriter(), rateLimit: false, timeoutMs: 20_000, log: quiet });
    let killed = 0;
    try {
      expect((await searcher.searchDetailed('warm up')).results.length).toBeGreaterThan(0);
      [killed] = chromium('browser');
      const profile = profileOf(killed)!;
      process.kill(killed, 'SIGKILL');
      // Reaped, not only dead: this process has seen it exit, as it had in the soak by the time
      // the relaunch came.
      expect(await eventually(() => !existsSync(`/proc/${killed}`), 10_000)).toBe(true);
      expect((await searcher.searchDetailed('after the kill')).results.length).toBeGreaterThan(0);
      expect(await eventually(() => processGroup(killed).length === 0, 5000)).toBe(true);
      expect(existsSync(profile)).toBe(false);
    } finally {
      try {
        if (killed) process.kill(-killed, 'SIGKILL');
      } catch {
        // Killed, as it should be.
      }
      await searcher.close();
    }
  }, 60_000);

  it('relaunches a browser that died by itself at once, with no search, and at most once a minute', async () => {
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/ddg1`, rateLimit: false, timeoutMs: 20_000, log: quiet });
    try {
      expect((await searcher.searchDetailed('warm up')).results.length).toBeGreaterThan(0);
      const first = await killBrowser();
      // No search comes: the worker launches the next browser by itself.
      expect(await eventually(() => searcher.stats().launches === 2, 20_000)).toBe(true);
      expect(chromium('browser').filter((pid) => pid !== first)).toHaveLength(1);
      expect((await searcher.searchDetailed('after the crash')).results.length).toBeGreaterThan(0);
      expect(searcher.stats()).toMatchObject({ launches: 2 });
      // A second crash within the minute is left to the next search: no loop of launches for a
      // browser that keeps crashing.
      await killBrowser();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(chromium('browser')).toEqual([]);
      expect(searcher.stats()).toMatchObject({ launches: 2 });
      expect((await searcher.searchDetailed('after the second crash')).results.length).toBeGreaterThan(0);
      expect(searcher.stats()).toMatchObject({ launches: 3 });
      expect(profileDirs()).toHaveLength(1);
    } finally {
      await searcher.close();
    }
    expect(profileDirs()).toEqual([]);
  }, 90_000);

  it('fails searches with BROWSER_LAUNCH_FAILED naming the cause while the browser cannot be relaunched, and relaunches it on a later search', async () => {
    // The executable vanishes and comes back: a relaunch that fails for real.
    const executable = path.join(tempDir('mcpvisor-browser-link-'), 'chromium');
    symlinkSync(findChromium(), executable);
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/ddg1`, executablePath: executable, rateLimit: false, timeoutMs: 15_000, log: quiet });
    try {
      expect((await searcher.searchDetailed('warm up')).results.length).toBeGreaterThan(0);
      rmSync(executable);
      await killBrowser();
      // Each search tries again, and says why it cannot.
      for (const query of ['while the browser cannot start', 'and again']) {
        await expect(searcher.searchDetailed(query)).rejects.toMatchObject({ code: 'BROWSER_LAUNCH_FAILED', message: expect.stringContaining(executable) });
      }
      symlinkSync(findChromium(), executable);
      expect((await searcher.searchDetailed('once it can start again')).results.length).toBeGreaterThan(0);
      expect(searcher.stats()).toMatchObject({ launches: 2 });
      expect(chromium('browser')).toHaveLength(1);
      expect(profileDirs()).toHaveLength(1);
    } finally {
      await searcher.close();
    }
    expect(profileDirs()).toEqual([]);
  }, 90_000);

  it('gets results after each kill of the browser, killed while searches hang on it or while it relaunches, and leaks no browser or profile', async () => {
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/router`, rateLimit: false, timeoutMs: 30_000, log: quiet });
    try {
      expect((await searcher.searchDetailed('warm up')).results.length).toBeGreaterThan(0);
      for (let round = 0; round < 3; round++) {
        const hanging = await hangingSearches(searcher, 2, 30_000);
        const killed = await killBrowser();
        // The searches on it end with it, not at their deadline, saying what happened.
        for (const search of hanging) await expect(search).rejects.toMatchObject({ code: 'NETWORK_ERROR', message: expect.stringContaining('the browser closed while loading') });
        // Killed again as soon as the relaunch has started it: whatever it had done by then, the
        // search on it may fail, and the one after it gets results.
        const during = searcher.searchDetailed(`during relaunch ${round}`);
        during.catch(() => {});
        expect(await eventually(() => chromium('browser').some((pid) => pid !== killed), 15_000)).toBe(true);
        for (const pid of chromium('browser')) process.kill(pid, 'SIGKILL');
        await during.then(
          () => {},
          (error) => expect(['INTERNAL', 'BROWSER_LAUNCH_FAILED', 'NETWORK_ERROR']).toContain(error.code),
        );
        for (let search = 0; search < 2; search++) {
          expect((await searcher.searchDetailed(`round ${round} search ${search}`)).results.length).toBeGreaterThan(0);
        }
      }
      expect(chromium('browser')).toHaveLength(1);
      expect(profileDirs()).toHaveLength(1);
    } finally {
      await searcher.close();
    }
    expect(await eventually(() => chromium('browser').length === 0, 5000)).toBe(true);
    expect(profileDirs()).toEqual([]);
  }, 120_000);

  it('relaunches a hung browser at once for the next search, while searches on it still hang', async () => {
    // Pages of the hung browser stay open until their searches' deadline (45 s); the next search
    // must not wait for them.
    const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/router`, rateLimit: false, timeoutMs: 45_000, log: quiet });
    let hung = 0;
    try {
      expect((await searcher.searchDetailed('warm up')).results.length).toBeGreaterThan(0);
      const hanging = await hangingSearches(searcher, 3, 45_000);
      [hung] = chromium('browser');
      const profile = profileOf(hung);
      process.kill(hung, 'SIGSTOP');
      const outcome = await searcher.searchDetailed('after the hang', { timeoutMs: 20_000 });
      expect(outcome.results.length).toBeGreaterThan(0);
      // The hung browser was killed: the searches on it failed without waiting for their deadline.
      for (const search of hanging) await expect(search).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
      expectReplaced(searcher, hung, profile);
    } finally {
      await resumeAndClose(searcher, hung);
    }
  }, 90_000);
});
