/**
 * The dynamic accounts an agent should serve, read from the `accounts` rows: defined at the gateway, wanted ACTIVE by
 * an admin, not being deactivated or deleted, and in the agent's zone (zone '' accounts go to every agent). Agent
 * streams ask this right after each Welcome, so an agent that connects later still gets the accounts pushed earlier.
 */
import { and, asc, eq, notInArray, or } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { accounts } from '../../db/schema.js';
import type { DynamicAccountSource } from '../agents/account-commands.js';
import { definitionFromJson } from '../accounts/account-input.js';

/** Creates the source over the database. */
export function createDynamicAccountSource(database: Database): DynamicAccountSource {
  const { db } = database;
  return {
    async activeFor(zone) {
      const rows = await db
        .select({ definition: accounts.definition })
        .from(accounts)
        .where(
          and(
            eq(accounts.source, 'dynamic'),
            eq(accounts.desiredState, 'ACTIVE'),
            notInArray(accounts.state, ['INACTIVE', 'DEACTIVATING', 'DELETING', 'DELETE_FAILED']),
            or(eq(accounts.zoneId, ''), eq(accounts.zoneId, zone)),
          ),
        )
        .orderBy(asc(accounts.name));
      return rows.flatMap((r) => {
        const d = definitionFromJson(r.definition);
        return d ? [d] : [];
      });
    },
  };
}
