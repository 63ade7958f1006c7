/**
 * A real nginx (/usr/sbin/nginx, Debian's `nginx` package) as an HTTP/1.1-only reverse proxy in front of a test
 * server, running docs/networks.md's configuration (./reverse-proxy-configs.ts) with test addresses. nginx cannot
 * listen on port 0, but it adopts listening sockets it inherits (`NGINX=3;`), so the port is bound here on port 0 and
 * handed over as fd 3 (./proxy-process.ts). Everything nginx writes lives in a temporary directory; errors go to stderr.
 * The master process stays on (`daemon off` only): inherited sockets did not work with `master_process off`.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindSocket, runInheritedProxy } from './proxy-process.js';
import { nginxSiteConfig } from './reverse-proxy-configs.js';

/** The nginx binary the harness runs. */
const NGINX_BIN = '/usr/sbin/nginx';

/**
 * - `http1-reverse`: docs/networks.md's configuration: HTTP/1.1 to the upstream, WebSocket upgrades passed, buffering
 *   off, hour-long timeouts; the listen has no `http2`, so HTTP/2 clients cannot pass.
 * - `block-upgrade`: the same, but every request with an `Upgrade` header is answered 403: nothing streams through.
 */
type NginxMode = 'http1-reverse' | 'block-upgrade';

/** Options of {@link startNginx}. */
export interface NginxOptions {
  /** The port on 127.0.0.1 to proxy to. */
  upstreamPort: number;
  mode: NginxMode;
  /** TLS on the listen (no `http2`: ALPN offers http/1.1 only) with these PEM files; the upstream stays cleartext. */
  tls?: { certFile: string; keyFile: string };
}

/** A running nginx. */
export interface NginxProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** `http://127.0.0.1:<port>` (`https://` with TLS). */
  readonly url: string;
  /** The configuration file it runs (the whole file, the site part from ./reverse-proxy-configs.ts). */
  readonly config: string;
  /** Its error log so far (stderr, last 16 KB), for failure messages. */
  output(): string;
  /**
   * Stops it (connections through it are cut) and starts it again on the same port; resolves once it runs. Retries
   * binding the port for a bounded time if another process took it meanwhile.
   */
  restart(): Promise<void>;
  /** Stops it and waits until its processes exited; removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** The whole nginx.conf: process settings for a test (one worker, everything under `dir`) around the site config. */
function nginxConf(dir: string, port: number, options: NginxOptions): string {
  const site = nginxSiteConfig({
    listen: `127.0.0.1:${port}`,
    upstream: `127.0.0.1:${options.upstreamPort}`,
    ...(options.tls ? { tls: options.tls } : {}),
    blockUpgrade: options.mode === 'block-upgrade',
  });
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${join(dir, `${kind}_temp`)};`);
  return [
    'daemon off;',
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    'error_log stderr warn;',
    'events {',
    '    worker_connections 1024;',
    '}',
    'http {',
    '    access_log off;',
    ...temp,
    '',
    ...site
      .trimEnd()
      .split('\n')
      .map((line) => (line === '' ? '' : `    ${line}`)),
    '}',
    '',
  ].join('\n');
}

/** Starts nginx in front of 127.0.0.1:`upstreamPort`; resolves once its master process wrote its pid file. */
export async function startNginx(options: NginxOptions): Promise<NginxProxy> {
  if (!existsSync(NGINX_BIN)) throw new Error(`${NGINX_BIN} is missing: apt-get install nginx (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), 'outpost-nginx-'));
  // Run as root, nginx's workers are `nobody`: they must reach the temp paths below.
  chmodSync(dir, 0o755);
  const confFile = join(dir, 'nginx.conf');
  const pidFile = join(dir, 'nginx.pid');
  const args = ['-p', dir, '-c', confFile, '-e', 'stderr'];
  const env = { NGINX: '3;' };
  const socket = await bindSocket();
  const port = socket.port;
  const config = nginxConf(dir, port, options);
  writeFileSync(confFile, config);
  for (const kind of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, `${kind}_temp`));

  const proxy = await runInheritedProxy(socket, {
    name: 'nginx',
    bin: NGINX_BIN,
    args,
    checkArgs: ['-t', '-q'],
    env,
    dir,
    beforeStart: () => rmSync(pidFile, { force: true }),
    readyWhat: 'nginx wrote its pid file',
    ready: (proc) => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() === String(proc.child.pid),
  });
  return { ...proxy, url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`, config };
}
