/**
 * Following one operation until it is terminal: the current row at once, then the row again on every state change.
 * Changes on this replica arrive through the notifier immediately; the row is also re-read every `pollIntervalMs`
 * (default 1 s) to see changes another replica made. Never polls faster than that.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { OperationNotifier } from './operation-notifier.js';
import { isTerminal, stateRank } from './operation-state.js';
import type { OperationRow, OperationStore } from './operation-store.js';

/** What a watch reads. */
export interface WatchDeps {
  store: Pick<OperationStore, 'get'>;
  notifier: OperationNotifier;
  pollIntervalMs: number;
}

/**
 * Yields the row now and on each state change; returns after yielding a terminal row, or when `signal` aborts
 * (the caller decides what an abort means). Throws NOT_FOUND when the operation does not exist. `initial`, when
 * given, is used instead of reading the row first; it must be a row read or written before this call.
 */
export async function* watchOperation(
  id: string,
  deps: WatchDeps,
  signal: AbortSignal,
  initial?: OperationRow,
): AsyncGenerator<OperationRow> {
  let latest: OperationRow | undefined;
  let changed = false;
  let wake: (() => void) | undefined;
  const advance = (row: OperationRow) => {
    if (latest && stateRank(row.state) < stateRank(latest.state)) return;
    latest = row;
  };
  const unsubscribe = deps.notifier.subscribe(id, (row) => {
    advance(row);
    changed = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    // A caller that just wrote the row passes it (subscribed after the write: a newer notification still wins).
    const first = initial ?? (await deps.store.get(id));
    if (!first) throw new ConnectError(`operation ${JSON.stringify(id)} not found`, Code.NotFound);
    advance(first);
    let shown = latest!;
    yield shown;
    while (!isTerminal(shown.state)) {
      if (signal.aborted) return;
      if (!changed) {
        const notified = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), deps.pollIntervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        wake = undefined;
        if (signal.aborted) return;
        if (!notified) {
          const fresh = await deps.store.get(id);
          if (fresh) advance(fresh);
        }
      }
      changed = false;
      if (latest!.state !== shown.state) {
        shown = latest!;
        yield shown;
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
