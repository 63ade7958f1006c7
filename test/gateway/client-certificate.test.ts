/**
 * The verdict on a client certificate (src/gateway/auth/client-certificate.ts): it must chain to `tls.caFile` (the
 * refusal names the subject and Node's reason) and match one of `tls.subjectFilters` when any are set — a regex over
 * the RFC 4514 subject, or anchored attribute matchers — else UNAUTHENTICATED naming the filters; without TLS client
 * certificates are never asked for. The certificates are the TLS layer's view of one, built from attributes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { formatSubjectAttributes, type SubjectAttributes } from '../../src/gateway/auth/certificate-subject.js';
import { createClientCertificatePolicy } from '../../src/gateway/auth/client-certificate.js';
import type { PeerCertificateInfo } from '../../src/gateway/auth/credentials.js';
import type { GatewayTlsConfig } from '../../src/gateway/config/schema.js';

/** A certificate the TLS layer collected, chained to the CA unless `authorized` says otherwise. */
function certificate(attributes: SubjectAttributes, over: Partial<PeerCertificateInfo> = {}): PeerCertificateInfo {
  return { attributes, subject: formatSubjectAttributes(attributes), authorized: true, fingerprint: 'ab'.repeat(32), ...over };
}

function tls(over: Partial<GatewayTlsConfig> = {}): GatewayTlsConfig {
  return {
    certFile: 'cert.pem',
    keyFile: 'key.pem',
    caFile: 'ca.pem',
    clientAuth: 'REQUIRE',
    subjectFilters: [],
    reloadIntervalSeconds: 5,
    ...over,
  };
}

/** The UNAUTHENTICATED message `verify` throws. */
function refusal(verify: () => unknown): string {
  try {
    verify();
  } catch (err) {
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Unauthenticated);
    return err.rawMessage;
  }
  assert.fail('expected a refusal');
}

const AGENT = { CN: ['agent-1'], O: ['agents'] };

describe('clientAuth', () => {
  test('without TLS client certificates are never asked for', () => {
    assert.equal(createClientCertificatePolicy(undefined).clientAuth, 'NONE');
  });

  test('is the one of tls.clientAuth', () => {
    assert.equal(createClientCertificatePolicy(tls({ clientAuth: 'OPTIONAL' })).clientAuth, 'OPTIONAL');
    assert.equal(createClientCertificatePolicy(tls({ clientAuth: 'REQUIRE' })).clientAuth, 'REQUIRE');
  });
});

describe('the CA', () => {
  test('a certificate chained to the CA names its subject', () => {
    assert.equal(createClientCertificatePolicy(tls()).verify(certificate(AGENT)), 'CN=agent-1,O=agents');
  });

  test('one not chained to it is refused naming the subject and why', () => {
    const policy = createClientCertificatePolicy(tls());
    const cert = certificate(AGENT, { authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    assert.equal(
      refusal(() => policy.verify(cert)),
      'client certificate CN=agent-1,O=agents is not signed by the configured CA (tls.caFile): UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    );
  });

  test('without a reason from the TLS layer the refusal says so', () => {
    const policy = createClientCertificatePolicy(tls());
    assert.equal(
      refusal(() => policy.verify(certificate(AGENT, { authorized: false }))),
      'client certificate CN=agent-1,O=agents is not signed by the configured CA (tls.caFile): unknown verification error',
    );
  });

  test('is checked before the filters: a certificate of another CA is refused even when its subject matches', () => {
    const policy = createClientCertificatePolicy(tls({ subjectFilters: ['^CN=agent-1,'] }));
    assert.match(
      refusal(() => policy.verify(certificate(AGENT, { authorized: false }))),
      /is not signed by the configured CA/,
    );
  });

  test('a policy built without TLS still refuses a certificate no CA vouched for', () => {
    const policy = createClientCertificatePolicy(undefined);
    assert.match(
      refusal(() => policy.verify(certificate(AGENT, { authorized: false }))),
      /is not signed by the configured CA/,
    );
    assert.equal(policy.verify(certificate(AGENT)), 'CN=agent-1,O=agents', 'and has no subject filter');
  });
});

describe('the subject filters', () => {
  test('no filter admits every subject', () => {
    assert.equal(createClientCertificatePolicy(tls({ subjectFilters: [] })).verify(certificate({ CN: ['anyone'] })), 'CN=anyone');
  });

  test('a string filter is a regex over the RFC 4514 subject', () => {
    const policy = createClientCertificatePolicy(tls({ subjectFilters: ['^CN=agent-[0-9]+,O=agents$'] }));
    assert.equal(policy.verify(certificate(AGENT)), 'CN=agent-1,O=agents');
    assert.equal(
      refusal(() => policy.verify(certificate({ CN: ['ops'], O: ['agents'] }))),
      'client certificate subject CN=ops,O=agents matches no subject filter (tls.subjectFilters)',
    );
  });

  test('an attribute filter matches the parsed attributes, anchored', () => {
    const policy = createClientCertificatePolicy(tls({ subjectFilters: [{ attributes: { O: 'agents' } }] }));
    assert.equal(policy.verify(certificate(AGENT)), 'CN=agent-1,O=agents');
    assert.equal(
      refusal(() => policy.verify(certificate({ CN: ['agents'], O: ['agents-evil'] }))),
      'client certificate subject CN=agents,O=agents-evil matches no subject filter (tls.subjectFilters)',
    );
    assert.match(
      refusal(() => policy.verify(certificate({ CN: ['agent-9,O=agents'] }))),
      /matches no subject filter/,
      'a CN spelling ,O=agents is no O=agents',
    );
  });

  test('any one filter matching admits', () => {
    const policy = createClientCertificatePolicy(tls({ subjectFilters: ['^CN=ops$', { attributes: { O: 'agents' } }] }));
    assert.equal(policy.verify(certificate({ CN: ['ops'] })), 'CN=ops');
    assert.equal(policy.verify(certificate(AGENT)), 'CN=agent-1,O=agents');
    assert.match(
      refusal(() => policy.verify(certificate({ CN: ['dev'] }))),
      /CN=dev matches no subject filter/,
    );
  });
});
