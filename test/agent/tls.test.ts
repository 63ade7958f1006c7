import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificateFingerprint, createCertificateAuthority, createClientCertificate } from '../../src/sandbox/certs.js';
import { endMarkers, startHarness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

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
        clouddriver: {
          insecure: false,
          tls: { cacertFile: files.ca, clientCertFile: files.cert, clientKeyFile: files.key, serverName: 'gateway.test' },
        },
      };
    },
  });
  try {
    await eventually('list over TLS', () => endMarkers(h.gateway.messages, 'ConfigMap').length === 1, { timeoutMs: 30_000 });
    assert.deepEqual(h.gateway.tlsClients.slice(0, 1), ['agent-1']);
    const account = h.gateway.streams[0]!.hello!.accounts[0]!;
    assert.match(account.apiHost, /^https:/);
    assert.equal(account.caFingerprint, certificateFingerprint(h.sandbox.caPem!));
  } finally {
    await h.close();
  }
});

test('TLS misconfigurations fail with a clear reason and a hint, then retry', async () => {
  const gatewayCa = await createCertificateAuthority({ hosts: ['gateway.test'] });
  const otherCa = await createCertificateAuthority({ hosts: ['gateway.test'] });
  const tlsGateway = { tls: { certPem: gatewayCa.certPem, keyPem: gatewayCa.keyPem } };
  const cases = [
    {
      what: 'a CA that did not sign the gateway certificate',
      gateway: tlsGateway,
      clouddriver: (dir: string) => {
        const ca = join(dir, 'other-ca.pem');
        writeFileSync(ca, otherCa.caPem);
        return { insecure: false, tls: { cacertFile: ca, serverName: 'gateway.test' } };
      },
      expect: /unable to verify the first certificate — the gateway certificate is not trusted: set clouddriver\.tls\.cacertFile/,
    },
    {
      what: 'TLS towards a plaintext port',
      gateway: {},
      clouddriver: () => ({ insecure: false }),
      expect: /wrong version number.* — the gateway port does not answer TLS: set clouddriver\.insecure: true/,
    },
    {
      what: 'plaintext towards a TLS port',
      gateway: tlsGateway,
      clouddriver: () => ({ insecure: true }),
      expect: /if the gateway port serves TLS, set clouddriver\.insecure: false/,
    },
    {
      what: 'a missing CA file',
      gateway: tlsGateway,
      clouddriver: () => ({ insecure: false, tls: { cacertFile: '/nonexistent/ca.pem' } }),
      expect: /clouddriver\.tls\.cacertFile: cannot read \/nonexistent\/ca\.pem: ENOENT/,
    },
  ];
  for (const c of cases) {
    const h = await startHarness({ seed: 'none', gateway: c.gateway, configFrom: (dir) => ({ clouddriver: c.clouddriver(dir) }) });
    try {
      await eventually(`two failed attempts (${c.what})`, () => (h.logs.text().match(/cannot connect to the gateway/g)?.length ?? 0) >= 2, {
        timeoutMs: 30_000,
      });
      const line = h.logs.lines().find((l) => String(l.msg).startsWith('cannot connect to the gateway'))!;
      assert.match(String(line.msg), c.expect, c.what);
      assert.equal(h.agent.status().connected, false);
    } finally {
      await h.close();
    }
  }
});
