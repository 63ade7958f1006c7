/**
 * `outpost.api.v1.AccountService`: the accounts agents registered, with the cache state of every kind (object count,
 * synced, listing progress) computed from `objects` (one GROUP BY) and `watch_states`.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { asc, count, eq, inArray } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { accounts, objects, watchStates } from '../../db/schema.js';
import { AccountService, type Account, type KindStatus } from '../../gen/outpost/api/v1/account_service_pb.js';

/** Creates the AccountService implementation. */
export function createAccountService(database: Database): Partial<ServiceImpl<typeof AccountService>> {
  const { db } = database;
  return {
    async listAccounts(req) {
      const rows = await db
        .select()
        .from(accounts)
        .where(req.name ? eq(accounts.name, req.name) : undefined)
        .orderBy(asc(accounts.name));
      if (rows.length === 0) return { accounts: [] };
      const names = rows.map((r) => r.name);
      const counts = await db
        .select({ account: objects.account, apiVersion: objects.apiVersion, kind: objects.kind, n: count() })
        .from(objects)
        .where(inArray(objects.account, names))
        .groupBy(objects.account, objects.apiVersion, objects.kind);
      const states = await db.select().from(watchStates).where(inArray(watchStates.account, names));

      return {
        accounts: rows.map((row): Account => {
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
          return {
            $typeName: 'outpost.api.v1.Account',
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
            skippedKinds: row.skippedKinds.map((s) => ({ $typeName: 'outpost.api.v1.SkippedKind', ...s })),
            lastEventTime: row.lastEventAt ? timestampFromDate(row.lastEventAt) : undefined,
            lastConnectionTime: row.lastConnectionAt ? timestampFromDate(row.lastConnectionAt) : undefined,
            syncProgress: {
              $typeName: 'outpost.api.v1.SyncProgress',
              kindsTotal: statuses.length,
              kindsSynced: statuses.filter((s) => s.synced).length,
              objectsListed: statuses.reduce((sum, s) => sum + s.listed, 0n),
            },
          };
        }),
      };
    },
  };
}
