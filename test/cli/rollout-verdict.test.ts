/**
 * The pure parts of the new object commands, on objects and texts the sandbox does not produce on its own:
 * `rollout status` verdicts for every branch kubectl has (spec not observed, old replicas pending, partitions, OnDelete
 * strategies, another kind) and the patch checks of `outpost patch`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '@bufbuild/protobuf';
import { checkPatchDocument, PatchDocumentError } from '../../src/client/patch-document.js';
import { rolloutVerdict } from '../../src/client/rollout-status.js';

const deployment = (spec: JsonObject, status: JsonObject, generation = 2): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', generation },
  spec,
  status: { observedGeneration: 2, ...status },
});

test('Deployment verdicts follow kubectl: observed generation, updated, old pending, available, deadline', () => {
  assert.deepEqual(rolloutVerdict(deployment({ replicas: 3 }, {}, 3)), {
    state: 'waiting',
    message: 'Waiting for deployment spec update to be observed...',
  });
  assert.equal(
    rolloutVerdict(deployment({ replicas: 3 }, { replicas: 3, updatedReplicas: 1 })).message,
    'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...',
  );
  assert.equal(
    rolloutVerdict(deployment({ replicas: 3 }, { replicas: 5, updatedReplicas: 3 })).message,
    'Waiting for deployment "web" rollout to finish: 2 old replicas are pending termination...',
  );
  assert.equal(
    rolloutVerdict(deployment({ replicas: 3 }, { replicas: 3, updatedReplicas: 3, availableReplicas: 1 })).message,
    'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...',
  );
  assert.deepEqual(rolloutVerdict(deployment({ replicas: 3 }, { replicas: 3, updatedReplicas: 3, availableReplicas: 3 })), {
    state: 'done',
    message: 'deployment "web" successfully rolled out',
  });
  const stalled = deployment(
    { replicas: 3 },
    { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] },
  );
  assert.deepEqual(rolloutVerdict(stalled), { state: 'error', message: 'deployment "web" exceeded its progress deadline' });
});

test('StatefulSet and DaemonSet verdicts: readiness, partitions, revisions, and OnDelete refused', () => {
  const sts = (spec: JsonObject, status: JsonObject): JsonObject => ({
    kind: 'StatefulSet',
    metadata: { name: 'db', generation: 1 },
    spec: { replicas: 3, ...spec },
    status: { observedGeneration: 1, ...status },
  });
  assert.equal(rolloutVerdict(sts({}, { observedGeneration: 0 })).message, 'Waiting for statefulset spec update to be observed...');
  assert.equal(rolloutVerdict(sts({}, { readyReplicas: 1 })).message, 'Waiting for 2 pods to be ready...');
  const partitioned = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } };
  assert.equal(
    rolloutVerdict(sts(partitioned, { readyReplicas: 3, updatedReplicas: 0 })).message,
    'Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...',
  );
  assert.deepEqual(rolloutVerdict(sts(partitioned, { readyReplicas: 3, updatedReplicas: 1 })), {
    state: 'done',
    message: 'partitioned roll out complete: 1 new pods have been updated...',
  });
  assert.equal(
    rolloutVerdict(sts({}, { readyReplicas: 3, updatedReplicas: 1, updateRevision: 'db-2', currentRevision: 'db-1' })).message,
    'waiting for statefulset rolling update to complete 1 pods at revision db-2...',
  );
  assert.deepEqual(rolloutVerdict(sts({}, { readyReplicas: 3, currentReplicas: 3, updateRevision: 'db-2', currentRevision: 'db-2' })), {
    state: 'done',
    message: 'statefulset rolling update complete 3 pods at revision db-2...',
  });
  assert.equal(rolloutVerdict(sts({ updateStrategy: { type: 'OnDelete' } }, {})).state, 'error');

  const ds = (status: JsonObject, strategy = 'RollingUpdate'): JsonObject => ({
    kind: 'DaemonSet',
    metadata: { name: 'agent', generation: 1 },
    spec: { updateStrategy: { type: strategy } },
    status: { observedGeneration: 1, desiredNumberScheduled: 2, ...status },
  });
  assert.equal(
    rolloutVerdict(ds({ updatedNumberScheduled: 1 })).message,
    'Waiting for daemon set "agent" rollout to finish: 1 out of 2 new pods have been updated...',
  );
  assert.equal(
    rolloutVerdict(ds({ updatedNumberScheduled: 2, numberAvailable: 1 })).message,
    'Waiting for daemon set "agent" rollout to finish: 1 of 2 updated pods are available...',
  );
  assert.equal(rolloutVerdict(ds({ updatedNumberScheduled: 2, numberAvailable: 2 })).message, 'daemon set "agent" successfully rolled out');
  assert.deepEqual(rolloutVerdict(ds({}, 'OnDelete')), {
    state: 'error',
    message: 'rollout status is only available for RollingUpdate strategy type',
  });
  assert.equal(rolloutVerdict({ kind: 'ConfigMap', metadata: { name: 'x' } }).state, 'error');
});

test('patch documents: JSON and YAML re-encoded as JSON; wrong shapes refused with the reason', () => {
  assert.equal(checkPatchDocument('spec:\n  replicas: 2\n', 'strategic'), '{"spec":{"replicas":2}}');
  assert.equal(checkPatchDocument('{"metadata":{"labels":null}}', 'merge'), '{"metadata":{"labels":null}}');
  assert.equal(
    checkPatchDocument('[{"op":"move","from":"/a","path":"/b"},{"op":"test","path":"/c","value":1}]', 'json'),
    '[{"op":"move","from":"/a","path":"/b"},{"op":"test","path":"/c","value":1}]',
  );
  for (const [text, type, message] of [
    ['', 'merge', /the patch is empty/],
    ['{"a": [1, 2}', 'merge', /unable to parse "\{"a": \[1, 2\}"/],
    // The parser's line, without the colon that introduced the excerpt it leaves out.
    ['{a: b: c}', 'merge', /^unable to parse "\{a: b: c\}": .* at line 1, column 5$/],
    ['"just a string"', 'strategic', /must be a JSON object.*got a string/],
    ['[]', 'json', /has no operations/],
    ['[{"op":"move","path":"/b"}]', 'json', /operation 0: "move" needs a "from" path/],
    ['[{"op":"remove","path":"/a"}, 3]', 'json', /operation 1: must be an object/],
  ] as const) {
    assert.throws(
      () => checkPatchDocument(text, type),
      (err: Error) => err instanceof PatchDocumentError && message.test(err.message),
      `${type} ${text}`,
    );
  }
});
