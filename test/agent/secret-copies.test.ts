/**
 * The agent keeps a Secret's values in the cluster even when they were copied where the scrub once did not look, and
 * whatever the gateway lets through: against the sandbox, with a fake gateway that sends what a test says.
 * - A JSON patch of a Secret that copies its data is refused by the agent itself (any spelling of the kind), before
 *   any write.
 * - A Secret whose annotation and label already hold a value (written in the cluster, behind Outpost's back) reaches
 *   the stream, `get` and `list` without them; its ordinary annotations stay.
 * - A request's Secret value that the cluster echoes in its refusal is redacted from the failure's message.
 * Nothing of it crosses the stream or reaches the agent's log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { durationFromMs } from '@bufbuild/protobuf/wkt';
import { OperationSchema, PatchType, type Operation, type OperationResult } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { eventually } from '../../testkit/eventually.js';
import { startHarness, type Harness } from './helpers/harness.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MARK = 'agent-copy-marker-5b2e';
const MARK_B64 = Buffer.from(MARK).toString('base64');
const ECHOED = 'echoed-request-value-81c4';

let counter = 0;
async function run(h: Harness, spec: Operation['spec']): Promise<OperationResult> {
  const id = `secret-op-${++counter}`;
  h.gateway.sendOperation(create(OperationSchema, { id, account: 'sandbox', timeout: durationFromMs(30_000), spec }));
  return h.gateway.waitForResult(id, 60_000);
}

/** A JSON patch of the Secret `vault/marked`, its kind spelled `kind` (with `apiVersion`, '' for none). */
function patchMarked(h: Harness, ops: unknown[], kind = 'Secret', apiVersion = ''): Promise<OperationResult> {
  return run(h, {
    case: 'patch',
    value: { apiVersion, kind, namespace: 'vault', name: 'marked', type: PatchType.JSON, patch: JSON.stringify(ops) },
  } as Operation['spec']);
}

/** The newest object the stream carried for the Secret `name`. */
function streamed(h: Harness, name: string): Obj | undefined {
  let last: Obj | undefined;
  for (const m of h.gateway.messages) {
    if (m.message.case !== 'events') continue;
    for (const ev of m.message.value.events)
      if (ev.kind === 'Secret' && ev.name === name && ev.objectJson.length > 0) last = JSON.parse(Buffer.from(ev.objectJson).toString());
  }
  return last;
}

describe('Secret values copied outside data stay in the cluster (agent)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ seed: 'none', account: { kinds: ['Secret'] } });
    h.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vault' } });
    h.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'marked', namespace: 'vault', annotations: { 'meta.helm.sh/release-name': 'vault-release' } },
      type: 'Opaque',
      data: { password: MARK_B64 },
    });
    await eventually('the agent to stream the Secret', () => streamed(h, 'marked') !== undefined, { timeoutMs: 30_000 });
  });
  after(() => h?.close());

  test('a JSON patch copying its data is refused by the agent before any write, whatever the kind is called', async () => {
    const before = h.sandbox.store.get('v1', 'Secret', 'vault', 'marked') as Obj;
    for (const [kind, apiVersion] of [
      ['Secret', ''],
      ['secrets', 'v1'],
      ['secret', ''],
    ]) {
      const result = await patchMarked(h, [{ op: 'copy', from: '/data/password', path: '/metadata/annotations/leak' }], kind, apiVersion);
      assert.equal(result.success, false, kind);
      assert.equal(result.statusCode, 400);
      assert.equal(result.reason, 'BadRequest');
      assert.match(result.message, /would read the Secret's values/);
    }
    const test = await patchMarked(h, [{ op: 'test', path: '/data/password', value: MARK_B64 }]);
    assert.equal(test.statusCode, 400, 'a test of a value is an oracle for guesses');
    const after = h.sandbox.store.get('v1', 'Secret', 'vault', 'marked') as Obj;
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was written');
    // A JSON patch that reads no value still runs.
    const ok = await patchMarked(h, [{ op: 'add', path: '/metadata/labels', value: { tier: 'db' } }], 'secrets');
    assert.equal(ok.success, true, ok.message);
  });

  test('copies already in the cluster do not reach the stream, get or list; ordinary annotations do', async () => {
    const live = h.sandbox.store.get('v1', 'Secret', 'vault', 'marked') as Obj;
    h.sandbox.store.update({
      ...live,
      metadata: {
        ...live.metadata,
        labels: { ...live.metadata.labels, leaked: MARK },
        annotations: { ...live.metadata.annotations, 'copied-b64': MARK_B64, 'copied-plain': `value=${MARK}`, note: 'kept' },
      },
    });
    await eventually('the update to stream', () => streamed(h, 'marked')?.metadata.annotations?.note === 'kept', { timeoutMs: 30_000 });
    const sent = streamed(h, 'marked')!;
    assert.deepEqual(sent.metadata.annotations, { 'meta.helm.sh/release-name': 'vault-release', note: 'kept' });
    assert.deepEqual(sent.metadata.labels, { tier: 'db' });
    const get = await run(h, { case: 'get', value: { kind: 'Secret', namespace: 'vault', name: 'marked' } } as Operation['spec']);
    assert.equal(get.success, true, get.message);
    assert.deepEqual((get.objects[0] as Obj).metadata.annotations, { 'meta.helm.sh/release-name': 'vault-release', note: 'kept' });
    const list = await run(h, { case: 'list', value: { kind: 'secrets', namespace: 'vault' } } as Operation['spec']);
    assert.equal(list.success, true, list.message);
    assert.ok(!JSON.stringify(list.objects).includes(MARK) && !JSON.stringify(list.objects).includes(MARK_B64));
    assert.equal((list.objects[0] as Obj).metadata.labels.tier, 'db');
  });

  test("a request's Secret value echoed in the cluster's refusal is redacted from the failure's message", async () => {
    // Renaming through a patch: the API server refuses and quotes the new name — a value of a JSON patch of a Secret,
    // which the gateway stores sealed and shows redacted.
    const result = await patchMarked(h, [{ op: 'replace', path: '/metadata/name', value: ECHOED }]);
    assert.equal(result.success, false);
    assert.equal(result.statusCode, 400);
    assert.match(result.message, /the name of the object \(<redacted>\) does not match the name on the URL \(marked\)/);
  });

  test('nothing of it crossed the stream or reached the log', () => {
    const raw = h.gateway.rawBytes();
    for (const needle of [MARK, MARK_B64, ECHOED]) {
      assert.equal(raw.includes(needle), false, `${needle} crossed the stream`);
      assert.equal(h.logs.text().includes(needle), false, `${needle} reached the agent's log`);
    }
  });
});
