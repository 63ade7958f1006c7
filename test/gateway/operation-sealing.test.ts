/**
 * How an operation is kept in `operations.request` (src/gateway/operations/operation-sealing.ts): an apply or Secret
 * patch carrying Secret values is stored redacted, with the original fields sealed to the operation's id and account;
 * opening a row gives back the real operation, and a retry under the same id is compared with it, sealed values
 * included. Unit tests over real key rings; the end-to-end path is test/gateway/operations-secrets.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { durationFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { type Operation, OperationSchema, PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { createOperationSealer, SEALED_KEY } from '../../src/gateway/operations/operation-sealing.js';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { createSilentLogger } from '../../src/shared/logger.js';

type Obj = Record<string, any>;

const MARK = 'hunter2-sealed-value';
const logger = createSilentLogger();
const sealer = createOperationSealer(createKeyRing({ insecure: true, logger }));
/** Another replica: its own ephemeral key, none of this one's. */
const otherReplica = createOperationSealer(createKeyRing({ insecure: true, logger }));
/** A secure gateway without secrets.keyFile. */
const keyless = createOperationSealer(createKeyRing({ insecure: false, logger }));

const MANIFESTS = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: ${MARK}\n`;
const REDACTED_MANIFESTS = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "<redacted>"\n';
const PATCH = JSON.stringify({ stringData: { password: MARK } });
const REDACTED_PATCH = '{ "stringData": { "password": "<redacted>" } }\n';

const apply = (manifests = MANIFESTS, id = 'op-1', account = 'acct'): Operation =>
  create(OperationSchema, { id, account, timeout: durationFromMs(30_000), spec: { case: 'apply', value: { manifests } } });
const patch = (kind = 'Secret', text = PATCH, id = 'op-2'): Operation =>
  create(OperationSchema, {
    id,
    account: 'acct',
    spec: { case: 'patch', value: { kind, name: 'db', type: PatchType.MERGE, patch: text } },
  });
const rowOf = async (operation: Operation, by = sealer) => {
  const stored = await by.seal(operation);
  return { id: operation.id, account: operation.account, request: stored.requestJson };
};
const rejectsWith = (code: Code, message: RegExp) => (err: unknown) =>
  err instanceof ConnectError && err.code === code && message.test(err.rawMessage);

describe('storing an operation', () => {
  test('an apply carrying a Secret is stored redacted, its manifests sealed beside; the hash covers the redacted form', async () => {
    const stored = await sealer.seal(apply());
    assert.equal(stored.sealed, true);
    const { [SEALED_KEY]: envelope, ...json } = stored.requestJson as Obj;
    assert.equal(SEALED_KEY, 'outpostSealed');
    assert.deepEqual(json, { id: 'op-1', account: 'acct', timeout: '30s', apply: { manifests: REDACTED_MANIFESTS } });
    assert.deepEqual(Object.keys(envelope).sort(), ['data', 'iv', 'kid', 'tag', 'v']);
    assert.ok(!JSON.stringify(stored.requestJson).includes(MARK));
    assert.match(stored.requestHash, /^[A-Za-z0-9_-]{43}$/, 'a SHA-256 in base64url');
    // The same operation with another value has the same hash: a hash of the values would be an oracle for them.
    const other = await sealer.seal(apply(MANIFESTS.replace(MARK, 'another-secret-value')));
    assert.equal(other.requestHash, stored.requestHash);
    assert.notEqual((await sealer.seal(apply(MANIFESTS.replace('db', 'db2')))).requestHash, stored.requestHash);
  });

  test('a patch of a Secret is stored redacted and sealed; a patch of another kind is stored as it is', async () => {
    const stored = await sealer.seal(patch());
    assert.equal(stored.sealed, true);
    assert.equal((stored.requestJson as Obj).patch.patch, REDACTED_PATCH);
    assert.ok(SEALED_KEY in stored.requestJson);
    const plain = await sealer.seal(patch('ConfigMap'));
    assert.equal(plain.sealed, false);
    assert.deepEqual(plain.requestJson, {
      id: 'op-2',
      account: 'acct',
      patch: { kind: 'ConfigMap', name: 'db', type: 'PATCH_TYPE_MERGE', patch: PATCH },
    });
  });

  test('an operation without Secret values is stored as it is, without a key: a keyless gateway takes it', async () => {
    const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n';
    for (const operation of [
      apply(configMap),
      patch('ConfigMap'),
      create(OperationSchema, { id: 'op-3', account: 'acct', spec: { case: 'get', value: { kind: 'Secret', name: 'db' } } }),
      create(OperationSchema, { id: 'op-4', account: 'acct' }),
    ]) {
      const stored = await keyless.seal(operation);
      assert.equal(stored.sealed, false, operation.spec.case);
      assert.ok(!(SEALED_KEY in stored.requestJson));
      assert.deepEqual(stored, await sealer.seal(operation), 'the same stored form with or without a key');
    }
    assert.equal(((await keyless.seal(apply(configMap))).requestJson as Obj).apply.manifests, configMap);
  });

  test('a keyless gateway refuses an operation carrying Secret values, naming the setting', async () => {
    for (const operation of [apply(), patch()]) {
      await assert.rejects(keyless.seal(operation), rejectsWith(Code.FailedPrecondition, /secrets\.keyFile/));
    }
  });

  test('the redacted form without sealing: the same request and hash, nothing sealed', async () => {
    for (const operation of [apply(), patch()]) {
      const sealed = await sealer.seal(operation);
      const { [SEALED_KEY]: _, ...json } = sealed.requestJson;
      assert.deepEqual(keyless.redactedRequest(operation), { requestJson: json, requestHash: sealed.requestHash, sealed: false });
    }
    const { requestJson } = keyless.redactedRequest(apply());
    assert.ok(!JSON.stringify(requestJson).includes(MARK));
  });

  test('storing does not change the operation it is given', async () => {
    const operation = apply();
    await sealer.seal(operation);
    sealer.redactedRequest(operation);
    assert.deepEqual(operation, apply());
  });
});

describe('opening a stored operation', () => {
  test('a sealed row opens as the original operation, values included', async () => {
    for (const operation of [apply(), patch()]) {
      assert.deepEqual(await sealer.open(await rowOf(operation)), operation, operation.spec.case);
    }
  });

  test('a row without sealed fields opens as it is stored, without a key', async () => {
    const operation = patch('ConfigMap');
    assert.deepEqual(await keyless.open(await rowOf(operation)), operation);
  });

  test('a stored request with fields this version does not know (written by a newer replica) still opens', async () => {
    const row = await rowOf(apply());
    assert.deepEqual(await sealer.open({ ...row, request: { ...row.request, fieldOfANewerVersion: { a: 1 } } }), apply());
  });

  test('sealed fields open only in their own row: another id or account refuses them (DATA_LOSS)', async () => {
    const row = await rowOf(apply());
    for (const moved of [
      { ...row, id: 'op-9', request: { ...row.request, id: 'op-9' } },
      { ...row, account: 'other', request: { ...row.request, account: 'other' } },
    ]) {
      await assert.rejects(sealer.open(moved), rejectsWith(Code.DataLoss, /do not open with key ephemeral-/));
    }
  });

  test('sealed fields of another key, or malformed ones, do not open', async () => {
    const row = await rowOf(apply());
    await assert.rejects(otherReplica.open(row), rejectsWith(Code.FailedPrecondition, /key "ephemeral-[0-9a-f]+" is unknown/));
    await assert.rejects(sealer.open({ ...row, request: { ...row.request, [SEALED_KEY]: { v: 1, kid: 'k' } } }), {
      message: 'operation op-1: malformed sealed fields',
    });
    await assert.rejects(sealer.open({ ...row, request: { ...row.request, [SEALED_KEY]: null } }), {
      message: 'operation op-1: malformed sealed fields',
    });
  });

  test("sealed fields are put back only into the field they were taken from (the operation's own kind)", async () => {
    // An apply's sealed manifests beside a patch of the same id, and a patch's sealed text beside an apply.
    const sealedApply = await rowOf(apply(MANIFESTS, 'op-x'));
    const sealedPatch = await rowOf(patch('Secret', PATCH, 'op-x'));
    const patchRow = { ...sealedPatch, request: { ...sealedPatch.request, [SEALED_KEY]: sealedApply.request[SEALED_KEY] } };
    const applyRow = { ...sealedApply, request: { ...sealedApply.request, [SEALED_KEY]: sealedPatch.request[SEALED_KEY] } };
    const openedPatch = await sealer.open(patchRow);
    const expected = patch('Secret', REDACTED_PATCH, 'op-x');
    assert.deepEqual(openedPatch, expected);
    const openedApply = await sealer.open(applyRow);
    assert.ok(openedApply.spec.case === 'apply');
    assert.equal(openedApply.spec.value.manifests, REDACTED_MANIFESTS);
    assert.ok(!('patch' in openedApply.spec.value));
  });
});

describe('comparing an operation with the stored one', () => {
  test('the same operation is the same, whatever its timeout; any other field differs, the sealed values too', async () => {
    const row = await rowOf(apply());
    assert.equal(await sealer.compare(apply(), row), 'same');
    assert.equal(await sealer.mismatch(apply(), row), undefined);
    const shorter = apply();
    shorter.timeout = durationFromMs(5_000);
    assert.equal(await sealer.compare(shorter, row), 'same', 'senders shorten the timeout to the time left');
    const otherValue = apply(MANIFESTS.replace(MARK, 'another-secret-value'));
    assert.equal(await sealer.compare(otherValue, row), 'differs');
    assert.equal(await sealer.mismatch(otherValue, row), 'operation op-1 differs from the stored operation');
    assert.equal(await sealer.compare(patch('Secret', PATCH, 'op-1'), row), 'differs');
  });

  test('another id or account differs without opening the row', async () => {
    const row = await rowOf(apply());
    // Even against a row this replica cannot open: the id and the account are compared first.
    for (const by of [sealer, otherReplica]) {
      assert.equal(await by.compare(apply(MANIFESTS, 'op-other'), row), 'differs');
      assert.equal(await by.compare(apply(MANIFESTS, 'op-1', 'other'), row), 'differs');
      assert.equal(await by.mismatch(apply(MANIFESTS, 'op-other'), row), 'operation id "op-other" is not the stored id "op-1"');
      assert.equal(await by.mismatch(apply(MANIFESTS, 'op-1', 'other'), row), 'operation op-1 is stored for another account');
    }
  });

  test('a row whose sealed fields do not open is unreadable', async () => {
    const row = await rowOf(apply());
    assert.equal(await otherReplica.compare(apply(), row), 'unreadable');
    assert.equal(await otherReplica.mismatch(apply(), row), 'operation op-1 has a stored request this replica cannot read');
  });
});
