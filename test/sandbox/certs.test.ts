import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createHash } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  type CertificateAuthority,
  certificateFingerprint,
  createCertificateAuthority,
  createClientCertificate,
} from '../../src/sandbox/certs.js';

function get(port: number, host: string, opts: https.RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host, port, path: '/', agent: false, ...opts }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('certificates', () => {
  let ca: CertificateAuthority;
  let server: https.Server;
  let port: number;

  before(async () => {
    ca = await createCertificateAuthority({ hosts: ['sandbox.test', '10.1.2.3'] });
    server = https.createServer(
      { cert: ca.certPem, key: ca.keyPem, ca: ca.caPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        res.end(socket.authorized ? `client:${peer.subject.CN}/${peer.subject.O ?? ''}` : 'anonymous');
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  test('a client trusting the CA accepts the server certificate on 127.0.0.1 and localhost', async () => {
    assert.deepEqual(await get(port, '127.0.0.1', { ca: ca.caPem }), { status: 200, body: 'anonymous' });
    assert.deepEqual(await get(port, '127.0.0.1', { ca: ca.caPem, servername: 'localhost' }), {
      status: 200,
      body: 'anonymous',
    });
  });

  test('a client that does not trust the CA refuses the server', async () => {
    await assert.rejects(get(port, '127.0.0.1', {}), /self[- ]signed|unable to (verify|get)/i);
  });

  test('the server certificate carries the requested SANs and is signed by the CA', () => {
    const cert = new X509Certificate(ca.certPem);
    const caCert = new X509Certificate(ca.caPem);
    assert.ok(cert.verify(caCert.publicKey));
    assert.ok(cert.checkIssued(caCert));
    assert.equal(caCert.ca, true);
    assert.equal(cert.ca, false);
    for (const name of ['DNS:localhost', 'DNS:sandbox.test', 'IP Address:127.0.0.1', 'IP Address:10.1.2.3']) {
      assert.ok(cert.subjectAltName?.includes(name), `missing SAN ${name} in ${cert.subjectAltName}`);
    }
    assert.ok(/IP Address:(0:0:0:0:0:0:0:1|::1)/i.test(cert.subjectAltName ?? ''));
    assert.equal(cert.checkHost('sandbox.test'), 'sandbox.test');
    assert.equal(cert.checkIP('10.1.2.3'), '10.1.2.3');
  });

  test('a client certificate verifies against the CA and authenticates over mTLS', async () => {
    const client = await createClientCertificate({ caPem: ca.caPem, caKeyPem: ca.caKeyPem }, 'alice', 'system:masters');
    const cert = new X509Certificate(client.certPem);
    assert.ok(cert.verify(new X509Certificate(ca.caPem).publicKey));
    assert.match(cert.subject, /CN=alice/);
    assert.match(cert.subject, /O=system:masters/);
    const res = await get(port, '127.0.0.1', { ca: ca.caPem, cert: client.certPem, key: client.keyPem });
    assert.deepEqual(res, { status: 200, body: 'client:alice/system:masters' });
  });

  test('a client certificate from another CA is not authorized', async () => {
    const other = await createCertificateAuthority();
    const client = await createClientCertificate(other, 'mallory');
    const res = await get(port, '127.0.0.1', { ca: ca.caPem, cert: client.certPem, key: client.keyPem });
    assert.equal(res.body, 'anonymous');
  });

  test('a mismatched CA key is refused', async () => {
    const other = await createCertificateAuthority();
    await assert.rejects(createClientCertificate({ caPem: ca.caPem, caKeyPem: other.caKeyPem }, 'bob'), /does not belong/);
  });

  test('certificateFingerprint is the SHA-256 of the first certificate DER', () => {
    const expected = createHash('sha256').update(new X509Certificate(ca.caPem).raw).digest('hex');
    assert.equal(certificateFingerprint(ca.caPem), expected);
    assert.equal(certificateFingerprint(ca.caPem + ca.certPem), expected);
    assert.match(expected, /^[0-9a-f]{64}$/);
    assert.equal(new X509Certificate(ca.caPem).fingerprint256.replace(/:/g, '').toLowerCase(), certificateFingerprint(ca.caPem));
    assert.throws(() => certificateFingerprint('not a pem'), /no PEM certificate/);
  });
});
