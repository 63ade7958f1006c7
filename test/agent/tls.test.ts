import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificateFingerprint, createCertificateAuthority, createClientCertificate } from '../../src/sandbox/certs.js';
import { endMarkers, startHarness } from './helpers/harness.js';

test('mTLS to the gateway (CA file, client certificate, server name) and an HTTPS API server with its CA fingerprint', async () => {
  const gatewayCa = await createCertificateAuthority({ hosts: ['gateway.test'] });
  const client = await createClientCertificate(gatewayCa, 'agent-1');
  const h = await startHarness({
    seed: 'demo',
    sandboxTls: true,
    account: { kinds: ['ConfigMap'] },
    gateway: { tls: { certPem: gatewayCa.certPem, keyPem: gatewayCa.keyPem, clientCaPem: gatewayCa.caPem } },
    configFrom: (dir) => {
      const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'agent.pem'), key: join(dir, 'agent-key.pem') };
      writeFileSync(files.ca, gatewayCa.caPem);
      writeFileSync(files.cert, client.certPem);
      writeFileSync(files.key, client.keyPem);
      return {
        clouddriver: { insecure: false, tls: { cacertFile: files.ca, clientCertFile: files.cert, clientKeyFile: files.key, serverName: 'gateway.test' } },
      };
    },
  });
  try {
    await h.gateway.waitFor(() => endMarkers(h.gateway.messages, 'ConfigMap').length === 1, 10_000, 'list over TLS');
    assert.deepEqual(h.gateway.tlsClients.slice(0, 1), ['agent-1']);
    const account = h.gateway.streams[0]!.hello!.accounts[0]!;
    assert.match(account.apiHost, /^https:/);
    assert.equal(account.caFingerprint, certificateFingerprint(h.sandbox.caPem!));
  } finally {
    await h.close();
  }
});
