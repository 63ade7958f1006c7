/**
 * The JSON patch rule for Secrets (src/shared/secret-patch-rules.ts) and the kind spellings it is applied to
 * (src/shared/secret-kind.ts): every way to read a Secret's values with copy, move or test is refused — pointer
 * escapes, case, ancestors, the root, malformed pointers — and ordinary patches pass; each refusal's message is
 * checked exactly (the operation, its index and its pointer, cut at 120 characters). Then, against a real RFC 6902
 * implementation (the sandbox's, fast-json-patch), random patches the rule lets through never put a value anywhere
 * but where it was.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyJsonPatch } from '../../src/sandbox/patch/json-patch.js';
import { isSecretKind } from '../../src/shared/secret-kind.js';
import { secretPatchProblem } from '../../src/shared/secret-patch-rules.js';
import { createRng, seedFrom } from '../../testkit/rng.js';

const LAST_APPLIED = '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration';

describe('secretPatchProblem', () => {
  const refused: [string, unknown][] = [
    ['copy from a data value', [{ op: 'copy', from: '/data/password', path: '/metadata/annotations/leak' }]],
    ['move from a data value', [{ op: 'move', from: '/data/password', path: '/metadata/labels/leak' }]],
    ['copy of the whole data map', [{ op: 'copy', from: '/data', path: '/metadata/annotations/leak' }]],
    ['copy of the root (the whole object)', [{ op: 'copy', from: '', path: '/metadata/annotations/leak' }]],
    ['copy of /metadata (holds the last-applied annotation)', [{ op: 'copy', from: '/metadata', path: '/metadata/x' }]],
    ['copy of the annotations map', [{ op: 'copy', from: '/metadata/annotations', path: '/metadata/labels' }]],
    ['copy of the last-applied annotation', [{ op: 'copy', from: LAST_APPLIED, path: '/metadata/annotations/leak' }]],
    ['stringData', [{ op: 'copy', from: '/stringData/token', path: '/metadata/name' }]],
    ['below a data value', [{ op: 'copy', from: '/data/password/0', path: '/kind' }]],
    ['an empty key under data', [{ op: 'copy', from: '/data/', path: '/metadata/annotations/leak' }]],
    ['test of a data value (an oracle for guesses)', [{ op: 'test', path: '/data/password', value: 'aHVudGVyMg==' }]],
    ['test of the root', [{ op: 'test', path: '', value: {} }]],
    ['another case of the member names', [{ op: 'copy', from: '/DATA/password', path: '/metadata/annotations/leak' }]],
    ['another case of the op', [{ op: 'Copy', from: '/data/password', path: '/metadata/annotations/leak' }]],
    [
      'a pointer without its leading slash (read as /data/password by some implementations)',
      [{ op: 'copy', from: 'x/data/password', path: '/metadata/annotations/leak' }],
    ],
    ['a from that is not a string', [{ op: 'copy', from: ['data'], path: '/metadata/annotations/leak' }]],
    ['a test without a path', [{ op: 'test', value: 'x' }]],
    [
      'the read after harmless operations',
      [
        { op: 'add', path: '/metadata/labels/a', value: 'b' },
        { op: 'move', from: '/data/password', path: '/data/renamed' },
      ],
    ],
    ['not a list', { op: 'copy', from: '/data/password', path: '/metadata/annotations/leak' }],
    ['an operation that is not an object', ['copy']],
    ['an operation without an op', [{ from: '/data/password', path: '/metadata/annotations/leak' }]],
    ['a pointer without any slash (the whole object to lenient readers)', [{ op: 'copy', from: 'data', path: '/metadata/annotations/x' }]],
    ['"from" spelled in another case', [{ op: 'copy', From: '/data/password', path: '/metadata/annotations/leak' }]],
    ['"from" in another case on an op that needs none', [{ op: 'add', FROM: '/data/password', path: '/x', value: 1 }]],
    ['a test in capitals', [{ op: 'TEST', path: '/data/password', value: 'guess' }]],
    [
      'the last-applied annotation in another case',
      [{ op: 'copy', from: '/metadata/annotations/kubectl.kubernetes.io~1LAST-applied-configuration', path: '/x' }],
    ],
    ['a from that is a number', [{ op: 'copy', from: 7, path: '/x' }]],
  ];
  for (const [name, ops] of refused) {
    test(`refused: ${name}`, () => {
      const problem = secretPatchProblem(ops);
      assert.ok(problem, 'expected a problem');
      assert.ok(!problem.includes('aHVudGVyMg'), 'the message quotes no value');
    });
  }

  const allowed: [string, unknown][] = [
    ['setting a data value', [{ op: 'add', path: '/data/password', value: 'bmV3' }]],
    ['replacing data whole', [{ op: 'replace', path: '/data', value: { a: 'Yg==' } }]],
    ['removing a data value', [{ op: 'remove', path: '/data/password' }]],
    ['copying a label into an annotation', [{ op: 'copy', from: '/metadata/labels/app', path: '/metadata/annotations/app' }]],
    ['moving an annotation', [{ op: 'move', from: '/metadata/annotations/old', path: '/metadata/annotations/new' }]],
    ['testing a label', [{ op: 'test', path: '/metadata/labels/app', value: 'web' }]],
    ['a key that only looks like data (~0 is ~)', [{ op: 'copy', from: '/d~0ata', path: '/metadata/annotations/x' }]],
    [
      'an annotation named like last-applied but escaped differently',
      [{ op: 'copy', from: '/metadata/annotations/kubectl.kubernetes.io~01last-applied-configuration', path: '/metadata/annotations/x' }],
    ],
    [
      'an annotation whose name has ~0 (a tilde) where last-applied has ~1 (a slash)',
      [{ op: 'copy', from: '/metadata/annotations/kubectl.kubernetes.io~0last-applied-configuration', path: '/metadata/annotations/x' }],
    ],
    ['a copy into data from metadata', [{ op: 'copy', from: '/metadata/name', path: '/data/name' }]],
    ['an empty patch', []],
    ['"/" (the member named "" of the object, RFC 6901, not the object)', [{ op: 'copy', from: '/', path: '/metadata/labels/empty' }]],
    ['copying the type', [{ op: 'copy', from: '/type', path: '/metadata/labels/type' }]],
    ['testing the resourceVersion', [{ op: 'test', path: '/metadata/resourceVersion', value: '42' }]],
  ];
  for (const [name, ops] of allowed) {
    test(`allowed: ${name}`, () => assert.equal(secretPatchProblem(ops), undefined));
  }

  test('the pointer is unescaped as RFC 6901 says: ~1 is a slash inside one token', () => {
    assert.ok(
      secretPatchProblem([{ op: 'copy', from: LAST_APPLIED, path: '/metadata/annotations/x' }]),
      'the annotation, escaped with ~1, is refused',
    );
    // `/metadata/annotations/kubectl.kubernetes.io/last-applied-configuration` is a different, deeper pointer
    // (annotation `kubectl.kubernetes.io`, then a member of its value): it reads nothing protected.
    assert.equal(
      secretPatchProblem([
        { op: 'copy', from: '/metadata/annotations/kubectl.kubernetes.io/last-applied-configuration', path: '/metadata/annotations/x' },
      ]),
      undefined,
    );
  });
});

describe('secretPatchProblem messages', () => {
  const READ =
    "would read the Secret's values: a patch of a Secret may not copy, move or test /data, /stringData, the last-applied " +
    'annotation, anything below them or a path that holds them; set values with add or replace instead';
  const NOT_POINTER = 'is not a JSON pointer (it must be empty or start with "/")';

  test('a patch that is not a list, or an operation that is not an object with a string op, is named by its index', () => {
    assert.equal(secretPatchProblem({ op: 'add' }), 'a JSON patch must be a list of operations');
    assert.equal(secretPatchProblem(undefined), 'a JSON patch must be a list of operations');
    const ok = { op: 'add', path: '/metadata/labels/a', value: 'b' };
    const notAnOperation = [
      null,
      'copy',
      7,
      [],
      {},
      { op: 7 },
      { op: null },
      // Not objects, though they carry an op: a list and a function are no JSON patch operation.
      Object.assign(['x'], { op: 'copy', from: '/data/p', path: '/x' }),
      Object.assign(() => undefined, { op: 'copy', from: '/data/p', path: '/x' }),
    ];
    for (const op of notAnOperation) {
      assert.equal(secretPatchProblem([ok, op]), 'JSON patch operation 1 must be an object with a string "op"', String(op));
    }
  });

  test('a read of a protected location names the operation (op in lower case), the member and the pointer, quoted', () => {
    assert.equal(
      secretPatchProblem([{ op: 'COPY', from: '/data/password', path: '/x' }]),
      `JSON patch operation 0 (copy from "/data/password") ${READ}`,
    );
    assert.equal(
      secretPatchProblem([
        { op: 'add', path: '/a', value: 1 },
        { op: 'Test', path: '/stringData/t', value: 'guess' },
      ]),
      `JSON patch operation 1 (test path "/stringData/t") ${READ}`,
    );
    assert.equal(secretPatchProblem([{ op: 'move', from: '', path: '/x' }]), `JSON patch operation 0 (move from "") ${READ}`, 'the root');
    assert.equal(
      secretPatchProblem([{ op: 'copy', from: '/data/a"b', path: '/x' }]),
      `JSON patch operation 0 (copy from "/data/a\\"b") ${READ}`,
      'quoted as JSON',
    );
  });

  test('a pointer longer than 120 characters is quoted cut to 120 and an ellipsis', () => {
    const exact = `/data/${'x'.repeat(114)}`;
    assert.equal(exact.length, 120);
    assert.equal(secretPatchProblem([{ op: 'copy', from: exact, path: '/x' }]), `JSON patch operation 0 (copy from "${exact}") ${READ}`);
    assert.equal(
      secretPatchProblem([{ op: 'copy', from: `${exact}y`, path: '/x' }]),
      `JSON patch operation 0 (copy from "${exact}…") ${READ}`,
    );
  });

  test('a pointer that is missing, not a string or not a JSON pointer is named with the member it should be in', () => {
    assert.equal(secretPatchProblem([{ op: 'copy', path: '/x' }]), 'JSON patch operation 0 (copy) needs "from" as a JSON pointer string');
    assert.equal(secretPatchProblem([{ op: 'test', value: 1 }]), 'JSON patch operation 0 (test) needs "path" as a JSON pointer string');
    assert.equal(
      secretPatchProblem([{ op: 'move', from: 'metadata/name', path: '/x' }]),
      `JSON patch operation 0 (move): "from" "metadata/name" ${NOT_POINTER}`,
    );
    assert.equal(secretPatchProblem([{ op: 'test', path: 'x', value: 1 }]), `JSON patch operation 0 (test): "path" "x" ${NOT_POINTER}`);
  });

  test('"from" in another spelling is refused on any op, quoted; the op name is given in lower case', () => {
    assert.equal(
      secretPatchProblem([{ op: 'ADD', path: '/x', value: 1, fROM: '/metadata/name' }]),
      'JSON patch operation 0 (add) spells "from" as "fROM"',
    );
    assert.equal(secretPatchProblem([{ op: 'copy', from: '/metadata/name', path: '/x', fromage: '/data' }]), undefined);
  });

  test('ops that read nothing need no pointer; an unknown op is left to the cluster', () => {
    assert.equal(secretPatchProblem([{ op: 'remove', path: 7 }, { op: 'replace' }, { op: 'frobnicate', from: '/data' }]), undefined);
  });
});

describe('isSecretKind', () => {
  test('every spelling of Secret, and nothing else', () => {
    for (const kind of [
      'Secret',
      'secret',
      'secrets',
      'SECRETS',
      ' Secret ',
      'v1/Secret',
      'Secret.',
      'secret.core',
      'secrets.v1',
      'Secret.example.com',
    ])
      assert.equal(isSecretKind(kind), true, kind);
    for (const kind of ['ConfigMap', 'SecretList', 'SealedSecret', 'secretstore', '', 'Secret/x/ConfigMap'])
      assert.equal(isSecretKind(kind), false, kind);
  });
});

describe('patches the rule lets through, applied by a real RFC 6902 implementation', () => {
  const MARK = 'marker-0f3c9a';
  const B64 = Buffer.from(MARK).toString('base64');
  const secret = () => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 's',
      namespace: 'default',
      labels: { app: 'web' },
      annotations: { note: 'hello', 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { password: B64 } }) },
    },
    type: 'Opaque',
    data: { password: B64, other: 'b3RoZXI=' },
  });
  const pointers = [
    '',
    '/data',
    '/data/password',
    '/Data/password',
    '/stringData',
    '/metadata',
    '/metadata/annotations',
    '/metadata/annotations/note',
    LAST_APPLIED,
    '/metadata/annotations/leak',
    '/metadata/labels',
    '/metadata/labels/app',
    '/metadata/labels/leak',
    '/metadata/name',
    '/type',
    '/kind',
    '/data/other',
    '/data/new',
  ];
  const ops = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;

  test('never put a value outside data', () => {
    const rng = createRng(seedFrom('OUTPOST_SECRET_PATCH_SEED'));
    let ran = 0;
    for (let round = 0; round < 4000; round++) {
      const patch = Array.from({ length: rng.int(1, 3) }, () => {
        const op = rng.pick(ops);
        const entry: Record<string, unknown> = { op, path: rng.pick(pointers) };
        if (op === 'move' || op === 'copy') entry.from = rng.pick(pointers);
        if (op === 'add' || op === 'replace' || op === 'test') entry.value = rng.pick(['x', { a: 'b' }, B64, MARK]);
        return entry;
      });
      // A value the patch itself carries is the request's (stored sealed), not a read of the Secret.
      if (JSON.stringify(patch).includes(MARK) || JSON.stringify(patch).includes(B64)) continue;
      if (secretPatchProblem(patch) !== undefined) continue;
      let result: Record<string, unknown>;
      try {
        result = applyJsonPatch(secret(), patch);
      } catch {
        continue; // the cluster refused it; its message names pointers only (json-patch.ts)
      }
      ran++;
      const { data: _data, stringData: _stringData, metadata, ...rest } = result as Record<string, any>;
      if (metadata && typeof metadata === 'object') delete metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
      const outside = JSON.stringify({ ...rest, metadata });
      assert.ok(!outside.includes(B64) && !outside.includes(MARK), `seed ${rng.seed}, round ${round}: ${JSON.stringify(patch)} leaked`);
    }
    assert.ok(ran > 200, `only ${ran} patches were allowed and applied (seed ${rng.seed})`);
  });
});
