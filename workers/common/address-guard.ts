import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard, for the web fetcher (unless `allowPrivateNetwork` is set) and for the documents
 * an OpenAPI description from the network references: the addresses they may not reach. Loopback,
 * private (RFC 1918, ULA), link-local (which holds the cloud metadata address 169.254.169.254),
 * carrier-grade NAT, "this network", benchmarking, multicast and reserved ranges, and their IPv6
 * counterparts. IPv4-mapped IPv6 addresses are judged by their IPv4 part.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
// IPv6: the unspecified and loopback addresses and the deprecated IPv4-compatible ones (::/96),
// ULA, link-local, the deprecated site-local (fec0::/10, still routed on some old networks),
// multicast, documentation, discard-only, and the forms that carry an IPv4 address inside (NAT64,
// SIIT's IPv4-translated ::ffff:0:0:0/96, Teredo, 6to4), which a relay could turn back into a
// private one.
for (const [net, prefix] of [
  ['::', 96], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['::ffff:0:0:0', 96], ['2001::', 32], ['2002::', 16],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether `address` (an IP literal) is one the guard refuses. Anything not an IP is refused too. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return BLOCKED.check(bare, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
    if (mapped) return BLOCKED.check(mapped, 'ipv4');
    return BLOCKED.check(bare, 'ipv6');
  }
  return true;
}

/** The error code a refused address carries through undici, so the fetcher can name it. */
export const BLOCKED_ADDRESS_CODE = 'ERR_MCPVISOR_BLOCKED_ADDRESS';

/**
 * How to open the guard, wherever the refusal is read: the variable alone misled library users
 * (a WebContentFetcher never reads it) and `mcpvisor` users (who set it in the config file).
 */
export const ALLOW_PRIVATE_HINT =
  'allowPrivateNetwork: true allows it (WEB_ALLOW_PRIVATE_NETWORK=true for web-search and web-search-mcp, web.fetch.allowPrivateNetwork in a config file, an option of WebContentFetcher and HttpClient in the library)';

export class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS_CODE;
  constructor(readonly host: string, readonly address: string) {
    super(`${host} resolves to ${address}, a private, loopback, link-local or metadata address; refused; ${ALLOW_PRIVATE_HINT}`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` that resolves the name and refuses the connection when any of its
 * addresses is blocked. It runs on every connection undici opens, so every redirect hop and a
 * DNS answer that changes between checks (rebinding) are judged on the address actually used.
 */
export function guardedLookup(hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
    if (error) return callback(error, options.all ? [] : '');
    const refused = addresses.find((entry) => isBlockedAddress(entry.address));
    if (refused) return callback(new BlockedAddressError(hostname, refused.address) as unknown as NodeJS.ErrnoException, options.all ? [] : '');
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}
