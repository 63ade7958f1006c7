/**
 * The agent's check of the cluster's answers about Secrets under `kubeProxy.secrets: deny`
 * (src/agent/kube-proxy/secret-answer.ts), unit by unit: which answers go back (metadata-only forms, a Status, a
 * write's answer without its values), which are refused before anything goes back (a successful read of a Secret as
 * an object, an encoding or a content type the agent cannot check) and which are cut at the first value breaking the
 * rules, with the exact reason. The answers are in-memory streams; test/agent/kube-proxy-secret-answers.test.ts drives
 * the same rules through the proxy and a real HTTP server.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { type CheckedAnswer, checkSecretAnswer, type SecretAnswerMode } from '../../src/agent/kube-proxy/secret-answer.js';

type Obj = Record<string, any>;

const MARK = Buffer.from('secret-answer-marker-value').toString('base64');
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const REFUSAL = 'reading a Secret as an object is refused';
const SECRET: Obj = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'db', namespace: 'vault' }, data: { password: MARK } };
const SCRUBBED: Obj = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'db', namespace: 'vault' } };
const partialMeta = (annotations: Obj = {}): Obj => ({
  kind: 'PartialObjectMetadata',
  apiVersion: 'meta.k8s.io/v1',
  metadata: { name: 'db', namespace: 'vault', annotations },
});
const STATUS = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 };

/** A cluster answer: status, headers, body (a JSON value, text as it is, or chunks of text one after the other). */
function clusterAnswer(status: number | undefined, body: unknown, headers: Obj = { 'content-type': 'application/json' }): IncomingMessage {
  const chunks =
    Array.isArray(body) && body.every((c) => typeof c === 'string') && body.length > 0
      ? body
      : [typeof body === 'string' ? body : JSON.stringify(body)];
  const stream = Readable.from(chunks.filter((c) => c !== '').map((c) => Buffer.from(c)));
  return Object.assign(stream, { statusCode: status, headers }) as unknown as IncomingMessage;
}

/** What goes back: the refusal, or the values that went back and the error the body ended with (if any). */
async function outcome(checked: CheckedAnswer): Promise<{ refusal?: string; code?: string; values?: unknown[]; error?: string }> {
  if ('refusal' in checked) return { refusal: checked.refusal, code: checked.code };
  assert.equal(checked.rewritten, true, 'the body is a checked copy');
  let text = '';
  // Flowing: what went back before an error is seen as it was sent.
  const error = await new Promise<string | undefined>((resolve) => {
    checked.body.on('data', (chunk) => (text += String(chunk)));
    checked.body.on('error', (err) => resolve(err.message));
    checked.body.on('end', () => resolve(undefined));
  });
  return error === undefined ? { values: parse(text) } : { values: parse(text), error };
}
const parse = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const check = (mode: SecretAnswerMode, res: IncomingMessage, method = 'GET') => outcome(checkSecretAnswer(res, method, mode, REFUSAL));
const metadata = (body: unknown, status = 200) => check('metadata', clusterAnswer(status, body));
const write = (body: unknown, status = 200) => check('write', clusterAnswer(status, body));

describe('the read of one Secret as an object', () => {
  test('a success (any 2xx) is refused; a refusal of the cluster goes back as it is', async () => {
    for (const status of [200, 201, 299]) {
      assert.deepEqual(await check('object', clusterAnswer(status, SECRET)), { refusal: REFUSAL, code: 'refused' }, String(status));
    }
    for (const status of [199, 300, 404]) {
      assert.deepEqual(await check('object', clusterAnswer(status, STATUS)), { values: [STATUS] }, String(status));
    }
    assert.deepEqual(await check('object', clusterAnswer(undefined, STATUS)), { values: [STATUS] }, 'no status: not a success');
  });
});

describe('answers the agent cannot check', () => {
  test('a compressed body is refused, the encoding named (bounded)', async () => {
    assert.deepEqual(
      await check('metadata', clusterAnswer(200, STATUS, { 'content-type': 'application/json', 'content-encoding': 'GZIP' })),
      {
        refusal: 'the cluster answered a request on Secrets with content-encoding "gzip", which the agent cannot check',
        code: 'internal',
      },
    );
    const long = `x${'y'.repeat(100)}`;
    assert.deepEqual(await check('write', clusterAnswer(200, STATUS, { 'content-type': 'application/json', 'content-encoding': long })), {
      refusal: `the cluster answered a request on Secrets with content-encoding "${long.slice(0, 40)}", which the agent cannot check`,
      code: 'internal',
    });
  });

  test('a body of another content type is refused, the type named (bounded); an identity encoding in any case is no encoding', async () => {
    assert.deepEqual(await metadataOf({ 'content-type': 'Text/Plain; charset=utf-8' }), {
      refusal: 'the cluster answered a request on Secrets with "text/plain", which the agent cannot check for Secret values',
      code: 'internal',
    });
    assert.deepEqual(await metadataOf({}), {
      refusal: 'the cluster answered a request on Secrets with "", which the agent cannot check for Secret values',
      code: 'internal',
    });
    const long = `application/${'z'.repeat(100)}`;
    assert.deepEqual(await metadataOf({ 'content-type': long }), {
      refusal: `the cluster answered a request on Secrets with "${long.slice(0, 80)}", which the agent cannot check for Secret values`,
      code: 'internal',
    });
    assert.deepEqual(await metadataOf({ 'content-type': ' Application/JSON ; charset=utf-8', 'content-encoding': 'IDENTITY' }), {
      values: [STATUS],
    });
  });

  test('an answer without a body is not looked at: HEAD, 204, 304, an explicit zero length', async () => {
    const plain = { 'content-type': 'text/plain', 'content-encoding': 'gzip' };
    assert.deepEqual(await check('metadata', clusterAnswer(200, '', plain), 'HEAD'), { values: [] });
    assert.deepEqual(await check('write', clusterAnswer(204, '', plain), 'DELETE'), { values: [] });
    assert.deepEqual(await check('metadata', clusterAnswer(304, '', plain)), { values: [] });
    assert.deepEqual(await check('metadata', clusterAnswer(200, '', { ...plain, 'content-length': '0' })), { values: [] });
    // A length that is not zero is a body.
    assert.equal((await check('metadata', clusterAnswer(200, '', { ...plain, 'content-length': '10' }))).code, 'internal');
  });

  async function metadataOf(headers: Obj) {
    return check('metadata', clusterAnswer(200, STATUS, headers));
  }
});

describe('a metadata-only read', () => {
  test('PartialObjectMetadata, its list, and a Table whose rows hold none or only metadata go back, last-applied removed', async () => {
    const list = {
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: {},
      items: [partialMeta({ [LAST_APPLIED]: '{}', a: 'b' })],
    };
    assert.deepEqual(await metadata(list), { values: [{ ...list, items: [partialMeta({ a: 'b' })] }] });
    assert.deepEqual(await metadata(partialMeta({ [LAST_APPLIED]: '{}' })), { values: [partialMeta({})] });
    const table = {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      rows: [{ cells: ['a'] }, { cells: ['b'], object: null }, { cells: ['c'], object: partialMeta({ [LAST_APPLIED]: '{}' }) }],
    };
    assert.deepEqual(await metadata(table), {
      values: [{ ...table, rows: [{ cells: ['a'] }, { cells: ['b'], object: null }, { cells: ['c'], object: partialMeta({}) }] }],
    });
    assert.deepEqual(await metadata(STATUS, 404), { values: [STATUS] });
  });

  test('watch events carrying those go back; an event carrying a Secret cuts the answer there', async () => {
    const events = [
      { type: 'ADDED', object: partialMeta({ [LAST_APPLIED]: '{}' }) },
      { type: 'BOOKMARK', object: { kind: 'Table', rows: [] } },
      { type: 'MODIFIED', object: SECRET },
      { type: 'DELETED', object: partialMeta() },
    ];
    assert.deepEqual(await metadata(events.map((e) => `${JSON.stringify(e)}\n`)), {
      values: [
        { type: 'ADDED', object: partialMeta({}) },
        { type: 'BOOKMARK', object: { kind: 'Table', rows: [] } },
      ],
      error: 'an answer of kind "Secret" where only metadata may come back',
    });
  });

  test('a value with a kind, or without a type or an object, is not a watch event', async () => {
    const cases: Array<[unknown, string]> = [
      [{ kind: 'Secret', type: 'ADDED', object: partialMeta() }, 'an answer of kind "Secret" where only metadata may come back'],
      [{ object: partialMeta() }, 'an answer of kind "undefined" where only metadata may come back'],
      [{ type: 'ADDED' }, 'an answer of kind "undefined" where only metadata may come back'],
      [{ type: 7, object: partialMeta() }, 'an answer of kind "undefined" where only metadata may come back'],
      [{ type: 'ADDED', object: [] }, 'an answer that is not a JSON object'],
      [[partialMeta()], 'an answer that is not a JSON object'],
    ];
    for (const [value, error] of cases) assert.deepEqual(await metadata(value), { values: [], error }, JSON.stringify(value));
  });

  test('anything else is cut, with the reason', async () => {
    const long = 'K'.repeat(100);
    const cases: Array<[unknown, string]> = [
      [SECRET, 'an answer of kind "Secret" where only metadata may come back'],
      [{ kind: 'SecretList', items: [SECRET] }, 'an answer of kind "SecretList" where only metadata may come back'],
      [{ kind: long }, `an answer of kind ${JSON.stringify(long).slice(0, 80)} where only metadata may come back`],
      [{ kind: 'PartialObjectMetadataList', items: {} }, 'a PartialObjectMetadataList without items'],
      [{ kind: 'PartialObjectMetadataList', items: [SECRET] }, 'a Table row or list item that is not PartialObjectMetadata'],
      [{ kind: 'PartialObjectMetadataList', items: [null] }, 'a Table row or list item that is not PartialObjectMetadata'],
      [
        { kind: 'PartialObjectMetadataList', items: [{ kind: 'Secret', apiVersion: 'v1', metadata: { name: 'db' } }] },
        'a Table row or list item that is not PartialObjectMetadata',
      ],
      [{ kind: 'PartialObjectMetadata', metadata: {}, data: { k: MARK } }, 'a Table row or list item that is not PartialObjectMetadata'],
      [{ kind: 'Table', rows: {} }, 'a Table without rows'],
      [{ kind: 'Table', rows: ['row'] }, 'a Table row that is not an object'],
      [{ kind: 'Table', rows: [null] }, 'a Table row that is not an object'],
      [{ kind: 'Table', rows: [[]] }, 'a Table row that is not an object'],
      [{ kind: 'Table', rows: [{ cells: [], object: SECRET }] }, 'a Table row or list item that is not PartialObjectMetadata'],
      [{ kind: 'Table', rows: [{ cells: [], object: 'text' }] }, 'a Table row or list item that is not PartialObjectMetadata'],
      [{ kind: 'Table', rows: [{ cells: [], object: [] }] }, 'a Table row or list item that is not PartialObjectMetadata'],
    ];
    for (const [value, error] of cases) {
      const got = await metadata(value);
      assert.deepEqual(got, { values: [], error }, JSON.stringify(value).slice(0, 120));
    }
  });
});

describe("a write's answer", () => {
  test('a Secret comes back without its values; a list of them too; a Status as it is', async () => {
    const annotated = {
      ...SECRET,
      metadata: { ...SECRET.metadata, annotations: { [LAST_APPLIED]: '{}', a: 'b' } },
      stringData: { x: 'y' },
    };
    assert.deepEqual(await write(annotated, 201), {
      values: [{ ...SCRUBBED, metadata: { ...SCRUBBED.metadata, annotations: { a: 'b' } } }],
    });
    assert.deepEqual(await write(STATUS, 404), { values: [STATUS] });
    const list = { kind: 'SecretList', apiVersion: 'v1', items: [SECRET, null, 'text', SECRET] };
    assert.deepEqual(await write(list), { values: [{ ...list, items: [SCRUBBED, null, 'text', SCRUBBED] }] });
  });

  test('anything else is cut, with the reason', async () => {
    const long = 'K'.repeat(100);
    const cases: Array<[unknown, string]> = [
      [[SECRET], 'an answer that is not a JSON object'],
      [{ kind: 'Table', rows: [] }, 'an answer of kind "Table" to a write of a Secret'],
      [{ kind: 'SecretList', items: {} }, 'an answer of kind "SecretList" to a write of a Secret'],
      [{ kind: 'ListOfSecrets', items: [SECRET] }, 'an answer of kind "ListOfSecrets" to a write of a Secret'],
      [{ kind: 7, items: [SECRET] }, 'an answer of kind "7" to a write of a Secret'],
      [{ data: { k: MARK } }, 'an answer of kind "undefined" to a write of a Secret'],
      [{ kind: long }, `an answer of kind ${JSON.stringify(long).slice(0, 80)} to a write of a Secret`],
    ];
    for (const [value, error] of cases) assert.deepEqual(await write(value), { values: [], error }, JSON.stringify(value).slice(0, 120));
  });

  test('a value larger than the bound is cut before anything of it goes back', async () => {
    const big = { ...SECRET, metadata: { ...SECRET.metadata, labels: { big: 'x'.repeat(8 * 1024 * 1024) } } };
    assert.deepEqual(await write(big), { values: [], error: `one JSON value of the answer is larger than ${8 * 1024 * 1024} bytes` });
  });
});
