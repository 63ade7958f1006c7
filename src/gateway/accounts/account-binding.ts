/**
 * What an account name is bound to, as admission reads it: the cluster (API host + CA fingerprint) and the agent
 * identity (docs/accounts.md, "Identity binding") that must never be hijacked, the admin's desired state, and the
 * holder of a live lease. The predicates here mirror the conditions of the claim statement
 * (account-claim-queries.ts), which decides; admission uses them to explain a refusal.
 */
import type { AccountInfo } from '../../gen/outpost/agent/v1/agent_pb.js';

/** The cluster and agent identity an account name is bound to, and what an admin asked for it. */
export interface AccountBinding {
  name: string;
  apiHost: string;
  caFingerprint: string;
  /** `identityOf` the principal that first claimed the name (or an admin bound it to); '' or absent: unbound. */
  identity?: string;
  /** ACTIVE, or INACTIVE when an admin deactivated the account: agents offering it are refused. */
  desiredState?: string;
  /** The holder of a live lease (not expired by the database clock), if any. */
  holder?: { agentId: string; sessionId: string; gatewayId: string };
}

/** Identities whose binding any other identity's claim replaces (insecure mode proves nothing). */
export const WEAK_IDENTITY_PREFIX = 'insecure:';

/**
 * True when the row binds the name to an identity other than `identity`. An unbound row ('') binds to anyone; so does
 * a row bound in insecure mode (`insecure:…`: nothing was proven when it was bound), so that turning authentication on
 * does not strand every account. Mirrors the `setWhere` of `claimAccounts`, which decides.
 */
export function isBoundToOtherIdentity(binding: AccountBinding | undefined, identity: string): boolean {
  const bound = binding?.identity ?? '';
  return bound !== '' && !bound.startsWith(WEAK_IDENTITY_PREFIX) && bound !== identity;
}

/** True when the row binds the name to a different cluster than the one reported. */
export function isBoundElsewhere(binding: AccountBinding | undefined, info: AccountInfo): boolean {
  if (!binding || binding.apiHost === '') return false;
  return binding.apiHost !== info.apiHost || binding.caFingerprint !== info.caFingerprint;
}
