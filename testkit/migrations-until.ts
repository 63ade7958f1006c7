/**
 * A copy of drizzle/ whose journal ends at an earlier migration: the schema an older version left, for tests and
 * benchmarks of an upgrade (drizzle's migrator applies every pending migration, so an older schema needs a folder
 * that does not list the later ones).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's migrations folder. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

/** A temporary migrations folder listing migrations 0 to `last` (by journal index); `remove()` deletes it. */
export function migrationsUntil(last: number): { folder: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `outpost-migrations-${last}-`));
  const folder = join(dir, 'drizzle');
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { idx: number }[] };
  if (!journal.entries.some((e) => e.idx === last)) throw new Error(`no migration ${last} in ${MIGRATIONS_FOLDER}`);
  journal.entries = journal.entries.filter((e) => e.idx <= last);
  writeFileSync(journalPath, JSON.stringify(journal));
  return { folder, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
