/**
 * Relative paths in the gateway configuration resolve against the config file's directory (the agent's rule): every
 * path-valued key from the file and from `OUTPOST_GATEWAY_*` variables, never a URL, never a command-line flag; with
 * no file they stay relative to the working directory. And end to end: `outpost gateway` started from another
 * directory serves TLS with the certificate, the key and the token files its config names relatively.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import { GATEWAY_PATH_KEYS } from '../../src/gateway/config/paths.js';
import { gatewayConfigSchema } from '../../src/gateway/config/schema.js';
import { configPathName } from '../../src/shared/config-paths.js';
import { createCertificateAuthority } from '../../src/sandbox/certs.js';
import { describeObject } from '../../scripts/zod-fields.js';
import { readLog, spawnOutpost, waitForProcess } from '../../testkit/outpost-process.js';
import { restCall } from '../../testkit/auth-helpers.js';

/** A config file whose every path-valued key holds a relative path. */
const RELATIVE = `
database: data/db
tls: { certFile: tls/gateway.pem, keyFile: tls/gateway-key.pem, caFile: tls/ca.pem, clientAuth: OPTIONAL }
auth:
  tokens:
    - { subject: operator, tokenFile: tokens/operator }
    - { subject: inline, token: not-a-path-0123456789 }
  jwt: { issuer: i, audience: a, secretFile: jwt/secret }
  replicaSecretFile: replica/secret
replicas: { kubeconfigFile: kube/config, peerCaFile: tls/peer-ca.pem }
web: { dir: web/dist }
secrets: { keyFile: secrets/keys }
`;

describe('relative paths in the gateway configuration', () => {
  let dir: string;
  let confDir: string;
  let file: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-gw-paths-'));
    confDir = join(dir, 'etc', 'outpost');
    mkdirSync(confDir, { recursive: true });
    file = join(confDir, 'gateway.yaml');
    writeFileSync(file, RELATIVE);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('every path-valued key of the schema is resolved (a new *File or *Dir key must join GATEWAY_PATH_KEYS)', () => {
    const listed = new Set(GATEWAY_PATH_KEYS.map(configPathName));
    const pathLike = describeObject(gatewayConfigSchema)
      .flatMap((s) => s.rows.map((r) => r.path))
      .filter((p) => /(File|Dir|^web\.dir|^database)$/.test(p));
    assert.ok(pathLike.length >= 12, pathLike.join(', '));
    for (const path of pathLike) assert.ok(listed.has(path), `${path} is in GATEWAY_PATH_KEYS`);
  });

  test("from the file: against the file's directory, whatever the working directory", () => {
    const c = loadGatewayConfig({ file });
    const at = (p: string) => join(confDir, p);
    assert.equal(c.database, at('data/db'));
    assert.deepEqual(
      [c.tls?.certFile, c.tls?.keyFile, c.tls?.caFile],
      [at('tls/gateway.pem'), at('tls/gateway-key.pem'), at('tls/ca.pem')],
    );
    assert.equal(c.auth.tokens[0]!.tokenFile, at('tokens/operator'));
    assert.equal(c.auth.tokens[1]!.token, 'not-a-path-0123456789', 'a token is not a path');
    assert.equal(c.auth.jwt?.secretFile, at('jwt/secret'));
    assert.equal(c.auth.replicaSecretFile, at('replica/secret'));
    assert.equal(c.replicas.kubeconfigFile, at('kube/config'));
    assert.equal(c.replicas.peerCaFile, at('tls/peer-ca.pem'));
    assert.equal(c.web.dir, at('web/dist'));
    assert.equal(c.secrets.keyFile, at('secrets/keys'));
  });

  test('absolute paths and database URLs are kept as written', () => {
    const abs = join(dir, 'abs.yaml');
    writeFileSync(abs, 'database: postgres://u@h:5432/db\nsecrets: { keyFile: /etc/outpost/keys }\n');
    const c = loadGatewayConfig({ file: abs });
    assert.equal(c.database, 'postgres://u@h:5432/db');
    assert.equal(c.secrets.keyFile, '/etc/outpost/keys');
    writeFileSync(abs, 'database: memory://\n');
    assert.equal(loadGatewayConfig({ file: abs }).database, 'memory://');
  });

  test("from the environment: against the file's directory too; command-line flags and file-less loads keep them", () => {
    const env = { OUTPOST_GATEWAY_SECRETS_KEY_FILE: 'other/keys', OUTPOST_GATEWAY_AUTH_REPLICA_SECRET_FILE: '/run/replica' };
    const c = loadGatewayConfig({ file, env, overrides: { database: 'flag/db' } });
    assert.equal(c.secrets.keyFile, join(confDir, 'other/keys'));
    assert.equal(c.auth.replicaSecretFile, '/run/replica');
    assert.equal(c.database, 'flag/db', 'a flag is relative to the working directory');
    const noFile = loadGatewayConfig({ env });
    assert.equal(noFile.secrets.keyFile, 'other/keys', 'no config file: relative to the working directory');
    // the old name of `replicas` is resolved as well
    const old = join(dir, 'old.yaml');
    writeFileSync(old, 'cluster: { kubeconfigFile: kube/config }\n');
    assert.equal(loadGatewayConfig({ file: old }).replicas.kubeconfigFile, join(dir, 'kube/config'));
  });

  test('`outpost gateway --config etc/outpost/gateway.yaml` from another directory serves TLS with its relative files', async () => {
    const ca = await createCertificateAuthority({ hosts: ['127.0.0.1'] });
    const write = (name: string, text: string) => {
      mkdirSync(join(confDir, name, '..'), { recursive: true });
      writeFileSync(join(confDir, name), text);
    };
    write('tls/gateway.pem', ca.certPem);
    write('tls/gateway-key.pem', ca.keyPem);
    write('tls/ca.pem', ca.caPem);
    write('tokens/operator', 'operator-token-0123456789abcdef\n');
    write('replica/secret', 'replica-secret-0123456789abcdef0123456789\n');
    write('secrets/keys', `k1:${Buffer.alloc(32, 7).toString('base64')}\n`);
    const serving = join(confDir, 'serving.yaml');
    writeFileSync(
      serving,
      [
        'host: 127.0.0.1',
        'httpPort: 0',
        'grpcPort: 0',
        'database: memory://',
        'tls: { certFile: tls/gateway.pem, keyFile: tls/gateway-key.pem }',
        'auth:',
        '  tokens: [{ subject: operator, tokenFile: tokens/operator }]',
        '  replicaSecretFile: replica/secret',
        'authorization: { rules: [{ kind: token, subject: "^operator$", roles: [read] }] }',
        'secrets: { keyFile: secrets/keys }',
        '',
      ].join('\n'),
    );
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const log = join(dir, 'gateway.log');
    // Started from `elsewhere`, with the config path relative to that directory.
    const gateway = spawnOutpost(['gateway', '--config', '../etc/outpost/serving.yaml'], log, {}, [], elsewhere);
    try {
      let url = '';
      await waitForProcess(
        gateway,
        log,
        'the gateway printed its HTTPS URL',
        () => {
          url = /HTTP \(Connect JSON, REST\): (https:\/\/\S+)/.exec(readLog(log))?.[1] ?? '';
          return url !== '';
        },
        60_000,
      );
      const withToken = await restCall(url, 'GET', '/armory/accounts', { ca: ca.caPem, token: 'operator-token-0123456789abcdef' });
      assert.equal(withToken.status, 200, JSON.stringify(withToken.body));
      const without = await restCall(url, 'GET', '/armory/accounts', { ca: ca.caPem });
      assert.equal(without.status, 401);
    } finally {
      await gateway.kill();
    }
  });
});
