import { collect, encodeQuery, genericBlock, parsePage, results, textOf } from './dom';
import type { SearchEngine } from './types';

/**
 * Google (`/search?q=`): `#rso div.g` with an `h3` (title), the link around it, `.st` / `.VwiC3b`
 * snippets. Google serves automated browsers its "unusual traffic" page most of the time; that
 * is detected as a block. Offered for mirrors and fallback chains, not as a default.
 */
export const google: SearchEngine = {
  name: 'google',
  defaultBaseUrl: 'https://www.google.com',
  // Google's own search box (maxlength).
  maxQueryChars: 2048,
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/search?q=${encodeQuery(query)}&hl=en`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    const items = Array.from(document.querySelectorAll('#rso div.g')).filter((item) => item.querySelector('h3') && !item.querySelector('div.g'));
    const found = collect(items, (item) => {
      const h3 = item.querySelector('h3');
      const link = h3?.closest('a') ?? item.querySelector('a[href^="http"]');
      return { title: textOf(h3), url: unwrapGoogleLink(link?.getAttribute('href'), context.url), snippet: textOf(item.querySelector('.st, .VwiC3b, [data-sncf]')) };
    }, context);
    if (found.length === 0) {
      // Pages in place of results that are neither captchas nor empty result pages: the shell a
      // browser without JavaScript gets (ours, headless, runs none), and the consent page (EU).
      if (html.includes('/httpservice/retry/enablejs')) return { kind: 'blocked', reason: 'Google: a page that needs JavaScript, which the headless searcher does not run' };
      if (/^https?:\/\/consent\.google\./.test(context.url) || /before you continue to google/i.test(text.slice(0, 5000))) return { kind: 'blocked', reason: 'Google: its cookie consent page' };
      const reason = genericBlock(document, text, context.status);
      if (reason) return { kind: 'blocked', reason: `Google: ${reason}` };
    }
    return results(found);
  },
};

/**
 * `/url?q=<target>&sa=U&ved=…&usg=…` (the links Google gives clients without JavaScript) → the
 * target, without the wrapper's tracking parameters; other links as they are.
 */
export function unwrapGoogleLink(href: string | null | undefined, base: string): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href, base);
    const target = url.pathname === '/url' ? url.searchParams.get('q') ?? url.searchParams.get('url') : null;
    return target && /^https?:\/\//i.test(target) ? target : url.href;
  } catch {
    return undefined;
  }
}
