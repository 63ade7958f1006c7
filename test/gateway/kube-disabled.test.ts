/**
 * `kube.enabled: false` turns the kubectl route off: every `/k8s/…` request — a GET, a request with a body, a
 * WebSocket upgrade (exec) — is answered 404 with a Kubernetes Status naming the setting, before any body is read; the
 * same gateway with the default setting answers the same GET as a served route (the account simply has no agent).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

interface Answer {
  status: number;
  body: string;
}

function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.end(body);
  });
}

function status(body: string): { kind?: string; code?: number; reason?: string; message?: string } {
  return JSON.parse(body) as { kind?: string; code?: number; reason?: string; message?: string };
}

describe('kube.enabled: false', () => {
  let off: TestGateway;
  let on: TestGateway;
  before(async () => {
    off = await startTestGateway('pglite', { kube: { enabled: false } });
    on = await startTestGateway('pglite');
  });
  after(async () => {
    await off?.close();
    await on?.close();
  });

  test('every /k8s request is a 404 Status naming the setting', async () => {
    const base = `${off.gateway.httpUrl}/k8s/sandbox`;
    const answers = [
      await send(`${base}/api/v1/namespaces/demo/pods`, 'GET', {}),
      await send(`${base}/api/v1/namespaces/demo/configmaps`, 'POST', { 'content-type': 'application/json' }, '{"kind":"ConfigMap"}'),
      await send(`${base}/api/v1/namespaces/demo/pods/web/exec?command=sh`, 'GET', {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-protocol': 'v5.channel.k8s.io',
      }),
    ];
    for (const answer of answers) assert.equal(answer.status, 404);
    for (const answer of answers.slice(0, 2)) {
      const s = status(answer.body);
      assert.equal(s.kind, 'Status');
      assert.equal(s.code, 404);
      assert.equal(s.reason, 'NotFound');
      assert.match(s.message ?? '', /kube\.enabled/);
    }
  });

  test('with the default setting the same request reaches the route', async () => {
    const answer = await send(`${on.gateway.httpUrl}/k8s/sandbox/api/v1/namespaces/demo/pods`, 'GET', {});
    const s = status(answer.body);
    assert.equal(s.kind, 'Status');
    assert.doesNotMatch(s.message ?? '', /kube\.enabled/);
    assert.notEqual(answer.status, 404, `served route answered ${answer.status}: ${s.message}`);
  });
});
