/**
 * The dynamic accounts an agent should serve, read from the `accounts` rows: defined at the gateway, wanted ACTIVE by
 * an admin, not being deactivated or deleted, and in the agent's zone (zone '' accounts go to every agent). Agent
 * streams ask this right after each Welcome, so an agent that connects later still gets the accounts pushed earlier.
 */
import type { Database } from '../../db/database.js';
import { dynamicDefinitionsFor } from '../accounts/account-reads.js';
import type { DynamicAccountSource } from '../agents/account-commands.js';
import { definitionFromJson } from '../accounts/account-input.js';

/** Creates the source over the database. */
export function createDynamicAccountSource(database: Database): DynamicAccountSource {
  const { db } = database;
  return {
    async activeFor(zone) {
      const rows = await dynamicDefinitionsFor(db, zone);
      return rows.flatMap((r) => {
        const d = definitionFromJson(r.definition);
        return d ? [d] : [];
      });
    },
  };
}
