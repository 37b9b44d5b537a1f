import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };
import { flattenDeepNesting } from '../flatten-nesting';
import { nativeRequire } from '../native-require';
import type { EngineOutcome, PageContext, SearchResult } from './types';

// Loaded on first use, so naming the engines (config checks) does not load a DOM.
let linkedom: typeof Linkedom | undefined;

export type Node = {
  querySelector(selector: string): Node | null;
  querySelectorAll(selector: string): ArrayLike<Node>;
  getAttribute(name: string): string | null;
  closest(selector: string): Node | null;
  matches(selector: string): boolean;
  remove(): void;
  textContent: string | null;
};

/**
 * Parses a page with linkedom; `document` answers CSS selectors. Nesting past 256 levels is
 * flattened (flatten-nesting.ts; result pages nest a few tens deep): each result nested in the
 * one before searched all those inside it, and a selector's match walked all its ancestors, so
 * 4,000 such results took 4.8 s.
 */
export function parsePage(html: string): { document: Node; text: string } {
  linkedom ??= nativeRequire('linkedom') as typeof Linkedom;
  const { document } = linkedom.parseHTML(/<html[\s>]/i.test(html.slice(0, 4096)) ? html : `<html><body>${html}</body></html>`);
  flattenDeepNesting(document.documentElement);
  return { document: document as unknown as Node, text: (document.body?.textContent ?? '').replace(/\s+/g, ' ') };
}

/**
 * Bounds of a result's text, in UTF-16 units. Decision (as fetch's metadata fields): a title of
 * 300 and a snippet of 600, ellipsis included; engines show titles of about 60 and snippets of
 * about 300, so only a broken or hostile page is cut, and its results still fit an answer.
 */
export const MAX_TITLE_CHARS = 300;
export const MAX_SNIPPET_CHARS = 600;

/** `text` cut to at most `max` UTF-16 units with an ellipsis, never between the halves of a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}

/** Lone surrogates as U+FFFD, as a browser encodes them in a form; encodeURIComponent throws on them. */
export function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDFFF]/gu, '\uFFFD');
}

/** A query as a URL parameter: UTF-8, percent-encoded (`c++` → `c%2B%2B`, `#` → `%23`). */
export function encodeQuery(query: string): string {
  return encodeURIComponent(wellFormed(query));
}

/** Whitespace collapsed, trimmed. */
export function textOf(node: Node | null | undefined): string {
  return (node?.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** An absolute http(s) URL, or undefined when `href` is missing, relative junk or another scheme. */
export function absolute(href: string | null | undefined, base: string): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Collects results in page order: absolute URLs, fragments dropped for the duplicate check,
 * empty titles skipped, titles and snippets clipped, at most `maxResults`. Each item is read (`read`) only until that many
 * are found: reading every item first made a page of 16,000 results take 2.1 s for its first 10.
 */
export function collect<T>(items: readonly T[], read: (item: T) => Partial<SearchResult>, context: PageContext): SearchResult[] {
  const seen = new Set<string>();
  const out: SearchResult[] = [];
  for (const item of items) {
    if (out.length >= context.maxResults) break;
    const candidate = read(item);
    const url = absolute(candidate.url, context.url);
    const title = clip(candidate.title?.trim() ?? '', MAX_TITLE_CHARS);
    if (!url || !title) continue;
    const key = url.replace(/#.*$/, '').replace(/\/$/, '');
    if (seen.has(key)) continue;
    seen.add(key);
    const result: SearchResult = { title, url, snippet: clip(candidate.snippet?.trim() ?? '', MAX_SNIPPET_CHARS) };
    const icon = absolute(candidate.icon, context.url);
    if (icon) result.icon = icon;
    out.push(result);
  }
  return out;
}

/** Signs of a challenge page any engine may serve (reCAPTCHA, hCaptcha, Cloudflare, "unusual traffic"). */
export function genericBlock(document: Node, text: string, status: number): string | undefined {
  if (document.querySelector('.g-recaptcha, .h-captcha, iframe[src*="recaptcha"], iframe[src*="hcaptcha"], #captcha-form, #challenge-form, #cf-challenge-running, .cf-turnstile')) {
    return 'a captcha or challenge page';
  }
  if (/unusual traffic|automated (queries|requests)|are you a robot|verify you are (a )?human|captcha/i.test(text.slice(0, 5000))) {
    return 'a page asking to prove the searcher is human';
  }
  if (status === 403 || status === 429) return `HTTP ${status}`;
  return undefined;
}

export function results(items: SearchResult[]): EngineOutcome {
  return { kind: 'results', results: items };
}
