import { useEffect, useId, useState } from 'preact/hooks';
import { OperationState, type OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { operationsSignal } from './fleet-signals.js';
import { operationStateName } from './format.js';
import { OperationForm } from './operation-form.js';
import { OperationsTable } from './operations-table.js';
import { PageTitle } from './page-title.js';
import { readPageSize } from './page-size.js';
import { Pager } from './pager.js';
import { hrefFor, navigate } from './router.js';
import { useServices } from './services.js';
import { useFleet } from './use-fleet.js';
import { usePageCursor } from './use-page-cursor.js';

const STATES = [OperationState.PENDING, OperationState.SENT, OperationState.SUCCEEDED, OperationState.FAILED, OperationState.TIMED_OUT];

/** Reads `state=SUCCEEDED` from the hash query; unknown or missing is UNSPECIFIED (every state). */
function readState(query: URLSearchParams): OperationState {
  const name = query.get('state') ?? '';
  return STATES.find((s) => operationStateName(s) === name) ?? OperationState.UNSPECIFIED;
}

/**
 * Operations: the submit form, then the history (OperationService.ListOperations, one page at a time: 50 rows, or
 * `size=`, with Newest/Previous/Next) with its timing breakdown, filtered by account and state through the hash
 * query (`#/operations?account=&state=&size=`). The page shown re-fetches whenever the fleet summary's recent
 * operations or in-flight count change.
 */
export function OperationsView({ query }: { query: URLSearchParams }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const account = query.get('account') ?? '';
  const state = readState(query);
  const pageSize = readPageSize(query);
  const accountNames = fleet?.accounts.map((a) => a.name) ?? [];

  const history = usePageCursor<OperationRecord>(
    JSON.stringify([account, state]),
    (pageToken, pageSize, signal) =>
      api.operations
        .listOperations({ account, state, pageSize, pageToken }, { signal })
        .then((r) => ({ items: r.operations, nextPageToken: r.nextPageToken })),
    operationsSignal(fleet),
    pageSize,
  );
  const items = history.items;

  return (
    <>
      <PageTitle title="Operations" />
      <section aria-labelledby="submit-title" class="panel">
        <h2 id="submit-title">Submit an operation</h2>
        <OperationForm accounts={accountNames} />
      </section>

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <HistoryFilter account={account} state={state} accounts={accountNames} size={query.get('size') ?? ''} />
        <ErrorMessage error={history.error} context="Could not load the operations" />
        {!items ? (
          history.busy && <p class="loading">Loading operations…</p>
        ) : (
          <>
            <OperationsTable items={items} busy={history.busy} page={history.page} hasMore={history.hasNext} />
            <Pager cursor={history} label="Operations pages" />
            <p class="hint">
              Total: received → terminal. Under it, a bar of the phases and their times — store: received → stored (checks before the
              insert); dispatch: stored → sent to the agent; agent: sent → result, less Kubernetes: the agent's Kubernetes API calls;
              result: result → end. The slowest is in bold; hover a bar for the whole timeline.
            </p>
          </>
        )}
      </section>
    </>
  );
}

/** The history filter; writes `account` and `state` into the hash query on submit (keeping `size`). */
function HistoryFilter({ account, state, accounts, size }: { account: string; state: OperationState; accounts: string[]; size: string }) {
  const [draft, setDraft] = useState({ account, state: state === OperationState.UNSPECIFIED ? '' : operationStateName(state) });
  useEffect(() => setDraft({ account, state: state === OperationState.UNSPECIFIED ? '' : operationStateName(state) }), [account, state]);
  const id = useId();
  const names = accounts.includes(account) || !account ? accounts : [...accounts, account];
  return (
    <form
      aria-label="Filter operations"
      class="filter"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(hrefFor('operations', { ...draft, size }));
      }}
    >
      <div class="field">
        <label for={`${id}-account`}>Account</label>
        <select id={`${id}-account`} value={draft.account} onChange={(e) => setDraft((d) => ({ ...d, account: e.currentTarget.value }))}>
          <option value="">All accounts</option>
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`${id}-state`}>State</label>
        <select id={`${id}-state`} value={draft.state} onChange={(e) => setDraft((d) => ({ ...d, state: e.currentTarget.value }))}>
          <option value="">All states</option>
          {STATES.map((s) => (
            <option key={s} value={operationStateName(s)}>
              {operationStateName(s)}
            </option>
          ))}
        </select>
      </div>
      <div class="actions">
        <button type="submit">Filter</button>
      </div>
    </form>
  );
}
