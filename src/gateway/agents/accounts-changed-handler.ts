/**
 * An AccountsChanged on a welcomed stream: the removed accounts are released (INACTIVE, no more events or operations
 * for them on this stream), the added ones are admitted like a Hello's, the session row's verdict lists are updated,
 * and the verdicts are answered in the order of `added`. The stream runs it after any in-flight batch committed, so
 * earlier events of a removed account are still stored.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { ConnectResponseSchema, Verdict, type AccountsChanged } from '../../gen/outpost/agent/v1/agent_pb.js';
import { releaseAccounts } from '../accounts/account-claim-queries.js';
import { removeAccountCaches } from '../cache/cache-removal.js';
import { validateAccountsChanged } from './accounts-changed-validation.js';
import { admitAccounts, type AdmissionDeps } from './admission.js';
import type { OperationHooks } from './operation-hooks.js';
import { logRefusals } from './session-welcome.js';
import type { StreamState } from './stream-state.js';

/** What applying an AccountsChanged reads and writes. */
export interface AccountsChangedDeps extends AdmissionDeps {
  operations?: OperationHooks;
  /** Called after accounts were released (a STANDBY stream may take them at once). */
  onAccountsReleased?: () => void;
}

/**
 * Applies the change. Throws FAILED_PRECONDITION before the Welcome and INVALID_ARGUMENT for an invalid change
 * (nothing applied then); returns quietly when the stream stopped half-way (its end releases what it claimed).
 */
export async function applyAccountsChanged(state: StreamState, change: AccountsChanged, deps: AccountsChangedDeps): Promise<void> {
  if (!state.welcomed) throw new ConnectError('accounts_changed before the welcome', Code.FailedPrecondition);
  validateAccountsChanged(change, state.accounts.announced());
  const released: string[] = [];
  for (const name of change.removed) {
    if (state.accounts.remove(name) !== 'released') continue;
    deps.registry.release(name, state);
    released.push(name);
  }
  if (released.length > 0) {
    await releaseAccounts(deps.db, state.id, released, removeAccountCaches);
    deps.onAccountsReleased?.();
  }
  if (state.stopped) return;
  const ordered =
    change.added.length > 0
      ? await admitAccounts(
          { agentId: state.agentId, zone: state.zone, accounts: change.added },
          state,
          state.accounts,
          () => state.stopped,
          deps,
        )
      : [];
  if (!ordered) return;
  state.accounts.admit(ordered, change.added);
  await state.row.updateVerdicts(state.accounts.verdicts());
  if (state.stopped) return;
  state.outbox.push(
    create(ConnectResponseSchema, { message: { case: 'verdicts', value: { changeId: change.changeId, accounts: ordered } } }),
  );
  // Served only once the verdicts are queued: no operation for an account reaches the agent before its verdict.
  const started = state.accounts.verdictSent(ordered.map((o) => o.account));
  if (started.length > 0) deps.operations?.sessionStarted(state, started);
  state.log.info(
    { changeId: change.changeId, removed: change.removed, added: ordered.map((o) => `${o.account}:${Verdict[o.verdict]}`) },
    'agent accounts changed',
  );
  logRefusals(ordered, state.log);
}
