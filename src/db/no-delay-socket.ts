/**
 * TCP connections to Postgres with Nagle's algorithm off. postgres-js leaves it on and writes a COPY as separate
 * socket writes (the data, then CopyDone): with Nagle the short CopyDone waits for the ACK of the data, which the
 * server delays (~40 ms on Linux) because it answers nothing before CopyDone — every COPY then costs 40 ms
 * (object-writer.ts appends full lists by COPY). Other statements go out in one write and are unaffected.
 */
import net from 'node:net';

/** postgres-js's `socket` option: a factory handed the parsed connection options, resolving a connected socket. */
export type SocketFactory = (options: { host: string[]; port: number[] }) => Promise<net.Socket>;

/**
 * The factory for a URL with exactly one TCP host, or undefined (unix sockets and multi-host URLs keep postgres-js's
 * own connection logic, Nagle included). Connecting fails after `timeoutSeconds`, like postgres-js's connect_timeout.
 */
export function noDelaySocket(url: string, timeoutSeconds: number): SocketFactory | undefined {
  const parsed = new URL(url);
  if (parsed.hostname === '' || parsed.hostname.includes(',') || parsed.host.includes(',') || parsed.searchParams.has('host')) {
    return undefined;
  }
  return (options) =>
    new Promise((resolve, reject) => {
      const socket = net.connect({ host: options.host[0], port: options.port[0], noDelay: true });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connecting to ${options.host[0]}:${options.port[0]} timed out after ${timeoutSeconds} s`));
      }, timeoutSeconds * 1000);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeListener('error', reject);
        resolve(socket);
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
}
