import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** `http://127.0.0.1:<port>`, forwarding to the target. */
  origin: string;
  /** Destroys every connection through the proxy, as a network change or a proxy's timeout does. */
  sever(): void;
  /** Holds new connections (accepted, not forwarded) until `release`: a network still down. */
  hold(): void;
  release(): void;
  /** Connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 to `target` (a URL's origin) whose connections a test can cut. */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<net.Socket>();
  let held: Array<() => void> | undefined;
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    const forward = () => {
      if (client.destroyed) return;
      const upstream = net.connect(Number(port), hostname);
      open.add(upstream);
      upstream.on('close', () => {
        open.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => undefined);
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    };
    if (held) held.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${address.port}`,
    sever: () => {
      for (const socket of open) socket.destroy();
    },
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const forward of waiting) forward();
    },
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
