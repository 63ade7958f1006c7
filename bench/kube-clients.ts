/**
 * The clients of the kube-proxy scenario: one keep-alive HTTP/1.1 GET per call (a `kubectl get` without the process),
 * a raw `?watch=1` stream parsed line by line, and one `kubectl` process run. Each is used the same way straight to
 * the sandbox and through the gateway's `/k8s/{account}`, so the two sides differ only in the path.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

/** Where one side sends its requests: a base URL (the sandbox, or the gateway's /k8s/ACCOUNT) and its headers. */
export interface KubeTarget {
  base: string;
  headers: Record<string, string>;
  /** The CA to trust for an https base. */
  ca?: string;
}

/** `http` or `https` for the target's base URL, with its TLS options. */
function transportOf(target: KubeTarget) {
  return target.base.startsWith('https:')
    ? { module: https, agent: (o: http.AgentOptions) => new https.Agent({ ...o, ca: target.ca }), ca: target.ca }
    : { module: http, agent: (o: http.AgentOptions) => new http.Agent(o), ca: undefined };
}

/** A keep-alive client holding one connection to its target. */
export interface KeepAliveClient {
  /** GETs `path` and reads the whole body; resolves with the milliseconds from sending to the last byte. */
  get(path: string): Promise<number>;
  close(): void;
}

/** A client for `target` over one kept-alive HTTP/1.1 connection. */
export function keepAliveClient(target: KubeTarget): KeepAliveClient {
  const t = transportOf(target);
  const agent = t.agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (path) =>
      new Promise((resolve, reject) => {
        const t0 = performance.now();
        const req = t.module.get(`${target.base}${path}`, { agent, headers: { accept: 'application/json', ...target.headers } }, (res) => {
          res.on('data', () => {});
          res.on('end', () => {
            const ms = performance.now() - t0;
            if (res.statusCode === 200) resolve(ms);
            else reject(new Error(`GET ${target.base}${path}: HTTP ${res.statusCode}`));
          });
          res.on('error', reject);
        });
        req.on('error', reject);
      }),
    close: () => agent.destroy(),
  };
}

/** An open watch: calls `onEvent` with the arrival time of each event, as soon as its line is complete. */
export interface RawWatch {
  /** Resolves once the response head arrived (the watch is registered in the API server). */
  readonly opened: Promise<void>;
  close(): void;
}

/** Opens `GET path` (a `?watch=1` URL) on `target`; every complete JSON line is one event. */
export function rawWatch(target: KubeTarget, path: string, onEvent: (event: WatchEvent, at: number) => void): RawWatch {
  let opened!: () => void;
  let failed!: (err: Error) => void;
  const openedPromise = new Promise<void>((resolve, reject) => {
    opened = resolve;
    failed = reject;
  });
  const t = transportOf(target);
  const options = { headers: { accept: 'application/json', ...target.headers }, ...(t.ca ? { ca: t.ca } : {}) };
  const req = t.module.get(`${target.base}${path}`, options, (res) => {
    if (res.statusCode !== 200) {
      failed(new Error(`watch ${target.base}${path}: HTTP ${res.statusCode}`));
      res.resume();
      return;
    }
    opened();
    let partial = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const at = performance.now();
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) onEvent(JSON.parse(line) as WatchEvent, at);
    });
    res.on('error', () => {});
  });
  req.on('error', (err) => failed(err));
  return { opened: openedPromise, close: () => req.destroy() };
}

/** One watch event as the API server writes it. */
export interface WatchEvent {
  type: string;
  object: { metadata?: { name?: string; resourceVersion?: string }; data?: Record<string, string> };
}

/** The kubectl binary to run: OUTPOST_BENCH_KUBECTL, else the newest installed one known here; undefined when none. */
export function findKubectl(): string | undefined {
  const candidates = [
    process.env.OUTPOST_BENCH_KUBECTL,
    '/usr/lib/google-cloud-sdk/bin/kubectl.1.33',
    '/usr/lib/google-cloud-sdk/bin/kubectl',
    '/usr/local/bin/kubectl',
    '/usr/bin/kubectl',
  ];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

/**
 * Runs `bin args…` to completion (with `env` added to this process's environment); resolves with its wall-clock
 * milliseconds (spawn → exit), rejects on failure.
 */
export function timeProcess(bin: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    execFile(bin, args, { timeout: 60_000, env: { ...process.env, ...env } }, (err, _stdout, stderr) => {
      const ms = performance.now() - t0;
      if (err) reject(new Error(`${bin} ${args.join(' ')}: ${err.message} ${stderr.slice(-500)}`));
      else resolve(ms);
    });
  });
}

/** The client version kubectl `bin` reports (`v1.33.1`), or 'unknown'. */
export function kubectlVersion(bin: string): string {
  try {
    const out = execFileSync(bin, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
    return (JSON.parse(out) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
