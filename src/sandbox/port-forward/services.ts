/**
 * The built-in "servers" a sandbox pod answers port-forwarded connections with (the sandbox runs no containers):
 * port 8080 is a tiny HTTP server that answers every request with 200 and a fixed text, every other port echoes back
 * what it receives. Documented in src/sandbox/README.md ("exec, attach and port-forward").
 */
import type { KubeObject } from '../types.js';

/** The port that answers HTTP. */
const HTTP_PORT = 8080;

/** Largest HTTP request head the built-in HTTP server reads before answering 431. */
const MAX_HEAD = 16 * 1024;

/** One forwarded connection as a service sees it. */
export interface Connection {
  write(data: Buffer): void;
  /** Ends our side; the connection is over once the client's side is too. */
  end(): void;
}

/** A service: gets the client's bytes and its end-of-stream, writes back through the connection. */
export interface ServiceHandler {
  data(chunk: Buffer): void;
  end(): void;
}

/** The fixed body of the HTTP answer for a request line. */
function httpAnswerBody(pod: KubeObject, port: number, requestLine: string): string {
  return `hello from sandbox pod ${pod.metadata.namespace}/${pod.metadata.name} port ${port}: ${requestLine}\n`;
}

function echoService(conn: Connection): ServiceHandler {
  return { data: (chunk) => conn.write(chunk), end: () => conn.end() };
}

function httpService(conn: Connection, pod: KubeObject, port: number): ServiceHandler {
  let head = Buffer.alloc(0);
  let answered = false;
  const answer = (status: string, body: string) => {
    answered = true;
    conn.write(
      Buffer.from(
        `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      ),
    );
    conn.end();
  };
  return {
    data(chunk) {
      if (answered) return;
      head = Buffer.concat([head, chunk]);
      const endOfHead = head.indexOf('\r\n\r\n');
      if (endOfHead >= 0) {
        const requestLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
        answer('200 OK', httpAnswerBody(pod, port, requestLine));
      } else if (head.length > MAX_HEAD) answer('431 Request Header Fields Too Large', 'request head too large\n');
    },
    end() {
      if (!answered) conn.end();
    },
  };
}

/** The service listening on `port` of `pod`. */
export function serviceFor(conn: Connection, pod: KubeObject, port: number): ServiceHandler {
  return port === HTTP_PORT ? httpService(conn, pod, port) : echoService(conn);
}
