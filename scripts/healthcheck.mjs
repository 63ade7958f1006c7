#!/usr/bin/env node
// Container health check (the image's HEALTHCHECK): GET one URL of the local process, exit 0 on a 2xx answer, 1
// otherwise. The same image runs both programs, so the URL is chosen by OUTPOST_HEALTHCHECK_URL:
//   gateway (default): http://127.0.0.1:7002/health  (503 while draining or when the database is unreachable)
//   agent:             http://127.0.0.1:8082/livez   (set OUTPOST_HEALTHCHECK_URL in the agent's environment)
// Kubernetes ignores HEALTHCHECK and uses the probes in deploy/; this serves `docker run` and Compose.
// An https:// URL on a loopback address is fetched without verifying the certificate: the check talks to its own
// process, whose certificate names the service, not 127.0.0.1.
import http from 'node:http';
import https from 'node:https';

const DEFAULT_URL = 'http://127.0.0.1:7002/health';
const TIMEOUT_MS = Number(process.env.OUTPOST_HEALTHCHECK_TIMEOUT_MS ?? 4000);

let url;
try {
  url = new URL(process.env.OUTPOST_HEALTHCHECK_URL || DEFAULT_URL);
} catch {
  console.error(`healthcheck: OUTPOST_HEALTHCHECK_URL is not a URL: ${process.env.OUTPOST_HEALTHCHECK_URL}`);
  process.exit(1);
}
if (url.protocol !== 'http:' && url.protocol !== 'https:') {
  console.error(`healthcheck: ${url.href} is not an http(s) URL`);
  process.exit(1);
}

const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
const client = url.protocol === 'https:' ? https : http;
const req = client.get(url, { timeout: TIMEOUT_MS, rejectUnauthorized: !loopback }, (res) => {
  res.resume();
  const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
  if (!ok) console.error(`healthcheck: ${url.href} answered ${res.statusCode}`);
  process.exit(ok ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
req.on('error', (err) => {
  console.error(`healthcheck: ${url.href}: ${err.message}`);
  process.exit(1);
});
