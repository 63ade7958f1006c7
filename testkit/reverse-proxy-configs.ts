/**
 * The reverse-proxy configurations that docs/networks.md shows, as functions: nginx, HAProxy and an ingress-nginx
 * Ingress in front of the gateway's HTTP port, passing WebSocket upgrades and keeping idle streams open. The test
 * harnesses (./nginx.ts, ./haproxy.ts) run exactly this text with test addresses, and test/docs/networks.test.ts checks
 * that the page shows exactly this text with the page's addresses, so what the page recommends is what the tests run.
 */

/**
 * How long a proxy keeps a quiet connection or tunnel open, in seconds. An agent stream lives up to
 * `agents.maxStreamAgeSeconds` and carries heartbeats every 10-20 s; an hour leaves room for a slow peer.
 */
export const STREAM_IDLE_TIMEOUT_SECONDS = 3600;

/** Options of {@link nginxSiteConfig}. */
export interface NginxSiteOptions {
  /** The `listen` address: `443`, `127.0.0.1:8443`. */
  listen: string;
  /** `host:port` of the gateway's HTTP port. */
  upstream: string;
  /** TLS on the listen (HTTP/1.1 only: no `http2`), with these PEM files. */
  tls?: { certFile: string; keyFile: string };
  /** Answer 403 to every WebSocket upgrade instead of passing it (tests only: a proxy nothing can pass). */
  blockUpgrade?: boolean;
}

/**
 * nginx configuration for the `http` context (a file in /etc/nginx/conf.d/): the `map` that turns the client's
 * `Upgrade` into `Connection: upgrade` towards the gateway, and one `server` that proxies everything over HTTP/1.1
 * with buffering off and hour-long read and send timeouts. Indented with four spaces, ends with a newline.
 */
export function nginxSiteConfig(options: NginxSiteOptions): string {
  const timeout = `${STREAM_IDLE_TIMEOUT_SECONDS}s`;
  const lines = [
    'map $http_upgrade $connection_upgrade {',
    '    default upgrade;',
    "    ''      close;",
    '}',
    '',
    'server {',
    `    listen ${options.listen}${options.tls ? ' ssl' : ''};`,
    ...(options.tls ? [`    ssl_certificate     ${options.tls.certFile};`, `    ssl_certificate_key ${options.tls.keyFile};`] : []),
    '',
    '    location / {',
    ...(options.blockUpgrade ? ['        if ($http_upgrade) {', '            return 403;', '        }'] : []),
    `        proxy_pass http://${options.upstream};`,
    '        proxy_http_version 1.1;',
    '        proxy_set_header Host $host;',
    '        proxy_set_header Upgrade $http_upgrade;',
    '        proxy_set_header Connection $connection_upgrade;',
    '        proxy_buffering off;',
    `        proxy_read_timeout ${timeout};`,
    `        proxy_send_timeout ${timeout};`,
    '    }',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

/** Options of {@link haproxyConfig}. */
export interface HaproxyOptions {
  /** The `bind` address: `:443`, `fd@3`. */
  bind: string;
  /** `host:port` of the gateway's HTTP port. */
  upstream: string;
  /** TLS on the bind with this PEM file (certificate and key in one file, as HAProxy wants). */
  tlsPemFile?: string;
  /**
   * Leave out `proto h1` (tests only): HAProxy's default, which answers HTTP/2 itself (prior knowledge on cleartext, and
   * on TLS whatever ALPN said) and forwards the requests to the gateway as HTTP/1.1.
   */
  acceptHttp2?: boolean;
}

/**
 * HAProxy `defaults`, `frontend` and `backend` sections: `mode http` (which passes WebSocket upgrades by itself),
 * client, server and tunnel timeouts of an hour, and a frontend that speaks HTTP/1.1 only: `proto h1` on the bind.
 * Without it HAProxy accepts HTTP/2 from the agent — cleartext prior knowledge, or over TLS even when ALPN did not
 * agree on h2 — and forwards gRPC to the gateway's HTTP port as HTTP/1.1, where it cannot work. Ends with a newline.
 */
export function haproxyConfig(options: HaproxyOptions): string {
  const timeout = `${STREAM_IDLE_TIMEOUT_SECONDS}s`;
  const bind = [
    options.bind,
    ...(options.tlsPemFile ? [`ssl crt ${options.tlsPemFile}`] : []),
    ...(options.acceptHttp2 ? [] : ['proto h1']),
  ];
  const lines = [
    'defaults',
    '    mode http',
    '    timeout connect 10s',
    `    timeout client ${timeout}`,
    `    timeout server ${timeout}`,
    `    timeout tunnel ${timeout}`,
    '',
    'frontend outpost',
    `    bind ${bind.join(' ')}`,
    '    default_backend outpost-gateway',
    '',
    'backend outpost-gateway',
    `    server gateway ${options.upstream}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Options of {@link ingressNginxManifest}. */
export interface IngressOptions {
  /** The host agents dial. */
  host: string;
  /** The Secret (kubernetes.io/tls) with that host's certificate. */
  tlsSecret: string;
  /** The gateway's HTTP Service and the name of its port. */
  service: string;
  port: string;
}

/**
 * An ingress-nginx Ingress to the gateway's HTTP port (YAML): HTTP/1.1 towards the gateway (`backend-protocol:
 * HTTP`), which passes WebSocket upgrades without further configuration, and the read and send timeouts raised from
 * ingress-nginx's 60 s default so an idle stream is not cut. Ends with a newline.
 */
export function ingressNginxManifest(options: IngressOptions): string {
  const lines = [
    'apiVersion: networking.k8s.io/v1',
    'kind: Ingress',
    'metadata:',
    '  name: outpost-http',
    '  annotations:',
    '    nginx.ingress.kubernetes.io/backend-protocol: HTTP',
    `    nginx.ingress.kubernetes.io/proxy-read-timeout: "${STREAM_IDLE_TIMEOUT_SECONDS}"`,
    `    nginx.ingress.kubernetes.io/proxy-send-timeout: "${STREAM_IDLE_TIMEOUT_SECONDS}"`,
    'spec:',
    '  ingressClassName: nginx',
    '  tls:',
    `    - hosts: [${options.host}]`,
    `      secretName: ${options.tlsSecret}`,
    '  rules:',
    `    - host: ${options.host}`,
    '      http:',
    '        paths:',
    '          - path: /',
    '            pathType: Prefix',
    '            backend:',
    '              service:',
    `                name: ${options.service}`,
    '                port:',
    `                  name: ${options.port}`,
  ];
  return `${lines.join('\n')}\n`;
}
