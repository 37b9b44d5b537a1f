import { oversizeBytes, sizeText } from '../../../supervisor/result-size';

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

describe('oversizeBytes', () => {
  const exact = (result: unknown) => Buffer.byteLength(JSON.stringify(result));

  it.each([
    ['a small result', text('hello'), 1024],
    ['many characters under the cap', text('x'.repeat(1000)), 4096],
  ])('passes %s', (_what, result, maxBytes) => {
    expect(oversizeBytes(result, maxBytes)).toBeUndefined();
  });

  it.each([
    ['one just over the cap', text('x'.repeat(2000)), 2000],
    ['characters JSON escapes to six bytes', text('\u0001'.repeat(400)), 2048],
    ['characters JSON escapes to two bytes', text('"\n\\'.repeat(400)), 2048],
    ['multi-byte characters', text('é'.repeat(600)), 1024],
    ['structuredContent and _meta', { content: [], structuredContent: { rows: Array.from({ length: 100 }, (_, i) => ({ id: i, name: `row ${i}` })) }, _meta: { k: true } }, 1024],
  ])('counts %s as UTF-8 JSON, to a few bytes', (_what, result, maxBytes) => {
    const bytes = oversizeBytes(result, maxBytes);
    expect(exact(result)).toBeGreaterThan(maxBytes);
    expect(bytes).toBeGreaterThanOrEqual(exact(result));
    expect(bytes! - exact(result)).toBeLessThanOrEqual(2 + 2 * 102);
  });

  it('passes a result of six-byte characters that fits only just', () => {
    const result = text('\u0001'.repeat(300));
    expect(oversizeBytes(result, exact(result) + 8)).toBeUndefined();
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
