/**
 * An in-process TCP proxy between a client and a server that records every byte in both directions and can misbehave
 * like a network: cut every connection, blackhole (connections stay open but nothing flows, as when packets are
 * dropped — TCP retransmits, so nothing is lost or corrupted when it heals), or delay every chunk. Tests use it to
 * prove what crosses the wire (no Secret byte) and to inject network faults.
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
  /**
   * While on, nothing flows: open connections stop reading, new ones are accepted but not connected onwards. Turning
   * it off lets everything held through in order.
   */
  blackhole(on: boolean): void;
  /** Delays every chunk by `ms` in both directions (0 to stop), keeping the order. */
  setDelay(ms: number): void;
  /** Open client connections. */
  connections(): number;
  close(): Promise<void>;
}

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** Record the bytes (default true); a long chaos run may turn it off for one direction's sake of memory. */
  capture?: boolean;
}

interface Link {
  client: net.Socket;
  upstream?: net.Socket;
  connect(): void;
}

/** Starts a proxy on 127.0.0.1:0 forwarding to `targetPort` on `targetHost`. */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1', options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const capture = options.capture !== false;
  const up: Buffer[] = [];
  const down: Buffer[] = [];
  const links = new Set<Link>();
  let holding = false;
  let delayMs = 0;

  /** Writes `chunk` to `to` after the current delay, never before an earlier chunk of the same direction. */
  const forwarder = (to: () => net.Socket | undefined) => {
    let lastDue = 0;
    return (chunk: Buffer) => {
      if (delayMs <= 0 && lastDue <= Date.now()) {
        to()?.write(chunk);
        return;
      }
      const due = Math.max(Date.now() + delayMs, lastDue);
      lastDue = due;
      setTimeout(() => to()?.write(chunk), due - Date.now());
    };
  };

  const server = net.createServer((client) => {
    const link: Link = {
      client,
      connect() {
        if (link.upstream) return;
        const upstream = net.connect(targetPort, targetHost);
        link.upstream = upstream;
        const toClient = forwarder(() => (client.destroyed ? undefined : client));
        const toUpstream = forwarder(() => (upstream.destroyed ? undefined : upstream));
        client.on('data', (b: Buffer) => {
          if (capture) up.push(b);
          toUpstream(b);
        });
        upstream.on('data', (b: Buffer) => {
          if (capture) down.push(b);
          toClient(b);
        });
        upstream.on('error', drop).on('close', drop);
        if (holding) upstream.pause();
        else client.resume();
      },
    };
    const drop = () => {
      client.destroy();
      link.upstream?.destroy();
      links.delete(link);
    };
    links.add(link);
    client.on('error', drop).on('close', drop);
    client.pause();
    if (!holding) link.connect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    upstreamBytes: () => Buffer.concat(up),
    downstreamBytes: () => Buffer.concat(down),
    cutAll: () => {
      for (const link of [...links]) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      links.clear();
    },
    blackhole(on) {
      holding = on;
      for (const link of links) {
        if (on) {
          link.client.pause();
          link.upstream?.pause();
        } else if (!link.upstream) {
          link.connect();
        } else {
          link.client.resume();
          link.upstream.resume();
        }
      }
    },
    setDelay(ms) {
      if (!(ms >= 0)) throw new RangeError('delay must be a non-negative number of milliseconds');
      delayMs = ms;
    },
    connections: () => links.size,
    close: async () => {
      for (const link of links) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      links.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
