/**
 * Operation requests stored before Secret values were sealed (docs/security.md) may hold those values in plaintext.
 * After start-up (in the background) each such row is rewritten in its sealed form: redacted for readers with the originals sealed, or — when
 * this gateway has no key — redacted only, and then an operation still open can no longer be sent, so it fails with
 * the reason. Rows already sealed, and rows without Secret values, are left alone; a second run changes nothing.
 */
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Database } from '../../db/database.js';
import { OperationSchema } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { OperationSealer, StoredRequest } from './operation-sealing.js';
import { createOperationQueries } from './operation-queries.js';
import { OPEN_STATES } from './operation-state.js';

/** Rows looked at per statement. */
const BATCH = 200;

/**
 * Seals (or redacts) the Secret values of requests stored in plaintext; returns how many rows changed. Stops between
 * batches once `signal` aborts (shutdown); what is left is done at the next start.
 */
export async function sealLegacyRequests(
  database: Database,
  sealer: OperationSealer,
  logger: Logger,
  signal?: AbortSignal,
): Promise<number> {
  const queries = createOperationQueries(database);
  let changed = 0;
  let after = '';
  while (!signal?.aborted) {
    const rows = await queries.unsealedRequests(after, BATCH);
    if (rows.length === 0) break;
    for (const row of rows) {
      after = row.id;
      const operation = fromJson(OperationSchema, row.request as JsonValue, { ignoreUnknownFields: true });
      let stored: StoredRequest;
      let unsendable = '';
      try {
        stored = await sealer.seal(operation);
      } catch (err) {
        if (!(err instanceof ConnectError && err.code === Code.FailedPrecondition)) throw err;
        stored = sealer.redactedRequest(operation);
        unsendable =
          'its Secret values were stored before they were encrypted, and this gateway has no key (secrets.keyFile): they were removed';
      }
      if (!stored.sealed && !unsendable) continue;
      const open = (OPEN_STATES as readonly string[]).includes(row.state);
      await queries.rewriteRequest(row.id, stored, open && unsendable !== '' ? `operation cannot be sent: ${unsendable}` : undefined);
      changed++;
    }
    if (rows.length < BATCH) break;
  }
  if (changed > 0) logger.warn({ count: changed }, 'operation requests stored with Secret values in plaintext were sealed or redacted');
  return changed;
}
