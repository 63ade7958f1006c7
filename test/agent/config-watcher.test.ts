/**
 * The configuration file watcher applies a new content only once two reads in a row return it, so a file caught
 * half-written (truncated, then filled: what `writeFileSync` and `echo > file` do) never removes the accounts for a
 * moment. The reads are injected: the sequence of contents is the test's, no timing involved.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAgentConfigText } from '../../src/agent/config/load.js';
import type { AccountConfig } from '../../src/agent/config/schema.js';
import { watchConfigFile } from '../../src/agent/config/config-watcher.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const config = (accounts: string[]) =>
  [
    'clouddriver:',
    '  grpc: 127.0.0.1:1',
    '  insecure: true',
    'kubernetes:',
    accounts.length === 0 ? '  accounts: []' : '  accounts:',
    ...accounts.flatMap((name) => [`    - name: ${name}`, '      serviceAccount: true']),
  ].join('\n');

/** Runs the watcher over `reads` (one per poll, the first is the start-up read) and returns what it applied. */
async function applied(reads: string[]): Promise<string[][]> {
  const out: string[][] = [];
  let next = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const watcher = await watchConfigFile({
    file: 'agent.yaml',
    env: {},
    running: parseAgentConfigText(reads[0]!, 'agent.yaml', {}),
    intervalMs: 1,
    logger: createSilentLogger(),
    readText: async () => {
      if (next >= reads.length) {
        done();
        return reads.at(-1)!;
      }
      return reads[next++]!;
    },
    onAccounts: async (accounts: AccountConfig[]) => void out.push(accounts.map((a) => a.name)),
  });
  await finished;
  await watcher.close();
  return out;
}

describe('configuration file watcher', { timeout: 20_000 }, () => {
  test('a content read once (a torn write) is never applied; a content read twice is, once', async () => {
    const full = config(['alpha', 'beta']);
    const changed = config(['alpha', 'gamma']);
    assert.deepEqual(await applied([full, '', changed, changed, changed]), [['alpha', 'gamma']]);
  });

  test('a partial file between two identical ones changes nothing', async () => {
    const full = config(['alpha', 'beta']);
    assert.deepEqual(await applied([full, full.slice(0, 40), full, full]), []);
  });

  test('an empty file written on purpose is applied once it stays (no accounts left)', async () => {
    const full = config(['alpha']);
    const none = config([]);
    assert.deepEqual(await applied([full, none, none, none]), [[]]);
  });
});
