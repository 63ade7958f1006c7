/**
 * Redaction of Secret values inside operation text fields (secrets/secret-redaction.ts) and the sealed envelope
 * (secrets/envelope.ts): every form a manifest or a patch can take, and tampering.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConnectError } from '@connectrpc/connect';
import { parseAllDocuments } from 'yaml';
import { open, seal } from '../../src/gateway/secrets/envelope.js';
import { REDACTED, redactManifests, redactPatch } from '../../src/gateway/secrets/secret-redaction.js';

const V = 'v4lu3-that-must-not-show';

describe('secret redaction', () => {
  test('YAML documents: Secret data, stringData and the last-applied annotation; other kinds untouched', () => {
    const text = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"k":"${V}"}}'\n    keep: me\ndata:\n  k: ${V}\nstringData:\n  p: ${V}\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  k: ${V}\n`;
    const r = redactManifests(text);
    assert.equal(r.secret, true);
    const docs = parseAllDocuments(r.text).map((d) => d.toJS());
    assert.deepEqual(docs[0].data, { k: REDACTED });
    assert.deepEqual(docs[0].stringData, { p: REDACTED });
    assert.deepEqual(docs[0].metadata.annotations, { 'kubectl.kubernetes.io/last-applied-configuration': REDACTED, keep: 'me' });
    assert.deepEqual(docs[1].data, { k: V }, 'a ConfigMap is not a Secret');
  });

  test('JSON object, JSON array and List items', () => {
    for (const text of [
      JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: { k: V } }),
      JSON.stringify([
        { kind: 'ConfigMap', data: { a: 'b' } },
        { kind: 'Secret', stringData: { k: V } },
      ]),
      JSON.stringify({ kind: 'List', items: [{ kind: 'Secret', data: { k: V } }] }),
      `kind: List\nitems:\n- kind: Secret\n  data: {k: ${V}}\n`,
    ]) {
      const r = redactManifests(text);
      assert.equal(r.secret, true, text);
      assert.ok(!r.text.includes(V), r.text);
      assert.ok(r.text.includes(REDACTED));
    }
  });

  test('a kind spelled with escapes is still a Secret (YAML double quotes, JSON)', () => {
    for (const text of [
      `kind: "Secr\\u0065t"\ndata:\n  k: ${V}\n`,
      `{"kind":"\\u0053ecret","stringData":{"k":"${V}"}}`,
      `kind: "\\x53ecret"\ndata: {k: ${V}}\n`,
    ]) {
      const r = redactManifests(text);
      assert.equal(r.secret, true, text);
      assert.ok(!r.text.includes(V), r.text);
    }
  });

  test('no Secret: unchanged; unparseable text mentioning a Secret: hidden whole', () => {
    const plain = 'apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n';
    assert.deepEqual(redactManifests(plain), { text: plain, secret: false });
    const broken = `kind: Secret\ndata: {k: ${V}\n  - ]`;
    const r = redactManifests(broken);
    assert.equal(r.secret, true);
    assert.ok(!r.text.includes(V));
    assert.deepEqual(redactManifests('not: [valid'), { text: 'not: [valid', secret: false });
  });

  test('patches of a Secret: merge, strategic, JSON patch, unparseable; patches of other kinds untouched', () => {
    const merge = redactPatch('Secret', JSON.stringify({ data: { k: V }, metadata: { labels: { a: 'b' } } }));
    assert.deepEqual(JSON.parse(merge.text), { data: { k: REDACTED }, metadata: { labels: { a: 'b' } } });
    const jsonPatch = redactPatch(
      'Secret',
      JSON.stringify([
        { op: 'replace', path: '/data/k', value: V },
        { op: 'remove', path: '/data/x' },
      ]),
    );
    assert.deepEqual(JSON.parse(jsonPatch.text), [
      { op: 'replace', path: '/data/k', value: REDACTED },
      { op: 'remove', path: '/data/x' },
    ]);
    assert.deepEqual(redactPatch('Secret', '{not json'), { text: REDACTED, secret: true });
    const other = JSON.stringify({ data: { k: V } });
    assert.deepEqual(redactPatch('ConfigMap', other), { text: other, secret: false });
  });

  test('a Secret is one whatever its kind is called: patches and manifests with the kind the agent would resolve', () => {
    for (const kind of ['secrets', 'secret', 'v1/Secret', 'SECRET']) {
      const r = redactPatch(kind, JSON.stringify([{ op: 'add', path: '/data/k', value: V }]));
      assert.equal(r.secret, true, kind);
      assert.ok(!r.text.includes(V), `${kind}: ${r.text}`);
    }
    for (const text of [`kind: secret\nstringData: {k: ${V}}\n`, JSON.stringify({ kind: 'SECRETS', data: { k: V } })]) {
      const r = redactManifests(text);
      assert.equal(r.secret, true, text);
      assert.ok(!r.text.includes(V), r.text);
    }
  });

  test("a string of a Secret that holds one of its values is a value too: a manifest's or merge patch's copies", () => {
    const text = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: n\n  labels: {app: web}\n  annotations:\n    leak: "${V}"\n    inside: "v=${Buffer.from(V).toString('base64')};"\n    keep: me\n  finalizers: [example.com/${V}]\ndata:\n  k: ${Buffer.from(V).toString('base64')}\n`;
    const r = redactManifests(text);
    assert.ok(!r.text.includes(V) && !r.text.includes(Buffer.from(V).toString('base64')), r.text);
    const doc = parseAllDocuments(r.text)[0]!.toJS();
    assert.deepEqual(doc.metadata.annotations, { leak: REDACTED, inside: REDACTED, keep: 'me' });
    assert.deepEqual(doc.metadata.labels, { app: 'web' });
    assert.deepEqual(doc.metadata.finalizers, [REDACTED]);
    assert.equal(doc.metadata.name, 's');
    const merge = redactPatch('Secret', JSON.stringify({ stringData: { p: V }, metadata: { annotations: { copy: V, note: 'x' } } }));
    assert.deepEqual(JSON.parse(merge.text).metadata.annotations, { copy: REDACTED, note: 'x' });
  });

  test('an envelope opens only with its key and in its context', () => {
    const key = { id: 'k1', key: randomBytes(32) };
    const sealed = seal(V, key, 'op:1:acc');
    assert.ok(!JSON.stringify(sealed).includes(V));
    assert.equal(open(sealed, key, 'op:1:acc'), V);
    assert.throws(() => open(sealed, key, 'op:2:acc'), ConnectError, 'moved to another row');
    assert.throws(() => open(sealed, { id: 'k1', key: randomBytes(32) }, 'op:1:acc'), ConnectError, 'another key');
    const flipped = {
      ...sealed,
      data: Buffer.from(Buffer.from(sealed.data, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64'),
    };
    assert.throws(() => open(flipped, key, 'op:1:acc'), ConnectError, 'altered');
  });
});
