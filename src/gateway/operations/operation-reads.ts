/**
 * Reading operations: one by id, following one until it ends (a watch, or a submitter's wait), and the history
 * newest first (keyset pages for the API, offset pages for REST). Reads change nothing; a watch ends with UNAVAILABLE
 * when the manager closes before the operation ended, so the caller knows to wait again elsewhere.
 */
import { setMaxListeners } from 'node:events';
import { Code, ConnectError } from '@connectrpc/connect';
import { OperationState, type ListOperationsRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { invalidArgument } from '../http/errors.js';
import type { OperationContext } from './operation-context.js';
import { decodeOperationPageToken, encodeOperationPageToken } from './operation-page-token.js';
import { isTerminal, stateFromEnum } from './operation-state.js';
import type { OperationRow } from './operation-store.js';
import { watchOperation } from './operation-watch.js';

/** Default and largest ListOperations page sizes. */
const DEFAULT_OPERATION_PAGE_SIZE = 50;
export const MAX_OPERATION_PAGE_SIZE = 500;

/** The read side of the manager (the manager serves all but waitTerminal as they are). */
export interface OperationReads {
  /** NOT_FOUND when unknown. */
  get(id: string): Promise<OperationRow>;
  /** The row now, then on each state change, ending after a terminal one. Ends with UNAVAILABLE on shutdown. */
  watch(id: string, signal?: AbortSignal): AsyncIterable<OperationRow>;
  /** A page of rows for ListOperations, filtered by account and state, with the token of the next page. */
  list(
    req: Pick<ListOperationsRequest, 'account' | 'state' | 'pageSize' | 'pageToken'>,
  ): Promise<{ rows: OperationRow[]; nextPageToken: string }>;
  /** Page `page` (1-based) of `items` rows, newest first, with the total (REST). */
  page(page: number, items: number): Promise<{ rows: OperationRow[]; total: number }>;
  /**
   * The terminal row of `row`'s operation (or the latest one at its deadline plus a grace, or on close). `row` must be
   * a row just read or written on this event loop turn. CANCELED when `signal` aborts.
   */
  waitTerminal(row: OperationRow, signal?: AbortSignal): Promise<OperationRow>;
}

/** Creates the reads over the shared context. */
export function createOperationReads(ctx: OperationContext): OperationReads {
  const { store, notifier, locals, closing, pollIntervalMs } = ctx;
  // Every waiting submitter listens on `closing` (released when it returns): as many as operations in flight.
  setMaxListeners(0, closing);
  return {
    async get(id) {
      const row = await store.get(id);
      if (!row) throw new ConnectError(`operation ${JSON.stringify(id)} not found`, Code.NotFound);
      return row;
    },

    async *watch(id, signal) {
      const stop = signal ? AbortSignal.any([signal, closing]) : closing;
      let last: OperationRow | undefined;
      for await (const row of watchOperation(id, { store, notifier, pollIntervalMs }, stop)) {
        last = row;
        yield row;
      }
      if (closing.aborted && last && !isTerminal(last.state)) {
        throw new ConnectError('gateway is shutting down; wait for the operation again', Code.Unavailable);
      }
    },

    async list(req) {
      if (req.pageSize < 0) throw invalidArgument('page_size must not be negative');
      const pageSize = req.pageSize === 0 ? DEFAULT_OPERATION_PAGE_SIZE : Math.min(req.pageSize, MAX_OPERATION_PAGE_SIZE);
      const state = req.state === OperationState.UNSPECIFIED ? undefined : stateFromEnum(req.state);
      if (req.state !== OperationState.UNSPECIFIED && !state) throw invalidArgument(`state ${req.state} is not a known operation state`);
      const filters = { account: req.account, state: state ?? '' };
      const after = req.pageToken ? decodeOperationPageToken(req.pageToken, filters) : undefined;
      const rows = await store.list({ account: req.account || undefined, state }, pageSize + 1, after);
      const more = rows.length > pageSize;
      const page = more ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1];
      return { rows: page, nextPageToken: more && last ? encodeOperationPageToken(last, filters) : '' };
    },

    page: (page, items) => store.page((page - 1) * items, items),

    async waitTerminal(row, signal) {
      // The deadline timer ends it at the deadline; the grace covers a sweeper on another replica. One controller, a
      // timer and two listeners, all released at the end (AbortSignal.timeout and AbortSignal.any cost a signal, a
      // timer and weak references per call, which the garbage collector paid for on every operation).
      const stop = new AbortController();
      const end = () => stop.abort();
      const timer = setTimeout(end, Math.max(0, row.deadlineAt.getTime() - Date.now()) + pollIntervalMs + 500);
      closing.addEventListener('abort', end);
      signal?.addEventListener('abort', end);
      if (closing.aborted || signal?.aborted) end();
      let last = row;
      try {
        // Still tracked → not settled yet, so `row` is current and any later change will be notified to the watch
        // (which subscribes in this same tick). Settled meanwhile → read it again.
        const initial = locals.has(row.id) ? row : undefined;
        for await (const r of watchOperation(row.id, { store, notifier, pollIntervalMs }, stop.signal, initial)) last = r;
      } finally {
        clearTimeout(timer);
        closing.removeEventListener('abort', end);
        signal?.removeEventListener('abort', end);
      }
      if (signal?.aborted) throw new ConnectError('request cancelled', Code.Canceled);
      return last;
    },
  };
}
