/**
 * In-memory PGlite databases (`memory://`) start from a template: the data directory of an empty database with every
 * migration applied, dumped once and kept in the system temp folder. Creating a database from it skips initdb and the
 * migrations (about 1.4 s instead of 3.5 s), which is what `outpost demo`, the CLI and a test suite that opens
 * hundreds of throwaway databases pay each time. The template's name carries the PGlite version, a hash of the
 * migrations and the object cache's partition count (object-partitions.ts: the migrations create that many), so a new
 * schema, engine or count never loads another's template; it is written to a temporary name and renamed,
 * so concurrent processes never read half a file. Any failure falls back to a fresh database.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { objectPartitionsSettingSql } from './object-partitions.js';
import * as schema from './schema.js';

let migrationsHash: string | undefined;

/** The file the template of these migrations, with this partition count, is kept in. */
function pathOf(migrationsFolder: string, partitions: number): string {
  migrationsHash ??= hashOf(migrationsFolder);
  return join(tmpdir(), `outpost-pglite-template-${migrationsHash}-p${partitions}.tar`);
}

/** The PGlite version and the migrations, hashed. */
function hashOf(migrationsFolder: string): string {
  const hash = createHash('sha256');
  try {
    hash.update(readFileSync(join(migrationsFolder, '..', 'node_modules', '@electric-sql', 'pglite', 'package.json')));
  } catch {
    // Not installed next to the migrations (a packaged install): the migrations alone key the template.
  }
  for (const name of readdirSync(migrationsFolder)
    .filter((n) => n.endsWith('.sql'))
    .sort()) {
    hash.update(name);
    hash.update(readFileSync(join(migrationsFolder, name)));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Opens a migrated in-memory PGlite: from the template when there is one, else fresh (migrated here) and then saved as
 * the template for the next process. The caller owns the returned client.
 */
export async function openMemoryPglite(migrationsFolder: string, partitions: number): Promise<PGlite> {
  const path = pathOf(migrationsFolder, partitions);
  let template: Buffer | undefined;
  try {
    template = readFileSync(path);
  } catch {
    template = undefined;
  }
  if (template) {
    const client = new PGlite({ loadDataDir: new Blob([new Uint8Array(template)]) });
    try {
      await client.waitReady;
      // The template is migrated already; this only confirms it (a no-op when up to date).
      const db = drizzlePglite({ client, schema });
      await db.execute(objectPartitionsSettingSql(partitions));
      await migratePglite(db, { migrationsFolder });
      return client;
    } catch {
      await client.close().catch(() => {});
    }
  }
  const client = new PGlite();
  await client.waitReady;
  const db = drizzlePglite({ client, schema });
  await db.execute(objectPartitionsSettingSql(partitions));
  await migratePglite(db, { migrationsFolder });
  try {
    const dump = await client.dumpDataDir('none');
    const temp = `${path}.${process.pid}.${Date.now()}`;
    writeFileSync(temp, Buffer.from(await dump.arrayBuffer()));
    renameSync(temp, path);
  } catch {
    // No template this time (read-only temp folder, full disk): the next process migrates again.
  }
  return client;
}
