/**
 * The single registry of the page's section-9 status rows (docs/agent-protocol.md, "Every status the gateway
 * sends"): row id → gRPC status (and trailer). Every conformance case that triggers a row is declared with
 * {@link rowTest}, which hands the test an `expect` bound to that row, so a case cannot claim one row and check
 * another code; `protocol-doc.test.ts` checks this registry against the page's table and that every row has a case.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallOutcome } from './grpc-wire.js';

/** gRPC status codes by name, from the gRPC specification (doc/statuscodes.md). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** A status name of {@link GRPC_STATUS}. */
export type StatusName = keyof typeof GRPC_STATUS;

/** One row of the page's table. */
export interface StatusRow {
  status: StatusName;
  /** A trailer the row names (`x-outpost-reconnect: now`). */
  trailer?: { name: string; value: string };
}

const RECONNECT_NOW = { name: 'x-outpost-reconnect', value: 'now' };

/** Every row of section 9, as the suite expects it. */
export const STATUS_ROWS = {
  E1: { status: 'UNIMPLEMENTED' },
  E2: { status: 'INTERNAL' },
  E3: { status: 'INVALID_ARGUMENT' },
  E4: { status: 'DEADLINE_EXCEEDED' },
  E5: { status: 'RESOURCE_EXHAUSTED' },
  E6: { status: 'INVALID_ARGUMENT' },
  E7: { status: 'UNAUTHENTICATED' },
  E8: { status: 'PERMISSION_DENIED' },
  E9: { status: 'UNAUTHENTICATED' },
  E10: { status: 'UNAUTHENTICATED' },
  E11: { status: 'FAILED_PRECONDITION' },
  E12: { status: 'INVALID_ARGUMENT' },
  E13: { status: 'INVALID_ARGUMENT' },
  E14: { status: 'INVALID_ARGUMENT' },
  E15: { status: 'PERMISSION_DENIED' },
  E16: { status: 'INVALID_ARGUMENT' },
  E17: { status: 'INVALID_ARGUMENT' },
  E18: { status: 'ABORTED' },
  E19: { status: 'UNAUTHENTICATED' },
  E20: { status: 'DEADLINE_EXCEEDED' },
  E21: { status: 'UNAVAILABLE', trailer: RECONNECT_NOW },
  E22: { status: 'UNAVAILABLE', trailer: RECONNECT_NOW },
  E23: { status: 'INTERNAL' },
} as const satisfies Record<string, StatusRow>;

/** A row id of the table. */
export type RowId = keyof typeof STATUS_ROWS;

/** Name of a numeric gRPC status (for messages). */
export function statusName(code: number | undefined): string {
  const found = Object.entries(GRPC_STATUS).find(([, v]) => v === code);
  return found ? found[0] : `no status (${code})`;
}

/**
 * Asserts that a call ended as row `id` says: its exact gRPC status, and the row's trailer when it names one (in the
 * trailers, or in the single HEADERS block of a Trailers-Only response). `message`, when given, must match the
 * decoded `grpc-message`.
 */
function expectRow(outcome: CallOutcome, id: RowId, message?: RegExp): void {
  const row: StatusRow = STATUS_ROWS[id];
  const got = `${statusName(outcome.grpcStatus)} "${outcome.grpcMessage}" (${outcome.form}${outcome.error ? `, ${outcome.error}` : ''})`;
  assert.equal(outcome.grpcStatus, GRPC_STATUS[row.status], `${id} expects ${row.status}, got ${got}`);
  if (row.trailer) {
    const value = outcome.trailers[row.trailer.name] ?? (outcome.trailersOnly ? outcome.headers[row.trailer.name] : undefined);
    assert.equal(
      value,
      row.trailer.value,
      `${id} expects the trailer ${row.trailer.name}: ${row.trailer.value}, got ${JSON.stringify(outcome.trailers)}`,
    );
  }
  if (message) assert.match(outcome.grpcMessage, message, `${id}: grpc-message`);
}

/** The check a row's case gets: this row's status (and trailer) only. */
export type RowExpectation = (outcome: CallOutcome, message?: RegExp) => void;

/**
 * Declares a conformance case for row `id`: a test named `E<n> <STATUS>: <rule>` whose body gets `expect`, bound to
 * the row. protocol-doc.test.ts finds these declarations in the sources.
 */
export function rowTest(
  id: RowId,
  rule: string,
  body: (expect: RowExpectation) => Promise<void>,
  options: { timeout?: number } = {},
): void {
  const row: StatusRow = STATUS_ROWS[id];
  test(
    `${id} ${row.status}${row.trailer ? ` + ${row.trailer.name}: ${row.trailer.value}` : ''}: ${rule}`,
    { timeout: options.timeout ?? 30_000 },
    () => body((outcome, message) => expectRow(outcome, id, message)),
  );
}
