import { readFileSync } from 'node:fs';

/**
 * What to do when the HTTP port cannot be opened, after the system's own words: below
 * `net.ipv4.ip_unprivileged_port_start` (1024 by default) only root or a process with
 * CAP_NET_BIND_SERVICE may listen, and an ordinary user got Node's bare "listen EACCES: permission
 * denied"; a port in use may be another user's server, which that user cannot see in `ss -p`.
 * Empty for any other error.
 */
export function listenErrorHint(error: NodeJS.ErrnoException, port: number): string {
  if (error.code === 'EACCES' || error.code === 'EPERM') {
    const first = unprivilegedPortStart();
    if (first === undefined || port < first) {
      return (
        `; ports below ${first ?? 1024} (net.ipv4.ip_unprivileged_port_start) take root or the capability CAP_NET_BIND_SERVICE: ` +
        'use a port from there up (--port, MCPVISOR_PORT, http.port) behind a reverse proxy such as nginx, or grant the capability (as root: setcap cap_net_bind_service=+ep on the node binary; AmbientCapabilities= in a systemd unit)'
      );
    }
    return '';
  }
  if (error.code === 'EADDRINUSE') return `; another process listens there, perhaps another user's: choose another port (--port, MCPVISOR_PORT, http.port; 0 picks a free one) or stop it`;
  return '';
}

function unprivilegedPortStart(): number | undefined {
  try {
    const value = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim());
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined; // Not Linux, or no /proc.
  }
}
