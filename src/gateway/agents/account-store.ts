/**
 * The `accounts` rows as the agent streams see them: the name → cluster binding (API host + CA fingerprint) that
 * must never be hijacked, and the ACTIVE/INACTIVE state of each account with the session that caches it.
 */
import { and, eq, inArray, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { accounts } from '../../db/schema.js';
import type { AccountInfo } from '../../gen/outpost/agent/v1/agent_pb.js';

/** The cluster an account name is bound to. */
export interface AccountBinding {
  name: string;
  apiHost: string;
  caFingerprint: string;
}

/** Who activates an account. */
export interface SessionIdentity {
  sessionId: string;
  agentId: string;
  gatewayId: string;
}

/** Account row operations used by agent sessions. */
export interface AccountStore {
  /** Current bindings of the named accounts (absent names are unbound). */
  bindings(names: string[]): Promise<Map<string, AccountBinding>>;
  /**
   * Marks the accounts ACTIVE for the session and binds unbound names to the reported cluster, atomically per row:
   * a row bound to another cluster is left alone. Returns the names actually activated.
   */
  activate(session: SessionIdentity, infos: AccountInfo[]): Promise<Set<string>>;
  /** Marks the accounts INACTIVE, but only those still held by this session (a newer session may own them). */
  deactivate(sessionId: string, names: string[]): Promise<void>;
  /** Applies an AccountReport's description to an account the session holds. */
  applyReport(sessionId: string, info: AccountInfo): Promise<void>;
}

/** True when the row binds the name to a different cluster than the one reported. */
export function isBoundElsewhere(binding: AccountBinding | undefined, info: AccountInfo): boolean {
  if (!binding || binding.apiHost === '') return false;
  return binding.apiHost !== info.apiHost || binding.caFingerprint !== info.caFingerprint;
}

/** Creates the store over an open database. */
export function createAccountStore(database: Database): AccountStore {
  const { db } = database;
  return {
    async bindings(names) {
      if (names.length === 0) return new Map();
      const rows = await db
        .select({ name: accounts.name, apiHost: accounts.apiHost, caFingerprint: accounts.caFingerprint })
        .from(accounts)
        .where(inArray(accounts.name, names));
      return new Map(rows.map((r) => [r.name, r]));
    },

    async activate(session, infos) {
      if (infos.length === 0) return new Set();
      const rows = await db
        .insert(accounts)
        .values(
          infos.map((info) => ({
            name: info.name,
            state: 'ACTIVE',
            reason: info.error,
            agentId: session.agentId,
            sessionId: session.sessionId,
            gatewayId: session.gatewayId,
            ...describe(info),
            lastConnectionAt: sql`now()`,
          })),
        )
        .onConflictDoUpdate({
          target: accounts.name,
          set: {
            state: 'ACTIVE',
            reason: sql`excluded.reason`,
            agentId: sql`excluded.agent_id`,
            sessionId: sql`excluded.session_id`,
            gatewayId: sql`excluded.gateway_id`,
            apiHost: sql`excluded.api_host`,
            caFingerprint: sql`excluded.ca_fingerprint`,
            kubernetesVersion: sql`excluded.kubernetes_version`,
            namespaces: sql`excluded.namespaces`,
            kinds: sql`excluded.kinds`,
            skippedKinds: sql`excluded.skipped_kinds`,
            properties: sql`excluded.properties`,
            lastConnectionAt: sql`now()`,
            updatedAt: sql`now()`,
          },
          setWhere: or(
            eq(accounts.apiHost, ''),
            and(eq(accounts.apiHost, sql`excluded.api_host`), eq(accounts.caFingerprint, sql`excluded.ca_fingerprint`)),
          ),
        })
        .returning({ name: accounts.name });
      return new Set(rows.map((r) => r.name));
    },

    async deactivate(sessionId, names) {
      if (names.length === 0) return;
      await db
        .update(accounts)
        .set({ state: 'INACTIVE', updatedAt: sql`now()` })
        .where(and(inArray(accounts.name, names), eq(accounts.sessionId, sessionId)));
    },

    async applyReport(sessionId, info) {
      await db
        .update(accounts)
        .set({ ...describe(info), reason: info.error, updatedAt: sql`now()` })
        .where(and(eq(accounts.name, info.name), eq(accounts.sessionId, sessionId)));
    },
  };
}

function describe(info: AccountInfo) {
  return {
    apiHost: info.apiHost,
    caFingerprint: info.caFingerprint,
    kubernetesVersion: info.kubernetesVersion,
    namespaces: [...info.namespaces],
    kinds: info.kinds.map((k) => ({ apiVersion: k.apiVersion, kind: k.kind, resource: k.resource, namespaced: k.namespaced })),
    skippedKinds: info.skippedKinds.map((k) => ({ apiVersion: k.apiVersion, kind: k.kind, reason: k.reason })),
    properties: { ...info.properties },
  };
}
