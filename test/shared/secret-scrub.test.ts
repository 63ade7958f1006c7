/**
 * The Secret scrub (src/shared/secret-scrub.ts) removes, besides `data`, `stringData` and the last-applied annotation,
 * every metadata string that holds one of the Secret's values — as stored (base64), decoded, trimmed, inside longer
 * text — and keeps ordinary metadata (a service account token Secret's annotations, Helm's). Tiny values are matched
 * only whole. The same recognition redacts values from error messages (src/shared/secret-values.ts), with the values
 * an operation request carries (src/shared/request-secret-values.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manifestSecretValues, patchSecretValues } from '../../src/shared/request-secret-values.js';
import { copiedValueMatcher, LAST_APPLIED_ANNOTATION, removeSecretMaterial, scrubObject } from '../../src/shared/secret-scrub.js';
import { createSecretValueMatcher, secretValuesOf } from '../../src/shared/secret-values.js';

const MARK = 'pa55-marker-7d1e';
const b64 = (text: string) => Buffer.from(text).toString('base64');

type Obj = Record<string, any>;

describe('scrubbing a Secret that carries copies of its values', () => {
  test('annotations, labels, finalizers, owner references, managedFields and generateName holding a value go; the rest stays', () => {
    const secret: Obj = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'db',
        namespace: 'prod',
        uid: 'u-1',
        resourceVersion: '7',
        generateName: `db-${MARK}-`,
        labels: { app: 'db', leak: b64(MARK), [`k-${MARK}`]: 'x' },
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { password: b64(MARK) } }),
          'copied-b64': b64(MARK),
          'copied-plain': MARK,
          'inside-text': `password is ${MARK}, do not tell`,
          'meta.helm.sh/release-name': 'db',
          'meta.helm.sh/release-namespace': 'prod',
          note: 'ordinary text',
        },
        finalizers: ['example.com/keep', `example.com/${MARK}`],
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-2' },
          { apiVersion: 'v1', kind: 'ConfigMap', name: MARK, uid: 'u-3' },
        ],
        managedFields: [
          { manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:note': {} } } } },
          { manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { [`f:k-${MARK}`]: {} } } } },
        ],
      },
      type: 'Opaque',
      data: { password: b64(MARK), user: b64('db') },
    };
    assert.equal(removeSecretMaterial(secret), true);
    assert.deepEqual(secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'db',
        namespace: 'prod',
        uid: 'u-1',
        resourceVersion: '7',
        labels: { app: 'db' },
        annotations: { 'meta.helm.sh/release-name': 'db', 'meta.helm.sh/release-namespace': 'prod', note: 'ordinary text' },
        finalizers: ['example.com/keep'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-2' }],
        managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:note': {} } } } }],
      },
      type: 'Opaque',
    });
    assert.ok(!JSON.stringify(secret).includes(MARK) && !JSON.stringify(secret).includes(b64(MARK)));
    // Without values there is nothing to compare with; other kinds are not Secrets.
    const bare: Obj = { kind: 'Secret', metadata: { name: 's', annotations: { a: 'b' } } };
    assert.equal(removeSecretMaterial(bare), false);
    assert.deepEqual(bare.metadata.annotations, { a: 'b' });
    const configMap: Obj = { kind: 'ConfigMap', metadata: { name: 'c', annotations: { a: MARK } }, data: { v: MARK } };
    scrubObject(configMap);
    assert.equal(configMap.metadata.annotations.a, MARK);
  });

  test("tiny values match only whole strings, from 8 characters on anywhere inside; values the Secret's identity shows are not hidden", () => {
    const secret: Obj = {
      kind: 'Secret',
      metadata: {
        name: 's',
        namespace: 'n',
        labels: { version: '1', replicas: '10', tier: 'short7x', wrapped: 'a-short7x-b', long: 'x-eight8ch-y' },
      },
      data: { flag: b64('1'), seven: b64('short7x'), eight: b64('eight8ch') },
    };
    scrubObject(secret, 'Secret');
    // '1' and 'short7x' are removed where a label is exactly them, not where they are part of one; 'eight8ch' anywhere.
    assert.deepEqual(secret.metadata.labels, { replicas: '10', wrapped: 'a-short7x-b' });

    // A service account token Secret: its `namespace` value is its own namespace, which its
    // `kubernetes.io/service-account.name` annotation often repeats; the token itself, copied, goes.
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.payload.signature';
    const token: Obj = {
      kind: 'Secret',
      metadata: {
        name: 'default-token',
        namespace: 'default',
        annotations: { 'kubernetes.io/service-account.name': 'default', 'kubernetes.io/service-account.uid': '5f0c-11', copied: jwt },
      },
      type: 'kubernetes.io/service-account-token',
      data: { namespace: b64('default'), token: b64(jwt), 'ca.crt': b64('-----BEGIN CERTIFICATE-----\nMIIB\n') },
    };
    scrubObject(token);
    assert.deepEqual(token.metadata.annotations, {
      'kubernetes.io/service-account.name': 'default',
      'kubernetes.io/service-account.uid': '5f0c-11',
    });
    assert.equal(token.type, 'kubernetes.io/service-account-token');
  });

  test('decoded values are matched trimmed (a file with a trailing newline); binary values by their base64 only', () => {
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x10, 0x20, 0x30, 0x40, 0x50]).toString('base64');
    const secret: Obj = {
      kind: 'Secret',
      metadata: { name: 's', namespace: 'n', annotations: { pem: 'line-one-of-a-key', bin: binary, plain: 'kept' } },
      data: { file: b64('line-one-of-a-key\n'), blob: binary },
      stringData: { typed: 'string-data-value' },
    };
    secret.metadata.annotations.typed = 'string-data-value';
    scrubObject(secret, 'Secret');
    assert.deepEqual(secret.metadata.annotations, { plain: 'kept' });
  });
});

describe('recognising values in messages and requests', () => {
  test('a message loses long values anywhere (also escaped inside quotes) and quoted tiny values', () => {
    const matcher = createSecretValueMatcher([MARK, 'multi\nline "quoted" secret', 'abc']);
    assert.equal(
      matcher.redact(`the name of the object (${MARK}) does not match the name on the URL (db)`),
      'the name of the object (<redacted>) does not match the name on the URL (db)',
    );
    assert.equal(matcher.redact('Invalid value: "multi\\nline \\"quoted\\" secret": bad'), 'Invalid value: "<redacted>": bad');
    assert.equal(
      matcher.redact('metadata.labels: Invalid value: "abc": a valid label…, abc stays'),
      'metadata.labels: Invalid value: "<redacted>": a valid label…, abc stays',
    );
    assert.equal(createSecretValueMatcher([]).redact('untouched'), 'untouched');
  });

  test('secretValuesOf: data as stored and decoded, stringData, trimmed forms, no empty strings', () => {
    assert.deepEqual(
      secretValuesOf({ data: { a: b64(' v \n'), e: '' }, stringData: { s: 'w' } }).sort(),
      [b64(' v \n'), ' v \n', 'v', 'w'].sort(),
    );
  });

  test('the values of an apply: Secrets in YAML documents, JSON, Lists, their last-applied annotation; nothing for other kinds', () => {
    const yaml = `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {plain: not-a-secret-value}
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Secret
    metadata:
      name: s
      annotations:
        kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"old":"older-secret-value"}}'
    stringData: {a: ${MARK}}
    data: {b: ${b64('bee-secret-value')}}
`;
    const values = manifestSecretValues(yaml);
    for (const v of [MARK, 'older-secret-value', b64('bee-secret-value'), 'bee-secret-value']) assert.ok(values.includes(v), v);
    assert.ok(!values.includes('not-a-secret-value'));
    assert.deepEqual(manifestSecretValues(JSON.stringify([{ kind: 'secret', stringData: { x: MARK } }])), [MARK]);
    assert.deepEqual(manifestSecretValues('kind: ConfigMap\ndata: {a: b}'), []);
    // YAML joins the halves of a double-quoted string around an escaped line break: the kind is Secret.
    assert.deepEqual(manifestSecretValues(`kind: "Sec\\\n  ret"\nstringData: {x: ${MARK}}\n`), [MARK]);
  });

  test("the values of a patch of a Secret: what a JSON patch sets (decoded under /data), a merge patch's data", () => {
    const json = JSON.stringify([
      { op: 'add', path: '/data/p', value: b64(MARK) },
      { op: 'replace', path: '/metadata/name', value: 'renamed-to-this' },
      { op: 'remove', path: '/data/q' },
    ]);
    const values = patchSecretValues('secrets', json);
    for (const v of [b64(MARK), MARK, 'renamed-to-this']) assert.ok(values.includes(v), v);
    assert.deepEqual(patchSecretValues('Secret', JSON.stringify({ stringData: { p: MARK }, metadata: { labels: { a: 'b' } } })), [MARK]);
    assert.deepEqual(patchSecretValues('ConfigMap', json), []);
  });
});

describe('scrubObject: which objects it scrubs (the agent scrubs every object it decodes with it)', () => {
  const secret = (withKind: boolean): Obj => ({
    ...(withKind ? { apiVersion: 'v1', kind: 'Secret' } : {}),
    metadata: {
      name: 'db',
      namespace: 'prod',
      labels: { app: 'db' },
      annotations: { [LAST_APPLIED]: JSON.stringify({ stringData: { password: MARK } }), owner: 'team-a' },
    },
    type: 'Opaque',
    data: { password: b64(MARK) },
    stringData: { token: MARK },
  });
  const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
  const scrubbed = (o: Obj) => {
    assert.equal(o.data, undefined, 'data removed');
    assert.equal(o.stringData, undefined, 'stringData removed');
    assert.equal(o.metadata.annotations[LAST_APPLIED], undefined, 'the last-applied annotation removed');
    assert.deepEqual(o.metadata.annotations, { owner: 'team-a' }, 'other annotations kept');
    assert.deepEqual(o.metadata.labels, { app: 'db' });
    assert.equal(o.type, 'Opaque');
    assert.ok(!JSON.stringify(o).includes(MARK) && !JSON.stringify(o).includes(b64(MARK)), 'no value left anywhere');
  };

  test('a Secret is scrubbed by its own kind, with or without the listed kind, and the same object is returned', () => {
    const own = secret(true);
    assert.equal(scrubObject(own), own, 'scrubbed in place');
    scrubbed(own);
    const listedToo = secret(true);
    scrubbed(scrubObject(listedToo, 'Secret'));
    const listedOther = secret(true);
    scrubbed(scrubObject(listedOther, 'ConfigMap'));
    // Listed as Secrets: scrubbed whatever the item says of itself.
    scrubbed(scrubObject({ ...secret(true), kind: 'Opaque' }, 'Secret'));
  });

  test('a list item without a kind of its own is scrubbed by the listed kind Secret, and only by it', () => {
    scrubbed(scrubObject(secret(false), 'Secret'));
    const unlisted = secret(false);
    scrubObject(unlisted);
    assert.deepEqual(unlisted, secret(false), 'no kind at all: nothing says it is a Secret');
  });

  test('anything else is returned untouched, the last-applied annotation and data included', () => {
    const configMap: Obj = { ...secret(true), kind: 'ConfigMap' };
    const before = structuredClone(configMap);
    assert.equal(scrubObject(configMap, 'ConfigMap'), configMap);
    assert.deepEqual(configMap, before);
    const listed: Obj = secret(false);
    scrubObject(listed, 'ConfigMap');
    assert.deepEqual(listed, secret(false), 'a list item of another kind');
    const lowerCase: Obj = { ...secret(true), kind: 'secret' };
    scrubObject(lowerCase);
    assert.ok(lowerCase.data, 'kinds are compared exactly, as the API server spells them');
    assert.equal(scrubObject(null, 'Secret'), null);
    assert.equal(scrubObject('text', 'Secret'), 'text');
  });
});

describe('removeSecretMaterial, field by field: what goes, what stays, and what it reports', () => {
  /** A value long enough to be found inside other text (8 characters or more). */
  const VALUE = 'K3yV4lue9';

  test('data and stringData go even when they hold no value; the last-applied annotation goes even without data; the answer says so', () => {
    const empty: Obj = { kind: 'Secret', metadata: { name: 'e' }, data: {}, stringData: {} };
    assert.equal(removeSecretMaterial(empty), true);
    assert.deepEqual(empty, { kind: 'Secret', metadata: { name: 'e' } });
    const applied: Obj = {
      kind: 'Secret',
      metadata: { name: 'a', annotations: { [LAST_APPLIED_ANNOTATION]: '{"metadata":{"name":"a"}}', team: 'x' } },
    };
    assert.equal(removeSecretMaterial(applied), true);
    assert.deepEqual(applied.metadata.annotations, { team: 'x' });
    const nothing: Obj = { kind: 'Secret', metadata: { name: 'n', annotations: { team: 'x' } }, type: 'Opaque' };
    assert.equal(removeSecretMaterial(nothing), false, 'nothing to remove');
    assert.deepEqual(nothing, { kind: 'Secret', metadata: { name: 'n', annotations: { team: 'x' } }, type: 'Opaque' });
  });

  test('no metadata, null metadata, null annotations or labels that are not a map: no throw, the values still go', () => {
    const bare: Obj = { kind: 'Secret', data: { p: b64(VALUE) }, type: `copied ${VALUE}` };
    assert.equal(removeSecretMaterial(bare), true);
    assert.deepEqual(bare, { kind: 'Secret' });
    const nullMeta: Obj = { kind: 'Secret', metadata: null, data: { p: b64(VALUE) } };
    removeSecretMaterial(nullMeta);
    assert.deepEqual(nullMeta, { kind: 'Secret', metadata: null });
    const odd: Obj = {
      kind: 'Secret',
      metadata: { name: 'o', annotations: null, labels: `a string with ${VALUE}`, generateName: null },
      data: { p: b64(VALUE) },
    };
    removeSecretMaterial(odd);
    assert.deepEqual(odd.metadata, { name: 'o', annotations: null, generateName: null }, 'the string holding the value went whole');
  });

  test("the Secret's identity stays even when it holds a value; apiVersion and kind stay even when a value is their text", () => {
    const ts = '2026-01-01T00:00:00Z-K3yV4lue9';
    const secret: Obj = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: `db-${VALUE}`,
        namespace: `ns-${VALUE}`,
        uid: `uid-${VALUE}`,
        resourceVersion: `rv-${VALUE}`,
        creationTimestamp: ts,
        deletionTimestamp: ts,
        selfLink: `/api/v1/namespaces/ns/secrets/db-${VALUE}`,
        generation: 3,
      },
      data: { p: b64(VALUE), short: b64('v1'), kind: b64('Secret') },
    };
    const identity = structuredClone(secret.metadata);
    removeSecretMaterial(secret);
    assert.deepEqual(secret, { apiVersion: 'v1', kind: 'Secret', metadata: identity });
  });

  test('other metadata: a map, a string or a list entry holding a value goes whole; what holds none stays, numbers and booleans too', () => {
    const secret: Obj = {
      kind: 'Secret',
      metadata: {
        name: 'db',
        generateName: 'db-',
        extra: { a: 'plain', b: `x-${VALUE}` },
        finalizers: ['example.com/keep', `example.com/${VALUE}`, 'example.com/also'],
        ownerReferences: [
          { kind: 'Thing', name: 'owner', nested: [['deep', VALUE]] },
          { kind: 'Thing', name: 'kept' },
        ],
        labels: { app: 'db', copy: VALUE },
      },
      immutable: true,
      replicas: 2,
      notes: ['plain', ['deeper', `has ${VALUE}`]],
      data: { p: b64(VALUE) },
    };
    removeSecretMaterial(secret);
    assert.deepEqual(secret, {
      kind: 'Secret',
      metadata: {
        name: 'db',
        generateName: 'db-',
        finalizers: ['example.com/keep', 'example.com/also'],
        ownerReferences: [{ kind: 'Thing', name: 'kept' }],
        labels: { app: 'db' },
      },
      immutable: true,
      replicas: 2,
    });
  });

  test('copiedValueMatcher recognises the values the scrub hides, not those its identity shows', () => {
    const matcher = copiedValueMatcher({
      kind: 'Secret',
      metadata: { name: 'shown-name-1', namespace: 'ns' },
      data: { a: b64(VALUE), b: b64('shown-name-1') },
    });
    assert.equal(matcher.holds(`text with ${VALUE}`), true);
    assert.equal(matcher.holds(b64(VALUE)), true);
    assert.equal(matcher.holds('shown-name-1'), false, 'its own name is not a secret');
    assert.equal(matcher.holds('nothing here'), false);
  });
});
