import { readFileSync } from 'node:fs';

/**
 * Descriptors kept for the process's own use besides its sessions' connections: workers' pipes
 * and IPC, log and listening sockets, keep-alive connections of clients between requests.
 */
const OWN_DESCRIPTORS = 256;

/**
 * A warning when this process's open-files limit is below what `maxSessions` sessions may hold
 * (one connection each for its stream, legacy SSE's or a client's GET), else undefined. Past the
 * limit Node accepts and at once closes each new connection (libuv's EMFILE fallback): clients see
 * resets and this log says nothing, so the start says it here. Node raises its soft limit to
 * the hard one at start, so what is read is what holds. Undefined where /proc is not.
 */
export function openFilesWarning(maxSessions: number, limitsText = readLimits()): string | undefined {
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(limitsText ?? '');
  if (!match || match[1] === 'unlimited') return undefined;
  const limit = Number(match[1]);
  const needed = maxSessions + OWN_DESCRIPTORS;
  if (limit >= needed) return undefined;
  return (
    `the open-files limit (${limit}, ulimit -n; LimitNOFILE= in a systemd unit) is below what http.maxSessions (${maxSessions}) may need, ${needed}: ` +
    `every connection holds a descriptor, and past the limit new connections are reset without a line in this log and workers cannot be restarted; ` +
    `raise the limit or lower http.maxSessions to ${Math.max(1, limit - OWN_DESCRIPTORS)}`
  );
}

function readLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}
