/**
 * Bytes of `buffer` that decode to its first `units` UTF-16 code units, decoding as Node does
 * (WHATWG UTF-8: each maximal invalid subpart becomes one U+FFFD). Text decoded from output that
 * is not UTF-8 no longer says how many bytes it came from: one U+FFFD stands for 1 to 3 bytes of
 * output, or is a real one (3 bytes). A cut counted in the text's own UTF-8 bytes said 5,097,250
 * bytes were missing where 902,946 were. Walks the buffer: O(bytes), no allocation.
 */
export function utf8PrefixBytes(buffer: Uint8Array, units: number): number {
  let at = 0;
  let decoded = 0;
  while (at < buffer.length && decoded < units) {
    const lead = buffer[at];
    if (lead < 0x80) {
      at++;
      decoded++;
      continue;
    }
    let need: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) need = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      need = 2;
      if (lead === 0xe0) lower = 0xa0;
      if (lead === 0xed) upper = 0x9f; // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      need = 3;
      if (lead === 0xf0) lower = 0x90;
      if (lead === 0xf4) upper = 0x8f; // nothing past U+10FFFF
    } else {
      at++; // a byte that cannot start a character: one U+FFFD
      decoded++;
      continue;
    }
    let seen = 1;
    while (seen <= need && at + seen < buffer.length && buffer[at + seen] >= lower && buffer[at + seen] <= upper) {
      seen++;
      lower = 0x80;
      upper = 0xbf;
    }
    if (seen > need) {
      at += seen;
      decoded += need === 3 ? 2 : 1; // past U+FFFF: a surrogate pair
    } else {
      at += seen; // the maximal subpart: one U+FFFD; the byte that broke it starts the next
      decoded++;
    }
  }
  return at;
}
