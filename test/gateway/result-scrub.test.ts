/**
 * The gateway's scrub of operation results (src/gateway/operations/result-scrub.ts), the defence in depth behind the
 * agent's own: before a result is stored or shown, Secret data goes from its objects (by the object's own kind, by
 * the request's kind for objects without one, inside `List` items) and the Secret values the sealed request carried
 * go from its message — whatever an agent sent. These are unit tests of the three functions; the end-to-end path is
 * test/gateway/operations-secrets.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { type Operation, OperationSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { createOperationSealer, SEALED_KEY } from '../../src/gateway/operations/operation-sealing.js';
import { redactRequestValues, requestKind, scrubResultSecrets } from '../../src/gateway/operations/result-scrub.js';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { createSilentLogger } from '../../src/shared/logger.js';

type Obj = Record<string, any>;

const MARK = 'hunter2-long-secret-value';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const secret = (extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: 'prod' },
  data: { password: b64(MARK) },
  ...extra,
});
const configMap = (): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { colour: 'blue' } });
const SCRUBBED_SECRET = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'prod' } };

describe('the kind an operation request names', () => {
  test('each read or change names its kind; a request without one, or without a request, names none', () => {
    assert.equal(requestKind(undefined), '');
    assert.equal(requestKind({}), '');
    assert.equal(requestKind({ id: 'op', account: 'a', apply: { manifests: 'kind: Secret' } }), '');
    assert.equal(requestKind({ logs: { kind: 'Secret' } }), '', 'logs are not among the specs that name a kind');
    for (const spec of ['get', 'list', 'patch', 'scale', 'rollout', 'delete']) {
      assert.equal(requestKind({ id: 'op', [spec]: { kind: `Kind-${spec}` } }), `Kind-${spec}`, spec);
    }
  });

  test('a spec without a string kind is passed over for the next one that has one', () => {
    assert.equal(requestKind({ delete: { kind: 'secrets' } }), 'secrets');
    assert.equal(requestKind({ get: {}, list: { kind: 'Secret' } }), 'Secret');
    assert.equal(requestKind({ get: { kind: 7 }, patch: { kind: 'v1/Secret' } }), 'v1/Secret');
    assert.equal(requestKind({ get: { kind: null } }), '');
  });
});

describe("removing Secret data from a result's objects", () => {
  test('a result without an array of objects is left as it is', () => {
    for (const result of [{}, { objects: {} }, { objects: 'Secret' }, { objects: null }, { success: true }] as Obj[]) {
      const before = structuredClone(result);
      assert.equal(scrubResultSecrets(result, 'Secret'), 0);
      assert.deepEqual(result, before);
    }
  });

  test("an object of kind Secret loses its data whatever the request's kind; other kinds keep theirs", () => {
    const result: Obj = { objects: [secret(), configMap(), secret({ stringData: { token: MARK } })] };
    assert.equal(scrubResultSecrets(result, 'ConfigMap'), 2);
    assert.deepEqual(result.objects, [SCRUBBED_SECRET, configMap(), SCRUBBED_SECRET]);
  });

  test("an object's own kind wins over the request's: a ConfigMap in the answer to a Secret request keeps its data", () => {
    const result: Obj = { objects: [configMap()] };
    assert.equal(scrubResultSecrets(result, 'Secret'), 0);
    assert.deepEqual(result.objects, [configMap()]);
  });

  test("an object without a kind is judged by the request's kind, in any spelling", () => {
    for (const kind of ['Secret', 'secrets', 'v1/Secret']) {
      const { kind: _, ...bare } = secret();
      const result: Obj = { objects: [bare] };
      assert.equal(scrubResultSecrets(result, kind), 1, kind);
      assert.deepEqual(result.objects, [{ apiVersion: 'v1', metadata: { name: 'db', namespace: 'prod' } }], kind);
    }
    const { kind: _, ...bare } = secret();
    const result: Obj = { objects: [bare] };
    assert.equal(scrubResultSecrets(result, 'ConfigMap'), 0);
    assert.deepEqual(result.objects[0].data, { password: b64(MARK) });
  });

  test('the items of a List are scrubbed, by their own kind or else by the request kind, however deep', () => {
    const { kind: _, ...bare } = secret();
    const result: Obj = {
      objects: [{ apiVersion: 'v1', kind: 'List', items: [secret(), configMap(), { kind: 'List', items: [bare, secret()] }] }],
    };
    assert.equal(scrubResultSecrets(result, 'Secret'), 3);
    assert.deepEqual(result.objects, [
      {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          SCRUBBED_SECRET,
          configMap(),
          { kind: 'List', items: [{ apiVersion: 'v1', metadata: { name: 'db', namespace: 'prod' } }, SCRUBBED_SECRET] },
        ],
      },
    ]);
    // A List under another request's kind: only its Secrets lose their data.
    const other: Obj = { objects: [{ kind: 'List', items: [secret(), configMap()] }] };
    assert.equal(scrubResultSecrets(other, 'ConfigMap'), 1);
    assert.deepEqual(other.objects, [{ kind: 'List', items: [SCRUBBED_SECRET, configMap()] }]);
  });

  test('only the objects that had something to remove are counted', () => {
    const result: Obj = { objects: [secret(), SCRUBBED_SECRET, secret()] };
    assert.equal(scrubResultSecrets(result, 'Secret'), 2);
    assert.deepEqual(result.objects, [SCRUBBED_SECRET, SCRUBBED_SECRET, SCRUBBED_SECRET]);
  });

  test('entries that are not objects are passed over, even in the answer to a Secret request', () => {
    const result: Obj = { objects: [null, 'Secret', 7, true, secret()] };
    assert.equal(scrubResultSecrets(result, 'Secret'), 1);
    assert.deepEqual(result.objects, [null, 'Secret', 7, true, SCRUBBED_SECRET]);
  });
});

describe("redacting the request's Secret values from a result's message", () => {
  const sealer = createOperationSealer(createKeyRing({ insecure: true, logger: createSilentLogger() }));
  /** The stored row of `operation`, sealed as the gateway stores it. */
  const rowOf = async (operation: Operation) => {
    const stored = await sealer.seal(operation);
    return { id: operation.id, account: operation.account, request: stored.requestJson };
  };
  const apply = create(OperationSchema, {
    id: 'op-apply',
    account: 'acct',
    spec: {
      case: 'apply',
      value: { manifests: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: ${MARK}\n` },
    },
  });
  const patch = create(OperationSchema, {
    id: 'op-patch',
    account: 'acct',
    spec: { case: 'patch', value: { kind: 'Secret', name: 'db', patch: JSON.stringify({ stringData: { password: MARK } }) } },
  });
  /** A sealer that must not be asked, or that cannot open (the key left the key file). */
  const failingSealer = () => ({
    opened: 0,
    async open(): Promise<Operation> {
      this.opened++;
      throw new Error('cannot open');
    },
  });

  test('the values of a sealed apply or Secret patch, echoed by the cluster, are redacted', async () => {
    for (const operation of [apply, patch]) {
      const result: Obj = { success: false, message: `Secret "db" is invalid: data[password]: Invalid value: "${MARK}"` };
      assert.equal(await redactRequestValues(result, await rowOf(operation), sealer), true, operation.id);
      assert.equal(result.message, 'Secret "db" is invalid: data[password]: Invalid value: "<redacted>"', operation.id);
    }
  });

  test("a message that holds none of the request's values is left as it is", async () => {
    for (const operation of [apply, patch]) {
      const result: Obj = { success: false, message: 'admission webhook denied the request' };
      assert.equal(await redactRequestValues(result, await rowOf(operation), sealer), false, operation.id);
      assert.equal(result.message, 'admission webhook denied the request', operation.id);
    }
  });

  test('when the sealed fields cannot be opened, the whole message is replaced', async () => {
    const row = await rowOf(apply);
    const result: Obj = { success: false, message: `Invalid value: "${MARK}"` };
    assert.equal(await redactRequestValues(result, row, failingSealer()), true);
    assert.equal(
      result.message,
      '<redacted> (the message of an operation that carried Secret values, which this replica cannot open to check it)',
    );
  });

  test('a row stored without sealed fields, or without a request object, is not opened', async () => {
    const plain = await sealer.seal(
      create(OperationSchema, { id: 'op-get', account: 'acct', spec: { case: 'get', value: { kind: 'Secret', name: 'db' } } }),
    );
    assert.equal(plain.sealed, false);
    const failing = failingSealer();
    const requests: unknown[] = [plain.requestJson, null, undefined, `{"${SEALED_KEY}":{}}`, [SEALED_KEY]];
    for (const request of requests) {
      const result: Obj = { success: false, message: `Invalid value: "${MARK}"` };
      assert.equal(await redactRequestValues(result, { id: 'op-get', account: 'acct', request } as never, failing), false);
      assert.equal(result.message, `Invalid value: "${MARK}"`);
    }
    assert.equal(failing.opened, 0);
  });

  test('a result without a message, or with an empty one, is left as it is even when the row cannot be opened', async () => {
    const row = await rowOf(apply);
    const failing = failingSealer();
    for (const result of [{ success: false }, { success: false, message: '' }, { success: false, message: 42 }] as Obj[]) {
      const before = structuredClone(result);
      assert.equal(await redactRequestValues(result, row, failing), false);
      assert.deepEqual(result, before);
    }
    assert.equal(failing.opened, 0);
  });

  test('a sealed row whose operation opens as neither an apply nor a patch has no values to redact', async () => {
    const get = create(OperationSchema, { id: 'op-apply', account: 'acct', spec: { case: 'get', value: { kind: 'Secret', name: 'db' } } });
    const none = create(OperationSchema, { id: 'op-apply', account: 'acct' });
    for (const opened of [get, none]) {
      const result: Obj = { success: false, message: `secrets "${MARK}" not found` };
      assert.equal(await redactRequestValues(result, await rowOf(apply), { open: async () => opened }), false);
      assert.equal(result.message, `secrets "${MARK}" not found`);
    }
  });
});
