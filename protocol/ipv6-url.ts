/**
 * What is wrong with an IPv6 address in a URL that does not parse, if that is what it is, as a
 * clause to append to "invalid URL" (else ''): the bare message left `http://::1:8080` and a zone
 * id a riddle. For the config's URLs and the fetcher's.
 */
export function ipv6UrlHint(input: unknown): string {
  if (typeof input !== 'string') return '';
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(input.trim())?.[1].replace(/^.*@/, '') ?? '';
  if (/^\[[^\]]*%/.test(authority)) return ': a URL cannot carry an IPv6 zone id (%25eth0; WHATWG URLs, which Node and undici parse, have none): use a global or loopback address, or a name';
  if (!authority.startsWith('[') && (authority.match(/:/g)?.length ?? 0) > 1) return ': an IPv6 address goes in brackets, as in http://[::1]:8080/';
  return '';
}
