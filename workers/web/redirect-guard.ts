import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isBlockedAddress } from '../common/address-guard';

/**
 * Whether the browser may follow a redirect of an engine's result page to `target`: to the
 * engine's own host (a mirror on the local network, as configured), or to an address the SSRF
 * guard allows. Without it a result page could send Chromium to 127.0.0.1, the private network or
 * 169.254.169.254 (subresources and second navigations are refused already). Chromium resolves
 * the name again itself, so a name that changes between the two answers is not caught: a
 * pre-check, unlike the fetcher's guard at connect time. `localhost` and `*.localhost` are
 * loopback to Chromium without asking DNS.
 */
export async function redirectAllowed(target: string, engineHost: string): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return false;
  }
  if (url.host === engineHost) return true;
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  if (isIP(host)) return !isBlockedAddress(host);
  try {
    const addresses = await lookup(host, { all: true });
    return !addresses.some((entry) => isBlockedAddress(entry.address));
  } catch {
    // A name that does not resolve fails in Chromium too, with its own error.
    return true;
  }
}
