/**
 * Client certificate subjects are matched by parsed attributes, over real mTLS connections: a certificate whose CN is
 * `agent-eu-9,O=agents` (comma and all) is one CN attribute — it neither passes a subject filter written for
 * `CN=agent-…,O=agents` nor gets a certificate rule for organisation `agents`, while a real `CN=agent-eu-1,O=agents`
 * certificate does. Also: a static token whose subject spells a certificate subject gets no certificate rule.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCertificateAuthority, createClientCertificate } from '../../src/sandbox/certs.js';
import type { TestGateway } from '../../testkit/test-gateway.js';
import { Code, grpcAgentStream, grpcRead, startAuthGateway } from '../../testkit/auth-helpers.js';

const TOKEN = 'token-named-like-a-cert-0123456789';

describe('certificate subjects matched by attributes', () => {
  let dir: string;
  let caPem: string;
  let legit: { certPem: string; keyPem: string };
  let forged: { certPem: string; keyPem: string };
  let forgedWithOrg: { certPem: string; keyPem: string };
  let filtered: TestGateway;
  let ruled: TestGateway;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-cert-subject-'));
    const ca = await createCertificateAuthority();
    caPem = ca.caPem;
    const write = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const tls = {
      certFile: write('server.pem', ca.certPem),
      keyFile: write('server-key.pem', ca.keyPem),
      caFile: write('ca.pem', ca.caPem),
    };
    legit = await createClientCertificate(ca, 'agent-eu-1', 'agents');
    // no O attribute at all: the CN carries ",O=agents"
    forged = await createClientCertificate(ca, 'agent-eu-9,O=agents');
    forgedWithOrg = await createClientCertificate(ca, 'agent-eu-9,O=agents', 'elsewhere');
    // the filter the guide used to show: a regex over the joined subject
    filtered = await startAuthGateway({
      tls: { ...tls, clientAuth: 'REQUIRE', subjectFilters: ['^CN=agent-[a-z0-9-]+,O=agents$'] },
      authorization: { rules: [{ kind: 'certificate', subject: '^CN=agent-[a-z0-9-]+,O=agents$', roles: ['read'] }] },
    });
    ruled = await startAuthGateway({
      tls: { ...tls, clientAuth: 'OPTIONAL', subjectFilters: [{ attributes: { O: 'agents|elsewhere' } }, '^CN=agent-eu-9'] },
      auth: { tokens: [{ subject: 'CN=agent-eu-1,O=agents', token: TOKEN }] },
      authorization: {
        rules: [
          { kind: 'certificate', attributes: { CN: 'agent-eu-[0-9]+', O: 'agents' }, roles: ['agent'], accounts: ['eu-*'] },
          { kind: 'certificate', attributes: { O: 'agents' }, roles: ['read'] },
        ],
      },
    });
  });
  after(async () => {
    await filtered?.close();
    await ruled?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const id = (c: { certPem: string; keyPem: string }) => ({ ca: caPem, cert: c.certPem, key: c.keyPem });

  test('a CN containing ",O=agents" does not pass a subject filter for O=agents; the real one does', async () => {
    assert.equal((await grpcRead(filtered.gateway.grpcUrl, id(legit))).code, 'ok');
    const r = await grpcRead(filtered.gateway.grpcUrl, id(forged));
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /client certificate subject CN=agent-eu-9\\,O=agents matches no subject filter/);
  });

  test('attribute rules match parsed attributes: the forged CN gets neither the agent role nor a rule for O=agents', async () => {
    assert.equal((await grpcAgentStream(ruled.gateway.grpcUrl, id(legit), 'eu-1')).code, 'ok');
    assert.equal((await grpcRead(ruled.gateway.grpcUrl, id(legit))).code, 'ok');
    for (const c of [forged, forgedWithOrg]) {
      const stream = await grpcAgentStream(ruled.gateway.grpcUrl, id(c), 'eu-1');
      assert.equal(stream.code, Code.PermissionDenied);
      assert.equal((await grpcRead(ruled.gateway.grpcUrl, id(c))).code, Code.PermissionDenied);
    }
  });

  test('a static token whose subject spells a certificate subject gets no certificate rule', async () => {
    const r = await grpcRead(ruled.gateway.grpcUrl, { ca: caPem, token: TOKEN });
    assert.equal(r.code, Code.PermissionDenied);
  });
});
