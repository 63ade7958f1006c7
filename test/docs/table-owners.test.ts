/**
 * One owner per table (docs/architecture.md, "Inside the gateway"): every statement that inserts, updates, deletes or
 * truncates rows of a table lives in that table's owner files, so the rules about its rows (leases and fences,
 * at-most-once operations, the cache's resume points) are kept in one place. This test scans every source file of
 * src/ (the generated code aside) for such statements — drizzle's `.insert(t)`, `.update(t)`, `.delete(t)` (also through
 * an import alias or a namespace import of the schema) and raw SQL by table name or with the drizzle table
 * interpolated — and fails naming any found outside the owners. Reads may live anywhere; tests are not scanned.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A table: its drizzle name (src/db/schema.ts), its SQL name, and the only files that may write it. */
interface Table {
  js: string;
  sql: string;
  owners: string[];
}

const TABLES: Table[] = [
  {
    js: 'accounts',
    sql: 'accounts',
    owners: [
      'src/gateway/accounts/account-repository.ts',
      'src/gateway/accounts/account-claim-queries.ts',
      'src/gateway/accounts/account-lease-queries.ts',
      'src/gateway/accounts/account-sweep-queries.ts',
      'src/gateway/accounts/objects-version-queries.ts',
    ],
  },
  { js: 'accountTransitions', sql: 'account_transitions', owners: ['src/gateway/accounts/account-states.ts'] },
  { js: 'agentSessions', sql: 'agent_sessions', owners: ['src/gateway/agents/agent-session-store.ts'] },
  {
    js: 'objects',
    sql: 'objects',
    owners: ['src/gateway/cache/object-writer.ts', 'src/gateway/cache/sync-state.ts', 'src/gateway/cache/cache-removal.ts'],
  },
  {
    js: 'watchStates',
    sql: 'watch_states',
    owners: ['src/gateway/cache/object-writer.ts', 'src/gateway/cache/sync-state.ts', 'src/gateway/cache/cache-removal.ts'],
  },
  {
    js: 'operations',
    sql: 'operations',
    owners: ['src/gateway/operations/operation-store.ts', 'src/gateway/operations/operation-queries.ts'],
  },
  { js: 'replicas', sql: 'replicas', owners: ['src/gateway/replicas/heartbeat-directory.ts'] },
  { js: 'spinnakerTasks', sql: 'spinnaker_tasks', owners: ['src/gateway/spinnaker/task-store.ts'] },
  { js: 'auditEntries', sql: 'audit_entries', owners: ['src/gateway/audit/audit-store.ts'] },
];

/** One statement that writes a table. */
interface Write {
  file: string;
  line: number;
  statement: string;
}

/** Names the drizzle table goes by in `text`: its name or import alias, and `<namespace>.<name>`, when imported from the schema. */
function tableNames(text: string, table: Table): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"][^'"]*schema(?:\.js|\.ts)?['"]/g)) {
    for (const part of m[1]!.split(',')) {
      const [name, alias] = part.trim().split(/\s+as\s+/);
      if (name === table.js) names.push(alias ?? name);
    }
  }
  for (const m of text.matchAll(/import\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s*['"][^'"]*schema(?:\.js|\.ts)?['"]/g)) {
    names.push(`${m[1]}\\s*\\.\\s*${table.js}`);
  }
  return names;
}

/** A file that imports drizzle, the postgres driver, PGlite or the project's db/ modules. */
const TALKS_TO_DATABASE = /from\s*['"](?:drizzle-orm[^'"]*|postgres|@electric-sql\/pglite[^'"]*|[^'"]*\/db\/[^'"]*)['"]/;

/** The statements of `text` (file `file`) that write `table`; matches on comment lines are prose, not statements. */
function tableWrites(file: string, text: string, table: Table): Write[] {
  const name = String.raw`(?:"?public"?\s*\.\s*)?"?${table.sql}"?(?![\w$-])`;
  const interpolated = String.raw`\$\{\s*(?:[A-Za-z_$][\w$]*\s*\.\s*)?${table.js}\s*\}`;
  // Raw SQL is looked for only where a file can reach the database (prose such as "create or update objects" elsewhere is not SQL).
  const patterns = !TALKS_TO_DATABASE.test(text)
    ? []
    : [
        new RegExp(
          String.raw`\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?(?:${name}|${interpolated})`,
          'gi',
        ),
      ];
  const names = tableNames(text, table);
  if (names.length > 0) patterns.push(new RegExp(String.raw`\.\s*(?:insert|update|delete)\s*\(\s*(?:${names.join('|')})\s*\)`, 'g'));
  const lines = text.split('\n');
  const writes: Write[] = [];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) {
      const line = text.slice(0, m.index).split('\n').length;
      const lineText = lines[line - 1]!.trim();
      if (lineText.startsWith('//') || lineText.startsWith('*') || lineText.startsWith('/*')) continue;
      writes.push({ file, line, statement: m[0].replace(/\s+/g, ' ') });
    }
  }
  return writes.sort((a, b) => a.line - b.line);
}

/** Every source file under `root`/src (src/gen aside), as repository paths with forward slashes. */
function sourceFiles(root: string, dir = join(root, 'src')): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    const rel = relative(root, path).split(sep).join('/');
    if (rel === 'src/gen' || entry === 'node_modules') continue;
    if (statSync(path).isDirectory()) files.push(...sourceFiles(root, path));
    else if (/\.(ts|tsx|mts|cts)$/.test(entry)) files.push(rel);
  }
  return files;
}

/** The writes of `table` under `root`/src outside its owner files. */
function writesOutsideOwners(root: string, table: Table): Write[] {
  return sourceFiles(root)
    .filter((file) => !table.owners.includes(file))
    .flatMap((file) => tableWrites(file, readFileSync(join(root, file), 'utf8'), table));
}

const show = (writes: Write[]) => writes.map((w) => `${w.file}:${w.line}: ${w.statement}`);
const table = (js: string) => TABLES.find((t) => t.js === js)!;

describe('one owner per table', () => {
  test('every table of the schema is listed', () => {
    const schema = readFileSync(join(ROOT, 'src/db/schema.ts'), 'utf8');
    const declared = [...schema.matchAll(/export const (\w+) = pgTable\(\s*'(\w+)'/g)].map((m) => `${m[1]}:${m[2]}`);
    assert.deepEqual(declared.sort(), TABLES.map((t) => `${t.js}:${t.sql}`).sort());
  });

  for (const t of TABLES) {
    test(`only ${t.owners.join(', ')} write ${t.sql}`, () => {
      assert.deepEqual(
        show(writesOutsideOwners(ROOT, t)),
        [],
        `move these statements into ${t.owners.join(' or ')} and call them from there`,
      );
    });
  }

  test('every owner file writes its table (the list stays true, the scan is not blind)', () => {
    for (const t of TABLES) {
      for (const file of t.owners) {
        assert.ok(tableWrites(file, readFileSync(join(ROOT, file), 'utf8'), t).length > 0, `${file} writes ${t.sql}`);
      }
    }
  });

  test('planted writes are caught, in every form; reads, prose and other tables are not', () => {
    const ops = table('operations');
    const schemaImport = "import { accounts, operations } from '../../db/schema.js';\n";
    const sqlImport = "import { sql } from 'drizzle-orm';\n";
    const raw = (statement: string) => sqlImport.concat(statement);
    const planted: [string, string][] = [
      ['drizzle insert', `${schemaImport}await db.insert(operations).values(row);`],
      ['drizzle update', `${schemaImport}await tx\n  .update(operations)\n  .set({ state: 'FAILED' });`],
      ['drizzle delete', `${schemaImport}await db.delete( operations ).where(x);`],
      ['import alias', "import { operations as ops } from '../../db/schema.js';\nawait db.delete(ops);"],
      ['namespace import', "import * as schema from '../../db/schema.js';\nawait db.update(schema.operations).set({});"],
      ['raw insert', raw('await query(`INSERT INTO operations (id) values ($1)`, [id]);')],
      ['raw update, quoted', raw(`await query('update "operations" set state = $1', [s]);`)],
      ['raw update, schema-qualified', raw("await query('update public.operations o set state = $1', [s]);")],
      ['raw delete over two lines', raw('await query(`delete\n  from operations where id = $1`, [id]);')],
      ['drizzle sql template', raw('await db.execute(sql`update $' + '{operations} set error = $' + '{e}`);')],
      ['truncate', raw("await query('truncate table operations', []);")],
    ];
    for (const [name, text] of planted) assert.equal(tableWrites('planted.ts', text, ops).length, 1, `${name} not caught: ${text}`);
    const ws = table('watchStates');
    assert.equal(tableWrites('p.ts', "import { watchStates } from '../../db/schema.js';\nawait tx.delete(watchStates);", ws).length, 1);
    assert.equal(
      tableWrites('p.ts', `${sqlImport}await db.execute(sql\`insert into watch_states as w (account) values ($1)\`);`, ws).length,
      1,
    );

    const harmless: [string, string][] = [
      ['select', `${schemaImport}await db.select().from(operations).where(eq(operations.id, id));`],
      ['raw select', raw("await query('select id from operations where id > $1', [after]);")],
      ['another table', `${schemaImport}await db.update(accounts).set({}); await query('update operations_archive set x = 1', []);`],
      ['prose', '// we update operations only in the store\n/**\n * insert into operations happens once\n */'],
      ['prose in a file without database access', "program.description('create or update operations from manifests');"],
      ['a local named operations, no schema import', 'const operations = new Set(); operations.delete(x); list.delete(operations);'],
    ];
    for (const [name, text] of harmless) assert.deepEqual(show(tableWrites('harmless.ts', text, ops)), [], name);
  });

  test('a file planted under src/ with a write fails the scan; the owner files and generated code may hold them', () => {
    const root = mkdtempSync(join(tmpdir(), 'outpost-owner-'));
    try {
      const plant = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      const write =
        "import { accounts } from '../../db/schema.js';\nexport const f = (db: any) => db.update(accounts).set({ state: 'FAILED' });\n";
      plant('src/gateway/accounts/account-repository.ts', write);
      plant('src/gen/outpost/generated.ts', "const s = 'delete from accounts';\n");
      assert.deepEqual(show(writesOutsideOwners(root, table('accounts'))), []);
      plant('src/gateway/spinnaker/planted.ts', write);
      plant(
        'src/gateway/cache/legacy.ts',
        "import { sql } from 'drizzle-orm';\nexport const s = sql`update accounts set state = 'INACTIVE'`;\n",
      );
      assert.deepEqual(show(writesOutsideOwners(root, table('accounts'))), [
        'src/gateway/cache/legacy.ts:2: update accounts',
        'src/gateway/spinnaker/planted.ts:2: .update(accounts)',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
