/**
 * The kubectl printers on their own, without a cluster or a kubectl binary: go-yaml's plain-scalar rule, its key
 * order, its scalars and collections, and Go's JSON. Every construct here is one that
 * kubectl-identical-output.test.ts compares with the real kubectl's output; these pin it where no kubectl is installed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainReadsAsString } from '../../src/client/go-yaml-resolve.js';
import { inServerListOrder } from '../../src/client/cached-objects.js';
import { toKubectlJson } from '../../src/client/kubectl-json.js';
import { goYamlKeyOrder, toKubectlYaml } from '../../src/client/kubectl-yaml.js';

test('a string is written plain only when go-yaml would read it back as that string', () => {
  const quoted = ['', '~', 'null', 'y', 'n', 'yes', 'NO', 'On', 'off', 'True', '1', '-1', '+1', '1.5', '.5', '1e3', '0x1F'];
  quoted.push('0o17', '017', '08', '1_000', '99999999999999999999', '2024-01-01', '2024-1-2', '2024-01-01T00:00:00Z');
  quoted.push('2024-01-01t10:00:00+02:00', '2024-1-2 3:04:05', '1:20', '190:20:30.5', '.inf', '-.Inf', '.NaN');
  for (const s of quoted) assert.equal(plainReadsAsString(s), false, JSON.stringify(s));
  const plain = ['hello', 'yes please', '1.2.3', '1e', '0x', '2024-02-30', '2024-13-01', '1:70', 'v1', '.x', '-', '<<', 'nan', 'Yes!'];
  plain.push('+', '1e400', '12:', 'x:1');
  for (const s of plain) assert.equal(plainReadsAsString(s), true, JSON.stringify(s));
});

test("go-yaml's key order: a letter after any other character, digit runs as numbers", () => {
  const keys = ['10', '9', 'a2', 'a10', 'a02', 'A', 'B', 'b', '_x', '-x', 'x.y', 'a-1', 'a.1', 'a_1', 'true', '1.5'];
  assert.deepEqual([...keys].sort(goYamlKeyOrder), [
    '-x',
    '_x',
    '1.5',
    '9',
    '10',
    'A',
    'B',
    'a-1',
    'a.1',
    'a_1',
    'a2',
    'a02',
    'a10',
    'b',
    'true',
    'x.y',
  ]);
});

test('YAML: numbers in Go %g, quoting, folding past column 80, blocks, empty collections, nested sequences', () => {
  const value = {
    f: [1.5, 1e-7, 1234567.5, 1e21, -0.0001, 100000000, 3.0],
    n: null,
    e: [],
    m: {},
    s: ['- y', '', ' ', 'yes', '*', 'a: b', 'nel\u0085x'],
    l: 'word '.repeat(20).trim(),
    nest: [[1], [{ a: ['x'] }]],
    ml: 'a\nb\n',
  };
  assert.equal(
    toKubectlYaml(value),
    [
      'e: []',
      'f:',
      ...['- 1.5', '- 1e-07', '- 1.2345675e+06', '- 1e+21', '- -0.0001', '- 100000000', '- 3'],
      'l: word word word word word word word word word word word word word word word word',
      '  word word word word',
      'm: {}',
      ...['ml: |', '  a', '  b'],
      '"n": null',
      ...['nest:', '- - 1', '- - a:', '    - x'],
      ...['s:', "- '- y'", '- ""', "- ' '", '- "yes"', "- '*'", "- 'a: b'", '- nel x'],
      '',
    ].join('\n'),
  );
});

test('JSON: keys by bytes at every level, four spaces, HTML characters escaped, empty collections', () => {
  assert.equal(
    toKubectlJson({ b: 'a<b&c>', a: [], c: {}, d: [1, { z: 1, y: null }] }),
    '{\n    "a": [],\n    "b": "a\\u003cb\\u0026c\\u003e",\n    "c": {},\n    "d": [\n        1,\n        {\n            "y": null,\n            "z": 1\n        }\n    ]\n}\n',
  );
  const numericKeys = toKubectlJson({ b: 1, 10: 1, 9: 1 });
  assert.deepEqual(
    [...numericKeys.matchAll(/"(\w+)":/g)].map((m) => m[1]),
    ['10', '9', 'b'],
    "not JavaScript's integer-key order",
  );
});

test('a cached listing is put in the API server order: namespace/name by bytes', () => {
  const cm = (namespace: string, name: string) => ({ metadata: { namespace, name } });
  const sorted = inServerListOrder([cm('demo', 'a'), cm('demo-backend', 'b'), cm('demo', 'B'), cm('de', 'z')]);
  assert.deepEqual(
    sorted.map((o) => {
      const m = o.metadata as { namespace: string; name: string };
      return `${m.namespace}/${m.name}`;
    }),
    ['de/z', 'demo-backend/b', 'demo/B', 'demo/a'],
  );
});
