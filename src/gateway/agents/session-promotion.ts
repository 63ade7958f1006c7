/**
 * Moving an account's caching between streams while they live. Promotion of a STANDBY stream: when the session caching an account is gone (its stream ended and released the
 * lease, or its replica stopped renewing it), a live stream that serves the account as STANDBY claims the lease like a
 * Hello would (a new epoch), and is told so with an unsolicited AccountVerdicts (`change_id` 0) carrying CACHING and
 * the stored resume points, so the agent watches on from where the cache is instead of listing again. Runs between the
 * stream's messages (the caller serialises it with them). Demotion, the other way, when a stream's lease is gone.
 */
import { performance } from 'node:perf_hooks';
import { create } from '@bufbuild/protobuf';
import { ConnectResponseSchema, ResumePointSchema, Verdict, type AccountVerdict } from '../../gen/outpost/agent/v1/agent_pb.js';
import { isBoundToOtherIdentity } from '../accounts/account-binding.js';
import { claimAccounts, readBindings } from '../accounts/account-claim-queries.js';
import { identityOf } from '../auth/principal.js';
import { leaseValidUntil, type AdmissionDeps } from './admission.js';
import type { AccountPhase } from './account-stream-state.js';
import type { SessionRegistry } from './session-registry.js';
import type { StreamState } from './stream-state.js';

/** Promotion reads and writes what admission does. */
export type PromotionDeps = AdmissionDeps;

/**
 * Tries to take over `names` (accounts the stream serves as STANDBY) for the stream. Returns the accounts it now
 * caches. Accounts still leased elsewhere, or claimed by another stream of this replica, stay STANDBY.
 */
export async function promoteStandby(state: StreamState, names: string[], deps: PromotionDeps): Promise<string[]> {
  const { registry, db } = deps;
  // Only STANDBY accounts no stream of this replica claims (one being promoted here is claimed by this stream).
  const candidates = [...new Set(names)].filter((n) => state.accounts.phaseOf(n) === 'standby' && !registry.ownerOf(n));
  if (candidates.length === 0 || state.stopped) return [];
  for (const name of candidates) {
    registry.claim(name, state);
    state.accounts.beginPromotion(name);
  }
  const release = (name: string) => {
    registry.release(name, state);
    state.accounts.promotionFailed(name);
  };
  const claimedAt = performance.now();
  let epochs: Map<string, number>;
  try {
    epochs = await claimAccounts(
      db,
      { sessionId: state.id, agentId: state.agentId, gatewayId: deps.gatewayId, zone: state.zone, identity: identityOf(state.principal) },
      candidates.map((n) => state.accounts.infoOf(n)!),
      { seconds: deps.leaseSeconds, takeoverSessions: [] },
    );
  } catch (err) {
    candidates.forEach(release);
    throw err;
  }
  for (const name of candidates) {
    const epoch = epochs.get(name);
    if (epoch === undefined) release(name);
    else registry.grant(name, state, epoch, leaseValidUntil(claimedAt, deps.leaseSeconds));
  }
  const won = candidates.filter((n) => epochs.has(n));
  const lost = candidates.filter((n) => !epochs.has(n));
  let resume: Awaited<ReturnType<PromotionDeps['syncState']['resumePoints']>>;
  try {
    if (lost.length > 0 && !state.stopped) await refuseRebound(state, lost, deps);
    // A stream that ended meanwhile releases what it claimed in its cleanup.
    if (won.length === 0 || state.stopped) return [];
    resume = await deps.syncState.resumePoints(won, deps.resumeMaxAgeSeconds);
  } catch (err) {
    // Granted but never told CACHING: back to STANDBY and out of the registry, so the lease keeper stops renewing the
    // lease; it expires and a later standby check promotes again. Left "promoting", the lease would be renewed forever
    // while nobody watches the account.
    won.filter((n) => state.accounts.phaseOf(n) === 'promoting').forEach(release);
    throw err;
  }
  const reason = `promoted: the agent that cached the account went away (gateway ${deps.gatewayId})`;
  const verdicts: AccountVerdict[] = won.map((account) => ({
    $typeName: 'outpost.agent.v1.AccountVerdict',
    account,
    verdict: Verdict.CACHING,
    reason,
    resume: resume
      .filter((p) => p.account === account)
      .map((p) =>
        create(ResumePointSchema, {
          apiVersion: p.apiVersion,
          kind: p.kind,
          watchNamespace: p.watchNamespace,
          resourceVersion: p.resourceVersion,
        }),
      ),
  }));
  for (const name of won) state.accounts.promoted(name);
  if (state.stopped) return [];
  state.outbox.push(create(ConnectResponseSchema, { message: { case: 'verdicts', value: { changeId: 0n, accounts: verdicts } } }));
  await state.row.updateVerdicts(state.accounts.verdicts());
  state.log.info(
    { accounts: won, epochs: won.map((n) => epochs.get(n)), resumePoints: verdicts.reduce((n, v) => n + v.resume.length, 0) },
    'standby agent promoted: it caches the accounts now',
  );
  return won;
}

/**
 * Of `names` (STANDBY accounts whose claim the database just refused), those now bound to another agent identity (an
 * admin moved the binding) are REFUSED on the stream: it no longer serves them, is never promoted for them, and the
 * agent is told with an unsolicited AccountVerdicts.
 */
async function refuseRebound(state: StreamState, names: string[], deps: PromotionDeps): Promise<void> {
  const identity = identityOf(state.principal);
  const bindings = await readBindings(deps.db, names);
  const rebound = names.filter((n) => isBoundToOtherIdentity(bindings.get(n), identity));
  if (rebound.length === 0 || state.stopped) return;
  const verdicts: AccountVerdict[] = rebound.map((account) => ({
    $typeName: 'outpost.agent.v1.AccountVerdict',
    account,
    verdict: Verdict.REFUSED,
    reason: `account name ${JSON.stringify(account)} is bound to agent identity ${bindings.get(account)!.identity}; this stream authenticated as ${identity}`,
    resume: [],
  }));
  for (const name of rebound) state.accounts.rebound(name);
  state.outbox.push(create(ConnectResponseSchema, { message: { case: 'verdicts', value: { changeId: 0n, accounts: verdicts } } }));
  await state.row.updateVerdicts(state.accounts.verdicts());
  state.log.warn({ accounts: rebound, identity }, 'standby stream refused: the accounts are bound to another agent identity now');
  for (let i = 0; i < rebound.length; i++) deps.claimMetrics?.claimRefused('identity');
}

/**
 * The stream lost the leases of `accounts`: it stops caching those it still claims under a verdict (released here,
 * STANDBY on the stream, and an unsolicited AccountVerdicts tells the agent to stop their watches). Operations for
 * them may still come to it as a standby. Nothing is written to the accounts' rows: they belong to whoever holds them
 * now. An account still being admitted (no verdict yet, which happens only on a stream that is failing) is left to
 * the stream's end, which releases it.
 */
export async function demoteLost(state: StreamState, accounts: string[], registry: SessionRegistry): Promise<void> {
  const lost = [...new Set(accounts)].filter((name) => DEMOTABLE.has(state.accounts.phaseOf(name)));
  if (lost.length === 0 || state.stopped) return;
  for (const name of lost) {
    registry.release(name, state);
    state.accounts.leaseLost(name);
  }
  const reason = 'this gateway replica no longer holds the lease of the account (another session caches it now, or it was deleted)';
  const verdicts: AccountVerdict[] = lost.map((account) => ({
    $typeName: 'outpost.agent.v1.AccountVerdict',
    account,
    verdict: Verdict.STANDBY,
    reason,
    resume: [],
  }));
  state.outbox.push(create(ConnectResponseSchema, { message: { case: 'verdicts', value: { changeId: 0n, accounts: verdicts } } }));
  state.log.warn({ accounts: lost }, 'lost the lease of accounts: the stream serves them as STANDBY now');
  await state.row.updateVerdicts(state.accounts.verdicts());
}

/** The phases in which the stream holds an account's lease under a verdict: the ones a lost lease demotes. */
const DEMOTABLE: ReadonlySet<AccountPhase | undefined> = new Set<AccountPhase | undefined>(['caching', 'promoting']);
