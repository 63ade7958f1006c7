/**
 * Redaction of Secret values inside operation text fields (secrets/secret-redaction.ts) and the sealed envelope
 * (secrets/envelope.ts): every form a manifest or a patch can take, and tampering. The redacted text is what every
 * reader of an operation sees, so the exact text is checked: what is hidden, what stays, and when the whole text goes.
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

describe('secret redaction, exactly', () => {
  const whole = (why: string) => ({ text: `${REDACTED} (manifests that ${why})`, secret: true });

  test('manifests that mention a Secret but hold none are returned as they were written', () => {
    for (const text of [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: secret-config\ndata:\n  a:   b\n',
      // A Secret with nothing to hide: no data, no stringData, no last-applied annotation.
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  labels: {app: web}\ntype: Opaque\n',
    ]) {
      assert.deepEqual(redactManifests(text), { text, secret: false });
    }
  });

  test('manifests that mention a Secret and do not parse are replaced whole, even when only one document is broken', () => {
    for (const text of [`kind: Secret\ndata: {k: ${V}\n  - ]`, `kind: Secret\ndata: {k: ${V}}\n---\nkind: ConfigMap\ndata: [unclosed\n`]) {
      assert.deepEqual(redactManifests(text), whole('mention a Secret and do not parse'), text);
    }
  });

  test('a kind spelled across an escaped line break in double quotes is a Secret too (LF or CRLF)', () => {
    // YAML joins `"Sec\` and `ret"` into `Secret`, with no letter of the word in the text and no \x or \u escape.
    assert.deepEqual(redactManifests(`apiVersion: v1\nkind: "Sec\\\n  ret"\nmetadata:\n  name: s\nstringData:\n  p: ${V}\n`), {
      text: 'apiVersion: v1\nkind: "Secret"\nmetadata:\n  name: s\nstringData:\n  p: "<redacted>"\n',
      secret: true,
    });
    assert.deepEqual(redactManifests(`kind: "Sec\\\r\n  ret"\r\nstringData:\r\n  p: ${V}\r\n`), {
      text: 'kind: "Secret"\nstringData:\n  p: "<redacted>"\n',
      secret: true,
    });
  });

  test('a document with a Secret and a YAML alias is replaced whole: the anchor may hold a value outside the Secret', () => {
    for (const text of [
      `kind: List\nv: &v ${V}\nitems:\n- kind: Secret\n  metadata: {name: s}\n  stringData: {p: *v}\n`,
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  labels: {a: &v ${V}}\nstringData: {p: *v}\n`,
      `kind: ConfigMap\nmetadata: {name: c}\n---\nkind: Secret\nmetadata: {name: s, labels: {a: &v ${V}}}\nstringData: {p: *v}\n`,
    ]) {
      assert.deepEqual(redactManifests(text), whole('hold a Secret and YAML aliases'), text);
    }
    // An alias in another document, or in a document without a Secret, changes nothing.
    const text = `kind: ConfigMap\nmetadata: {name: secret-config}\ndata: {a: &a x, b: *a}\n---\nkind: Secret\nstringData: {p: ${V}}\n`;
    assert.deepEqual(redactManifests(text), {
      text: 'kind: ConfigMap\nmetadata: { name: secret-config }\ndata: { a: &a x, b: *a }\n---\nkind: Secret\nstringData: { p: "<redacted>" }\n',
      secret: true,
    });
    assert.deepEqual(redactPatch('Secret', `{metadata: {labels: {a: &v ${V}}}, stringData: {p: *v}}`), { text: REDACTED, secret: true });
  });

  test('values a YAML 1.1 merge key brings into a Secret are values; a merge YAML cannot build hides the text', () => {
    assert.deepEqual(redactManifests(`%YAML 1.1\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n<<: {stringData: {p: ${V}}}\n`), {
      text: '%YAML 1.1\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n<<: { stringData: { p: "<redacted>" } }\n',
      secret: true,
    });
    assert.deepEqual(redactManifests('%YAML 1.1\n---\nkind: Secret\n<<: text\n'), whole('hold a Secret YAML cannot build'));
    assert.deepEqual(redactPatch('Secret', '%YAML 1.1\n---\n<<: text\n'), { text: REDACTED, secret: true });
  });

  test('data and stringData are hidden whatever they hold: a map, a plain string, nothing', () => {
    assert.deepEqual(redactManifests('kind: Secret\nmetadata:\n  name: s\nstringData:\ndata: opaque-text\n'), {
      text: 'kind: Secret\nmetadata:\n  name: s\nstringData: "<redacted>"\ndata: "<redacted>"\n',
      secret: true,
    });
  });

  test('the last-applied annotation alone is something to hide; the other annotations stay', () => {
    const text = `kind: Secret\nmetadata:\n  name: s\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"k":"eA=="}}'\n    keep: me\n`;
    assert.deepEqual(redactManifests(text), {
      text: 'kind: Secret\nmetadata:\n  name: s\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: "<redacted>"\n    keep: me\n',
      secret: true,
    });
  });

  test('copies: long values inside keys and strings, short values only whole and only as values; the identity stays', () => {
    const text = [
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      `  name: db-${V}`,
      `  namespace: ns-${V}`,
      '  generateName: "1234"',
      `  x-${V}: kept-value`,
      '  labels: {"1234": short-key, app: "1234", n: 5}',
      `  annotations: {note-${V}: x}`,
      'immutable: true',
      'type: "1234"',
      '"1234": top-key',
      `secret-${V}: top`,
      `other: {name: ${V}}`,
      'stringData:',
      '  pin: "1234"',
      '  a: v1',
      '  b: Secret',
      `  token-${V}: ${V}`,
      '',
    ].join('\n');
    assert.deepEqual(redactManifests(text), {
      text: [
        'apiVersion: v1',
        'kind: Secret',
        'metadata:',
        `  name: db-${V}`,
        `  namespace: ns-${V}`,
        '  generateName: "<redacted>"',
        '  "<redacted>": kept-value',
        '  labels: { "1234": short-key, app: "<redacted>", n: 5 }',
        '  annotations: { "<redacted>": x }',
        'immutable: true',
        'type: "<redacted>"',
        '"1234": top-key',
        '"<redacted>": top',
        'other: { name: "<redacted>" }',
        'stringData:',
        '  pin: "<redacted>"',
        '  a: "<redacted>"',
        '  b: "<redacted>"',
        '  "<redacted>": "<redacted>"',
        '',
      ].join('\n'),
      secret: true,
    });
    // Metadata that is a plain string holding a value is a copy like any other.
    assert.deepEqual(redactManifests(`kind: Secret\nmetadata: ${V}\nstringData: {p: ${V}}\n`), {
      text: 'kind: Secret\nmetadata: "<redacted>"\nstringData: { p: "<redacted>" }\n',
      secret: true,
    });
    // A key without a value is passed over.
    assert.deepEqual(redactManifests(`kind: Secret\nstringData: {p: ${V}}\n? lonely\n`), {
      text: 'kind: Secret\nstringData: { p: "<redacted>" }\nlonely: null\n',
      secret: true,
    });
  });
});
