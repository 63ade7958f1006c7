/**
 * A real HAProxy (/usr/sbin/haproxy, Debian's `haproxy` package) as an HTTP/1.1-only reverse proxy in front of a test
 * server, running docs/networks.md's configuration (./reverse-proxy-configs.ts) with test addresses. The port is bound
 * here on port 0 and inherited as fd 3, which HAProxy binds with `bind fd@3` (./proxy-process.ts). HAProxy runs in the
 * foreground (`-db`) with its messages on stderr; its only file is a stats socket, whose appearance means it has bound
 * its listeners.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindSocket, runInheritedProxy } from './proxy-process.js';
import { haproxyConfig } from './reverse-proxy-configs.js';

/** The HAProxy binary the harness runs. */
const HAPROXY_BIN = '/usr/sbin/haproxy';

/**
 * - `http1-reverse`: docs/networks.md's configuration: HTTP/1.1 only on both sides (`proto h1`), WebSocket upgrades
 *   passed, hour-long timeouts; HTTP/2 clients cannot pass.
 * - `h2-to-http1`: HAProxy's default frontend instead: it answers HTTP/2 itself (prior knowledge, or over TLS whatever
 *   ALPN said) and forwards every request as HTTP/1.1, so an HTTP/2 client gets through to an HTTP/1.1 upstream.
 */
type HaproxyMode = 'http1-reverse' | 'h2-to-http1';

/** Options of {@link startHaproxy}. */
export interface HaproxyHarnessOptions {
  /** The port on 127.0.0.1 to proxy to. */
  upstreamPort: number;
  /** Default `http1-reverse`. */
  mode?: HaproxyMode;
  /** TLS on the bind (no `alpn`) with these PEM files; the upstream stays cleartext. */
  tls?: { certFile: string; keyFile: string };
}

/** A running HAProxy. */
export interface HaproxyProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** `http://127.0.0.1:<port>` (`https://` with TLS). */
  readonly url: string;
  /** The configuration file it runs (the whole file, all but `global` from ./reverse-proxy-configs.ts). */
  readonly config: string;
  /** What it printed so far (last 16 KB), for failure messages. */
  output(): string;
  /**
   * Stops it (connections through it are cut) and starts it again on the same port; resolves once it runs. Retries
   * binding the port for a bounded time if another process took it meanwhile.
   */
  restart(): Promise<void>;
  /** Stops it and waits until it exited; removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts HAProxy (`mode http`, WebSocket upgrades passed, hour-long tunnel timeout; HTTP/1.1 only unless `mode` says
 * otherwise) in front of 127.0.0.1:`upstreamPort`; resolves once it has bound its listeners.
 */
export async function startHaproxy(options: HaproxyHarnessOptions): Promise<HaproxyProxy> {
  if (!existsSync(HAPROXY_BIN)) throw new Error(`${HAPROXY_BIN} is missing: apt-get install haproxy (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), 'outpost-haproxy-'));
  const confFile = join(dir, 'haproxy.cfg');
  const statsSocket = join(dir, 'admin.sock');
  let pemFile: string | undefined;
  if (options.tls) {
    pemFile = join(dir, 'proxy.pem');
    const pem = (file: string) => readFileSync(file, 'utf8').trimEnd();
    writeFileSync(pemFile, `${pem(options.tls.certFile)}\n${pem(options.tls.keyFile)}\n`, { mode: 0o600 });
  }
  const config = [
    'global',
    '    nbthread 1',
    `    stats socket ${statsSocket} mode 600 level user`,
    '',
    haproxyConfig({
      bind: 'fd@3',
      upstream: `127.0.0.1:${options.upstreamPort}`,
      ...(pemFile ? { tlsPemFile: pemFile } : {}),
      acceptHttp2: options.mode === 'h2-to-http1',
    }),
  ].join('\n');
  writeFileSync(confFile, config);
  const args = ['-db', '-f', confFile];

  const socket = await bindSocket();
  const proxy = await runInheritedProxy(socket, {
    name: 'haproxy',
    bin: HAPROXY_BIN,
    args,
    checkArgs: ['-c', '-q'],
    dir,
    beforeStart: () => rmSync(statsSocket, { force: true }),
    readyWhat: 'haproxy bound its listeners',
    ready: () => existsSync(statsSocket),
  });
  return { ...proxy, url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${socket.port}`, config };
}
