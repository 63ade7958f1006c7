/**
 * The accounts of a running session and their verdicts: the gateway's verdict for each account (from the Welcome, the
 * answer to an AccountsChanged, or pushed on its own) starts the account's watchers when it says CACHING; accounts the
 * agent adds or removes mid-session are announced with an AccountsChanged (held until the Welcome when it has not come
 * yet). Every watcher run started or stopped here is kept in the session's record, which waits for all of them.
 */
import { create } from '@bufbuild/protobuf';
import { AccountsChangedSchema, Verdict, type AccountVerdict, type AccountVerdicts } from '../../gen/outpost/agent/v1/agent_pb.js';
import { accountInfo } from '../accounts/account-info.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';
import { startAccountWatchers, stopAccountWatchers } from './account-watchers.js';
import type { LiveSession } from './session.js';
import { send, type SessionRun } from './session-run.js';
import { applyVerdictUpdate } from './verdict-updates.js';

const verdictName = (v: Verdict) =>
  v === Verdict.CACHING ? 'caching' : v === Verdict.STANDBY ? 'standby' : v === Verdict.REFUSED ? 'refused' : 'unknown';

/** Records the gateway's verdict for one account and starts its watchers when CACHING (once the outbox exists). */
export function applyVerdict(run: SessionRun, account: AccountRuntime, verdict: AccountVerdict | undefined): void {
  const name = account.prepared.config.name;
  account.verdict = verdict ? verdictName(verdict.verdict) : 'unknown';
  account.reason = verdict?.reason || undefined;
  const log = run.options.logger.child({ account: name });
  if (verdict === undefined) {
    log.warn('the gateway gave no verdict for this account; not streaming it');
    return;
  }
  if (verdict.verdict === Verdict.REFUSED) {
    log.warn(
      { verdict: account.verdict, reason: verdict.reason },
      `account refused by the gateway: ${verdict.reason || 'no reason given'}; not streaming it`,
    );
    return;
  }
  if (verdict.verdict !== Verdict.CACHING) {
    log.info({ verdict: account.verdict, reason: verdict.reason }, `account ${account.verdict}: not streaming`);
    return;
  }
  const outbox = run.outbox;
  if (outbox === undefined || account.prepared.client === undefined) return;
  if (account.run !== undefined) run.watchers.push(stopAccountWatchers(account, outbox));
  startAccountWatchers(account, { outbox, verdict, logger: log, sessionSignal: run.controller.signal });
  const started = account.run;
  if (started !== undefined) run.watchers.push(started.done);
}

/** Announces `removed` and `added` to the gateway in one AccountsChanged; the added ones wait for its verdicts. */
export function sendAccountsChanged(run: SessionRun, removed: string[], added: AccountRuntime[]): void {
  const changeId = ++run.state.lastChangeId;
  if (added.length > 0) run.awaitingVerdicts.set(changeId, added);
  send(run, {
    case: 'accountsChanged',
    value: create(AccountsChangedSchema, { changeId, removed, added: added.map((a) => accountInfo(a.prepared)) }),
  });
  run.options.logger.info(
    { changeId: Number(changeId), removed, added: added.map((a) => a.prepared.config.name) },
    'announced account changes to the gateway',
  );
}

/** An AccountVerdicts from the gateway: pushed on its own (change_id 0), or the answer to an AccountsChanged. */
export function onVerdicts(run: SessionRun, verdicts: AccountVerdicts): void {
  const logger = run.options.logger;
  if (verdicts.changeId === 0n) {
    // Pushed by the gateway on its own (promotion from STANDBY, or a demotion).
    applyVerdictUpdate(verdicts, {
      accounts: run.known,
      startCaching: (account, verdict) => applyVerdict(run, account, verdict),
      stopWatchers: (account) => run.watchers.push(stopAccountWatchers(account, run.outbox)),
      logger,
    });
    return;
  }
  const added = run.awaitingVerdicts.get(verdicts.changeId);
  if (added === undefined) {
    logger.warn({ changeId: Number(verdicts.changeId) }, 'ignoring AccountVerdicts for an unknown change');
    return;
  }
  run.awaitingVerdicts.delete(verdicts.changeId);
  added.forEach((account, index) => {
    if (!run.state.accounts.includes(account)) return; // removed again meanwhile
    const name = account.prepared.config.name;
    const byName = verdicts.accounts.find((v) => v.account === name);
    const byOrder = verdicts.accounts[index];
    applyVerdict(run, account, byName ?? (byOrder && byOrder.account === '' ? byOrder : undefined));
  });
}

/** The running session as the account manager sees it (see {@link LiveSession}). */
export function createLiveSession(run: SessionRun): LiveSession {
  return {
    announce(removed, added) {
      const done = removed.map((account) => stopAccountWatchers(account, run.outbox));
      const removedNames = removed.filter((a) => run.known.delete(a)).map((a) => a.prepared.config.name);
      for (const account of added) {
        account.verdict = 'unknown';
        account.reason = undefined;
        account.watches = [];
        run.known.add(account);
      }
      if (removedNames.length > 0 || added.length > 0) {
        if (run.welcomed) sendAccountsChanged(run, removedNames, added);
        else run.beforeWelcome.push({ removed: removedNames, added });
      }
      return Promise.all(done).then(() => undefined);
    },
    unacked: () => run.outbox?.inFlight ?? 0,
  };
}
