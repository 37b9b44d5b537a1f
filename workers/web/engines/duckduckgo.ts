import { collect, encodeQuery, genericBlock, parsePage, results, textOf, type Node } from './dom';
import type { SearchEngine } from './types';

/**
 * DuckDuckGo's HTML endpoint (`/html/?q=`), which needs no JavaScript. The same parser reads the
 * older full-JS layout (`#links .result`, direct links). Result links go through
 * `//duckduckgo.com/l/?uddg=<target>`: the target is decoded. Ads (`.result--ad`, `y.js` links)
 * are skipped. The bot challenge (anomaly modal, `#challenge-form`) is a block, not an empty page.
 */
export const duckduckgo: SearchEngine = {
  name: 'duckduckgo',
  defaultBaseUrl: 'https://html.duckduckgo.com',
  // DuckDuckGo refuses longer queries (its limit, 500 characters, as DuckDuckGo and SerpApi state it); its box names none.
  maxQueryChars: 500,
  searchUrl: (query, baseUrl) => `${baseUrl.replace(/\/+$/, '')}/html/?q=${encodeQuery(query)}`,
  parse(html, context) {
    const { document, text } = parsePage(html);
    if (document.querySelector('.anomaly-modal__modal, [data-testid="anomaly-modal"], form#challenge-form') || /bots use DuckDuckGo too/i.test(text)) {
      return { kind: 'blocked', reason: 'the DuckDuckGo bot challenge' };
    }
    const items = Array.from(document.querySelectorAll('#links .result, .results .result')).filter((item) => !item.matches('.result--ad'));
    const found = collect(items, (item) => {
      const link = item.querySelector('a.result__a');
      const href = decodeRedirect(link?.getAttribute('href'), context.url);
      if (!href || /duckduckgo\.com\/y\.js/.test(href)) return {};
      const icon = item.querySelector('img.result__icon__img');
      return {
        title: textOf(link),
        url: href,
        snippet: snippetOf(item.querySelector('.result__snippet')),
        icon: icon?.getAttribute('src') ?? icon?.getAttribute('data-src') ?? undefined,
      };
    }, context);
    if (found.length === 0) {
      const reason = genericBlock(document, text, context.status === 202 ? 403 : context.status);
      if (reason) return { kind: 'blocked', reason };
    }
    return results(found);
  },
};

/**
 * The snippet's text; a date the page shows in a span of its own before it (`.result__date`) is
 * set apart as Google and Brave show theirs (`Nov 21, 2019 - In …`): read as one text, it ran
 * into the first word ("Nov 21, 2019In …").
 */
function snippetOf(snippet: Node | null): string {
  const date = snippet?.querySelector('.result__date');
  if (!snippet || !date) return textOf(snippet);
  const when = textOf(date);
  date.remove();
  const text = textOf(snippet);
  return when && text ? `${when} - ${text}` : when || text;
}

/** `//duckduckgo.com/l/?uddg=<urlencoded>&rut=…` → the target; other links as they are. */
function decodeRedirect(href: string | null | undefined, base: string): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href, base);
    const target = url.pathname === '/l/' ? url.searchParams.get('uddg') : null;
    return target ?? url.href;
  } catch {
    return undefined;
  }
}
