/**
 * A round-robin TCP load balancer for tests: one address in front of several gateway replicas, as a Kubernetes
 * Service (or any L4 load balancer) gives agents in production. Bytes are piped unchanged both ways, so cleartext
 * HTTP/2 (gRPC) goes through it.
 */
import net from 'node:net';

/** A running balancer. */
export interface Balancer {
  /** `127.0.0.1:<port>`, to dial instead of a target (agents take it as `clouddriver.grpc`). */
  readonly address: string;
  readonly port: number;
  /** Replaces the targets for new connections (open connections stay where they are; `cutAll()` moves them). */
  setTargets(ports: number[]): void;
  /** Destroys every open connection, both sides (the listener stays up). */
  cutAll(): void;
  /** Number of open client connections currently forwarded to `port`. */
  connectionsTo(port: number): number;
  /** Destroys every connection and stops listening. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a balancer on 127.0.0.1:0 forwarding to ports on 127.0.0.1. Each new client connection goes to the next
 * target in round-robin order; a target that refuses the connection (or fails to connect) is skipped and the next
 * one tried, and when every target fails the client is destroyed.
 *
 * Like a load balancer without health checks, it only notices a dead target when a connection is refused: a
 * SIGSTOPped process still accepts TCP connections (the kernel does it), so new clients can land on it and hang.
 * Emulate a readiness probe by removing such a target with `setTargets`, or pass `targets` as a function that the
 * balancer calls on every new connection.
 */
export async function startBalancer(targets: number[] | (() => number[])): Promise<Balancer> {
  let current: () => number[] = typeof targets === 'function' ? targets : () => targets;
  let next = 0;
  /** Open client connections, each with the target port it was forwarded to (undefined while connecting). */
  const open = new Map<net.Socket, { upstream?: net.Socket; port?: number }>();

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    const entry: { upstream?: net.Socket; port?: number } = {};
    open.set(client, entry);
    const drop = () => {
      client.destroy();
      entry.upstream?.destroy();
      open.delete(client);
    };
    client.on('error', drop).on('close', drop);
    const ports = [...current()];
    const start = ports.length === 0 ? 0 : next++ % ports.length;
    const tryTarget = (attempt: number) => {
      if (client.destroyed) return;
      if (attempt >= ports.length) return drop();
      const port = ports[(start + attempt) % ports.length]!;
      const upstream = net.connect(port, '127.0.0.1');
      const failed = () => {
        upstream.destroy();
        tryTarget(attempt + 1);
      };
      upstream.once('error', failed);
      upstream.once('connect', () => {
        upstream.off('error', failed);
        if (client.destroyed) return upstream.destroy();
        entry.upstream = upstream;
        entry.port = port;
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryTarget(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const cutAll = () => {
    for (const [client, entry] of open) {
      client.destroy();
      entry.upstream?.destroy();
    }
    open.clear();
  };
  let closing: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${port}`,
    port,
    setTargets: (ports) => {
      const copy = [...ports];
      current = () => copy;
    },
    cutAll,
    connectionsTo: (target) => [...open.values()].filter((e) => e.port === target).length,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
