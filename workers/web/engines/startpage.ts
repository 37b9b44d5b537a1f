import { collect, encodeQuery, genericBlock, parsePage, results, textOf } from './dom';
import type { SearchEngine } from './types';

/**
 * Startpage (`/sp/search?query=`): the 2025 markup (`a.result-title.result-link`, `p.description`)
 * and the older `.w-gl__result`. "There are no results for this search" is a real empty page.
 */
export const startpage: SearchEngine = {
  name: 'startpage',
  defaultBaseUrl: 'https://www.startpage.com',
  // Startpage's own search box (maxlength).
  maxQueryChars: 2048,
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/sp/search?query=${encodeQuery(query)}`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    const items = Array.from(document.querySelectorAll('.result, .w-gl__result'));
    const found = collect(items, (item) => {
      const link = item.querySelector('a.result-title, a.result-link, a.w-gl__result-title');
      return {
        title: textOf(link?.querySelector('h2, h3, .wgl-title') ?? link),
        url: link?.getAttribute('href') ?? undefined,
        snippet: textOf(item.querySelector('p.description, .w-gl__description')),
      };
    }, context);
    if (found.length === 0 && !/there are no results for this search/i.test(text)) {
      const reason = genericBlock(document, text, context.status);
      if (reason) return { kind: 'blocked', reason };
    }
    return results(found);
  },
};
