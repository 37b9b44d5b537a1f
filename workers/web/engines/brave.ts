import { collect, encodeQuery, genericBlock, parsePage, results, textOf } from './dom';
import type { SearchEngine } from './types';

/**
 * Brave Search (`/search?q=`). Reads the 2023 markup (`.snippet[data-type="web"]`, `a.result-header`,
 * `.snippet-title`, `.snippet-description`) and the 2025 Svelte markup (`.search-snippet-title`,
 * `.generic-snippet`). Ads (`data-type="ad"`) are not web snippets and are skipped.
 */
export const brave: SearchEngine = {
  name: 'brave',
  defaultBaseUrl: 'https://search.brave.com',
  // Brave's own search box (maxlength).
  maxQueryChars: 2048,
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/search?q=${encodeQuery(query)}&source=web`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    const items = Array.from(document.querySelectorAll('#results .snippet[data-type="web"]'));
    const found = collect(items, (item) => {
      const link = item.querySelector('a.result-header') ?? item.querySelector('a[href^="http"]');
      const title = item.querySelector('.snippet-title, .search-snippet-title, .title');
      const icon = item.querySelector('img.favicon');
      return {
        title: textOf(title ?? link),
        url: link?.getAttribute('href') ?? undefined,
        snippet: textOf(item.querySelector('.snippet-description, .generic-snippet .content, .generic-snippet')),
        icon: icon?.getAttribute('src') ?? undefined,
      };
    }, context);
    if (found.length === 0) {
      const reason = genericBlock(document, text, context.status);
      if (reason) return { kind: 'blocked', reason };
    }
    return results(found);
  },
};
