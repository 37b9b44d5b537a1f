import { capText, type PageMetadata } from './metadata';

/**
 * RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom feeds as a Markdown list of their items: title (linked),
 * date, author and a summary as plain text. Why: the feed came as its XML source, items' HTML
 * escaped twice (`&lt;p&gt;`), for the model to pick apart. Decision (spec 001 is silent): each
 * summary is cut to SUMMARY_MAX_CHARS; the item's link has the rest.
 *
 * Read with bounded regular expressions rather than a DOM: a feed is flat, and linkedom's XML
 * parse of 100,000 nested elements took 6 s. An item is the text between its start tag and the
 * first end tag of its name; a feed with no item, or none this can read, is not taken as one.
 */

const SUMMARY_MAX_CHARS = 500;

export interface Feed {
  markdown: string;
  metadata: PageMetadata;
}

/** The root element's name, past the prolog (XML declaration, comments, PIs, doctype), lower case. */
function rootName(text: string): string | undefined {
  const head = text.slice(0, 4096).replace(/^\uFEFF?(\s|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)*/i, '');
  return /^<([\w:.-]+)[\s>]/.exec(head)?.[1].toLowerCase();
}

/** Whether `text` is a feed: its root element is `<rss>`, `<feed>` (Atom) or `<rdf:RDF>` (RSS 1.0). */
export function isFeed(text: string): boolean {
  const root = rootName(text);
  return root === 'rss' || root === 'feed' || root === 'rdf:rdf';
}

/** The feed as Markdown; undefined when it has items none of which is closed (left as XML). */
export function feedToMarkdown(text: string, url: string): Feed | undefined {
  const atom = rootName(text) === 'feed';
  const itemTag = atom ? 'entry' : 'item';
  const items: string[] = [];
  // Lower-cased once (tag names match in any case), not once per item.
  const lower = asciiLower(text);
  let firstItem = -1;
  for (let from = 0; ; ) {
    const item = element(text, itemTag, from, lower);
    if (!item) break;
    if (firstItem === -1) firstItem = item.start;
    items.push(itemLine(item.inner, atom, url, items.length + 1));
    from = item.end;
  }
  // A feed with no item at all says so; one whose items cannot be read (not closed) is left as XML.
  if (items.length === 0 && new RegExp(`<${itemTag}[\\s>]`).test(lower)) return undefined;
  const channel = firstItem === -1 ? text : text.slice(0, firstItem);
  const title = field(channel, 'title');
  const description = field(channel, atom ? 'subtitle' : 'description');
  const link = atom ? atomLink(channel) : field(channel, 'link');
  const heading = [`# ${title ? capText(title, 300) : 'Feed'}`, [link ? absolute(link, url) : undefined, description ? capText(description, 600) : undefined].filter(Boolean).join(' - '), items.length === 0 ? `${atom ? 'Atom' : 'RSS'} feed, no items.` : `${atom ? 'Atom' : 'RSS'} feed, ${items.length} item${items.length === 1 ? '' : 's'}:`];
  return {
    markdown: [...heading.filter(Boolean), ...(items.length > 0 ? [items.join('\n')] : [])].join('\n\n'),
    metadata: { ...(title ? { title: capText(title, 300) } : {}), ...(description ? { description: capText(description, 600) } : {}), url },
  };
}

function itemLine(item: string, atom: boolean, base: string, index: number): string {
  const titled = element(item, 'title');
  // Atom's `type="html"` title is escaped markup; an RSS title is text (`<story>` in CDATA is text).
  const title = atom && titled && /\btype\s*=\s*["']x?html["']/i.test(titled.attributes) ? field(item, 'title') && htmlText(field(item, 'title')!).trim() : field(item, 'title');
  const link = atom ? atomLink(item) : field(item, 'link') ?? guidLink(item);
  const date = field(item, atom ? 'published' : 'pubDate') ?? field(item, atom ? 'updated' : 'dc:date');
  const author = atom ? field(element(item, 'author')?.inner ?? '', 'name') : field(item, 'dc:creator') ?? field(item, 'author');
  const summary = field(item, atom ? 'summary' : 'description') ?? field(item, atom ? 'content' : 'content:encoded');
  const name = escapeLinkText(capText(title ?? '(untitled)', 300));
  const head = link ? `[${name}](${absolute(link, base).replace(/[()\s]/g, encodeURIComponent)})` : name;
  const facts = [date ? capText(date, 100) : undefined, author ? capText(author, 200) : undefined].filter(Boolean).join(', ');
  const text = summary ? capText(htmlText(summary), SUMMARY_MAX_CHARS) : '';
  return `${index}. ${head}${facts ? ` (${facts})` : ''}${text ? `\n   ${text}` : ''}`;
}

/**
 * The first `<name …>…</name>` at or after `from` in `xml` (names compared in any case; an
 * element of the same name nested inside ends it). Found with indexOf, not a lazy regular
 * expression: thousands of unclosed `<item>`s made that scan to the end from each (quadratic);
 * this stops at the first start tag with no end tag.
 */
function element(xml: string, name: string, from = 0, lower = asciiLower(xml)): { start: number; attributes: string; inner: string; end: number } | undefined {
  const open = `<${name.toLowerCase()}`;
  const close = `</${name.toLowerCase()}>`;
  for (let at = lower.indexOf(open, from); at !== -1; at = lower.indexOf(open, at + 1)) {
    const next = lower[at + open.length];
    if (next !== '>' && next !== '/' && !/\s/.test(next ?? '')) continue;
    const tagEnd = lower.indexOf('>', at);
    if (tagEnd === -1) return undefined;
    if (lower[tagEnd - 1] === '/') continue; // <link/>, <title/>: empty, no end tag
    const end = lower.indexOf(close, tagEnd);
    if (end === -1) return undefined;
    return { start: at, attributes: xml.slice(at + open.length, tagEnd), inner: xml.slice(tagEnd + 1, end), end: end + close.length };
  }
  return undefined;
}

/** The text of the first `<name>` element in `xml` (CDATA unwrapped, entities decoded); undefined when absent or empty. */
function field(xml: string, name: string): string | undefined {
  const found = element(xml, name);
  if (!found) return undefined;
  const value = decodeEntities(unwrapCdata(found.inner)).trim();
  return value === '' ? undefined : value;
}

/** Lower case for ASCII letters only: toLowerCase changes the length of some strings ('İ'), and indexes must hold. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}

/** CDATA sections as escaped text (decodeEntities turns them back), found with indexOf: linear. */
function unwrapCdata(xml: string): string {
  let out = '';
  let at = 0;
  for (let start = xml.indexOf('<![CDATA['); start !== -1; start = xml.indexOf('<![CDATA[', at)) {
    const end = xml.indexOf(']]>', start + 9);
    if (end === -1) break;
    out += xml.slice(at, start) + xml.slice(start + 9, end).replace(/&/g, '&amp;').replace(/</g, '&lt;');
    at = end + 3;
  }
  return out + xml.slice(at);
}

/** An Atom element's link: its `rel="alternate"` (or rel-less) `<link href>`. */
function atomLink(xml: string): string | undefined {
  // Links come before an entry's content; the head bounds the scan of a hostile one.
  for (const match of xml.slice(0, 65_536).matchAll(/<link\b([^>]{0,4096})>/gi)) {
    const attributes = match[1];
    const rel = /\brel\s*=\s*["']([^"']*)["']/i.exec(attributes)?.[1];
    const href = /\bhref\s*=\s*["']([^"']*)["']/i.exec(attributes)?.[1];
    if (href && (!rel || rel === 'alternate')) return decodeEntities(href);
  }
  return undefined;
}

/** An RSS item's `<guid>` when it is a permalink URL (the default), for items with no `<link>`. */
function guidLink(item: string): string | undefined {
  const guid = element(item, 'guid');
  if (!guid || /isPermaLink\s*=\s*["']false/i.test(guid.attributes)) return undefined;
  const value = decodeEntities(unwrapCdata(guid.inner)).trim();
  return /^https?:\/\//i.test(value) ? value : undefined;
}

/** An item's summary, HTML (escaped once more in the feed) to one line of plain text. */
function htmlText(html: string): string {
  // Only the head: the text is cut to SUMMARY_MAX_CHARS, and a tag is at most 4 KB.
  return decodeEntities(html.slice(0, 100_000).replace(/<[^>]{0,4096}>/g, ' '));
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
    if (name[0] !== '#') return NAMED[name.toLowerCase()] ?? whole;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  });
}

function escapeLinkText(text: string): string {
  return text.replace(/[[\]\\]/g, '\\$&');
}

function absolute(link: string, base: string): string {
  try {
    return new URL(link, base).href;
  } catch {
    return link;
  }
}
