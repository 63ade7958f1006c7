/**
 * How an operation is kept in `operations.request`, and the one place a stored row turns back into the
 * `outpost.agent.v1.Operation` it describes. A request whose apply manifests or Secret patch carry Secret values is
 * stored redacted — what every reader sees (the API, REST, the dashboard) — with the original text of those fields
 * sealed beside it (AES-256-GCM, see secrets/envelope.ts, bound to the operation's id and account): Secret values are
 * never at rest in plaintext and never returned to a reader, yet dispatch, redelivery after a restart and the check of
 * a forwarded operation see the real operation. `requestHash` covers the redacted form only (a hash of a secret is an
 * oracle for guessing it); a retry under the same id compares the sealed values too.
 */
import { createHash } from 'node:crypto';
import { clone, equals, fromJson, toJson, type JsonValue } from '@bufbuild/protobuf';
import { OperationSchema, type Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import { isEnvelope, open, seal, type Envelope } from '../secrets/envelope.js';
import type { KeyRing } from '../secrets/key-ring.js';
import { redactManifests, redactPatch } from '../secrets/secret-redaction.js';
import type { OperationRow } from './operation-store.js';

/** The key of the sealed fields inside a stored request (not a field of Operation: readers ignore it). */
export const SEALED_KEY = 'outpostSealed';

/** The original text of the fields that held Secret values. */
interface SealedFields {
  manifests?: string;
  patch?: string;
}

/** A request ready to store. */
export interface StoredRequest {
  requestJson: Record<string, unknown>;
  requestHash: string;
  /** True when fields were sealed. */
  sealed: boolean;
}

/** Seals and opens stored requests with the gateway's key ring. */
export interface OperationSealer {
  /** The stored form of an operation; FAILED_PRECONDITION when it carries Secret values and there is no key. */
  seal(operation: Operation): Promise<StoredRequest>;
  /** The stored form with the Secret values dropped rather than sealed (`sealed` false): for rows no key can seal. */
  redactedRequest(operation: Operation): StoredRequest;
  /** The operation a row stores, Secret values included; FAILED_PRECONDITION / DATA_LOSS when they cannot be opened. */
  open(row: Pick<OperationRow, 'id' | 'account' | 'request'>): Promise<Operation>;
  /**
   * Why `operation` is not the operation the row stores (id, account, spec, sealed values included), or undefined
   * when it is. The timeout is not compared (senders shorten it to the time left).
   */
  mismatch(operation: Operation, row: Pick<OperationRow, 'id' | 'account' | 'request'>): Promise<string | undefined>;
  /** Whether `operation` is the stored one (as {@link mismatch}), or `unreadable` when its sealed fields do not open. */
  compare(operation: Operation, row: Pick<OperationRow, 'id' | 'account' | 'request'>): Promise<'same' | 'differs' | 'unreadable'>;
}

/** Creates the sealer over a key ring. */
export function createOperationSealer(keys: KeyRing): OperationSealer {
  const context = (id: string, account: string) => `outpost.operation.request:${id}:${account}`;
  const open_ = async (row: Pick<OperationRow, 'id' | 'account' | 'request'>): Promise<Operation> => {
    const { [SEALED_KEY]: envelope, ...json } = row.request as Record<string, unknown>;
    const operation = fromJson(OperationSchema, json as JsonValue, { ignoreUnknownFields: true });
    if (envelope === undefined) return operation;
    if (!isEnvelope(envelope)) throw new Error(`operation ${row.id}: malformed sealed fields`);
    const fields = JSON.parse(open(envelope, await keys.get(envelope.kid), context(row.id, row.account))) as SealedFields;
    if (fields.manifests !== undefined && operation.spec.case === 'apply') operation.spec.value.manifests = fields.manifests;
    if (fields.patch !== undefined && operation.spec.case === 'patch') operation.spec.value.patch = fields.patch;
    return operation;
  };
  async function compare(
    operation: Operation,
    row: Pick<OperationRow, 'id' | 'account' | 'request'>,
  ): Promise<'same' | 'differs' | 'unreadable'> {
    if (operation.id !== row.id || operation.account !== row.account) return 'differs';
    let stored: Operation;
    try {
      stored = await open_(row);
    } catch {
      return 'unreadable';
    }
    const bare = (op: Operation): Operation => ({ ...op, timeout: undefined });
    return equals(OperationSchema, bare(stored), bare(operation)) ? 'same' : 'differs';
  }
  /** The operation as readers see it, and the original text of the fields that held Secret values. */
  const redact = (operation: Operation) => {
    const shown = clone(OperationSchema, operation);
    const fields: SealedFields = {};
    if (shown.spec.case === 'apply') {
      const r = redactManifests(shown.spec.value.manifests);
      if (r.secret) [fields.manifests, shown.spec.value.manifests] = [shown.spec.value.manifests, r.text];
    } else if (shown.spec.case === 'patch') {
      const r = redactPatch(shown.spec.value.kind, shown.spec.value.patch);
      if (r.secret) [fields.patch, shown.spec.value.patch] = [shown.spec.value.patch, r.text];
    }
    const requestJson = toJson(OperationSchema, shown) as Record<string, unknown>;
    const requestHash = createHash('sha256').update(JSON.stringify(requestJson)).digest('base64url');
    return { requestJson, requestHash, fields };
  };
  return {
    redactedRequest: (operation) => {
      const { requestJson, requestHash } = redact(operation);
      return { requestJson, requestHash, sealed: false };
    },
    async seal(operation) {
      const { requestJson, requestHash, fields } = redact(operation);
      if (fields.manifests === undefined && fields.patch === undefined) return { requestJson, requestHash, sealed: false };
      const envelope: Envelope = seal(JSON.stringify(fields), await keys.active(), context(operation.id, operation.account));
      return { requestJson: { ...requestJson, [SEALED_KEY]: envelope }, requestHash, sealed: true };
    },
    open: open_,
    compare,
    async mismatch(operation, row) {
      if (operation.id !== row.id) return `operation id ${JSON.stringify(operation.id)} is not the stored id ${JSON.stringify(row.id)}`;
      if (operation.account !== row.account) return `operation ${row.id} is stored for another account`;
      const outcome = await compare(operation, row);
      if (outcome === 'unreadable') return `operation ${row.id} has a stored request this replica cannot read`;
      return outcome === 'same' ? undefined : `operation ${row.id} differs from the stored operation`;
    },
  };
}
