import { utf8PrefixBytes } from '../../../workers/shell/utf8-prefix';

describe('utf8PrefixBytes', () => {
  test.each([
    ['ASCII', Buffer.from('abc'), 2, 2],
    ['a 2-byte and a 3-byte character', Buffer.from('é€x'), 2, 5],
    ['a character past U+FFFF (two code units)', Buffer.from('😀x'), 2, 4],
    ['an invalid byte, one U+FFFD', Buffer.from([0xff, 0x41]), 1, 1],
    ['a truncated 3-byte sequence, one U+FFFD for two bytes', Buffer.from([0xe2, 0x82, 0x41]), 1, 2],
    ['a surrogate encoded in UTF-8, one U+FFFD per byte', Buffer.from([0xed, 0xa0, 0x80]), 2, 2],
  ])('counts the bytes behind the first code units: %s', (_what, buffer, units, bytes) => {
    expect(utf8PrefixBytes(buffer, units)).toBe(bytes);
  });

  test('agrees with Node\'s decoder on every prefix of 2,000 byte strings made of edge bytes', () => {
    const alphabet = [0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let round = 0; round < 2000; round++) {
      const buffer = Buffer.from(Array.from({ length: next() % 24 }, () => alphabet[next() % alphabet.length]));
      const text = buffer.toString('utf8');
      expect(utf8PrefixBytes(buffer, text.length)).toBe(buffer.length);
      for (let units = 0; units <= text.length; units++) {
        if (units > 0 && text.charCodeAt(units - 1) >= 0xd800 && text.charCodeAt(units - 1) <= 0xdbff) continue;
        expect(buffer.subarray(0, utf8PrefixBytes(buffer, units)).toString('utf8')).toBe(text.slice(0, units));
      }
    }
  });
});
