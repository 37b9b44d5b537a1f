import { collect, encodeQuery, genericBlock, parsePage, results, textOf } from './dom';
import type { SearchEngine } from './types';

/**
 * Bing (`/search?q=`). Organic results are `#b_results > li.b_algo` (ads are `li.b_ad`, never
 * matched). Links go through `/ck/a?…&u=a1<base64url(target)>`: the target is decoded.
 */
export const bing: SearchEngine = {
  name: 'bing',
  defaultBaseUrl: 'https://www.bing.com',
  // Bing's own search box (maxlength 1000 in 2026; 2000 in 2023).
  maxQueryChars: 1000,
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/search?q=${encodeQuery(query)}`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    if (document.querySelector('#b_captcha, .b_captcha, #bnp_captcha')) return { kind: 'blocked', reason: 'the Bing captcha' };
    // The "Web" badge Bing puts before some snippets is not part of them.
    for (const badge of Array.from(document.querySelectorAll('#b_results .algoSlug_icon'))) badge.remove();
    const items = Array.from(document.querySelectorAll('#b_results > li.b_algo'));
    const found = collect(items, (item) => {
      const link = item.querySelector('h2 a');
      const icon = item.querySelector('.wr_fav img[src], .wr_fav [data-src], img.rms_img');
      return {
        title: textOf(link),
        url: decodeBingLink(link?.getAttribute('href'), context.url),
        snippet: textOf(item.querySelector('.b_caption p, p.b_lineclamp2, p.b_lineclamp3, .b_lineclamp4, p.b_lineclamp1')),
        icon: icon?.getAttribute('src') ?? icon?.getAttribute('data-src') ?? undefined,
      };
    }, context);
    if (found.length === 0) {
      const reason = genericBlock(document, text, context.status);
      if (reason) return { kind: 'blocked', reason };
    }
    return results(found);
  },
};

/** `https://www.bing.com/ck/a?!&&p=…&u=a1<base64url>` → the target URL. */
export function decodeBingLink(href: string | null | undefined, base: string): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href, base);
    const u = url.pathname.startsWith('/ck/a') ? url.searchParams.get('u') : null;
    if (u && u.startsWith('a1')) {
      const decoded = Buffer.from(u.slice(2), 'base64url').toString('utf8');
      if (/^https?:\/\//.test(decoded)) return decoded;
    }
    return url.href;
  } catch {
    return undefined;
  }
}
