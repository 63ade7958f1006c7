/**
 * The audit log of `/k8s` and the life of its requests (docs/kubectl.md, "Audit"; TLS, tokens, a real agent and
 * sandbox): an admitted request is on record from its admission — a watch open for a long time shows a `started`
 * entry in the database while it runs (so a replica that dies under it leaves it on record), and a `completed` entry
 * with the same request id, its status, duration and bytes when it ends — and a request refused after authentication
 * leaves an entry, a caller header sent by someone who is not a replica included. A watch ends when its credential
 * does: a static token removed from its file, a JWT past its `exp`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { eventually } from '../../testkit/eventually.js';
import {
  type AuditEventJson,
  auditEvents,
  httpsRequest,
  openWatch,
  secureGateway,
  startKubeStack,
  TOKENS,
  type KubeStack,
} from './kubectl-helpers.js';
import type { TestPki } from '../../testkit/auth-helpers.js';

const FRANK_TOKEN = 'kube-audit-frank-token-0123456789abcdef';
const JWT_SECRET = 'kube-audit-jwt-secret-0123456789-0123456789';

describe('the audit log of /k8s requests', { concurrency: false }, () => {
  let k: KubeStack;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-kube-audit-'));
    writeFileSync(join(dir, 'frank.token'), FRANK_TOKEN);
    writeFileSync(join(dir, 'jwt.secret'), JWT_SECRET);
    // The usual secure gateway (its pki is the stack's: only auth and authorization are taken from here), plus a
    // token read from a file (frank) and JWTs (gina), both in group devs, with the kube role for account sandbox.
    const base = secureGateway({} as TestPki, dir);
    k = await startKubeStack({
      gateway: {
        auth: {
          ...base.auth,
          tokens: [...(base.auth?.tokens ?? []), { subject: 'frank', tokenFile: join(dir, 'frank.token'), groups: ['devs'] }],
          jwt: { issuer: 'https://kube-audit.test', audience: 'outpost', secretFile: join(dir, 'jwt.secret') },
        },
        authorization: {
          rules: [
            ...(base.authorization?.rules ?? []),
            { kind: 'token', subject: '^frank$', roles: ['kube'], accounts: ['sandbox'] },
            { kind: 'jwt', subject: '^gina$', roles: ['kube'], accounts: ['sandbox'] },
          ],
        },
      },
    });
  });
  after(async () => {
    await k?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const entriesOf = async (principal: string, match: (e: AuditEventJson) => boolean) =>
    (await auditEvents(k.stack.gateway.httpUrl, k.pki.caPem, principal)).filter(match);

  test('a watch is on record while it is open, and again with its answer when it ends', async () => {
    const watch = await openWatch(k.stack.gateway.httpUrl, k.pki.caPem, 'audit-open');
    assert.equal(watch.status, 200);
    const isThisWatch = (e: AuditEventJson) => e.verb === 'watch' && e.resource === 'configmaps' && e.namespace === 'demo';
    const [started] = await eventually('the started entry is stored while the watch is open', async () => {
      const found = await entriesOf('token:alice', (e) => isThisWatch(e) && e.stage === 'started');
      return found.length === 1 ? found : undefined;
    });
    assert.equal(watch.isEnded(), false, 'the watch is still open');
    assert.ok(started!.requestId, 'a request id');
    assert.equal(started!.status ?? 0, 0, 'no answer yet');
    assert.equal(started!.account, 'sandbox');
    assert.deepEqual(await entriesOf('token:alice', (e) => e.requestId === started!.requestId && e.stage === 'completed'), []);

    watch.close();
    const [completed] = await eventually('the completed entry is stored when the watch ends', async () => {
      const found = await entriesOf('token:alice', (e) => e.requestId === started!.requestId && e.stage === 'completed');
      return found.length === 1 ? found : undefined;
    });
    assert.equal(completed!.status, 200);
    assert.ok(isThisWatch(completed!));
    assert.equal(completed!.impersonatedUser, 'outpost:alice');
    assert.ok(Number(completed!.durationMs ?? 0) >= 0);
  });

  test('a short request gets both entries, in order, sharing its request id', async () => {
    const answer = await httpsRequest(`${k.stack.gateway.httpUrl}/k8s/sandbox/api/v1/namespaces/demo/configmaps?limit=1`, {
      ca: k.pki.caPem,
      headers: { authorization: `Bearer ${TOKENS.alice}` },
    });
    assert.equal(answer.status, 200);
    const pair = await eventually('both entries', async () => {
      const found = await entriesOf('token:alice', (e) => e.verb === 'list' && e.resource === 'configmaps' && e.namespace === 'demo');
      return found.length === 2 ? found : undefined;
    });
    // Newest first: the end after the start.
    assert.deepEqual(
      pair.map((e) => e.stage),
      ['completed', 'started'],
    );
    assert.equal(pair[0]!.requestId, pair[1]!.requestId);
    assert.equal(pair[0]!.status, 200);
  });

  test('a caller header from someone who is not a replica is refused, and the refusal is recorded', async () => {
    const forged = Buffer.from(JSON.stringify({ method: 'token', subject: 'alice', groups: ['devs'] })).toString('base64url');
    const answer = await httpsRequest(`${k.stack.gateway.httpUrl}/k8s/sandbox/api/v1/namespaces/demo/pods`, {
      ca: k.pki.caPem,
      headers: { authorization: `Bearer ${TOKENS.dave}`, 'x-outpost-kube-caller': forged },
    });
    assert.equal(answer.status, 403, answer.body);
    assert.match(answer.body, /lacks the role \\"replica\\"/);
    const [refusal] = await eventually('the refusal is recorded', async () => {
      const found = await entriesOf('token:dave', (e) => e.resource === 'pods' && e.status === 403);
      return found.length === 1 ? found : undefined;
    });
    assert.equal(refusal!.stage, 'completed');
    assert.match(String(refusal!.error), /lacks the role "replica"/);
    assert.deepEqual(await entriesOf('token:dave', (e) => e.stage === 'started'), [], 'a refusal is not a started request');
  });

  test('a watch opened with a token ends when the token is removed from its file, and says so in the audit log', async () => {
    const watch = await openWatch(k.stack.gateway.httpUrl, k.pki.caPem, 'revoked', FRANK_TOKEN);
    assert.equal(watch.status, 200);
    await eventually('the watch is on record', async () => (await entriesOf('token:frank', (e) => e.stage === 'started')).length === 1);
    writeFileSync(join(dir, 'frank.token'), 'kube-audit-another-token-0123456789');
    await eventually('the watch ends', () => watch.isEnded() || undefined);
    const [completed] = await eventually('the completed entry', async () => {
      const found = await entriesOf('token:frank', (e) => e.stage === 'completed');
      return found.length === 1 ? found : undefined;
    });
    assert.match(String(completed!.error), /the credential was revoked/);
    assert.deepEqual(completed!.groups, ['devs'], "the caller's own groups, unprefixed");
    assert.deepEqual(completed!.impersonatedGroups, ['outpost:devs']);
  });

  test('a watch opened with a JWT ends at its expiry', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ groups: ['devs'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('https://kube-audit.test')
      .setAudience('outpost')
      .setSubject('gina')
      .setIssuedAt(now)
      .setExpirationTime(now + 3)
      .sign(new TextEncoder().encode(JWT_SECRET));
    const watch = await openWatch(k.stack.gateway.httpUrl, k.pki.caPem, 'expires', jwt);
    assert.equal(watch.status, 200);
    // Waits only bound a hang: the watch is cut at the expiry, whenever the machine gets there.
    await eventually('the watch ends', () => watch.isEnded() || undefined, { timeoutMs: 30_000 });
    assert.ok(Date.now() >= (now + 3) * 1000 - 1000, 'not before the expiry (a second of clock granularity)');
    const [completed] = await eventually('the completed entry', async () => {
      const found = await entriesOf('jwt:gina', (e) => e.stage === 'completed');
      return found.length === 1 ? found : undefined;
    });
    assert.match(String(completed!.error), /the credential expired at/);
  });
});
