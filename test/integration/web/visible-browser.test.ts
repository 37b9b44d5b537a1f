import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WebSearcher } from '../../../workers/web/web-searcher';
import { SERP_FIXTURES, startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * spec 001: with `headless: false` a challenge page waits for a person to solve it. A visible
 * Chromium on a virtual display (Xvfb, Debian package `xvfb`); the "person" is a script in the
 * saved DuckDuckGo challenge that, after a while, goes on to the results, as the engine does
 * once the challenge is passed.
 */
let xvfb: ChildProcess;
let site: LocalSite;
const display = process.env.DISPLAY;

/** The saved challenge without its own scripts, plus `extra` (scripts could reach the internet). */
function challenge(extra: string): Buffer {
  const html = readFileSync(path.join(SERP_FIXTURES, 'duckduckgo-3.html'), 'utf8').replace(/<script\b[\s\S]*?<\/script>/gi, '');
  return Buffer.from(html.replace(/<\/body>/i, `${extra}</body>`));
}

beforeAll(async () => {
  // -displayfd: Xvfb picks a free display and writes its number to fd 3.
  xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  const number = await new Promise<string>((resolve, reject) => {
    let out = '';
    (xvfb.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    xvfb.once('exit', (code) => reject(new Error(`Xvfb exited with ${code} (is the Debian package xvfb installed?)`)));
  });
  process.env.DISPLAY = `:${number}`;
  const results = readFileSync(path.join(SERP_FIXTURES, 'duckduckgo-1.html'));
  const solving = challenge(`<script>setTimeout(() => location.replace('/results/html/?q=' + new URLSearchParams(location.search).get('q')), 1500)</script>`);
  const unsolved = challenge('');
  const solvingToSlow = challenge(`<script>setTimeout(() => location.replace('/slowresults/html/?q=' + new URLSearchParams(location.search).get('q')), 500)</script>`);
  // A challenge whose script (proof-of-work, say) keeps the page busy from 2 s after it loads:
  // reading it again waits until the work is done, long past the deadline.
  const busy = challenge(`<script>setTimeout(() => { const end = Date.now() + 30000; while (Date.now() < end); }, 2000)</script>`);
  const solvingToNothing = challenge(`<script>setTimeout(() => location.replace('/empty/html/'), 1500)</script>`);
  site = await startSite({
    '/solve/html/': (_req, res) => res.writeHead(202, { 'content-type': 'text/html; charset=utf-8' }).end(solving),
    '/results/html/': (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(results),
    '/solveslowly/html/': (_req, res) => res.writeHead(202, { 'content-type': 'text/html; charset=utf-8' }).end(solvingToSlow),
    // The results page in two parts, 2.5 s apart: a read every second lands between them.
    '/slowresults/html/': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.write(results.subarray(0, Math.floor(results.length / 2)));
      const rest = setTimeout(() => res.end(results.subarray(Math.floor(results.length / 2))), 2500);
      res.once('close', () => clearTimeout(rest));
    },
    '/never/html/': (_req, res) => res.writeHead(202, { 'content-type': 'text/html; charset=utf-8' }).end(unsolved),
    '/busy/html/': (_req, res) => res.writeHead(202, { 'content-type': 'text/html; charset=utf-8' }).end(busy),
    // A challenge answered with 403, behind which the engine has no results for the query.
    '/solve403/html/': (_req, res) => res.writeHead(403, { 'content-type': 'text/html; charset=utf-8' }).end(solvingToNothing),
    '/empty/html/': (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body><div id="links" class="results"></div></body></html>'),
  });
});

afterAll(async () => {
  await site?.close();
  xvfb?.kill();
  if (display === undefined) delete process.env.DISPLAY;
  else process.env.DISPLAY = display;
});

describe('WebSearcher with a visible browser (headless: false)', () => {
  it('waits on a challenge until it is solved, then returns the results', async () => {
    const searcher = new WebSearcher(false, { engineUrl: `${site.origin}/solve`, rateLimit: false, timeoutMs: 20_000, maxResults: 50 });
    try {
      const outcome = await searcher.searchDetailed('does caffeine affect sleep');
      expect(outcome.blocked).toEqual([]);
      expect(outcome.results).toHaveLength(9);
      expect(outcome.results[0].url).toMatch(/^https?:\/\//);
      // The challenge was served once (a visible browser also fetches its images), then the
      // results the "person" went on to.
      expect(site.hits.filter((hit) => hit.path === '/solve/html/')).toHaveLength(1);
      expect(site.hits.find((hit) => hit.path === '/results/html/')?.query).toBe('?q=does%20caffeine%20affect%20sleep');
    } finally {
      await searcher.close();
    }
  });

  it('reads the page the person reached once it has all arrived, not the results parsed so far', async () => {
    const searcher = new WebSearcher(false, { engineUrl: `${site.origin}/solveslowly`, rateLimit: false, timeoutMs: 20_000, maxResults: 50 });
    try {
      const outcome = await searcher.searchDetailed('does caffeine affect sleep');
      expect(outcome.blocked).toEqual([]);
      expect(outcome.results).toHaveLength(9);
    } finally {
      await searcher.close();
    }
  });

  it('reads a solved challenge by the page the person reached: no results there is an empty answer, not the first page\'s HTTP 403', async () => {
    const searcher = new WebSearcher(false, { engineUrl: `${site.origin}/solve403`, rateLimit: false, timeoutMs: 20_000, maxResults: 50 });
    try {
      const outcome = await searcher.searchDetailed('nothing to find');
      expect(outcome).toMatchObject({ results: [], blocked: [], failed: [] });
      expect(site.hits.some((hit) => hit.path === '/empty/html/')).toBe(true);
    } finally {
      await searcher.close();
    }
  });

  it('gives up at the deadline when nobody solves it, and reports the block', async () => {
    const searcher = new WebSearcher(false, { engineUrl: `${site.origin}/never`, rateLimit: false, timeoutMs: 6_000, maxResults: 50 });
    try {
      const outcome = await searcher.searchDetailed('x');
      expect(outcome.results).toEqual([]);
      expect(outcome.blocked).toEqual([{ engine: 'duckduckgo', reason: expect.stringMatching(/challenge|captcha|bot/i) }]);
    } finally {
      await searcher.close();
    }
  });

  it('reports the block, not a timeout, when the last re-read of a busy challenge page runs into the deadline', async () => {
    const searcher = new WebSearcher(false, { engineUrl: `${site.origin}/busy`, rateLimit: false, timeoutMs: 7_000, maxResults: 50 });
    try {
      const outcome = await searcher.searchDetailed('x');
      expect(outcome.blocked).toEqual([{ engine: 'duckduckgo', reason: expect.stringMatching(/challenge|captcha|bot/i) }]);
    } finally {
      await searcher.close();
    }
  });
});
