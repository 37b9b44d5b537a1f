import { oversizeBytes, sizeText } from '../../../supervisor/result-size';

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

describe('oversizeBytes', () => {
  it.each([
    ['a small result', text('hello'), 1024, undefined],
    ['one just over the cap, as UTF-8 JSON', text('x'.repeat(2000)), 2000, Buffer.byteLength(JSON.stringify(text('x'.repeat(2000))))],
    ['characters JSON escapes to six bytes', text('\u0001'.repeat(400)), 2048, Buffer.byteLength(JSON.stringify(text('\u0001'.repeat(400))))],
    ['multi-byte characters', text('é'.repeat(600)), 1024, Buffer.byteLength(JSON.stringify(text('é'.repeat(600))))],
    ['many characters under the cap', text('x'.repeat(1000)), 4096, undefined],
  ])('%s', (_what, result, maxBytes, want) => {
    expect(oversizeBytes(result, maxBytes)).toBe(want);
  });

  it('counts structuredContent and _meta too', () => {
    expect(oversizeBytes({ content: [], structuredContent: { rows: Array.from({ length: 100 }, () => 'abcdefghij') } }, 1024)).toBeGreaterThan(1024);
  });
});

describe('sizeText', () => {
  it.each([
    [11 * 1024 * 1024 + 300, '11 MiB'],
    [8 * 1024 * 1024, '8 MiB'],
    [1536 * 1024, '1.5 MiB'],
    [2000, '2 KiB'],
  ])('%d bytes read %s', (bytes, want) => expect(sizeText(bytes)).toBe(want));
});
