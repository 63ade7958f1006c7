/**
 * A stored operation row as the API serves it (`OperationRecord`), and as REST serves it (its protobuf JSON).
 */
import { create, fromJson, toJson, type JsonValue } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { OperationResultSchema, OperationSchema } from '../../gen/outpost/agent/v1/operation_pb.js';
import { OperationRecordSchema, type OperationRecord } from '../../gen/outpost/api/v1/operation_service_pb.js';
import type { ReadRow } from './read-runner.js';
import type { OperationRow } from './operation-store.js';
import { stateToEnum } from './operation-state.js';
import { msToDuration } from '../../shared/durations.js';

const lenient = { ignoreUnknownFields: true };

/** Converts a row (or a read's, never stored: no stored_at); total_duration is set once the operation is terminal. */
export function toOperationRecord(row: OperationRow | ReadRow): OperationRecord {
  return create(OperationRecordSchema, {
    id: row.id,
    account: row.account,
    type: row.type,
    state: stateToEnum(row.state),
    operation: fromJson(OperationSchema, row.request as JsonValue, lenient),
    result: row.result ? fromJson(OperationResultSchema, row.result as JsonValue, lenient) : undefined,
    error: row.error,
    receivedAt: timestampFromDate(row.receivedAt),
    storedAt: row.storedAt ? timestampFromDate(row.storedAt) : undefined,
    sentAt: row.sentAt ? timestampFromDate(row.sentAt) : undefined,
    resultAt: row.resultAt ? timestampFromDate(row.resultAt) : undefined,
    totalDuration: row.finishedAt ? msToDuration(row.finishedAt.getTime() - row.receivedAt.getTime()) : undefined,
    gatewayId: row.gatewayId,
    agentId: row.agentId,
    requestedBy: row.requestedBy,
  });
}

/** The record's protobuf JSON (what REST returns). */
export function toOperationRecordJson(row: OperationRow): JsonValue {
  return toJson(OperationRecordSchema, toOperationRecord(row));
}
