/**
 * Submitting an operation: validated, its account known, its Secret values sealed, stored PENDING (inserts issued close
 * together share one statement, write-batcher.ts), tracked, then dispatched — stored before it is sent, so none is
 * lost (docs/architecture.md, rule 6). A repeated id returns the stored operation when the request is the same, and
 * ALREADY_EXISTS when it is not; nothing is sent again then.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import type { OperationContext } from './operation-context.js';
import type { OperationDeadlines } from './operation-deadlines.js';
import type { Deliver } from './operation-delivery.js';
import type { OperationReads } from './operation-reads.js';
import { isTerminal } from './operation-state.js';
import type { NewOperationRow, OperationRow } from './operation-store.js';
import { validateSubmission } from './operation-validation.js';
import { createWriteBatcher } from './write-batcher.js';

/** See OperationManager.submit in operation-manager.ts. */
export type Submit = (req: SubmitOperationRequest, signal?: AbortSignal, requestedBy?: string) => Promise<OperationRow>;

/** What a submission uses besides the shared context. */
export interface SubmitParts {
  track: OperationDeadlines['track'];
  deliver: Deliver;
  waitTerminal: OperationReads['waitTerminal'];
}

/** A freshly inserted row as the database now holds it (column defaults applied), without reading it back. */
function insertedRow(row: NewOperationRow): OperationRow {
  return { result: null, error: '', agentId: '', sessionId: '', sentAt: null, resultAt: null, finishedAt: null, ...row } as OperationRow;
}

/** Creates the submission over the shared context; accounts once seen to exist are remembered for the process. */
export function createOperationSubmit(ctx: OperationContext, parts: SubmitParts): Submit {
  const { store, sealer, log, notifier, limits, deps } = ctx;
  const { track, deliver, waitTerminal } = parts;
  const knownAccounts = new Set<string>();
  const inserts = createWriteBatcher((rows: NewOperationRow[]) => store.insertMany(rows));

  const accountExists = async (name: string) => {
    if (knownAccounts.has(name)) return true;
    const exists = await store.accountExists(name);
    if (exists) knownAccounts.add(name);
    return exists;
  };

  return async (req, signal, requestedBy = '') => {
    const receivedAt = new Date();
    const v = validateSubmission(req, limits);
    if (!(await accountExists(req.account))) {
      throw new ConnectError(`unknown account ${JSON.stringify(req.account)}: no agent has registered it`, Code.NotFound);
    }
    const id = v.operation.id;
    const stored = await sealer.seal(v.operation);
    const newRow: NewOperationRow = {
      id,
      account: req.account,
      type: v.type,
      request: stored.requestJson,
      state: 'PENDING',
      gatewayId: deps.gatewayId,
      timeoutMs: v.timeoutMs,
      receivedAt,
      storedAt: new Date(),
      deadlineAt: new Date(receivedAt.getTime() + v.timeoutMs),
      requestHash: stored.requestHash,
      requestedBy,
    };
    let row: OperationRow;
    if (!(await inserts.add(newRow))) {
      const existing = await store.get(id);
      if (!existing) throw new ConnectError(`operation ${id} could not be stored; retry`, Code.Aborted);
      // Same redacted form: the sealed values decide (a row whose key is gone is taken as the same request).
      if (existing.requestHash !== stored.requestHash || (stored.sealed && (await sealer.compare(v.operation, existing)) === 'differs')) {
        throw new ConnectError(`operation id ${JSON.stringify(id)} was already used for a different request`, Code.AlreadyExists);
      }
      row = existing;
    } else {
      const inserted = insertedRow(newRow);
      notifier.publish(inserted);
      const local = track(inserted);
      log.debug({ operationId: id, account: req.account, type: v.type }, 'operation stored');
      // A waiting caller needs no durable SENT (the result's update records sent_at); a non-waiting one returns it.
      row = (await deliver(inserted, v.operation, !req.wait)) ?? inserted;
      // Settled meanwhile (result, deadline or agent wait): that row is the latest.
      if (local.final) row = local.final;
    }
    if (req.wait && !isTerminal(row.state)) row = await waitTerminal(row, signal);
    return row;
  };
}
