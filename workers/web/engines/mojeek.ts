import { collect, encodeQuery, genericBlock, parsePage, results, textOf } from './dom';
import type { SearchEngine } from './types';

/** Mojeek (`/search?q=`): `ul.results-standard > li`, `a.title`, `p.s`. Its 403 page is a block. */
export const mojeek: SearchEngine = {
  name: 'mojeek',
  defaultBaseUrl: 'https://www.mojeek.com',
  // no limit known: the common URL-safe length.
  maxQueryChars: 2048,
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/search?q=${encodeQuery(query)}`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    const items = Array.from(document.querySelectorAll('ul.results-standard > li'));
    const found = collect(items, (item) => {
      const link = item.querySelector('a.title') ?? item.querySelector('h2 a');
      return { title: textOf(link), url: link?.getAttribute('href') ?? undefined, snippet: textOf(item.querySelector('p.s')) };
    }, context);
    if (found.length === 0) {
      const reason = genericBlock(document, text, context.status);
      if (reason) return { kind: 'blocked', reason: `Mojeek: ${reason}` };
    }
    return results(found);
  },
};
