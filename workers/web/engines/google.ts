import { collect, genericBlock, parsePage, results, textOf } from './dom';
import type { SearchEngine } from './types';

/**
 * Google (`/search?q=`): `#rso div.g` with an `h3` (title), the link around it, `.st` / `.VwiC3b`
 * snippets. Google serves automated browsers its "unusual traffic" page most of the time; that
 * is detected as a block. Offered for mirrors and fallback chains, not as a default.
 */
export const google: SearchEngine = {
  name: 'google',
  defaultBaseUrl: 'https://www.google.com',
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/search?q=${encodeURIComponent(query)}&hl=en`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    const items = Array.from(document.querySelectorAll('#rso div.g')).filter((item) => item.querySelector('h3') && !item.querySelector('div.g'));
    const found = collect(items, (item) => {
      const h3 = item.querySelector('h3');
      const link = h3?.closest('a') ?? item.querySelector('a[href^="http"]');
      return { title: textOf(h3), url: link?.getAttribute('href') ?? undefined, snippet: textOf(item.querySelector('.st, .VwiC3b, [data-sncf]')) };
    }, context);
    if (found.length === 0) {
      const reason = genericBlock(document, text, context.status);
      if (reason) return { kind: 'blocked', reason: `Google: ${reason}` };
    }
    return results(found);
  },
};
