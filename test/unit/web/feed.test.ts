import { summariseBinary } from '../../../workers/web/binary-summary';
import { feedToMarkdown, isFeed } from '../../../workers/web/feed';

describe('feedToMarkdown', () => {
  it('lists RSS items, linking a permalink guid when an item has no link, and escapes brackets in titles', () => {
    const rss = '<?xml version="1.0"?>\n<!-- c --><rss><channel><title>T</title>' +
      '<item><title>A [draft]</title><guid>https://x.example/a</guid><dc:creator>Ann</dc:creator></item>' +
      '<item><title>B</title><guid isPermaLink="false">id-2</guid></item></channel></rss>';
    expect(isFeed(rss)).toBe(true);
    expect(feedToMarkdown(rss, 'https://x.example/feed')?.markdown).toBe('# T\n\nRSS feed, 2 items:\n\n1. [A \\[draft\\]](https://x.example/a) (Ann)\n2. B');
  });

  it('makes relative links absolute against the feed URL and cuts a long summary', () => {
    const atom = `<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><entry><title>E</title><link rel="self" href="/self"/><link href="/e"/><summary>${'word '.repeat(500)}</summary></entry></feed>`;
    const markdown = feedToMarkdown(atom, 'https://x.example/dir/feed.atom')!.markdown;
    expect(markdown).toMatch(/^# F\n\nAtom feed, 1 item:\n\n1\. \[E\]\(https:\/\/x\.example\/e\)\n {3}(word ){99}word…$/);
  });

  it('is not a feed for other XML; a feed with no item says so, one with no whole item is left as XML', () => {
    expect(isFeed('<?xml version="1.0"?><catalog/>')).toBe(false);
    expect(feedToMarkdown('<rss><channel><title>T</title></channel></rss>', 'https://x.example/')?.markdown).toBe('# T\n\nRSS feed, no items.');
    expect(feedToMarkdown('<rss><channel><title>T</title><item><title>open</title></channel></rss>', 'https://x.example/')).toBeUndefined();
  });

  it('reads hostile feeds in one pass: 300,000 unclosed items, titles and CDATA sections', () => {
    // A lazy regular expression scanned to the end from each unclosed start tag: quadratic.
    expect(feedToMarkdown(`<rss><channel>${'<item>'.repeat(300_000)}`, 'https://x.example/')).toBeUndefined();
    const item = `<item><title>${'<![CDATA[x'.repeat(100_000)}</title><link>${'<title>'.repeat(100_000)}</link></item>`;
    const feed = feedToMarkdown(`<rss><channel>${item}</channel></rss>`, 'https://x.example/');
    expect(feed?.markdown).toMatch(/^# Feed\n\nRSS feed, 1 item:\n\n1\. \[<!\\\[CDATA\\\[x/);
  });
});

describe('summariseBinary', () => {
  it('bounds its look for a PDF page count in a file of 400,000 unclosed page-tree nodes', () => {
    const body = Buffer.from(`%PDF-1.7\n${'<< /Type /Pages /Count 7 '.repeat(400_000)}`, 'latin1');
    expect(summariseBinary({ body, cut: false }, 'application/pdf', body.length).text).toBe('[application/pdf: PDF document, version 1.7, 7 pages, 10.0 MB. Its text is not extracted: only this summary is returned.]');
  });

  it('counts the pages of the root page-tree node, whose /Count may follow a long /Kids array', () => {
    const kids = Array.from({ length: 800 }, (_, i) => `${i + 10} 0 R`).join(' ');
    const body = Buffer.from(`%PDF-1.4\n2 0 obj\n<< /Type /Pages /Kids [${kids}] /Count 1200 >>\nendobj\n3 0 obj\n<< /Count 5 /Type /Pages /Parent 2 0 R >>\nendobj\n4 0 obj\n<< /Type /Outlines /Count 99 >>\nendobj\n`, 'latin1');
    expect(summariseBinary({ body, cut: false }, 'application/pdf', body.length).text).toMatch(/^\[application\/pdf: PDF document, version 1\.4, 1200 pages, /);
  });

  it('names a file given as filename* (RFC 8187) and drops control characters from it', () => {
    const summary = summariseBinary({ body: Buffer.from([1, 2, 3]), cut: false, disposition: "attachment; filename=\"plain.bin\"; filename*=UTF-8''r%C3%A9sum%C3%A9%0A.bin" }, '', 3);
    expect(summary.text).toBe('[application/octet-stream: binary data, 3 bytes, no Content-Type, sent as a download (résumé.bin). Not text: only this summary is returned.]');
  });
});
