/**
 * One owner for the `accounts` table (docs/architecture.md, "Inside the gateway"): every statement that inserts,
 * updates or deletes `accounts` rows lives in the accounts repository under src/gateway/accounts/. This test scans
 * src/ for such statements — drizzle's `.insert(accounts)`, `.update(accounts)`, `.delete(accounts)` and raw SQL
 * `insert into accounts`, `update accounts`, `delete from accounts` (also with the drizzle table interpolated) — and
 * fails naming any found elsewhere. Comments are skipped; a write through an alias of the table object is not seen.
 * Reads (selects) may stay where they are.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The repository root (computed here, not imported: the test helpers are moving). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The files that own the `accounts` table: the only ones allowed to write it. */
const ACCOUNTS_OWNERS = [
  'src/gateway/accounts/account-repository.ts',
  'src/gateway/accounts/account-claim-queries.ts',
  'src/gateway/accounts/account-lease-queries.ts',
  'src/gateway/accounts/account-sweep-queries.ts',
];

/** One statement writing the table, as found. */
interface Write {
  line: number;
  text: string;
}

/** The source without its comments (line breaks kept, so line numbers still count). */
function withoutComments(source: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  return source.replace(/\/\*[\s\S]*?\*\//g, blank).replace(/(^|[^:\\'"`])\/\/[^\n]*/gm, (m, before: string) => before + blank(m.slice(1)));
}

/** Every statement in `source` that inserts, updates or deletes rows of `table` (drizzle or raw SQL). */
export function writesOf(source: string, table: string): Write[] {
  const name = `(?:"?public"?\\.)?"?${table}"?(?![\\w$])`;
  const patterns = [
    // drizzle builders: db.insert(accounts), tx.update(schema.accounts), .delete( accounts )
    new RegExp(`\\.(?:insert|update|delete)\\(\\s*(?:[\\w$]+\\.)?${table}\\s*\\)`, 'g'),
    // raw SQL, the table by name or interpolated: update accounts a set …, delete from ${accounts} …
    new RegExp(`\\b(?:insert\\s+into|update|delete\\s+from)\\s+(?:${name}|\\$\\{\\s*(?:[\\w$]+\\.)?${table}\\s*\\})`, 'gi'),
  ];
  const code = withoutComments(source);
  const found: Write[] = [];
  for (const pattern of patterns) {
    for (const m of code.matchAll(pattern)) found.push({ line: code.slice(0, m.index).split('\n').length, text: m[0] });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** The TypeScript files under src/, relative to the root. */
function sourceFiles(): string[] {
  return (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[])
    .filter((path) => /\.tsx?$/.test(path))
    .map((path) => join('src', path).replaceAll('\\', '/'));
}

describe('table owners', () => {
  test('the scanner finds every form of an accounts write (planted) and nothing else', () => {
    const planted = [
      'await tx.insert(accounts).values(rows);',
      'await db.update( accounts ).set({ state });',
      'await db.delete(schema.accounts).where(eq(accounts.name, name));',
      'await db.execute(sql`insert into accounts (name) values ($1)`);',
      'await db.execute(sql`UPDATE "accounts" SET state = $1`);',
      "await db.execute(sql`update public.accounts set reason = ''`);",
      'await db.execute(sql`delete\n  from accounts where name = $1`);',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: planted source text, interpolation included
      'await db.execute(sql`update ${accounts} set state = $1`);',
    ].join('\n');
    assert.deepEqual(
      writesOf(planted, 'accounts').map((w) => w.line),
      [1, 2, 3, 4, 5, 6, 7, 9],
    );
    const innocent = [
      'const rows = await db.select().from(accounts).where(eq(accounts.name, name));',
      'await tx.insert(accountTransitions).values(rows);',
      'await db.execute(sql`select name from accounts a where a.state = $1 for update`);',
      'await db.execute(sql`update accounts_archive set state = $1`);',
      '// a comment may say: update accounts here, then delete from accounts',
      '/* or .update(accounts) in a block */',
      "const url = 'postgres://db/accounts'; // update accounts",
      'const n = await store.update(account);',
    ].join('\n');
    assert.deepEqual(writesOf(innocent, 'accounts'), []);
  });

  test('only the accounts repository writes the accounts table', () => {
    const outside: string[] = [];
    for (const path of sourceFiles()) {
      if (ACCOUNTS_OWNERS.includes(path)) continue;
      for (const w of writesOf(readFileSync(join(ROOT, path), 'utf8'), 'accounts')) outside.push(`${path}:${w.line}: ${w.text}`);
    }
    assert.deepEqual(
      outside,
      [],
      'statements that write `accounts` belong in the accounts repository (src/gateway/accounts/account-repository.ts and its *-queries.ts siblings): add a function there and call it',
    );
  });

  test('every listed owner exists and writes the table (the list stays true)', () => {
    for (const path of ACCOUNTS_OWNERS) {
      assert.ok(writesOf(readFileSync(join(ROOT, path), 'utf8'), 'accounts').length > 0, `${path} writes accounts`);
    }
  });
});
