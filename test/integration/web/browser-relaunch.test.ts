import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findChromium } from '../../../workers/web/browser';
import { WebSearcher } from '../../../workers/web/web-searcher';
import { chromium, processGroup, profileOf } from '../../helpers/chromium';
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
});
