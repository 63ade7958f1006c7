/**
 * Reads of a cluster whose stream another replica holds (docs/replicas.md, "Reads"): passed to that replica — the
 * lease holder first — with `POST /armory/agent/forwardedreads`, describing the caller (vouched-principal.ts) and the
 * role that allowed it, so the holder admits it again with its OWN rules, runs it on its stream and answers on the same
 * call (one hop): at once which stream took it, then the read's terminal row. Nothing is stored on either side. The
 * holder never forwards again, so forwards cannot loop. A read changes nothing, so one whose answer broke off may be
 * tried on the next replica.
 */
import { randomUUID } from 'node:crypto';
import { toJson } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { OperationSchema } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import { describePrincipal, encodeDescription } from '../auth/vouched-principal.js';
import { type ForwardRead, type ReadRow, readRowBase } from './read-runner.js';
import { readyOwners, type OwnerLookup } from '../replicas/owner-lookup.js';
import type { PeerClient } from '../replicas/peer-client.js';
import type { ReplicaDirectory } from '../replicas/replica-directory.js';

/** Path of the internal route that runs a read on the replica holding a stream. */
export const READ_FORWARD_PATH = '/armory/agent/forwardedreads';
/** The extra time the answer's second part may take past the read's own time. */
const ANSWER_GRACE_MS = 5000;
/** The dates of a row, as the second part carries them (ISO text). */
const ROW_DATES = ['receivedAt', 'sentAt', 'resultAt', 'finishedAt', 'deadlineAt'] as const;

/** What {@link createReadForward} needs. */
export interface ReadForwardDeps {
  owners: OwnerLookup;
  replicas: Pick<ReplicaDirectory, 'get'>;
  peers: Pick<PeerClient, 'postAnswered'>;
  logger: Logger;
}

/** The row a forward's second answer part carries (`{row}`), with its dates revived; undefined when it is not one. */
function readRowFromAnswer(json: unknown): ReadRow | undefined {
  const row = (json as { row?: Record<string, unknown> } | undefined)?.row;
  if (typeof row !== 'object' || row === null || typeof row.id !== 'string' || typeof row.state !== 'string') return undefined;
  const out: Record<string, unknown> = { ...row, storedAt: null };
  for (const key of ROW_DATES) out[key] = typeof row[key] === 'string' ? new Date(row[key]) : null;
  if (!(out.receivedAt instanceof Date) || !(out.deadlineAt instanceof Date)) return undefined;
  return out as ReadRow;
}

/** Creates the forward. */
export function createReadForward(deps: ReadForwardDeps): ForwardRead {
  const { owners, replicas, peers, logger } = deps;
  return async (request, caller) => {
    const { account } = request;
    // The operation as the holder runs it: the caller's id (or a fresh one), the time left.
    const { operation } = readRowBase(request, '', request.id || `read-${randomUUID()}`);
    const body = {
      operation: toJson(OperationSchema, operation),
      requestedBy: request.requestedBy,
      caller: encodeDescription(describePrincipal(caller.principal)),
      role: caller.role,
    };
    for await (const replica of readyOwners(owners, replicas, account)) {
      const { id } = replica;
      try {
        const res = await peers.postAnswered(replica.baseUrl, READ_FORWARD_PATH, body, request.timeoutMs + ANSWER_GRACE_MS);
        if (res.status === 403) {
          const message = (res.body as { message?: unknown } | undefined)?.message;
          throw new ConnectError(
            typeof message === 'string' ? message : `replica ${id} refused the read for the caller`,
            Code.PermissionDenied,
          );
        }
        if (res.status === 200 && res.rest) {
          const row = readRowFromAnswer(await res.rest);
          if (row) return { ...row, requestedBy: request.requestedBy };
          logger.warn({ account, replica: id }, 'the replica holding the stream did not finish the forwarded read; trying the next');
        } else if (res.status !== 409) {
          logger.warn({ account, replica: id, status: res.status, answer: res.body }, 'replica did not take the forwarded read');
        }
      } catch (err) {
        if (err instanceof ConnectError) throw err;
        logger.warn({ err, account, replica: id }, 'could not forward the read');
      }
      owners.forget(account);
    }
    return undefined;
  };
}
