/** Metadata of a page (spec 001 WebContent.metadata). */
export interface PageMetadata {
  title?: string;
  description?: string;
  url?: string;
  author?: string;
  publishDate?: string;
  /**
   * Ours: the media type of a body that is not HTML (`application/json`, `text/plain`,
   * `application/rss+xml`, `image/png`…), so a reader can tell what the content is.
   */
  contentType?: string;
}

interface DocLike {
  querySelector(selector: string): { getAttribute(name: string): string | null; textContent: string | null } | null;
  querySelectorAll(selector: string): Iterable<{ getAttribute(name: string): string | null; textContent: string | null }>;
}

/**
 * Reads metadata before Readability mutates the document. Each field takes the first of:
 * JSON-LD (`headline`/`name`, `description`, `author.name`, `datePublished`), OpenGraph and
 * `article:*` tags, plain meta tags (`description`, `author`, `date`…), then `<title>` and
 * `<time datetime>`. `url` is left to the caller (the final URL after redirects).
 */
export function extractMetadata(document: DocLike): PageMetadata {
  const tags = metaTags(document);
  const meta = (...names: string[]) => {
    for (const name of names) {
      const key = name.toLowerCase();
      const value = (tags.property.get(key) ?? tags.name.get(key) ?? tags.itemprop.get(key))?.trim();
      if (value) return value;
    }
    return undefined;
  };
  const ld = jsonLd(document);
  const out: PageMetadata = {
    title: ld.title ?? meta('og:title', 'twitter:title') ?? clean(document.querySelector('title')?.textContent),
    description: ld.description ?? meta('og:description', 'description', 'twitter:description'),
    author: ld.author ?? meta('author', 'article:author', 'byl', 'dc.creator', 'parsely-author'),
    publishDate: ld.publishDate ?? meta('article:published_time', 'datePublished', 'date', 'pubdate', 'publish-date', 'dc.date', 'og:published_time')
      ?? document.querySelector('time[datetime]')?.getAttribute('datetime') ?? undefined,
  };
  for (const key of Object.keys(out) as Array<keyof PageMetadata>) if (!out[key]) delete out[key];
  return capMetadata(out);
}

/**
 * Characters kept of each metadata field. Decision (spec 001 caps the answer at 10,000 characters
 * but is silent on metadata): a field longer than any real page's is a hostile one (a 2 MB
 * `<title>` made a 6 MB answer), so together the fields stay a small part of the answer.
 */
export const METADATA_MAX_CHARS: Readonly<Record<Exclude<keyof PageMetadata, 'url'>, number>> = Object.freeze({
  title: 300,
  description: 600,
  author: 200,
  publishDate: 100,
  contentType: 100,
});

/**
 * `metadata` with each field (but `url`, the address fetched) on one line and cut to
 * METADATA_MAX_CHARS, ending with an ellipsis when cut; a cut never splits a surrogate pair.
 */
export function capMetadata(metadata: PageMetadata): PageMetadata {
  const out: PageMetadata = { ...metadata };
  for (const [key, max] of Object.entries(METADATA_MAX_CHARS) as Array<[keyof typeof METADATA_MAX_CHARS, number]>) {
    const value = out[key];
    if (value !== undefined) out[key] = capText(value, max);
  }
  return out;
}

/** `text` on one line, cut to at most `max` characters with an ellipsis, whole characters only. */
export function capText(text: string, max: number): string {
  // Only the head can be kept, so a huge value is not whitespace-collapsed whole first.
  const head = text.length > max * 4 ? text.slice(0, max * 4) : text;
  const value = head.replace(/\s+/g, ' ').trim();
  if (head === text && value.length <= max) return value;
  let end = Math.min(value.length, max - 1);
  const unit = value.charCodeAt(end - 1);
  if (unit >= 0xd800 && unit <= 0xdbff) end -= 1;
  return `${value.slice(0, end).trimEnd()}\u2026`;
}

/**
 * The `content` of the first `<meta>` for each `property`, `name` and `itemprop` value, lower
 * case (HTML compares metadata names ASCII case-insensitively: `name="Description"`), from one
 * pass over the document: a selector per name scans the whole document each time (50 scans of a
 * 300 KB page cost more than the rest of the metadata).
 */
function metaTags(document: DocLike): Record<'property' | 'name' | 'itemprop', Map<string, string>> {
  const tags = { property: new Map<string, string>(), name: new Map<string, string>(), itemprop: new Map<string, string>() };
  for (const node of document.querySelectorAll('meta')) {
    const content = node.getAttribute('content') ?? node.getAttribute('CONTENT');
    if (content === null) continue;
    for (const attribute of ['property', 'name', 'itemprop'] as const) {
      const key = (node.getAttribute(attribute) ?? node.getAttribute(attribute.toUpperCase()))?.toLowerCase();
      if (key !== undefined && !tags[attribute].has(key)) tags[attribute].set(key, content);
    }
  }
  return tags;
}

function jsonLd(document: DocLike): PageMetadata {
  const out: PageMetadata = {};
  for (const script of document.querySelectorAll('script[type="application/ld+json"]')) {
    let data: unknown;
    try {
      data = JSON.parse(script.textContent ?? '');
    } catch {
      continue;
    }
    const items = flatten(data);
    // Nodes by `@id`: Yoast SEO's `@graph` gives an article's author as `{"@id": …}` of a Person.
    const byId = new Map(items.filter((item) => typeof item['@id'] === 'string').map((item) => [item['@id'] as string, item]));
    for (const item of items) {
      const type = String(item['@type'] ?? '');
      if (!/Article|Posting|Report|WebPage|BlogPosting|NewsArticle/i.test(type)) continue;
      out.title ??= str(item.headline) ?? str(item.name);
      out.description ??= str(item.description);
      out.author ??= authorName(item.author, byId);
      out.publishDate ??= str(item.datePublished) ?? str(item.dateCreated);
    }
  }
  return out;
}

/**
 * The objects of a JSON-LD value in document order, arrays and `@graph` lists opened. Walks with
 * a stack: recursion overflowed on a page's 8 KB of nested `[[[…]]]` (4,000 levels), and the
 * whole fetch failed with CONVERSION_FAILED for its metadata.
 */
function flatten(data: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const stack: unknown[] = [data];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      out.push(record);
      if (Array.isArray(record['@graph'])) stack.push(record['@graph']);
    }
  }
  return out;
}

/** Lists of authors nest this deep at most; deeper ones are not read (recursion, as above). */
const MAX_AUTHOR_DEPTH = 8;

function authorName(value: unknown, byId: Map<string, Record<string, unknown>>, depth = 0): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) {
    if (depth >= MAX_AUTHOR_DEPTH) return undefined;
    const names = value.map((one) => authorName(one, byId, depth + 1)).filter(Boolean);
    return names.length > 0 ? names.join(', ') : undefined;
  }
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const named = str(record.name);
    if (named || typeof record['@id'] !== 'string') return named;
    return str(byId.get(record['@id'])?.name);
  }
  return undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

function clean(text: string | null | undefined): string | undefined {
  const value = text?.replace(/\s+/g, ' ').trim();
  return value || undefined;
}
