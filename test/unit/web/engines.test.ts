import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeBingLink } from '../../../workers/web/engines/bing';
import { ENGINE_NAMES, getEngine, type EngineOutcome } from '../../../workers/web/engines';
import { collect } from '../../../workers/web/engines/dom';
import { SERP_FIXTURES } from '../../fixtures/web/local-site';

const page = (file: string) => readFileSync(path.join(SERP_FIXTURES, file), 'utf8');
const parse = (engine: string, file: string, status = 200, maxResults = 50): EngineOutcome =>
  getEngine(engine).parse(page(file), { status, url: 'https://engine.example/search', maxResults });
const resultsOf = (outcome: EngineOutcome) => {
  if (outcome.kind !== 'results') throw new Error(`expected results, got blocked: ${outcome.reason}`);
  return outcome.results;
};

describe('search engine parsers on saved result pages', () => {
  it.each([
    ['duckduckgo', 'duckduckgo-1.html', 9, { title: 'Caffeine and Sleep Problems', url: 'https://www.sleepfoundation.org/nutrition/caffeine-and-sleep', icon: 'https://external-content.duckduckgo.com/ip3/www.sleepfoundation.org.ico' }],
    ['duckduckgo', 'duckduckgo-2.html', 10, { title: 'Foo Fighters - Wikipedia', url: 'https://en.wikipedia.org/wiki/Foo_Fighters' }],
    ['duckduckgo', 'duckduckgo-4.html', 10, { title: 'Keyword Tests | TestComplete Documentation', url: 'https://support.smartbear.com/testcomplete/docs/keyword-testing/index.html' }],
    ['bing', 'bing-1.html', 10, { title: 'Caffeine and Sleep Problems', url: 'https://www.sleepfoundation.org/nutrition/caffeine-and-sleep' }],
    ['bing', 'bing-2.html', 10, { title: '322 Words and Phrases for Good Results - Power Thesaurus', url: 'https://www.powerthesaurus.org/good_results/synonyms' }],
    ['brave', 'brave-1.html', 19, { title: 'What is a query? Explore database queries and more', url: 'https://www.techtarget.com/searchdatamanagement/definition/query' }],
    ['google', 'google-1.html', 10, { title: 'Keyword Tool (FREE) ᐈ #1 Google Keyword Planner Alternative', url: 'https://keywordtool.io/' }],
  ])('%s reads %s: %i results, the first as on the page', (engine, file, count, first) => {
    const results = resultsOf(parse(engine, file));
    expect(results).toHaveLength(count);
    expect(results[0]).toMatchObject(first);
    for (const result of results) {
      expect(result.url).toMatch(/^https?:\/\/[^/]+/);
      expect(result.url).not.toMatch(/duckduckgo\.com\/l\/|bing\.com\/ck\/a/);
      expect(result.title).not.toBe('');
      expect(result.snippet.length).toBeGreaterThan(10);
    }
    expect(new Set(results.map((result) => result.url)).size).toBe(results.length);
  });

  it('keeps snippets free of markup and of Bing\'s "Web" badge', () => {
    const [first] = resultsOf(parse('bing', 'bing-2.html'));
    expect(first.snippet.startsWith('Good Results synonyms')).toBe(true);
    const [ddg] = resultsOf(parse('duckduckgo', 'duckduckgo-1.html'));
    expect(ddg.snippet).toBe('Drinking caffeine too close to bedtime can keep you awake. Learn why this happens and what other effects caffeine may be having on your sleep.');
  });

  it('stops at maxResults', () => {
    expect(resultsOf(parse('brave', 'brave-1.html', 200, 3))).toHaveLength(3);
  });

  it.each([
    ['duckduckgo', 'duckduckgo-3.html', 202, /DuckDuckGo bot challenge/],
    ['mojeek', 'mojeek-1.html', 403, /Mojeek/],
    ['bing', 'mojeek-1.html', 403, /human|HTTP 403/],
  ])('%s reports %s as blocked, not as no results', (engine, file, status, reason) => {
    const outcome = parse(engine, file, status);
    expect(outcome.kind).toBe('blocked');
    expect(outcome.kind === 'blocked' && outcome.reason).toMatch(reason);
  });

  it('reads the Startpage no-results page as a real empty result', () => {
    expect(parse('startpage', 'startpage-1.html')).toEqual({ kind: 'results', results: [] });
  });

  it('builds search URLs on a configured base URL', () => {
    expect(getEngine('duckduckgo').searchUrl('a b&c', 'http://127.0.0.1:9/ddg/')).toBe('http://127.0.0.1:9/ddg/html/?q=a%20b%26c');
    expect(getEngine('Bing').searchUrl('x', 'http://127.0.0.1:9')).toBe('http://127.0.0.1:9/search?q=x');
    expect(() => getEngine('altavista')).toThrow(`unknown search engine 'altavista'; known: ${ENGINE_NAMES.join(', ')}`);
  });

  it('decodes Bing redirect links and leaves direct links alone', () => {
    const target = 'https://example.org/a?b=1';
    expect(decodeBingLink(`https://www.bing.com/ck/a?!&&p=x&u=a1${Buffer.from(target).toString('base64url')}&ntb=1`, 'https://www.bing.com/')).toBe(target);
    expect(decodeBingLink('https://example.org/direct', 'https://www.bing.com/')).toBe('https://example.org/direct');
  });
});

describe('collect', () => {
  it('reads items only until it has maxResults results, skipping duplicates and empty titles', () => {
    const items = Array.from({ length: 20_000 }, (_, i) => i);
    const read: number[] = [];
    const found = collect(items, (i) => {
      read.push(i);
      return { title: i === 1 ? ' ' : `Result ${i}`, url: `https://site.example/${i === 3 ? 2 : i}#part`, snippet: ` s${i} ` };
    }, { status: 200, url: 'https://engine.example/search', maxResults: 3 });
    expect(found).toEqual([
      { title: 'Result 0', url: 'https://site.example/0#part', snippet: 's0' },
      { title: 'Result 2', url: 'https://site.example/2#part', snippet: 's2' },
      { title: 'Result 4', url: 'https://site.example/4#part', snippet: 's4' },
    ]);
    expect(read).toEqual([0, 1, 2, 3, 4]);
  });

  it('finds the results of a page whose results nest 2,000 deep, its first ten in page order', () => {
    const html = `<html><body><div id="links">${Array.from({ length: 2_000 }, (_, i) => `<div class="result"><a class="result__a" href="https://site.example/${i}">Result ${i}</a>`).join('')}${'</div>'.repeat(2_000)}</div></body></html>`;
    const found = resultsOf(getEngine('duckduckgo').parse(html, { status: 200, url: 'https://engine.example/search', maxResults: 10 }));
    expect(found.map((result) => result.title)).toEqual(Array.from({ length: 10 }, (_, i) => `Result ${i}`));
  });
});
