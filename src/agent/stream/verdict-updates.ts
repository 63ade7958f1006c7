/**
 * Verdict updates the gateway pushes mid-session (an AccountVerdicts with change_id 0, not the answer to an
 * AccountsChanged): the gateway promotes a STANDBY agent to CACHING when the agent that cached an account died, and
 * rarely demotes one back to STANDBY (or REFUSED). Kept apart from the session so that the session only routes the
 * message; starting and stopping watchers stays with the session, which owns the outbox and awaits every watcher.
 */
import type { Logger } from 'pino';
import { Verdict, type AccountVerdict, type AccountVerdicts } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';

/** What {@link applyVerdictUpdate} needs from the session. */
export interface VerdictUpdateContext {
  /** The accounts the gateway knows in this session (from the Hello or an AccountsChanged). */
  accounts: Iterable<AccountRuntime>;
  /**
   * Records a CACHING verdict and starts the account's watchers from its resume points, exactly as for a Welcome
   * verdict. Called only when the account is not streaming yet.
   */
  startCaching(account: AccountRuntime, verdict: AccountVerdict): void;
  /**
   * Stops the account's watchers synchronously and drops its unsent data from the outbox. The session must await the
   * watchers' return before it ends (as it does for every watcher it started).
   */
  stopWatchers(account: AccountRuntime): void;
  logger: Logger;
}

/**
 * Applies a pushed verdict update (`update.changeId` must be 0) to the session's accounts, entry by entry, matched by
 * name: CACHING starts an account that is not streaming (and changes nothing for one that is); STANDBY and REFUSED
 * stop its watchers and record the verdict and reason, keeping the account (its status then lists no watches). Unknown accounts and unspecified verdicts
 * are logged and ignored; nothing here ends the session.
 */
export function applyVerdictUpdate(update: AccountVerdicts, context: VerdictUpdateContext): void {
  const { logger } = context;
  const byName = new Map<string, AccountRuntime>();
  for (const account of context.accounts) byName.set(account.prepared.config.name, account);
  for (const entry of update.accounts) {
    const account = byName.get(entry.account);
    if (account === undefined) {
      logger.debug(
        { account: entry.account, verdict: Verdict[entry.verdict] },
        'ignoring a pushed verdict for an account this session does not know',
      );
      continue;
    }
    const log = logger.child({ account: entry.account });
    const reason = entry.reason || undefined;
    if (entry.verdict === Verdict.CACHING) {
      if (account.verdict === 'caching' && account.run !== undefined) {
        log.debug('pushed CACHING verdict for an account already streaming; nothing to do');
        continue;
      }
      log.info({ reason, resumePoints: entry.resume.length }, 'account promoted to caching by the gateway');
      context.startCaching(account, entry);
    } else if (entry.verdict === Verdict.STANDBY || entry.verdict === Verdict.REFUSED) {
      const verdict = entry.verdict === Verdict.STANDBY ? 'standby' : 'refused';
      context.stopWatchers(account);
      account.verdict = verdict;
      account.reason = reason;
      account.watches = []; // as for a STANDBY verdict in the Welcome: the status shows no stopped watches
      if (verdict === 'standby') log.info({ verdict, reason }, 'account demoted to standby by the gateway: not streaming');
      else log.warn({ verdict, reason }, `account refused by the gateway: ${reason ?? 'no reason given'}; not streaming it`);
    } else {
      log.warn({ verdict: entry.verdict }, 'ignoring a pushed verdict without a known verdict value');
    }
  }
}
