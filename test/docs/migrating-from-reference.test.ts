/**
 * docs/migrating-from-reference.md against the real agent configuration loader: the page's reference file and its
 * Outpost rewrite both load; dropping the keys the page calls ignored from the reference file gives the same
 * configuration as the rewrite (so "ignored" means no effect, and "converted" converts); and every key of the mapping
 * tables is what its status says in the schema.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { parseAgentConfigText } from '../../src/agent/config/load.js';
import { agentConfigSchema } from '../../src/agent/config/schema.js';
import { describeObject } from '../../scripts/zod-fields.js';
import { blocksOf, readDoc } from './doc-blocks.js';

const page = readDoc('docs/migrating-from-reference.md');
const [referenceYaml, outpostYaml] = blocksOf(page, 'yaml').map((b) => b.text);
const load = (text: string) => parseAgentConfigText(text, '/etc/outpost/config/agent.yaml', {});

/** Rows of the mapping tables: the keys in the first two cells, and the status. */
const rows = [...page.matchAll(/^\| (`.+?) \| (`[^|]+`|—) \| (same|converted|ignored|not enforced) \| .*\|$/gm)].map((m) => ({
  reference: [...m[1]!.matchAll(/`([^`]+)`/g)].map((k) => k[1]!),
  outpost: m[2] === '—' ? undefined : m[2]!.replace(/`/g, ''),
  status: m[3]!,
}));

const fields = describeObject(agentConfigSchema).flatMap((s) => s.rows);
const known = new Set(fields.filter((r) => !r.ignored).map((r) => r.path));
const ignored = new Set(fields.filter((r) => r.ignored).map((r) => r.path));
/** Typed keys read and then ignored (their description says so), e.g. clouddriver.backoff.jitter. */
const readAndIgnored = new Set(fields.filter((r) => !r.ignored && /accepted and ignored/i.test(r.description ?? '')).map((r) => r.path));

/** Deletes `a.b[].c` from a parsed YAML object (in every list item). */
function drop(value: any, path: string[]): void {
  if (value === null || typeof value !== 'object') return;
  const [head, ...rest] = path;
  const list = head!.endsWith('[]');
  const key = list ? head!.slice(0, -2) : head!;
  if (rest.length === 0) delete value[key];
  else if (list) for (const item of value[key] ?? []) drop(item, rest);
  else drop(value[key], rest);
}

describe('migrating from the reference agent', () => {
  test('the mapping tables cover the reference keys, each with the status the schema gives it', () => {
    assert.ok(rows.length >= 40, `the page has its mapping tables (${rows.length} rows)`);
    for (const row of rows) {
      for (const key of row.reference) {
        const where = `${key} (${row.status})`;
        if (row.status === 'ignored') assert.ok(ignored.has(key) || readAndIgnored.has(key), `${where}: the schema accepts and ignores it`);
        else if (row.status === 'converted') assert.ok(known.has(key), `${where}: the schema reads it`);
        else assert.equal(key, row.outpost, `${where}: same name on both sides`);
      }
      if (row.outpost !== undefined) assert.ok(known.has(row.outpost), `${row.outpost} is an Outpost key`);
      else assert.equal(row.status, 'ignored', `${row.reference[0]}: only ignored keys have no Outpost key`);
    }
    // Every key the schema keeps for the reference's sake is in the tables.
    const listed = new Set(rows.flatMap((r) => r.reference));
    for (const key of ignored) assert.ok(listed.has(key), `${key} (accepted and ignored) is in the tables`);
  });

  test('both files of the page load; without its ignored keys the reference file is the Outpost file', () => {
    const reference = load(referenceYaml!);
    const outpost = load(outpostYaml!);
    assert.equal(reference.kubernetes.accounts.length, 2);
    assert.deepEqual(reference.clouddriver.reconnect, { baseSeconds: 1, factor: 1.6, maxSeconds: 120, stableSeconds: 10 });

    const raw = parseYaml(referenceYaml!) as Record<string, unknown>;
    for (const row of rows.filter((r) => r.status === 'ignored')) for (const key of row.reference) drop(raw, key.split('.'));
    drop(raw, ['clouddriver', 'backoff']); // converted into reconnect, which the Outpost file writes out
    assert.deepEqual(load(JSON.stringify(raw)), outpost);
  });

  test("a key that is neither Outpost's nor the reference's is refused by name", () => {
    assert.throws(() => load(outpostYaml!.replace('omitKinds:', 'omitKind:')), /kubernetes\.accounts\[0\]: unknown key "omitKind"/);
  });
});
