import { httpFetch } from '../../../workers/web/http-fetch';
import { startSite, type LocalSite } from '../../fixtures/web/local-site';

const open = { allowPrivateNetwork: true, timeoutMs: 5000 };
const latin1 = (text: string) => Buffer.from(text, 'latin1');
/** Pages in encodings other than UTF-8, labelled in the header, in the page, wrongly or not at all: [Content-Type, body]. */
const PAGES: Record<string, [string, Buffer]> = {
  '/no-label': ['text/html', latin1('<html><body><p>caf\xe9 na\xefve</p></body></html>')],
  '/unknown-label': ['text/html; charset=x-klingon', latin1('<html><head><meta charset="iso-8859-1"></head><body><p>caf\xe9</p></body></html>')],
  '/cp1252-header': ['text/plain; charset=ISO-8859-1', Buffer.from([0x93, 0x68, 0x69, 0x94, 0x20, 0x80])],
  '/xml-declaration': ['application/xml', latin1('<?xml version="1.0" encoding="ISO-8859-15"?><a>\xa4 caf\xe9</a>')],
  '/header-beats-meta': ['text/html; charset=utf-8', Buffer.from('<html><head><meta charset="iso-8859-1"></head><body><p>café €</p></body></html>')],
  '/utf8-no-label': ['text/plain', Buffer.from('café €')],
};

let site: LocalSite;
beforeAll(async () => {
  site = await startSite({
    ...Object.fromEntries(Object.entries(PAGES).map(([route, [type, body]]) => [route, (_req, res) => res.writeHead(200, { 'content-type': type }).end(body)])),
    // A Location written as UTF-8 bytes, as many frameworks send it (writeHead takes a string as Latin-1).
    '/to-cafe': (_req, res) => res.writeHead(302, { location: Buffer.from('/caf\u00e9').toString('latin1') }).end(),
    '/caf%C3%A9': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('at the café'),
  });
});
afterAll(async () => {
  await site.close();
});

describe('httpFetch decodes a page in the encoding it is in', () => {
  test('a page that names no encoding and is not UTF-8 is read as windows-1252, as browsers do, not with U+FFFD', async () => {
    const page = await httpFetch(`${site.origin}/no-label`, open);
    expect([page.text, page.charset]).toEqual(['<html><body><p>café naïve</p></body></html>', 'windows-1252']);
  });

  test('a charset label no decoder knows is passed over for the page\'s own <meta charset>', async () => {
    expect((await httpFetch(`${site.origin}/unknown-label`, open)).text).toContain('<p>café</p>');
  });

  test('ISO-8859-1 is read as windows-1252: curly quotes and the euro sign, not C1 controls', async () => {
    expect((await httpFetch(`${site.origin}/cp1252-header`, open)).text).toBe('“hi” €');
  });

  test("an XML declaration's encoding is read", async () => {
    expect((await httpFetch(`${site.origin}/xml-declaration`, open)).text).toContain('<a>€ café</a>');
  });

  test('the header wins over <meta>, and UTF-8 without a label stays UTF-8', async () => {
    expect((await httpFetch(`${site.origin}/header-beats-meta`, open)).text).toContain('café €');
    const plain = await httpFetch(`${site.origin}/utf8-no-label`, open);
    expect([plain.text, plain.charset]).toEqual(['café €', 'utf-8']);
  });
});

describe('httpFetch refuses a URL it would send altered', () => {
  test('one with credentials, without echoing them (they were dropped and the page fetched without them)', async () => {
    const fetched = httpFetch(site.origin.replace('//', '//user:s3cret@') + '/utf8-no-label', open);
    await expect(fetched).rejects.toMatchObject({ code: 'INVALID_URL', message: expect.stringContaining('a URL with credentials (user:password@ before 127.0.0.1') });
    await expect(fetched).rejects.not.toMatchObject({ message: expect.stringContaining('s3cret') });
  });

  test('one with a lone UTF-16 surrogate (it went out as %EF%BF%BD); a whole emoji is percent-encoded', async () => {
    await expect(httpFetch(`${site.origin}/x\ud800`, open)).rejects.toMatchObject({ code: 'INVALID_URL', message: expect.stringContaining('lone UTF-16 surrogate') });
    await expect(httpFetch(`${site.origin}/\ud83d\ude00`, open)).rejects.toMatchObject({ code: 'HTTP_ERROR', message: expect.stringContaining('/%F0%9F%98%80') });
  });
});

describe('httpFetch follows a redirect whose Location is UTF-8 bytes', () => {
  test('to the page the bytes name, as browsers do (undici reads header bytes as Latin-1: it went to /caf%C3%83%C2%A9)', async () => {
    const page = await httpFetch(`${site.origin}/to-cafe`, open);
    expect([page.text, page.url]).toEqual(['at the café', `${site.origin}/caf%C3%A9`]);
  });
});
