/** Metadata of a page (spec 001 WebContent.metadata). */
export interface PageMetadata {
  title?: string;
  description?: string;
  url?: string;
  author?: string;
  publishDate?: string;
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
  return out;
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

function flatten(data: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(data)) return data.flatMap(flatten);
  if (data && typeof data === 'object') {
    const record = data as Record<string, unknown>;
    return [record, ...(Array.isArray(record['@graph']) ? flatten(record['@graph']) : [])];
  }
  return [];
}

function authorName(value: unknown, byId: Map<string, Record<string, unknown>>): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) {
    const names = value.map((one) => authorName(one, byId)).filter(Boolean);
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
