/**
 * The one place a stored `operations` row turns back into the `outpost.agent.v1.Operation` it describes, and the
 * comparison of an operation with its row. Dispatch (first send, redelivery after a restart) and the check of an
 * operation another replica forwards here both go through it, so whatever the row's `request` holds at rest is
 * decoded the same way everywhere.
 */
import { equals, fromJson, type JsonValue } from '@bufbuild/protobuf';
import { OperationSchema, type Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { OperationRow } from './operation-store.js';

/** The operation a row stores (without a meaningful `timeout`: senders set the time left). */
export function storedOperation(row: Pick<OperationRow, 'request'>): Operation {
  return fromJson(OperationSchema, row.request as JsonValue, { ignoreUnknownFields: true });
}

/**
 * Why `operation` is not the operation `row` stores, or undefined when it is: same id, account and spec. The timeout
 * is not compared (the sender shortens it to the time the origin has left).
 */
export function mismatchWithStored(operation: Operation, row: Pick<OperationRow, 'id' | 'account' | 'request'>): string | undefined {
  if (operation.id !== row.id) return `operation id ${JSON.stringify(operation.id)} is not the stored id ${JSON.stringify(row.id)}`;
  if (operation.account !== row.account) return `operation ${row.id} is stored for another account`;
  let stored: Operation;
  try {
    stored = storedOperation(row);
  } catch {
    return `operation ${row.id} has an unreadable stored request`;
  }
  const bare = (op: Operation): Operation => ({ ...op, timeout: undefined });
  if (stored.account !== operation.account || !equals(OperationSchema, bare(stored), bare(operation))) {
    return `operation ${row.id} differs from the stored operation`;
  }
  return undefined;
}
