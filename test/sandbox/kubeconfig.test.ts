import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
const users = [
  { name: 'admin', token: 'admin-token' },
  { name: 'viewer', token: 'viewer-token' },
];

describe('renderKubeconfig', () => {
  test('https with a CA loads in client-node with the right server, token and CA', () => {
    const kc = new KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: CA, users, currentUser: 'admin' }));
    assert.equal(kc.getCurrentContext(), 'sandbox');
    const cluster = kc.getCurrentCluster();
    assert.equal(cluster?.server, 'https://127.0.0.1:6443');
    assert.equal(Buffer.from(cluster?.caData ?? '', 'base64').toString('utf8'), CA);
    assert.equal(cluster?.skipTLSVerify, false);
    assert.equal(kc.getCurrentUser()?.token, 'admin-token');
    assert.deepEqual(
      kc.getContexts().map((c) => [c.name, c.user, c.cluster]),
      [
        ['sandbox', 'admin', 'sandbox'],
        ['sandbox-viewer', 'viewer', 'sandbox'],
      ],
    );
  });

  test('current context follows currentUser', () => {
    const kc = new KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: 'https://127.0.0.1:1', caPem: CA, users, currentUser: 'viewer' }));
    assert.equal(kc.getCurrentContext(), 'sandbox-viewer');
    assert.equal(kc.getCurrentUser()?.token, 'viewer-token');
  });

  test('plain http skips TLS verification and carries no CA', () => {
    const yaml = renderKubeconfig({ server: 'http://127.0.0.1:8080', users: users.slice(0, 1), currentUser: 'admin' });
    const doc = parse(yaml);
    assert.equal(doc.clusters[0].cluster['insecure-skip-tls-verify'], true);
    assert.equal(doc.clusters[0].cluster['certificate-authority-data'], undefined);
    const kc = new KubeConfig();
    kc.loadFromString(yaml);
    assert.equal(kc.getCurrentCluster()?.skipTLSVerify, true);
    assert.equal(kc.getCurrentCluster()?.server, 'http://127.0.0.1:8080');
  });

  test('rejects an unknown current user, duplicates and an empty user list', () => {
    assert.throws(() => renderKubeconfig({ server: 'http://x', users, currentUser: 'nobody' }), /not among the users/);
    assert.throws(() => renderKubeconfig({ server: 'http://x', users: [users[0], users[0]], currentUser: 'admin' }), /duplicate/);
    assert.throws(() => renderKubeconfig({ server: 'http://x', users: [], currentUser: 'admin' }), /at least one user/);
  });
});
