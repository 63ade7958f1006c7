/**
 * docs/security.md: its configuration snippets load with the gateway's own loader (the secure set-up names a kind in
 * every rule and a key file; the limits snippet spells out the defaults), its key-making command makes a key the key
 * file parser accepts, and every test file and metric it cites exists.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import type { GatewayConfig } from '../../src/gateway/config/schema.js';
import { parseKeyFile } from '../../src/gateway/secrets/key-ring.js';
import { blocksOf, readDoc, ROOT } from './doc-blocks.js';

const page = readDoc('docs/security.md');

function loadYaml(text: string): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-security-doc-'));
  try {
    writeFileSync(join(dir, 'gateway.yaml'), text);
    return loadGatewayConfig({ file: join(dir, 'gateway.yaml'), env: {} });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the secure set-up loads: every rule names its identity kind, Secret values have a key file', () => {
  const [secure, limits] = blocksOf(page, 'yaml').map((b) => loadYaml(b.text));
  assert.ok(secure && limits, 'two configuration snippets');
  assert.ok(secure.authorization.rules.length >= 3);
  for (const rule of secure.authorization.rules)
    assert.ok(['token', 'jwt', 'certificate'].includes((rule as { kind?: string }).kind ?? ''), JSON.stringify(rule));
  assert.equal(secure.secrets.keyFile, '/etc/outpost/secrets/keys');
  assert.equal(secure.auth.replicaSecretFile, '/etc/outpost/replica/secret');
  assert.deepEqual(limits.limits, loadGatewayConfig({ env: {} }).limits, 'the limits snippet is the defaults');
});

test('the key-making command makes a key the gateway accepts', () => {
  const [command] = blocksOf(page, 'sh').map((b) => b.text.trim());
  assert.match(command!, /^echo "k1:\$\(openssl rand -base64 32\)" > \/etc\/outpost\/secrets\/keys$/);
  const line = execFileSync('sh', ['-c', command!.replace(/ > .*$/, '')], { encoding: 'utf8' });
  const [key] = parseKeyFile(line, 'keys');
  assert.equal(key!.id, 'k1');
  assert.equal(key!.key.length, 32);
});

test('the tests and metrics the page cites exist', () => {
  const cited = [...page.matchAll(/`([a-z-]+\.test\.ts)`/g)].map((m) => m[1]!);
  assert.ok(cited.length >= 5);
  const tests = execFileSync('git', ['ls-files', 'test'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  for (const file of cited) assert.ok(tests.some((t) => t.endsWith(`/${file}`)) || existsSync(join(ROOT, 'test', file)), `${file} exists`);
  const metrics = readFileSync(join(ROOT, 'src/gateway/metrics/gateway-metrics.ts'), 'utf8');
  for (const [, name] of page.matchAll(/`(outpost_gateway_[a-z_]+)/g)) assert.ok(metrics.includes(`'${name}'`), `${name} is a metric`);
});
