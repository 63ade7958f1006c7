/**
 * Gateway TLS and client certificates over real sockets (gRPC over HTTP/2 + TLS; REST over HTTPS/1.1 and HTTP/2):
 * REQUIRE refuses a missing certificate, a certificate from another CA and a subject no filter matches — always
 * UNAUTHENTICATED / 401 with the reason, never a TLS alert or INTERNAL; OPTIONAL falls back to tokens; roles come
 * from the rules; certificate files are reloaded without a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { startGateway } from '../../src/gateway/index.js';
import { createCertificateAuthority, createClientCertificate } from '../../src/sandbox/certs.js';
import { createLogger } from '../../src/shared/logger.js';
import { type TestGateway, testGatewayConfig } from '../../testkit/test-gateway.js';
import {
  Code,
  createTestPki,
  grpcAdmin,
  grpcAgentStream,
  grpcRead,
  restCall,
  restCallH2,
  startAuthGateway,
  type ClientIdentity,
  type TestPki,
} from '../../testkit/auth-helpers.js';
import { eventually } from '../../testkit/eventually.js';

const rules = [
  { kind: 'certificate' as const, subject: '^CN=agent-1,O=agents$', roles: ['agent' as const, 'read' as const], accounts: ['prod-*'] },
];

describe('client certificates: REQUIRE', () => {
  let pki: TestPki;
  let gw: TestGateway;
  let grpc: string;
  let web: string;
  before(async () => {
    pki = await createTestPki();
    gw = await startAuthGateway({
      tls: { certFile: pki.certFile, keyFile: pki.keyFile, caFile: pki.caFile, clientAuth: 'REQUIRE', subjectFilters: ['^CN=agent-'] },
      authorization: { rules },
    });
    grpc = gw.gateway.grpcUrl;
    web = gw.gateway.httpUrl;
  });
  after(async () => {
    await gw?.close();
    pki?.remove();
  });
  const agent1 = (): ClientIdentity => ({ ca: pki.caPem, cert: pki.agent1.certPem, key: pki.agent1.keyPem });

  test('both ports serve https', () => {
    assert.match(grpc, /^https:\/\//);
    assert.match(web, /^https:\/\//);
  });

  test('no certificate: UNAUTHENTICATED / 401 saying none was presented', async () => {
    const r = await grpcRead(grpc, { ca: pki.caPem });
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /client certificate required.*none was presented/);
    const rest = await restCall(web, 'GET', '/armory/clouddrivers', { ca: pki.caPem });
    assert.equal(rest.status, 401);
    assert.equal(rest.body.error, 'unauthenticated');
    assert.match(rest.body.message!, /none was presented/);
    // a token does not replace the certificate under REQUIRE
    assert.equal((await grpcRead(grpc, { ca: pki.caPem, token: 'x'.repeat(20) })).code, Code.Unauthenticated);
  });

  test('certificate from another CA: UNAUTHENTICATED naming the verification error', async () => {
    const id = { ca: pki.caPem, cert: pki.foreign.certPem, key: pki.foreign.keyPem };
    const r = await grpcRead(grpc, id);
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /CN=agent-1,O=agents is not signed by the configured CA.*: [A-Z_]+/);
    const rest = await restCall(web, 'GET', '/armory/clouddrivers', id);
    assert.equal(rest.status, 401);
    assert.match(rest.body.message!, /not signed by the configured CA/);
    const stream = await grpcAgentStream(grpc, id);
    assert.equal(stream.code, Code.Unauthenticated);
  });

  test('subject matching no filter: UNAUTHENTICATED', async () => {
    const id = { ca: pki.caPem, cert: pki.intruder.certPem, key: pki.intruder.keyPem };
    const r = await grpcRead(grpc, id);
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /subject CN=intruder,O=elsewhere matches no subject filter/);
    assert.equal((await restCallH2(web, 'GET', '/armory/clouddrivers', id)).status, 401);
  });

  test('valid certificate is admitted with the roles of the rules that match its subject', async () => {
    assert.deepEqual(await grpcRead(grpc, agent1()), { code: 'ok', message: '' });
    assert.deepEqual(await grpcAgentStream(grpc, agent1()), { code: 'ok', message: '' });
    const admin = await grpcAdmin(grpc, agent1());
    assert.equal(admin.code, Code.PermissionDenied);
    assert.match(admin.message, /CN=agent-1,O=agents lacks the role "admin"/);
    const h1 = await restCall(web, 'GET', '/armory/clouddrivers', agent1());
    assert.equal(h1.status, 200);
    const h2 = await restCallH2(web, 'GET', '/armory/clouddrivers', agent1());
    assert.equal(h2.status, 200);
    assert.equal(h2.alpn, 'h2');
    const denied = await restCall(web, 'DELETE', '/armory/accounts', agent1());
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error, 'permission_denied');
    assert.match(denied.body.message!, /lacks the role "admin"/);
  });

  test('health needs no credentials at all', async () => {
    assert.equal((await restCall(web, 'GET', '/health', { ca: pki.caPem })).status, 200);
  });
});

describe('client certificates: OPTIONAL', () => {
  let pki: TestPki;
  let gw: TestGateway;
  const token = 'operator-token-0123456789';
  before(async () => {
    pki = await createTestPki();
    gw = await startAuthGateway({
      tls: { certFile: pki.certFile, keyFile: pki.keyFile, caFile: pki.caFile, clientAuth: 'OPTIONAL' },
      auth: { tokens: [{ subject: 'operator', token }] },
      authorization: { rules: [...rules, { kind: 'token', subject: '^operator$', roles: ['read'] }] },
    });
  });
  after(async () => {
    await gw?.close();
    pki?.remove();
  });

  test('without a certificate a token authenticates; without either the request is refused', async () => {
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { ca: pki.caPem, token })).code, 'ok');
    assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { ca: pki.caPem, token })).status, 200);
    const none = await grpcRead(gw.gateway.grpcUrl, { ca: pki.caPem });
    assert.equal(none.code, Code.Unauthenticated);
    assert.match(none.message, /present a client certificate .* or a bearer token/);
  });

  test('a presented certificate is verified, even alongside a valid token', async () => {
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { ca: pki.caPem, cert: pki.agent1.certPem, key: pki.agent1.keyPem })).code, 'ok');
    const r = await grpcRead(gw.gateway.grpcUrl, { ca: pki.caPem, cert: pki.foreign.certPem, key: pki.foreign.keyPem, token });
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /not signed by the configured CA/);
  });

  test('certificate and token: the token names the principal', async () => {
    // agent-1's certificate may open agent streams, the operator token may not: the token decides
    const r = await grpcAgentStream(gw.gateway.grpcUrl, { ca: pki.caPem, cert: pki.agent1.certPem, key: pki.agent1.keyPem, token });
    assert.equal(r.code, Code.PermissionDenied);
    assert.match(r.message, /operator lacks the role "agent"/);
  });
});

describe('certificate reload', () => {
  test('replaced certificate files are served to new connections; a broken file keeps the old context', async () => {
    const pki = await createTestPki();
    const logLines: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const config = testGatewayConfig('memory://', {
      id: 'gw-reload',
      insecure: false,
      tls: { certFile: pki.certFile, keyFile: pki.keyFile, caFile: pki.caFile, clientAuth: 'REQUIRE', reloadIntervalSeconds: 0.1 },
      authorization: { rules },
    });
    const gateway = await startGateway(config, { logger: createLogger({ level: 'info', destination: logStream, pretty: false }) });
    const gw = { gateway, close: () => gateway.close() };
    const logged = (pattern: RegExp) => logLines.some((l) => pattern.test(l));
    try {
      const oldId = { ca: pki.caPem, cert: pki.agent1.certPem, key: pki.agent1.keyPem };
      assert.equal((await grpcRead(gw.gateway.grpcUrl, oldId)).code, 'ok');
      const next = await createCertificateAuthority();
      const nextAgent = await createClientCertificate(next, 'agent-1', 'agents');
      const newId = { ca: next.caPem, cert: nextAgent.certPem, key: nextAgent.keyPem };
      // before the swap, a client trusting only the new CA cannot talk to the gateway
      assert.notEqual(
        (
          await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', newId).catch((e: Error) => ({
            status: 0,
            body: { message: e.message },
          }))
        ).status,
        200,
      );
      writeFileSync(pki.keyFile, next.keyPem);
      writeFileSync(pki.certFile, next.certPem);
      writeFileSync(pki.caFile, next.caPem);
      await eventually('the reloaded certificate accepted', async () => (await grpcRead(gw.gateway.grpcUrl, newId)).code === 'ok', {
        timeoutMs: 30_000,
      });
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', newId)).status, 200);
      assert.ok(logged(/TLS certificate reloaded/), 'the reload is logged');
      // the old CA no longer verifies the server, and the old client certificate is no longer trusted
      await assert.rejects(restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', oldId), /self.signed|unable to verify|certificate/i);
      const oldClientCert = await grpcRead(gw.gateway.grpcUrl, { ca: next.caPem, cert: pki.agent1.certPem, key: pki.agent1.keyPem });
      assert.equal(oldClientCert.code, Code.Unauthenticated);
      // a broken certificate file is refused; the gateway keeps serving the last good one
      writeFileSync(pki.certFile, 'not a certificate\n');
      await eventually('the failed reload logged', async () => logged(/new TLS files do not load; keeping the current certificate/), {
        timeoutMs: 30_000,
      });
      assert.equal((await grpcRead(gw.gateway.grpcUrl, newId)).code, 'ok');
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', newId)).status, 200);
    } finally {
      await gw.close();
      pki.remove();
    }
  });
});

describe('TLS without client certificates (NONE) and bad TLS files', () => {
  test('NONE: TLS on both ports, tokens authenticate, no certificate is asked for', async () => {
    const pki = await createTestPki();
    const token = 'operator-token-0123456789';
    const gw = await startAuthGateway({
      tls: { certFile: pki.certFile, keyFile: pki.keyFile },
      auth: { tokens: [{ subject: 'operator', token }] },
      authorization: { rules: [{ kind: 'token', subject: '^operator$', roles: ['read'] }] },
    });
    try {
      assert.equal((await grpcRead(gw.gateway.grpcUrl, { ca: pki.caPem, token })).code, 'ok');
      assert.equal((await restCallH2(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { ca: pki.caPem, token })).status, 200);
      // a certificate offered anyway is not requested, so it neither helps nor hurts
      const withCert = await grpcRead(gw.gateway.grpcUrl, { ca: pki.caPem, cert: pki.foreign.certPem, key: pki.foreign.keyPem });
      assert.equal(withCert.code, Code.Unauthenticated);
      assert.match(withCert.message, /present a bearer token/);
    } finally {
      await gw.close();
      pki.remove();
    }
  });

  test('a gateway whose TLS files are missing or do not match does not start', async () => {
    const pki = await createTestPki();
    try {
      await assert.rejects(
        startAuthGateway({ tls: { certFile: `${pki.dir}/missing.pem`, keyFile: pki.keyFile } }),
        /tls\.certFile: cannot read .*missing\.pem/,
      );
      const otherKey = pki.write('other-key.pem', pki.agent1.keyPem);
      await assert.rejects(startAuthGateway({ tls: { certFile: pki.certFile, keyFile: otherKey } }), /do not form a valid TLS context/);
    } finally {
      pki.remove();
    }
  });
});
