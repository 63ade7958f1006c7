/**
 * One owner per table (docs/architecture.md, "Inside the gateway"): every statement that inserts, updates, deletes or
 * truncates rows of a table lives in that table's owner files, so the rules about its rows (leases and fences,
 * at-most-once operations, the cache's resume points) are kept in one place; and every statement that reads it lives
 * in its owner or reader files (its owner's folder), so a column change reaches only the owner. This test scans every
 * source file of src/ (the generated code aside) for such statements — drizzle's `.insert(t)`, `.update(t)`,
 * `.delete(t)`, and for reads `.from(t)`, `.innerJoin(t, …)`, `.leftJoin(t, …)` (also through an import alias, a
 * namespace import of the schema or a drizzle `alias(t, …)`), and raw SQL by table name or with the drizzle table
 * interpolated — and fails naming any found outside the owners. A statement that reads a second table is allowed
 * only by name, in ALLOWED_JOINS, with its reason. A table's drizzle object is imported only in its owner's folder
 * (and src/db/), so a table handed around as a value cannot be read elsewhere unseen. Tests are not scanned.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sourceFiles } from './source-files.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A table: its drizzle name (src/db/schema.ts), its SQL name, the only files that may write it (and read it), and the
 * files of its owner's folder that only read it.
 */
interface Table {
  js: string;
  sql: string;
  owners: string[];
  readers?: string[];
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
    readers: ['src/gateway/accounts/account-reads.ts'],
  },
  {
    js: 'accountTransitions',
    sql: 'account_transitions',
    owners: ['src/gateway/accounts/account-states.ts'],
    readers: ['src/gateway/accounts/account-reads.ts'],
  },
  {
    js: 'agentSessions',
    sql: 'agent_sessions',
    owners: ['src/gateway/agents/agent-session-store.ts'],
    readers: ['src/gateway/agents/agent-session-reads.ts'],
  },
  {
    js: 'objects',
    sql: 'objects',
    owners: ['src/gateway/cache/object-writer.ts', 'src/gateway/cache/sync-state.ts', 'src/gateway/cache/cache-removal.ts'],
    readers: [
      'src/gateway/cache/object-reads.ts',
      'src/gateway/cache/infrastructure-queries.ts',
      'src/gateway/cache/spinnaker-object-reads.ts',
    ],
  },
  {
    js: 'watchStates',
    sql: 'watch_states',
    owners: ['src/gateway/cache/object-writer.ts', 'src/gateway/cache/sync-state.ts', 'src/gateway/cache/cache-removal.ts'],
    readers: ['src/gateway/cache/watch-state-reads.ts'],
  },
  {
    js: 'operations',
    sql: 'operations',
    owners: ['src/gateway/operations/operation-store.ts', 'src/gateway/operations/operation-queries.ts'],
    readers: ['src/gateway/operations/operation-summary-reads.ts'],
  },
  { js: 'replicas', sql: 'replicas', owners: ['src/gateway/replicas/heartbeat-directory.ts'] },
  { js: 'spinnakerTasks', sql: 'spinnaker_tasks', owners: ['src/gateway/spinnaker/task-store.ts'] },
  { js: 'auditEntries', sql: 'audit_entries', owners: ['src/gateway/audit/audit-store.ts'] },
  { js: 'webSessions', sql: 'web_sessions', owners: ['src/gateway/sign-in/web-session-store.ts'] },
  { js: 'metricSamples', sql: 'metric_samples', owners: ['src/gateway/history/history-store.ts'] },
  { js: 'historyWriter', sql: 'history_writer', owners: ['src/gateway/history/history-store.ts'] },
];

/**
 * Statements that read a second table, allowed by name: the file (owner or reader of the table the statement is
 * mainly about) may read `table` too, for `reason`. Nothing else outside a table's owners and readers may read it.
 */
const ALLOWED_JOINS: { file: string; table: string; reason: string }[] = [
  {
    file: 'src/gateway/accounts/account-reads.ts',
    table: 'agent_sessions',
    reason:
      'servingReplicaIds: where an account is served is one ranked union, the lease holder from `accounts` before the live sessions that cache it or stand by; two reads would race a lease moving between them',
  },
  {
    file: 'src/gateway/accounts/account-sweep-queries.ts',
    table: 'agent_sessions',
    reason:
      'the clean-up of accounts without agents deletes only accounts no live session serves: a `not exists` over agent_sessions in the same statement as the delete, so a session arriving meanwhile keeps its account',
  },
];

/** One statement that writes or reads a table. */
interface Statement {
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

/** Names of drizzle aliases of the table in `text` (`const a = alias(accounts, 'a')`), given its other names. */
function aliasNames(text: string, names: string[]): string[] {
  if (names.length === 0) return [];
  const pattern = new RegExp(String.raw`([A-Za-z_$][\w$]*)\s*=\s*(?:alias|aliasedTable)\s*\(\s*(?:${names.join('|')})\s*,`, 'g');
  return [...text.matchAll(pattern)].map((m) => m[1]!);
}

/** A file that imports drizzle, the postgres driver, PGlite or the project's db/ modules. */
const TALKS_TO_DATABASE = /from\s*['"](?:drizzle-orm[^'"]*|postgres|@electric-sql\/pglite[^'"]*|[^'"]*\/db\/[^'"]*)['"]/;

/** The statements of `text` (file `file`) that write `table`; matches on comment lines are prose, not statements. */
function tableWrites(file: string, text: string, table: Table): Statement[] {
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
  return statements(file, text, patterns);
}

/** The matches of `patterns` in `text`, by line; matches on comment lines are prose, not statements. */
function statements(file: string, text: string, patterns: RegExp[]): Statement[] {
  const lines = text.split('\n');
  const found: Statement[] = [];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) {
      const line = text.slice(0, m.index).split('\n').length;
      const lineText = lines[line - 1]!.trim();
      if (lineText.startsWith('//') || lineText.startsWith('*') || lineText.startsWith('/*')) continue;
      found.push({ file, line, statement: m[0].replace(/\s+/g, ' ') });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/**
 * The statements of `text` (file `file`) that read `table`: drizzle `.from(t)`, `.innerJoin(t, …)`, `.leftJoin(t, …)`
 * (and the other joins) by the table's names or a drizzle alias of it, and raw SQL `from <table>` / `join <table>`
 * (a `delete from` is a write, not a read) where the file can reach the database.
 */
function tableReads(file: string, text: string, table: Table): Statement[] {
  const name = String.raw`(?:"?public"?\s*\.\s*)?"?${table.sql}"?(?![\w$-])`;
  const interpolated = String.raw`\$\{\s*(?:[A-Za-z_$][\w$]*\s*\.\s*)?${table.js}\s*\}`;
  const patterns = !TALKS_TO_DATABASE.test(text)
    ? []
    : [new RegExp(String.raw`(?<!\bdelete\s+)\b(?:from|join)\s+(?:only\s+)?(?:${name}|${interpolated})`, 'gi')];
  const names = tableNames(text, table);
  names.push(...aliasNames(text, names));
  if (names.length > 0) {
    patterns.push(
      new RegExp(String.raw`\.\s*(?:from|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin)\s*\(\s*(?:${names.join('|')})\s*[,)]`, 'g'),
    );
  }
  return statements(file, text, patterns);
}

/** The writes of `table` under `root`/src outside its owner files. */
function writesOutsideOwners(root: string, table: Table): Statement[] {
  return sourceFiles(root)
    .filter((file) => !table.owners.includes(file))
    .flatMap((file) => tableWrites(file, readFileSync(join(root, file), 'utf8'), table));
}

/** The reads of `table` under `root`/src outside its owner and reader files and the joins allowed for it. */
function readsOutsideOwners(root: string, table: Table): Statement[] {
  const allowed = [...table.owners, ...(table.readers ?? []), ...ALLOWED_JOINS.filter((j) => j.table === table.sql).map((j) => j.file)];
  return sourceFiles(root)
    .filter((file) => !allowed.includes(file))
    .flatMap((file) => tableReads(file, readFileSync(join(root, file), 'utf8'), table));
}

/**
 * Files that import the drizzle table (by name, import alias or a namespace import of the schema) outside the folders
 * of its owner and reader files and src/db/: a table handed around as a value (`.from(table)` with a variable) can only
 * start from such an import, which the scans by name would not see.
 */
function importsOutsideOwnerFolders(root: string, table: Table): string[] {
  const folders = [...table.owners, ...(table.readers ?? [])].map((f) => f.slice(0, f.lastIndexOf('/') + 1));
  return sourceFiles(root)
    .filter((file) => !file.startsWith('src/db/') && !folders.some((folder) => file.startsWith(folder)))
    .filter((file) => tableNames(readFileSync(join(root, file), 'utf8'), table).length > 0);
}

const show = (writes: Statement[]) => writes.map((w) => `${w.file}:${w.line}: ${w.statement}`);
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

  for (const t of TABLES) {
    const readers = [...t.owners, ...(t.readers ?? [])];
    test(`only ${readers.join(', ')} read ${t.sql}`, () => {
      assert.deepEqual(
        show(readsOutsideOwners(ROOT, t)),
        [],
        `move these reads into ${readers.join(' or ')} (or a new reader file there) and call them from there`,
      );
    });
  }

  test("a table's drizzle object is imported only in its owner's folder (and src/db/)", () => {
    for (const t of TABLES) assert.deepEqual(importsOutsideOwnerFolders(ROOT, t), [], `${t.sql}: ask its owner's functions instead`);
  });

  test('every reader file reads its table, every allowed join is used and says why', () => {
    for (const t of TABLES) {
      for (const file of t.readers ?? []) {
        assert.ok(tableReads(file, readFileSync(join(ROOT, file), 'utf8'), t).length > 0, `${file} reads ${t.sql}`);
        assert.ok(!t.owners.includes(file), `${file} is an owner of ${t.sql} already`);
      }
    }
    for (const j of ALLOWED_JOINS) {
      const t = TABLES.find((x) => x.sql === j.table)!;
      assert.ok(tableReads(j.file, readFileSync(join(ROOT, j.file), 'utf8'), t).length > 0, `${j.file} reads ${j.table}`);
      assert.ok(j.reason.length > 40, `${j.file}: say why it reads ${j.table}`);
      assert.ok(
        TABLES.some((other) => other !== t && [...other.owners, ...(other.readers ?? [])].includes(j.file)),
        `${j.file} owns or reads another table: a join belongs with the table it is mainly about`,
      );
    }
  });

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
      ['select (a read: the read scan has it)', `${schemaImport}await db.select().from(operations).where(eq(operations.id, id));`],
      ['raw select (a read)', raw("await query('select id from operations where id > $1', [after]);")],
      ['another table', `${schemaImport}await db.update(accounts).set({}); await query('update operations_archive set x = 1', []);`],
      ['prose', '// we update operations only in the store\n/**\n * insert into operations happens once\n */'],
      ['prose in a file without database access', "program.description('create or update operations from manifests');"],
      ['a local named operations, no schema import', 'const operations = new Set(); operations.delete(x); list.delete(operations);'],
    ];
    for (const [name, text] of harmless) assert.deepEqual(show(tableWrites('harmless.ts', text, ops)), [], name);
  });

  test('planted reads are caught, in every form; writes, prose and other tables are not', () => {
    const ops = table('operations');
    const schemaImport = "import { accounts, operations } from '../../db/schema.js';\n";
    const sqlImport = "import { sql } from 'drizzle-orm';\n";
    const raw = (statement: string) => sqlImport.concat(statement);
    const planted: [string, string][] = [
      ['drizzle from', `${schemaImport}await db.select().from(operations).where(eq(operations.id, id));`],
      ['drizzle from over lines', `${schemaImport}await db\n  .select({ n: count() })\n  .from( operations )\n  .limit(1);`],
      [
        'drizzle innerJoin',
        `${schemaImport}await db.select().from(accounts).innerJoin(operations, eq(operations.account, accounts.name));`,
      ],
      ['drizzle leftJoin', `${schemaImport}await db.select().from(accounts).leftJoin(operations, eq(x, y));`],
      ['import alias', "import { operations as ops } from '../../db/schema.js';\nawait db.select().from(ops);"],
      ['namespace import', "import * as schema from '../../db/schema.js';\nawait db.selectDistinct().from(schema.operations);"],
      [
        'drizzle alias',
        "import { alias } from 'drizzle-orm/pg-core';\nimport { operations } from '../../db/schema.js';\nconst o = alias(operations, 'o');\nawait db.select().from(accounts).where(x).innerJoin(o, eq(o.id, y));",
      ],
      ['raw select', raw("await query('select id from operations where id > $1', [after]);")],
      ['raw select, quoted and schema-qualified', raw(`await query('select id from public."operations" o', []);`)],
      ['raw select over two lines', raw('await query(`select id\n  from\n    operations o where id = $1`, [id]);')],
      ['raw join', raw("await query('select a.name from accounts a join operations o on o.account = a.name', []);")],
      ['raw left join', raw("await query('select 1 from accounts a left join operations o on true', []);")],
      ['drizzle sql template', raw('await db.execute(sql`select count(*) from $' + '{operations} where x`);')],
      ['sql template, namespaced', raw('await db.execute(sql`select 1 from $' + '{schema.operations}`);')],
    ];
    for (const [name, text] of planted) assert.equal(tableReads('planted.ts', text, ops).length, 1, `${name} not caught: ${text}`);
    const ws = table('watchStates');
    assert.equal(
      tableReads('p.ts', "import { watchStates } from '../../db/schema.js';\nawait db.select().from(watchStates);", ws).length,
      1,
    );
    assert.equal(tableReads('p.ts', `${sqlImport}await db.execute(sql\`select sum(listed) from watch_states\`);`, ws).length, 1);

    const harmless: [string, string][] = [
      ['writes', `${schemaImport}await db.insert(operations).values(r); await query('delete from operations where id = $1', [id]);`],
      ['raw update', raw("await query('update operations set state = $1 where id = $2', [s, id]);")],
      [
        'another table',
        `${schemaImport}await db.select().from(accounts); await query('select x from operations_archive join accounts_old on true', []);`,
      ],
      ['prose', `${schemaImport}// we read from operations only in the store\n/**\n * select * from operations happens there\n */`],
      ['prose in a file without database access', "throw new Error('no answer from operations within 5 s');"],
      ['a local named operations, no schema import', 'const operations = [1]; const copy = Array.from(operations); x.from(operations);'],
    ];
    for (const [name, text] of harmless) assert.deepEqual(show(tableReads('harmless.ts', text, ops)), [], name);
  });

  test('a file planted under src/ with a read fails the scan; owners, readers and allowed joins may hold them', () => {
    const root = mkdtempSync(join(tmpdir(), 'outpost-reader-'));
    try {
      const plant = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      const read = "import { agentSessions } from '../../db/schema.js';\nexport const f = (db: any) => db.select().from(agentSessions);\n";
      const rawRead =
        "import { sql } from 'drizzle-orm';\nexport const s = sql`select gateway_id from agent_sessions where ended_at is null`;\n";
      plant('src/gateway/agents/agent-session-store.ts', read);
      plant('src/gateway/agents/agent-session-reads.ts', read);
      plant('src/gateway/accounts/account-sweep-queries.ts', rawRead);
      plant('src/gen/outpost/generated.ts', "const s = 'select * from agent_sessions';\n");
      assert.deepEqual(show(readsOutsideOwners(root, table('agentSessions'))), []);
      assert.deepEqual(importsOutsideOwnerFolders(root, table('agentSessions')), []);
      plant('src/gateway/api/fleet-planted.ts', read);
      plant('src/gateway/api/handed-around.ts', "import { agentSessions as s } from '../../db/schema.js';\nexport const t = s;\n");
      plant('src/gateway/rest/namespaced.ts', "import * as schema from '../../db/schema.js';\nexport const t = schema.agentSessions;\n");
      assert.deepEqual(importsOutsideOwnerFolders(root, table('agentSessions')), [
        'src/gateway/api/fleet-planted.ts',
        'src/gateway/api/handed-around.ts',
        'src/gateway/rest/namespaced.ts',
      ]);
      plant('src/gateway/accounts/account-repository.ts', rawRead);
      assert.deepEqual(show(readsOutsideOwners(root, table('agentSessions'))), [
        'src/gateway/accounts/account-repository.ts:2: from agent_sessions',
        'src/gateway/api/fleet-planted.ts:2: .from(agentSessions)',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
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
