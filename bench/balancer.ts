/**
 * A round-robin TCP balancer for the replica benchmarks: one address in front of several gateway gRPC ports, as a
 * Kubernetes Service (an L4 load balancer without health checks) gives agents in production. Bytes are piped
 * unchanged both ways, so cleartext HTTP/2 (gRPC) goes through it. A copy of test/helpers/balancer.ts reduced to what
 * the benchmarks use (bench/ does not import from test/).
 */
import net from 'node:net';

/** A running balancer. */
export interface Balancer {
  /** `127.0.0.1:<port>`: what agents dial (`clouddriver.grpc`). */
  readonly address: string;
  /** Number of open client connections currently forwarded to `port`. */
  connectionsTo(port: number): number;
  /** Destroys every connection and stops listening. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a balancer on 127.0.0.1:0 forwarding to `targets` (ports on 127.0.0.1). Each new client connection goes to
 * the next target in round-robin order; a target that refuses the connection is skipped and the next one tried; when
 * every target fails the client is destroyed. When a target's side closes (its process was killed), the client's
 * side is closed too, so the agent notices at once.
 */
export async function startBalancer(targets: number[]): Promise<Balancer> {
  let next = 0;
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
    const start = next++ % targets.length;
    const tryTarget = (attempt: number) => {
      if (client.destroyed) return;
      if (attempt >= targets.length) return drop();
      const port = targets[(start + attempt) % targets.length]!;
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
  let closing: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${port}`,
    connectionsTo: (target) => [...open.values()].filter((e) => e.port === target).length,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const [client, entry] of open) {
          client.destroy();
          entry.upstream?.destroy();
        }
        open.clear();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
