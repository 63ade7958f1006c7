/**
 * The result rules per operation type (src/gateway/operations/result-shape.ts; docs/agent-protocol.md, "Results"):
 * one row per rule, valid and invalid, and the FAILED result recorded in place of an invalid one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, type JsonObject, type MessageInitShape } from '@bufbuild/protobuf';
import { OperationResultSchema, RevisionSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { INVALID_RESULT_REASON, invalidResult, resultShapeProblem } from '../../src/gateway/operations/result-shape.js';

type Init = Omit<Exclude<MessageInitShape<typeof OperationResultSchema>, { $typeName: string }>, '$typeName'>;
const ok = (init: Init) => create(OperationResultSchema, { id: 'op-1', success: true, statusCode: 200, ...init });
const failed = (init: Init) =>
  create(OperationResultSchema, { id: 'op-1', success: false, statusCode: 404, reason: 'NotFound', message: 'gone', ...init });
const obj = (kind: string, name: string, apiVersion = 'v1'): JsonObject => ({ apiVersion, kind, metadata: { name, namespace: 'default' } });
const scale = (name: string): JsonObject => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: 3 } });
const rev = (n: number) => create(RevisionSchema, { revision: BigInt(n), name: `web-${n}` });

const request = (type: string, spec: Record<string, unknown>) => ({ id: 'op-1', account: 'acc', [type]: spec });
const target = { kind: 'Deployment', namespace: 'default', name: 'web' };

/** [what, type, spec, result, expected problem (undefined: valid)] */
const cases: [string, string, Record<string, unknown>, ReturnType<typeof ok>, RegExp | undefined][] = [
  [
    'apply: the applied objects',
    'apply',
    { manifests: '...' },
    ok({ objects: [obj('ConfigMap', 'a'), obj('Deployment', 'web', 'apps/v1')] }),
    undefined,
  ],
  ['apply: no object', 'apply', {}, ok({}), /at least one/],
  [
    'apply: one action per object',
    'apply',
    {},
    ok({ objects: [obj('ConfigMap', 'a'), obj('ConfigMap', 'b')], actions: ['configured', 'created'] }),
    undefined,
  ],
  [
    'apply: fewer actions than objects',
    'apply',
    {},
    ok({ objects: [obj('ConfigMap', 'a'), obj('ConfigMap', 'b')], actions: ['unchanged'] }),
    /one action per object: 2 objects, 1 actions/,
  ],
  [
    'apply: an action kubectl has no word for',
    'apply',
    {},
    ok({ objects: [obj('ConfigMap', 'a')], actions: ['updated'] }),
    /apply action "updated" is not one of created, configured, unchanged, serverside-applied, replaced/,
  ],
  ['get: with actions', 'get', { ...target }, ok({ objects: [obj('Deployment', 'web')], actions: ['unchanged'] }), /has no actions/],
  [
    'apply: an object without a name',
    'apply',
    {},
    ok({ objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }] }),
    /object 0 has no metadata.name/,
  ],
  [
    'apply: an object without a kind',
    'apply',
    {},
    ok({ objects: [{ apiVersion: 'v1', metadata: { name: 'a' } }] }),
    /object 0 has no apiVersion or kind/,
  ],
  [
    'apply: deleted filled in',
    'apply',
    {},
    ok({ objects: [obj('ConfigMap', 'a')], deleted: ['ConfigMap/default/a'] }),
    /successful apply result has no deleted/,
  ],
  ['delete by name: that object', 'delete', { ...target }, ok({ deleted: ['Deployment/default/web'] }), undefined],
  ['delete by name: nothing', 'delete', { ...target }, ok({}), /exactly that object/],
  ['delete by name: another object', 'delete', { ...target }, ok({ deleted: ['Deployment/default/api'] }), /exactly that object/],
  [
    'delete by selector: any number',
    'delete',
    { kind: 'Pod', labelSelector: 'app=web' },
    ok({ deleted: ['Pod/default/a', 'Pod/default/b', 'Namespace/x'] }),
    undefined,
  ],
  [
    'delete: a malformed reference',
    'delete',
    { kind: 'Pod', labelSelector: 'app=web' },
    ok({ deleted: ['just-a-name'] }),
    /not Kind\/namespace\/name/,
  ],
  [
    'delete: objects filled in',
    'delete',
    { ...target },
    ok({ deleted: ['Deployment/default/web'], objects: [obj('Deployment', 'web')] }),
    /has no objects/,
  ],
  ['scale: the Scale', 'scale', { ...target, replicas: 3 }, ok({ objects: [scale('web')] }), undefined],
  [
    'scale: the Deployment instead of its Scale',
    'scale',
    { ...target, replicas: 3 },
    ok({ objects: [obj('Deployment', 'web', 'apps/v1')] }),
    /autoscaling\/v1 Scale of the target, not apps\/v1 Deployment/,
  ],
  ['scale: another object', 'scale', { ...target, replicas: 3 }, ok({ objects: [scale('api')] }), /returned object "api"/],
  ['scale: two objects', 'scale', { ...target, replicas: 3 }, ok({ objects: [scale('web'), scale('web')] }), /exactly one object/],
  ['patch: the target', 'patch', { ...target }, ok({ objects: [obj('Deployment', 'web', 'apps/v1')] }), undefined],
  ['patch: nothing', 'patch', { ...target }, ok({}), /exactly one object/],
  ['rollout: the target', 'rollout', { ...target }, ok({ objects: [obj('Deployment', 'web', 'apps/v1')] }), undefined],
  ['get: another object', 'get', { ...target }, ok({ objects: [obj('Deployment', 'other')] }), /returned object "other"/],
  ['get: with logs', 'get', { ...target }, ok({ objects: [obj('Deployment', 'web')], logs: 'x' }), /has no logs/],
  ['list: items within the limit', 'list', { kind: 'Pod', limit: 2 }, ok({ objects: [obj('Pod', 'a'), obj('Pod', 'b')] }), undefined],
  ['list: empty', 'list', { kind: 'Pod' }, ok({}), undefined],
  ['list: over the limit', 'list', { kind: 'Pod', limit: 1 }, ok({ objects: [obj('Pod', 'a'), obj('Pod', 'b')] }), /limit 1 returned 2/],
  ['list: an item without kind', 'list', { kind: 'Pod' }, ok({ objects: [{ metadata: { name: 'a' } }] }), /no apiVersion or kind/],
  ['logs: text', 'logs', { pod: 'p' }, ok({ logs: 'line\n' }), undefined],
  ['logs: empty text', 'logs', { pod: 'p' }, ok({}), undefined],
  ['logs: objects filled in', 'logs', { pod: 'p' }, ok({ objects: [obj('Pod', 'p')] }), /has no objects/],
  ['history: increasing revisions', 'history', { ...target }, ok({ revisions: [rev(1), rev(2), rev(5)] }), undefined],
  ['history: out of order', 'history', { ...target }, ok({ revisions: [rev(2), rev(1)] }), /strictly increasing/],
  ['history: revision 0', 'history', { ...target }, ok({ revisions: [rev(0)] }), /1 or more/],
  ['failure: a reason', 'get', { ...target }, failed({}), undefined],
  ['failure: no reason', 'get', { ...target }, failed({ reason: '' }), /must give a reason/],
  ['failure: a failed apply lists what it applied', 'apply', {}, failed({ objects: [obj('ConfigMap', 'a')] }), undefined],
  [
    'failure: a failed apply says what it did to each object applied',
    'apply',
    {},
    failed({ objects: [obj('ConfigMap', 'a')], actions: ['created'] }),
    undefined,
  ],
  ['failure: a failed apply with an action but no object', 'apply', {}, failed({ actions: ['created'] }), /1 actions/],
  ['failure: a failed get carries no object', 'get', { ...target }, failed({ objects: [obj('Deployment', 'web')] }), /carries no objects/],
  [
    'failure: a failed delete carries no deleted',
    'delete',
    { ...target },
    failed({ deleted: ['Deployment/default/web'] }),
    /has no deleted/,
  ],
  [
    'another account',
    'get',
    { ...target },
    ok({ account: 'other', objects: [obj('Deployment', 'web')] }),
    /names account "other", but the operation is for "acc"/,
  ],
  ['the operation account named', 'get', { ...target }, ok({ account: 'acc', objects: [obj('Deployment', 'web')] }), undefined],
];

describe('operation result rules', () => {
  for (const [what, type, spec, result, expected] of cases) {
    test(what, () => {
      const problem = resultShapeProblem(type, request(type, spec), 'acc', result);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? '(valid)', expected);
    });
  }

  test('an invalid result is recorded as a failure that says what was wrong and what the agent claimed, without its payload', () => {
    const r = invalidResult(
      ok({ account: 'acc', statusCode: 200, message: 'deployment/web scaled to 3', objects: [obj('Deployment', 'web', 'apps/v1')] }),
      'a scale returns the autoscaling/v1 Scale',
    );
    assert.equal(r.success, false);
    assert.equal(r.reason, INVALID_RESULT_REASON);
    assert.equal(r.statusCode, 200);
    assert.equal(r.objects.length, 0);
    assert.match(
      r.message,
      /breaks the protocol \(a scale returns the autoscaling\/v1 Scale\); it reported success 200: deployment\/web scaled to 3\. The operation may have been applied\./,
    );
  });
});
