/**
 * An in-process TCP proxy between a client and a server that records every byte in both directions and can cut all
 * connections. Tests use it to prove what crosses the wire (no Secret byte) and to inject network faults.
 */
import net from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** host:port to dial instead of the target. */
  readonly address: string;
  readonly port: number;
  /** Everything sent client → server so far. */
  upstreamBytes(): Buffer;
  /** Everything sent server → client so far. */
  downstreamBytes(): Buffer;
  /** Destroys every open connection (the listener stays up). */
  cutAll(): void;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1:0 forwarding to `targetPort` on 127.0.0.1. */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const up: Buffer[] = [];
  const down: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (b) => up.push(b));
    upstream.on('data', (b) => down.push(b));
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    upstreamBytes: () => Buffer.concat(up),
    downstreamBytes: () => Buffer.concat(down),
    cutAll: () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
