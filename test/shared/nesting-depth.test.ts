/**
 * The nesting bound of every JSON/YAML entry point (src/shared/nesting-depth.ts): the parsed-value walk is exact and
 * needs no recursion; the text reading never reports less than the YAML library's own parse of the same text finds,
 * whatever mix of flow and block collections, quotes, comments and block scalars it holds, and is not fooled by
 * brackets inside strings.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { MAX_NESTING_DEPTH, nestingProblem, textNestingDepth, textNestingProblem } from '../../src/shared/nesting-depth.js';

/** The depth of a parsed value, recursively (only for the small values of this test). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

function parsedDepth(text: string): number {
  return Math.max(0, ...parseAllDocuments(text).map((d) => depthOf(d.toJS())));
}

test('a parsed value: exact depth, no recursion even 200,000 levels deep, and the path past the limit is refused', () => {
  assert.equal(nestingProblem({ a: [1, { b: 'x' }] }, 'body', 3), undefined);
  assert.match(nestingProblem({ a: [1, { b: {} }] }, 'body', 3) ?? '', /^body nests objects and arrays more than 3 levels deep$/);
  let deep: unknown = 'leaf';
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.match(nestingProblem(deep, 'request') ?? '', new RegExp(`more than ${MAX_NESTING_DEPTH} levels`));
  assert.equal(nestingProblem(JSON.parse(`${'['.repeat(MAX_NESTING_DEPTH)}${']'.repeat(MAX_NESTING_DEPTH)}`), 'body'), undefined);
});

test('text: JSON and YAML documents read at least as deep as they parse', () => {
  const samples = [
    '{"a": [1, {"b": "x]}"}], "c": {"d": {}}}',
    '[[[["[[[[", \'{{{{\']]]]',
    'a:\n  b:\n    c:\n      - d\n      - e: [1, [2, {f: g}]]\n',
    '- - - x\n  - y\n- z: {a: b}\n',
    '- a:\n    b: 1\n  c: 2\n',
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # a comment with [[[ {{{\n  annotations:\n    note: it's [plain text\ndata:\n  config: |\n    nested:\n      deeper:\n        deepest: [1\n  other: x\n",
    '---\na: {b: {c: {}}}\n---\n- [[[]]]\n',
    '{\n  "multi": [\n    {\n      "line": {"json": [1,2]}\n    }\n  ]\n}\n',
    'key: "a quoted string with \\"escapes\\" and [brackets] {too}"\nother: \'single [quoted]\'\'s\'\n',
    'folded: >-\n  text [ with { brackets\n  and more\nnext: {a: [b]}\n',
    'a:\n  b:\n    c: [\n      [[1],\n      2], {d: [\n        e]}]\n',
  ];
  for (const text of samples) {
    const parsed = parsedDepth(text);
    const read = textNestingDepth(text);
    assert.ok(read >= parsed, `${JSON.stringify(text)}: read ${read} < parsed ${parsed}`);
    assert.ok(read <= parsed + 2, `${JSON.stringify(text)}: read ${read} far above parsed ${parsed}`);
  }
});

test('text: brackets in quoted strings, comments and block scalars count nothing', () => {
  const text = `a: "${'['.repeat(5000)}"\n# ${'{'.repeat(5000)}\nb: |\n  ${'['.repeat(5000)}\nc: plain${'['.repeat(5000)}\n`;
  assert.equal(textNestingProblem(text, 'apply.manifests'), undefined);
  assert.equal(textNestingDepth(text), 1);
});

test('text: deep flow, deep block and deep dash sequences are refused; the limit itself passes', () => {
  const flow = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  assert.equal(textNestingProblem(flow(MAX_NESTING_DEPTH), 'x'), undefined);
  assert.match(
    textNestingProblem(flow(MAX_NESTING_DEPTH + 1), 'apply.manifests') ?? '',
    /^apply\.manifests nests objects and arrays more than 512 levels deep$/,
  );
  assert.ok(textNestingProblem(flow(100_000), 'x'));
  const block = Array.from({ length: 600 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
  assert.ok(textNestingProblem(block, 'x'));
  assert.ok(textNestingProblem(`${'- '.repeat(600)}x`, 'x'));
  const objects = `${'{"a":'.repeat(600)}1${'}'.repeat(600)}`;
  assert.ok(textNestingProblem(objects, 'x'));
});
