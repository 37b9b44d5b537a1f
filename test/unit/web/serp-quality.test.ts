import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getEngine, type EngineOutcome } from '../../../workers/web/engines';
import { fixtureText, SERP_FIXTURES } from '../../fixtures/web/local-site';

// What a model reads from `search`, result by result, against what a person sees on the saved
// pages (../shared/fixtures/serp). Pages derived from them are made here, not stored.

const page = (file: string) => readFileSync(path.join(SERP_FIXTURES, file), 'utf8');
const context = { status: 200, url: 'https://engine.example/search?q=x', maxResults: 50 };
const resultsOf = (outcome: EngineOutcome) => {
  if (outcome.kind !== 'results') throw new Error(`expected results, got blocked: ${outcome.reason}`);
  return outcome.results;
};

describe('search results as a reader sees them', () => {
  it("keeps DuckDuckGo's date apart from the snippet it precedes", () => {
    const [first] = resultsOf(getEngine('duckduckgo').parse(page('duckduckgo-4.html'), context));
    // The page shows the date in a span of its own before the text; it came as "Nov 21, 2019In keyword-driven".
    expect(first.snippet).toMatch(/^Nov 21, 2019 - In keyword-driven tests, every action to be performed/);
  });

  it("unwraps Google's /url?q= redirect links to their targets, without the wrapper's tracking parameters", () => {
    const direct = resultsOf(getEngine('google').parse(page('google-1.html'), context));
    // The same page as Google serves it to clients it gives redirect links (no JavaScript, basic HTML).
    const wrapped = page('google-1.html').replace(/href="(https?:\/\/[^"]+)"/g, (_, target: string) => `href="/url?q=${encodeURIComponent(target.replace(/&amp;/g, '&'))}&amp;sa=U&amp;ved=2ahUKEwj&amp;usg=AOvVaw0"`);
    const unwrapped = resultsOf(getEngine('google').parse(wrapped, { ...context, url: 'https://www.google.com/search?q=test+keyword' }));
    expect(unwrapped.map((result) => result.url)).toEqual(direct.map((result) => result.url));
    expect(unwrapped[0].url).toBe('https://keywordtool.io/');
  });

  it.each([
    ['its page for browsers without JavaScript', fixtureText('google-enablejs.html'), 'https://www.google.com/search?q=test+keyword', /Google: .*needs JavaScript/],
    ['its cookie consent page', '<html><body><h1>Before you continue to Google Search</h1><form action="https://consent.google.com/save"><button>Accept all</button></form></body></html>', 'https://consent.google.com/ml?continue=https://www.google.com/search', /Google: its cookie consent page/],
  ])('reports Google answering with %s as blocked, not as no results', (_name, html, url, reason) => {
    // Headless, the searcher runs no scripts: Google answers it with this shell, and a model read "No results".
    const outcome = getEngine('google').parse(html, { ...context, url });
    expect(outcome).toEqual({ kind: 'blocked', reason: expect.stringMatching(reason) });
  });

  it('bounds a title and a snippet however long the page makes them, cut with an ellipsis', () => {
    const huge = page('duckduckgo-1.html')
      .replace('Caffeine and Sleep Problems</a>', `${'Caffeine '.repeat(2_000)}</a>`)
      .replace('Drinking <b>caffeine</b> too close to bedtime', `${'caffeine and sleep, '.repeat(50_000)}`);
    const [first, second] = resultsOf(getEngine('duckduckgo').parse(huge, context));
    expect(first.title).toHaveLength(300);
    expect(first.title.endsWith('…')).toBe(true);
    expect(first.snippet).toHaveLength(600);
    expect(first.snippet.endsWith('…')).toBe(true);
    expect(second.title).toBe('More awake, less rested: The hidden cost of caffeine on sleep quality');
  });

  it('cuts a long title at a whole character, never inside an emoji', () => {
    const emoji = page('duckduckgo-1.html').replace('Caffeine and Sleep Problems</a>', `a${'🎉'.repeat(400)}</a>`);
    const [first] = resultsOf(getEngine('duckduckgo').parse(emoji, context));
    expect(first.title).not.toMatch(/[\uD800-\uDFFF]/u);
    expect(first.title.endsWith('🎉…')).toBe(true);
  });

  it.each(['duckduckgo', 'bing', 'brave', 'startpage', 'mojeek', 'google'])('%s encodes a query with a lone surrogate as a browser does (U+FFFD), not by throwing', (name) => {
    const url = new URL(getEngine(name).searchUrl('x\ud800y', 'https://engine.example'));
    expect(url.searchParams.get(name === 'startpage' ? 'query' : 'q')).toBe('x\ufffdy');
  });

  it.each([
    ['duckduckgo', 500],
    ['bing', 1000],
    ['google', 2048],
    ['brave', 2048],
    ['startpage', 2048],
  ])('%s takes queries of up to %i characters, as its own search box does', (name, chars) => {
    expect(getEngine(name).maxQueryChars).toBe(chars);
  });
});
