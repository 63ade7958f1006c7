/**
 * A small unauthenticated flood against a gateway process (loopback only, bounded in count and time): 150 requests
 * whose bodies stall after 256 KiB each, and 2,000 unauthenticated HTTP/2 streams over 20 sessions. Before the fix the
 * gateway buffered every body (~400 MiB for 150) and held every stream. Now its RSS grows by less than 50 MiB and an
 * authenticated ListObjects answers during and after the flood.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startGatewayProcess } from '../../testkit/outpost-process.js';
import { readRss } from '../../testkit/proc-stats.js';

const TOKEN = 'reader-token-0123456789abcdef';
const LIST = '/outpost.api.v1.ObjectService/ListObjects';
const MiB = 1024 * 1024;

test('an unauthenticated flood costs the gateway less than 50 MiB; authenticated calls still answer', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-flood-'));
  const { gateway, httpUrl, grpcUrl } = await startGatewayProcess(dir, {
    id: 'gw-flood',
    host: '127.0.0.1',
    httpPort: 0,
    grpcPort: 0,
    database: 'memory://',
    logLevel: 'info',
    web: { enabled: false },
    auth: { tokens: [{ subject: 'reader', token: TOKEN }] },
    authorization: { rules: [{ kind: 'token', subject: '^reader$', roles: ['read'] }] },
  });
  const sockets: net.Socket[] = [];
  const sessions: http2.ClientHttp2Session[] = [];
  try {
    const list = async () => {
      const res = await fetch(`${httpUrl}${LIST}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: '{}',
        signal: AbortSignal.timeout(30_000),
      });
      return res.status;
    };
    for (let i = 0; i < 20; i++) assert.equal(await list(), 200); // warm up
    await new Promise((r) => setTimeout(r, 500));
    const baseline = readRss(gateway.pid);
    let peak = baseline;
    const sample = setInterval(() => (peak = Math.max(peak, readRss(gateway.pid))), 50);

    // 150 unauthenticated requests with bodies that stall after 256 KiB (HTTP/1.1, chunked).
    const { hostname, port } = new URL(httpUrl);
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const stalled = await Promise.all(
      Array.from(
        { length: 150 },
        () =>
          new Promise<string>((resolve, reject) => {
            const s = net.connect(Number(port), hostname);
            sockets.push(s);
            let answer = '';
            s.on('data', (d) => (answer += d.toString('latin1')));
            s.on('error', () => {});
            s.on('close', () => resolve(answer));
            s.on('connect', () => {
              s.write(`POST ${LIST} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
              s.write(`${chunk.length.toString(16)}\r\n`);
              s.write(chunk);
            });
            setTimeout(() => reject(new Error('a stalled request was not answered')), 60_000).unref();
          }),
      ),
    );
    assert.ok(
      stalled.every((a) => a.startsWith('HTTP/1.1 401')),
      'every stalled request refused',
    );

    // 2,000 unauthenticated HTTP/2 streams over 20 sessions, each with a body that never ends.
    const refused = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const session = http2.connect(grpcUrl);
        sessions.push(session);
        session.on('error', () => {});
        const statuses = await Promise.all(
          Array.from(
            { length: 100 },
            () =>
              new Promise<string>((resolve) => {
                if (session.destroyed) return resolve('closed');
                let status = 'none';
                const req = session.request({ ':method': 'POST', ':path': LIST, 'content-type': 'application/grpc' }, { endStream: false });
                req.on('response', (h) => (status = String(h['grpc-status'])));
                req.on('error', () => {});
                req.on('close', () => resolve(status));
                req.write(Buffer.alloc(16 * 1024, 0x20));
              }),
          ),
        );
        return statuses;
      }),
    );
    const all = refused.flat();
    assert.equal(all.length, 2000);
    assert.ok(
      all.every((s) => s === '16' || s === 'closed' || s === 'none'),
      'no stream was served',
    );
    assert.ok(
      all.filter((s) => s === '16').length >= 1000,
      `most streams were answered UNAUTHENTICATED (${all.filter((s) => s === '16').length})`,
    );
    assert.equal(await list(), 200, 'an authenticated call answers during the flood');
    clearInterval(sample);
    const grown = (peak - baseline) / MiB;
    t.diagnostic(
      `gateway RSS: baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB (+${grown.toFixed(1)} MiB)`,
    );
    assert.ok(
      grown < 50,
      `the gateway's RSS grew by ${grown.toFixed(1)} MiB (baseline ${(baseline / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB)`,
    );
    assert.equal(await list(), 200, 'and after it');
  } finally {
    for (const s of sockets) s.destroy();
    for (const s of sessions) s.destroy();
    gateway.child.kill('SIGTERM');
    await Promise.race([gateway.exited(), new Promise((r) => setTimeout(r, 10_000))]);
    if (gateway.running()) gateway.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
