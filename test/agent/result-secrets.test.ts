/**
 * What the agent takes out of an operation's result before it leaves the cluster (src/agent/operations/result-secrets.ts):
 * the request's Secret values from a failure's message — an apply's Secrets, a Secret patch's values, nothing for
 * other kinds and other operations — and every Secret's data from the result's objects.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { OperationSchema, PatchType, type Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { scrubbedObjects, withoutRequestValues } from '../../src/agent/operations/result-secrets.js';

const VALUE = 'hunter2-request-value';
const B64 = Buffer.from(VALUE).toString('base64');

const op = (spec: Operation['spec']) => create(OperationSchema, { id: 'op-1', account: 'a', spec });
const apply = (manifests: string) => op({ case: 'apply', value: { manifests } } as Operation['spec']);
const patch = (kind: string, body: string, type = PatchType.MERGE) =>
  op({ case: 'patch', value: { kind, namespace: 'ns', name: 'n', type, patch: body } } as Operation['spec']);

describe("a failure's message without the request's Secret values", () => {
  test("an apply's Secret: its base64 data value and the decoded value are redacted, the rest of the message stays", () => {
    const manifests = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: B64 } });
    const message = `the name ${VALUE} is invalid; data ${B64} refused`;
    const out = withoutRequestValues(apply(manifests), message);
    assert.ok(!out.includes(VALUE) && !out.includes(B64), out);
    assert.match(out, /^the name <redacted> is invalid; data <redacted> refused$/);
  });

  test("an apply's Secret in YAML with stringData: redacted", () => {
    const manifests = `apiVersion: v1\nkind: Secret\nmetadata: { name: s }\nstringData: { k: ${VALUE} }\n`;
    assert.equal(withoutRequestValues(apply(manifests), `echo ${VALUE}`), 'echo <redacted>');
  });

  test('an apply without a Secret: the message is returned as it is, even where it holds the same text', () => {
    const manifests = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: VALUE } });
    assert.equal(withoutRequestValues(apply(manifests), `echo ${VALUE}`), `echo ${VALUE}`);
  });

  test('a patch of a Secret: the values it sets are redacted', () => {
    const body = JSON.stringify({ stringData: { k: VALUE } });
    assert.equal(withoutRequestValues(patch('Secret', body), `refused ${VALUE}.`), 'refused <redacted>.');
  });

  test('a JSON patch of a Secret setting /data: the value and its decoded form are redacted', () => {
    const body = JSON.stringify([{ op: 'replace', path: '/data/k', value: B64 }]);
    const out = withoutRequestValues(patch('secret', body, PatchType.JSON), `${B64} / ${VALUE}`);
    assert.equal(out, '<redacted> / <redacted>');
  });

  test('a patch of another kind carries no Secret value: the message stays', () => {
    const body = JSON.stringify({ stringData: { k: VALUE } });
    assert.equal(withoutRequestValues(patch('ConfigMap', body), `refused ${VALUE}`), `refused ${VALUE}`);
  });

  test('operations that carry no manifest nor patch (delete, scale, get) leave the message as it is', () => {
    const message = `refused ${VALUE}`;
    for (const spec of [
      { case: 'delete', value: { kind: 'Secret', namespace: 'ns', name: VALUE } },
      { case: 'scale', value: { kind: 'Deployment', namespace: 'ns', name: 'd', replicas: 1 } },
      { case: 'get', value: { kind: 'Secret', namespace: 'ns', name: VALUE } },
    ] as Operation['spec'][]) {
      assert.equal(withoutRequestValues(op(spec), message), message, spec.case);
    }
    assert.equal(withoutRequestValues(op({ case: undefined, value: undefined }), message), message, 'no spec');
  });
});

describe("the result's objects", () => {
  test("a Secret's data, stringData and last-applied annotation are scrubbed; a ConfigMap is untouched; order kept", () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 's',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { k: B64 } }), keep: 'me' },
      },
      data: { k: B64 },
      stringData: { k: VALUE },
    };
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: VALUE } };
    const out = scrubbedObjects([configMap, secret]);
    assert.equal(out.length, 2);
    assert.deepEqual(out[0], configMap);
    const text = JSON.stringify(out[1]);
    assert.ok(!text.includes(VALUE) && !text.includes(B64), text);
    assert.equal((out[1] as { metadata: { name: string } }).metadata.name, 's');
    assert.equal((out[1] as { metadata: { annotations: Record<string, string> } }).metadata.annotations.keep, 'me');
  });

  test('no objects: an empty list', () => {
    assert.deepEqual(scrubbedObjects(undefined), []);
    assert.deepEqual(scrubbedObjects([]), []);
  });
});
