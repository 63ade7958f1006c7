/**
 * Reads accounts as clients see them: `accounts` rows joined with the cache state of every kind (object count from
 * one GROUP BY over `objects`, synced/listed from `watch_states`), the definition of dynamic accounts, the latest
 * refused claim, the bound agent identity, the transport of the live stream caching the account (from
 * `agent_sessions`), and the recorded transitions. Shared by the AccountService RPCs and the REST routes.
 */
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Db } from '../../db/database.js';
import {
  AccountSchema,
  AccountTransitionSchema,
  RefusedClaimSchema,
  type Account,
  type AccountTransition,
  type KindStatus,
} from '../../gen/outpost/api/v1/account_service_pb.js';
import { liveCachingTransports } from '../agents/agent-session-store.js';
import { definitionFromJson } from '../accounts/account-input.js';
import { type AccountRow, readAccountPage, readAccountRow, readAccountRows, readAccountTransitions } from '../accounts/account-reads.js';
import { objectCountsByKind } from '../cache/object-reads.js';
import { type WatchStateRow, watchStatesOf } from '../cache/watch-state-reads.js';

/** Most transitions returned with one account. */
const MAX_TRANSITIONS = 100;

/** How account views read the agent sessions. */
export interface AccountViewOptions {
  /**
   * Session rows untouched for this long count as ended (`staleAfterSeconds` in agent-session-store): an account
   * shows the transport of its caching stream only while that stream's row is live.
   */
  staleAfterSeconds: number;
}

/** One page of accounts, by name. */
export interface AccountPage {
  accounts: Account[];
  /** Accounts matching, across pages. */
  total: number;
}

/** Lists accounts by name: `name` filters to one, `page` is 1-based, `limit` bounds the page (0: no bound). */
export async function listAccountViews(
  db: Db,
  query: { name?: string; page: number; limit: number },
  options: AccountViewOptions,
): Promise<AccountPage> {
  const { rows, total } = await readAccountPage(db, query);
  return { accounts: await toAccounts(db, rows, options), total };
}

/** One account and its newest transitions; undefined when unknown. */
export async function getAccountView(
  db: Db,
  name: string,
  options: AccountViewOptions,
): Promise<{ account: Account; transitions: AccountTransition[] } | undefined> {
  const rows = await readAccountRow(db, name);
  if (rows.length === 0) return undefined;
  const [account] = await toAccounts(db, rows, options);
  const history = await readAccountTransitions(db, name, MAX_TRANSITIONS);
  return {
    account: account!,
    transitions: history.map((t) =>
      create(AccountTransitionSchema, {
        fromState: t.fromState,
        toState: t.toState,
        reason: t.reason,
        actor: t.actor,
        time: timestampFromDate(t.at),
      }),
    ),
  };
}

/** Views of the named accounts, in name order (unknown names are skipped). */
export async function accountViews(db: Db, names: string[], options: AccountViewOptions): Promise<Account[]> {
  if (names.length === 0) return [];
  const rows = await readAccountRows(db, names);
  return toAccounts(db, rows, options);
}

async function toAccounts(db: Db, rows: AccountRow[], options: AccountViewOptions): Promise<Account[]> {
  if (rows.length === 0) return [];
  const names = rows.map((r) => r.name);
  const counts = await objectCountsByKind(db, names);
  const states = await watchStatesOf(db, names);
  const transports = await liveCachingTransports(
    db,
    rows.map((r) => ({ account: r.name, sessionId: r.sessionId })),
    options.staleAfterSeconds,
  );
  return rows.map((row) => toAccount(row, counts, states, transports.get(row.name) ?? ''));
}

function toAccount(
  row: AccountRow,
  counts: { account: string; apiVersion: string; kind: string; n: number }[],
  states: WatchStateRow[],
  transport: string,
): Account {
  const kinds = new Map<string, KindStatus & { scopes: number; syncedScopes: number }>();
  const kindOf = (apiVersion: string, kind: string) => {
    const key = `${apiVersion}\u0000${kind}`;
    let k = kinds.get(key);
    if (!k) {
      k = { $typeName: 'outpost.api.v1.KindStatus', apiVersion, kind, count: 0n, synced: false, listed: 0n, scopes: 0, syncedScopes: 0 };
      kinds.set(key, k);
    }
    return k;
  };
  for (const k of row.kinds) kindOf(k.apiVersion, k.kind);
  for (const c of counts) if (c.account === row.name) kindOf(c.apiVersion, c.kind).count = BigInt(c.n);
  for (const s of states) {
    if (s.account !== row.name) continue;
    const k = kindOf(s.apiVersion, s.kind);
    k.scopes++;
    if (s.synced) k.syncedScopes++;
    k.listed += BigInt(s.listed);
  }
  const statuses: KindStatus[] = [...kinds.values()].map(({ scopes, syncedScopes, ...k }) => ({
    ...k,
    synced: scopes > 0 && scopes === syncedScopes,
  }));
  const claim = row.refusedClaim;
  return create(AccountSchema, {
    name: row.name,
    state: row.state,
    reason: row.reason,
    agentId: row.agentId,
    gatewayId: row.gatewayId,
    apiHost: row.apiHost,
    caFingerprint: row.caFingerprint,
    kubernetesVersion: row.kubernetesVersion,
    namespaces: [...row.namespaces],
    kinds: statuses,
    skippedKinds: row.skippedKinds.map((s) => ({ ...s })),
    lastEventTime: row.lastEventAt ? timestampFromDate(row.lastEventAt) : undefined,
    lastConnectionTime: row.lastConnectionAt ? timestampFromDate(row.lastConnectionAt) : undefined,
    syncProgress: {
      kindsTotal: statuses.length,
      kindsSynced: statuses.filter((s) => s.synced).length,
      objectsListed: statuses.reduce((sum, s) => sum + s.listed, 0n),
    },
    zoneId: row.zoneId,
    source: row.source,
    definition: definitionFromJson(row.definition),
    boundIdentity: row.boundIdentity,
    transport,
    refusedClaim: claim
      ? create(RefusedClaimSchema, {
          agentId: claim.agentId,
          apiHost: claim.apiHost,
          caFingerprint: claim.caFingerprint,
          reason: claim.reason,
          time: timestampFromDate(new Date(claim.at)),
          identity: claim.identity ?? '',
        })
      : undefined,
  });
}
