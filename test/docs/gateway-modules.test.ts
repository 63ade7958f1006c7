/**
 * The modules table of docs/architecture.md ("Modules, and the order they stop in") is the gateway's module list
 * (GATEWAY_MODULES, src/gateway/modules/module-list.ts): the same modules, in the same order, each serving what the
 * table says word for word. Fails when either changes without the other.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GATEWAY_MODULES } from '../../src/gateway/index.js';
import { tableAfter } from './doc-blocks.js';

const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');

test('the doc lists the gateway modules in start order, with what each serves', () => {
  const fromDoc = tableAfter(doc, 'The modules, in start order', 'docs/architecture.md').map(([n, name, serves]) => ({
    n,
    name: name!.replace(/^`|`$/g, ''),
    serves,
  }));
  const fromCode = GATEWAY_MODULES.map((m, i) => ({ n: String(i + 1), name: m.name, serves: m.serves }));
  assert.deepEqual(fromDoc, fromCode);
});

test('module names are unique kebab-case', () => {
  const names = GATEWAY_MODULES.map((m) => m.name);
  assert.equal(new Set(names).size, names.length);
  for (const name of names) assert.match(name, /^[a-z]+(-[a-z]+)*$/);
});
