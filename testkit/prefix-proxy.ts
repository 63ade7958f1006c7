/**
 * A reverse proxy that serves a Kubernetes API server below a path prefix, as Rancher does
 * (`http://127.0.0.1:PORT/k8s/clusters/c1/api/v1/…` → the API server's `/api/v1/…`), and records every request it
 * receives — method, the request target exactly as sent, headers — inside the prefix or not. Requests outside the
 * prefix are answered 404 and go nowhere. Plain requests and upgrades (exec, port-forward over WebSocket) are passed
 * on. Tests point an agent's kubeconfig at {@link PrefixProxy.server} and prove what reached the cluster.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient, type KubeClient } from '../src/agent/kube/kube-client.js';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';

/** One request as the proxy received it. */
interface RecordedRequest {
  method: string;
  /** The request target as sent (not parsed). */
  target: string;
  /** Header names lower case, repeated ones as arrays (Node's `headersDistinct`). */
  headers: Record<string, string[]>;
  upgrade: boolean;
}

/** A running proxy. */
export interface PrefixProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The prefix, e.g. `/k8s/clusters/c1`. */
  readonly prefix: string;
  /** The cluster's server URL through the proxy: {@link url} + {@link prefix}. */
  readonly server: string;
  /** Every request received so far, in order. */
  requests(): RecordedRequest[];
  /** The requests whose target was not below the prefix. */
  outside(): RecordedRequest[];
  close(): Promise<void>;
}

/** Options of {@link startPrefixProxy}. */
export interface PrefixProxyOptions {
  /** The API server's URL (`https://127.0.0.1:PORT`). */
  target: string;
  /** Its CA (PEM), for an https target. */
  caPem?: string;
  /** Default `/k8s/clusters/c1`. */
  prefix?: string;
}

/** Starts the proxy on 127.0.0.1, port 0. */
export async function startPrefixProxy(options: PrefixProxyOptions): Promise<PrefixProxy> {
  const prefix = options.prefix ?? '/k8s/clusters/c1';
  const upstream = new URL(options.target);
  const transport = upstream.protocol === 'https:' ? https : http;
  const recorded: RecordedRequest[] = [];
  const sockets = new Set<Duplex>();
  const inside = (target: string) => target.startsWith(`${prefix}/`) || target === prefix;

  function record(req: http.IncomingMessage, upgrade: boolean): void {
    const headers: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(req.headersDistinct)) if (values) headers[name] = [...values];
    recorded.push({ method: req.method ?? '', target: req.url ?? '', headers, upgrade });
  }

  function onward(req: http.IncomingMessage): http.ClientRequest {
    const headers = { ...req.headers, host: upstream.host };
    return transport.request({
      hostname: upstream.hostname,
      port: upstream.port,
      path: (req.url ?? '').slice(prefix.length) || '/',
      method: req.method,
      headers,
      agent: false,
      ...(options.caPem ? { ca: options.caPem } : {}),
    });
  }

  const server = http.createServer((req, res) => {
    record(req, false);
    if (!inside(req.url ?? '')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('outside the cluster prefix\n');
      return;
    }
    const up = onward(req);
    up.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    record(req, true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (!inside(req.url ?? '')) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const up = onward(req);
    up.on('upgrade', (answer, upSocket, upHead) => {
      sockets.add(upSocket);
      upSocket.on('close', () => sockets.delete(upSocket));
      upSocket.on('error', () => {});
      const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`];
      for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length > 0) socket.write(upHead);
      if (head.length > 0) upSocket.write(head);
      socket.pipe(upSocket).pipe(socket);
      socket.on('close', () => upSocket.destroy());
      upSocket.on('close', () => socket.destroy());
    });
    up.on('response', (answer) => {
      const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`, 'connection: close'];
      for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
        if (!/^connection$/i.test(answer.rawHeaders[i]!)) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      }
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      answer.pipe(socket);
    });
    up.on('error', () => socket.destroy());
    up.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    prefix,
    server: `${url}${prefix}`,
    requests: () => [...recorded],
    outside: () => recorded.filter((r) => !inside(r.target)),
    async close() {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The agent's Kubernetes client for the cluster behind `proxy` (its server URL, prefix included), as `token`. */
function prefixedKubeClient(proxy: PrefixProxy, token: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c1', server: proxy.server, skipTLSVerify: true }],
    users: [{ name: 'admin', token }],
    contexts: [{ name: 'c1', cluster: 'c1', user: 'admin' }],
    currentContext: 'c1',
  });
  return createKubeClient(kc);
}

/** A sandbox (seed `demo`) behind a prefix proxy, and the agent's client for it as the sandbox's admin. */
export interface PrefixedCluster {
  sandbox: Sandbox;
  proxy: PrefixProxy;
  client: KubeClient;
  /** Stops the client, the proxy and the sandbox. */
  close(): Promise<void>;
}

/** Starts a {@link PrefixedCluster}; close it in `after`. */
export async function startPrefixedCluster(): Promise<PrefixedCluster> {
  const sandbox = await startSandbox({ seed: 'demo' });
  const proxy = await startPrefixProxy({ target: sandbox.url });
  const client = prefixedKubeClient(proxy, sandbox.adminToken);
  return {
    sandbox,
    proxy,
    client,
    async close() {
      client.close();
      await proxy.close();
      await sandbox.close();
    },
  };
}
