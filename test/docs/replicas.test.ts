/**
 * docs/replicas.md: each gateway configuration snippet loads with the gateway's own loader (src/gateway/config.ts);
 * the database one spells out the defaults, the Kubernetes one is what deploy/gateway/base/gateway.yaml runs; the
 * benchmark figures it quotes are rows of the generated benchmark table in docs/benchmarks.md.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import type { GatewayConfig } from '../../src/gateway/config/schema.js';
import { blocksOf, readDoc, ROOT } from './doc-blocks.js';

const page = readDoc('docs/replicas.md');

/** Loads YAML text as `outpost gateway --config FILE` does. */
function loadYaml(text: string): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-replicas-doc-'));
  try {
    writeFileSync(join(dir, 'gateway.yaml'), text);
    return loadGatewayConfig({ file: join(dir, 'gateway.yaml'), env: {} });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the configuration snippets load, and say what the defaults and deploy/ say', () => {
  const snippets = blocksOf(page, 'yaml').map((b) => loadYaml(b.text));
  const database = snippets.find((c) => c.replicas.discovery === 'database');
  const kubernetes = snippets.find((c) => c.replicas.discovery === 'kubernetes');
  assert.ok(database && kubernetes, 'one snippet per discovery mode');
  for (const config of snippets) assert.equal(config.auth.replicaSecretFile, '/etc/outpost/replica/secret');
  assert.match(database.database, /^postgres:\/\//);
  // "These are the defaults, written out"
  assert.deepEqual(database.replicas, loadGatewayConfig({ env: {} }).replicas);
  const deployed = loadGatewayConfig({ file: `${ROOT}deploy/gateway/base/gateway.yaml`, env: {} });
  assert.deepEqual(kubernetes.replicas, deployed.replicas);
  assert.equal(kubernetes.auth.replicaSecretFile, deployed.auth.replicaSecretFile);
});

test('the failover and forwarding figures are those of the benchmark table', () => {
  const benchmarks = readDoc('docs/benchmarks.md');
  const table = benchmarks.slice(benchmarks.indexOf('<!-- bench:start'), benchmarks.indexOf('<!-- bench:end'));
  const quoted = [...page.matchAll(/^\| ((?:failover|forwarding)[^|]*) \| ([^|]+) \| ([\d.]+) \|$/gm)];
  assert.ok(quoted.length >= 4, 'the page quotes the figures');
  for (const [, scenario, measure, median] of quoted) {
    assert.ok(table.includes(`| ${scenario} | ${measure} | ${median} |`), `docs/benchmarks.md: ${scenario} | ${measure} = ${median}`);
  }
});
