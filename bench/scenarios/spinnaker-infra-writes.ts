/**
 * The write cost of migrations 0012 and 0013 (the generated moniker and owner columns of `objects` and their three
 * indexes), as the spinnaker-infra benchmark measures it: the same fixture loaded by the same simulated agents through
 * a fresh gateway's write path into three schemas — as migrated (columns and indexes), with the three indexes dropped (the
 * columns still computed on every write), and with the six columns dropped (their indexes go with them: the table
 * of migration 0011) — in rotating order (ABC, CBA, …), fresh database and gateway each time. Throughput is objects
 * over the time from every stream welcomed to the last list acknowledged (committed), so it includes the streams and
 * decoding, which are the same in the three schemas: the differences are what the columns and indexes cost.
 */
import postgres from 'postgres';
import { openDatabase } from '../../src/db/database.js';
import { createTestDatabase } from '../../testkit/databases.js';
import type { KubeObject } from '../infra-fixture.js';
import { loadAccounts } from '../infra-loader.js';
import { startGateway } from '../processes.js';

/** The schemas compared. */
export const SCHEMAS = ['0012', 'columns', 'pre-0012'] as const;
export type InfraSchema = (typeof SCHEMAS)[number];

/** Objects per second of each load, by schema, in the order measured. */
export interface InfraWritesResult {
  objects: number;
  rounds: number;
  objectsPerSecond: Record<InfraSchema, number[]>;
}

/** What turns the migrated schema into each of the others. */
const ALTER: Record<InfraSchema, string[]> = {
  '0012': [],
  columns: ['drop index objects_spinnaker_app_idx', 'drop index objects_owner_uid_idx', 'drop index objects_multi_owner_idx'],
  // dropping owner_uids drops objects_multi_owner_idx, whose predicate reads it
  'pre-0012': [
    'alter table objects drop column spinnaker_app, drop column spinnaker_cluster, drop column owner_uid, drop column owner_uids, drop column pod_instance, drop column server_group_summary',
  ],
};

/** One load into a fresh database of `schema`; objects per second. */
async function loadOnce(
  postgresUrl: string,
  schema: InfraSchema,
  fixture: readonly { account: string; objects: KubeObject[] }[],
): Promise<number> {
  const database = await createTestDatabase('postgres', postgresUrl);
  try {
    // Migrated (and altered) before the gateway starts: it finds every migration applied and the table as left here.
    const migrated = await openDatabase(database.url, { maxConnections: 1 });
    await migrated.close();
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      for (const statement of ALTER[schema]) await sql.unsafe(statement);
      const gateway = await startGateway(database.url);
      try {
        const loaded = await loadAccounts(`http://127.0.0.1:${gateway.grpcPort}`, fixture);
        loaded.close();
        const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from objects`;
        if (n !== loaded.objects) throw new Error(`${schema}: ${n} rows after loading ${loaded.objects} objects`);
        return loaded.objects / loaded.seconds;
      } finally {
        await gateway.child.stop();
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await database.drop();
  }
}

/** Loads the fixture `rounds` times into each schema. */
export async function measureInfraWrites(
  postgresUrl: string,
  fixture: readonly { account: string; objects: KubeObject[] }[],
  rounds: number,
): Promise<InfraWritesResult> {
  const objectsPerSecond: Record<InfraSchema, number[]> = { '0012': [], columns: [], 'pre-0012': [] };
  for (let r = 0; r < rounds; r++) {
    for (const schema of r % 2 === 0 ? SCHEMAS : [...SCHEMAS].reverse()) {
      objectsPerSecond[schema].push(await loadOnce(postgresUrl, schema, fixture));
    }
  }
  return { objects: fixture.reduce((n, a) => n + a.objects.length, 0), rounds, objectsPerSecond };
}
