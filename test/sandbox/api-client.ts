/**
 * A minimal HTTP client for the sandbox tests: raw requests with a token, JSON decoding, and a line reader for watch
 * streams (so tests see exactly what a client would).
 */
import { request } from 'node:http';
import { after, before } from 'node:test';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/** A decoded response. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Options of {@link call}. */
export interface CallOptions {
  body?: unknown;
  /** Raw body text/bytes instead of JSON. */
  raw?: string | Buffer;
  contentType?: string;
  token?: string | null;
  headers?: Record<string, string>;
}

/** Sends one request to the sandbox (admin token unless told otherwise). */
export function call(sb: Sandbox, method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse> {
  const url = new URL(path, sb.url);
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
  const token = opts.token === undefined ? sb.adminToken : opts.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    headers['Content-Type'] = opts.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An open watch stream. */
export interface WatchStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Events received so far. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  events: any[];
  /** Resolves when `n` events (optionally matching) have arrived, or rejects after `timeoutMs`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  waitFor(predicate: (events: any[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

/** Opens a watch (GET with the given query, and `headers` such as Accept) and collects its events line by line. */
export function openWatch(sb: Sandbox, path: string, token?: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  const url = new URL(path, sb.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { ...headers, Authorization: `Bearer ${token ?? sb.adminToken}` } }, (res) => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const events: any[] = [];
      let buffer = '';
      const waiters = new Set<() => void>();
      let endResolve!: () => void;
      const ended = new Promise<void>((r) => (endResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line));
        }
        for (const w of [...waiters]) w();
      });
      res.on('end', () => {
        if (buffer.trim()) {
          try {
            events.push(JSON.parse(buffer));
          } catch {
            // a non-JSON body (error pages) stays in buffer
          }
        }
        endResolve();
        for (const w of [...waiters]) w();
      });
      res.on('error', () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        waitFor(predicate, timeoutMs = 30_000) {
          return new Promise((ok, fail) => {
            const check = () => {
              if (predicate(events)) {
                waiters.delete(check);
                clearTimeout(timer);
                ok();
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`watch condition not met; events: ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Starts a sandbox (with namespace `namespace` created) before the file's tests and closes it after them; `use`
 * receives it once started. For files whose tests share one sandbox.
 */
export function useSandbox(namespace: string, options: SandboxOptions, use: (sb: Sandbox) => void): void {
  let sb: Sandbox | undefined;
  before(async () => {
    const started = await startSandbox(options);
    sb = started;
    started.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    use(started);
  });
  after(async () => {
    await sb?.close();
  });
}
