/**
 * Admission of a Hello's accounts: the per-account verdict (REFUSED when the stream's identity may not register the
 * name, when an admin deactivated the account, or when the name is bound to another agent identity or another cluster
 * — those last refusals are recorded on the account's row so ListAccounts shows them, logged and counted; STANDBY
 * when another live session of the same identity caches it, on this replica or, by its lease, on another; CACHING
 * otherwise), the atomic ACTIVE claim of the lease in the database (which also binds the name to the identity, see
 * docs/accounts.md "Identity binding"), and the resume points offered for the accounts this session will cache.
 */
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.js';
import { Verdict, type AccountInfo, type AccountVerdict, type Hello } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { SyncState } from '../cache/sync-state.js';
import type { Logger } from '../../shared/logger.js';
import { identityOf, mayRegister } from '../auth/principal.js';
import type { ClaimRecorder } from '../metrics/gateway-metrics.js';
import { isBoundElsewhere, isBoundToOtherIdentity, type AccountBinding } from '../accounts/account-binding.js';
import { claimAccounts, readBindings, recordAccountFailures, recordRefusedClaim } from '../accounts/account-claim-queries.js';
import type { AccountStreamState } from './account-stream-state.js';
import type { LiveSession, SessionRegistry } from './session-registry.js';

/** What admission reads and writes. */
export interface AdmissionDeps {
  gatewayId: string;
  resumeMaxAgeSeconds: number;
  /** `replicas.leaseSeconds`: length of an account ownership lease. */
  leaseSeconds: number;
  registry: SessionRegistry;
  /** The database: bindings are read and claims written through account-claim-queries.ts. */
  db: Db;
  syncState: SyncState;
  /** Where refused claims are logged (warn); none when absent (tests of admission alone). */
  logger?: Logger;
  /** Counts refused claims by reason; none when absent. */
  claimMetrics?: ClaimRecorder;
}

/**
 * Where admission records its claims on the stream (account-stream-state.ts): each account it reserves in the registry
 * is `claim`ed there too, and each claim the database refuses is `claimRefused`, so the stream's end releases exactly
 * what is still claimed.
 */
export type AdmissionClaims = Pick<AccountStreamState, 'claim' | 'claimRefused'>;

/** Why a claim of a name bound to something else was refused (the `reason` label of the refused-claims counter). */
type ClaimRefusal = 'identity' | 'cluster';

/**
 * Decides the verdicts, in the Hello's order. Accounts the session will cache are claimed in the registry and in
 * `streamAccounts` as soon as they are claimed, so the caller can release them even when admission stops half-way;
 * their leases are granted in the registry once the database granted them. `takeoverSessions` are earlier sessions of the
 * same agent whose leases this one may take at once (the session it resumed, streams it superseded). Returns
 * undefined when `isStopped()` turned true meanwhile (the stream ended; nothing more to send).
 */
export async function admitAccounts(
  hello: Pick<Hello, 'agentId' | 'zone' | 'accounts'>,
  session: LiveSession,
  streamAccounts: AdmissionClaims,
  isStopped: () => boolean,
  deps: AdmissionDeps,
  takeoverSessions: string[] = [],
): Promise<AccountVerdict[] | undefined> {
  const { registry, db } = deps;
  const names = hello.accounts.map((a) => a.name);
  const bindings = await readBindings(db, names);
  if (isStopped()) return undefined;
  const verdicts = new Map<string, AccountVerdict>();
  const candidates: AccountInfo[] = [];
  const identity = identityOf(session.principal);
  const claims: { info: AccountInfo; boundTo: string; reason: string; kind: ClaimRefusal }[] = [];
  const refuse = (info: AccountInfo, kind: ClaimRefusal, boundTo: string, reason: string) => {
    verdicts.set(info.name, verdict(info.name, Verdict.REFUSED, reason));
    claims.push({ info, boundTo, reason, kind });
  };
  const failed: AccountInfo[] = [];
  for (const info of hello.accounts) {
    const binding = bindings.get(info.name);
    const owner = registry.ownerOf(info.name);
    if (!mayRegister(session.principal, info.name)) {
      // Decided before anything is read from or written to the row: an unauthorized claim leaves no trace on it.
      verdicts.set(
        info.name,
        verdict(info.name, Verdict.REFUSED, `agent identity ${session.principal.subject} may not register account ${info.name}`),
      );
    } else if (isBoundToOtherIdentity(binding, identity)) {
      // Whatever cluster it reports: a reported API host and CA fingerprint prove nothing (anyone may read them).
      refuse(info, 'identity', binding!.identity!, identityRefusal(info.name, binding!.identity!, identity));
    } else if (owner && owner !== session && identityOf(owner.principal) !== identity && binding?.identity !== identity) {
      // The row is not bound yet (the owner's claim is still being written): it will be bound to the owner. (When the
      // row is bound to this stream's identity, an admin moved it: the owner's lease is ended, it stands by below.)
      refuse(info, 'identity', identityOf(owner.principal), identityRefusal(info.name, identityOf(owner.principal), identity));
    } else if (isFailed(info)) {
      // Its cluster could not be loaded or reached: this account fails, the Hello's other accounts go on.
      verdicts.set(info.name, verdict(info.name, Verdict.REFUSED, `the agent cannot serve account ${info.name}: ${info.error}`));
      failed.push(info);
    } else if (isBoundElsewhere(binding, info)) {
      refuse(info, 'cluster', binding!.identity ?? '', refusal(info, binding!));
    } else if (binding?.desiredState === 'INACTIVE') {
      verdicts.set(info.name, verdict(info.name, Verdict.REFUSED, deactivated(info.name)));
    } else if (owner && owner !== session) {
      verdicts.set(info.name, verdict(info.name, Verdict.STANDBY, `account is cached by agent ${owner.agentId} (session ${owner.id})`));
    } else {
      registry.claim(info.name, session);
      streamAccounts.claim(info.name);
      candidates.push(info);
    }
  }
  // The checks above can race with another replica's first registration or an admin's change; the conditional
  // upsert cannot.
  const claimedAt = performance.now();
  const epochs = await claimAccounts(
    db,
    { sessionId: session.id, agentId: hello.agentId, gatewayId: deps.gatewayId, zone: hello.zone, identity },
    candidates,
    { seconds: deps.leaseSeconds, takeoverSessions },
  );
  const activated = new Set(epochs.keys());
  for (const [name, epoch] of epochs) registry.grant(name, session, epoch, leaseValidUntil(claimedAt, deps.leaseSeconds));
  const lost = candidates.filter((c) => !activated.has(c.name));
  const lostNames = lost.map((c) => c.name);
  const lostBindings = await readBindings(db, lostNames); // no query when nothing was lost
  for (const info of lost) {
    registry.release(info.name, session);
    streamAccounts.claimRefused(info.name);
    const binding = lostBindings.get(info.name) ?? { name: info.name, apiHost: '(unknown)', caFingerprint: '' };
    if (isBoundToOtherIdentity(binding, identity)) {
      // Bound meanwhile (another replica's first claim, an admin's rebind): never STANDBY for another identity's lease.
      refuse(info, 'identity', binding.identity!, identityRefusal(info.name, binding.identity!, identity));
    } else if (isBoundElsewhere(binding, info)) {
      refuse(info, 'cluster', binding.identity ?? '', refusal(info, binding));
    } else if (binding.holder && binding.desiredState !== 'INACTIVE') {
      const h = binding.holder;
      verdicts.set(
        info.name,
        verdict(info.name, Verdict.STANDBY, `account is cached by agent ${h.agentId} (session ${h.sessionId}) on gateway ${h.gatewayId}`),
      );
    } else {
      const reason = binding.desiredState === 'INACTIVE' ? deactivated(info.name) : `account ${info.name} is being deleted`;
      verdicts.set(info.name, verdict(info.name, Verdict.REFUSED, reason));
    }
  }
  await recordAccountFailures(db, hello.agentId, hello.zone, failed, identity);
  for (const { info, reason, kind, boundTo } of claims) {
    deps.claimMetrics?.claimRefused(kind);
    deps.logger?.warn(
      {
        account: info.name,
        reason: kind,
        sessionId: session.id,
        agentId: hello.agentId,
        identity,
        boundIdentity: boundTo,
        apiHost: info.apiHost,
      },
      kind === 'identity'
        ? 'account claim refused: the name is bound to another agent identity'
        : 'account claim refused: the name is bound to another cluster',
    );
    await recordRefusedClaim(db, info.name, {
      agentId: hello.agentId,
      apiHost: info.apiHost,
      caFingerprint: info.caFingerprint,
      reason,
      identity,
    });
  }
  const resume = await deps.syncState.resumePoints([...activated], deps.resumeMaxAgeSeconds);
  if (isStopped()) return undefined;
  for (const name of activated) verdicts.set(name, verdict(name, Verdict.CACHING, ''));
  for (const point of resume) {
    verdicts.get(point.account)!.resume.push({
      $typeName: 'outpost.agent.v1.ResumePoint',
      apiVersion: point.apiVersion,
      kind: point.kind,
      watchNamespace: point.watchNamespace,
      resourceVersion: point.resourceVersion,
    });
  }
  return names.map((n) => verdicts.get(n)!);
}

/**
 * Until when (by `performance.now()`) a lease granted or renewed by a statement sent at `sentAt` is surely valid: the
 * database started its clock after `sentAt`, and a margin covers clock-rate differences.
 */
export function leaseValidUntil(sentAt: number, leaseSeconds: number): number {
  return sentAt + leaseSeconds * 1000 * 0.9;
}

/** True for an account the agent reports it cannot serve (no API host, with the reason in `error`). */
function isFailed(info: AccountInfo): boolean {
  return info.apiHost === '' && info.error !== '';
}

function verdict(account: string, v: Verdict, reason: string): AccountVerdict {
  return { $typeName: 'outpost.agent.v1.AccountVerdict', account, verdict: v, reason, resume: [] };
}

function deactivated(name: string): string {
  return `account ${name} was deactivated by an admin (desired state INACTIVE); activate it to let agents serve it`;
}

function identityRefusal(name: string, boundTo: string, identity: string): string {
  return (
    `account name ${JSON.stringify(name)} is bound to agent identity ${boundTo}; this stream authenticated as ${identity} ` +
    `(an admin may move the binding: docs/accounts.md, "Identity binding")`
  );
}

function refusal(info: AccountInfo, binding: AccountBinding): string {
  const ca = (fp: string) => (fp ? `CA ${fp.slice(0, 16)}…` : 'no CA');
  return (
    `account name ${JSON.stringify(info.name)} is bound to cluster ${binding.apiHost} (${ca(binding.caFingerprint)}); ` +
    `this agent reports ${info.apiHost} (${ca(info.caFingerprint)})`
  );
}
