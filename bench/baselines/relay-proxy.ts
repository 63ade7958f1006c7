/**
 * Baseline of the kube-proxy scenario: the barest reverse proxy Node does — every request relayed as it is to
 * `--target` over one keep-alive connection pool, the answer streamed back — in a process of its own. Two of them in a
 * row (client → relay → relay → cluster) have the process hops of the gateway path (client → gateway → agent →
 * cluster) without anything Outpost does on them, so the gateway's overhead over them is Outpost's own.
 *
 * `node --import tsx bench/baselines/relay-proxy.ts --target URL [--ca FILE]`; prints `{"event":"listening","port":N}`.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { target: { type: 'string' }, ca: { type: 'string' } } });
if (!values.target) throw new Error('--target URL is required');
const target = new URL(values.target);
const secure = target.protocol === 'https:';
const ca = values.ca ? readFileSync(values.ca, 'utf8') : undefined;
const agent = secure ? new https.Agent({ keepAlive: true, ca }) : new http.Agent({ keepAlive: true });
const send = secure ? https.request : http.request;

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, host: target.host };
  delete headers.connection;
  const upstream = send(
    { protocol: target.protocol, hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders(); // a watch's head goes out at once, as the API server sends it
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ event: 'listening', port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => process.exit(0));
