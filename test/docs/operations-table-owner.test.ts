/**
 * The `operations` table has one owner: src/gateway/operations/operation-store.ts and its raw statements in
 * operation-queries.ts. Rows are inserted, updated and deleted there only, so the rules about them (stored before
 * dispatch, one conditional terminal update: docs/architecture.md, rule 6) are kept in one place. This test scans
 * every source file of src/ (the generated code aside) for a statement that writes `operations` rows — drizzle's
 * `.insert(operations)`, `.update(operations)`, `.delete(operations)` (also through an import alias or a namespace
 * import of the schema) and raw SQL `insert into`, `update`, `delete from`, `truncate` of the table — and fails on any
 * outside the owner files. Tests may write rows directly; they are not scanned.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The repository root (computed here, not imported: the test helpers are moving). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The files allowed to write `operations` rows. */
const OWNERS = ['src/gateway/operations/operation-store.ts', 'src/gateway/operations/operation-queries.ts'];
const SOURCE = /\.(ts|tsx|mts|cts)$/;

/** One statement that writes the table. */
interface Write {
  file: string;
  line: number;
  statement: string;
}

/** Names the drizzle table goes by in `text`: `operations`, its import aliases, and `<namespace>.operations`. */
function tableNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"][^'"]*schema(?:\.js|\.ts)?['"]/g)) {
    for (const part of m[1]!.split(',')) {
      const [name, alias] = part.trim().split(/\s+as\s+/);
      if (name === 'operations') names.push(alias ?? name);
    }
  }
  for (const m of text.matchAll(/import\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s*['"][^'"]*schema(?:\.js|\.ts)?['"]/g)) {
    names.push(`${m[1]}\\s*\\.\\s*operations`);
  }
  return names;
}

/** The patterns of statements that write the table, for the names the file imports it by. */
function writePatterns(text: string): RegExp[] {
  const table = String.raw`(?:"?public"?\s*\.\s*)?"?operations"?(?![\w$-])`;
  const interpolated = String.raw`\$\{\s*(?:[A-Za-z_$][\w$]*\s*\.\s*)?operations\s*\}`;
  const patterns = [
    new RegExp(String.raw`\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?(?:${table}|${interpolated})`, 'gi'),
  ];
  const names = tableNames(text);
  if (names.length > 0) {
    patterns.push(new RegExp(String.raw`\.\s*(?:insert|update|delete)\s*\(\s*(?:${names.join('|')})\s*\)`, 'g'));
  }
  return patterns;
}

/** The statements of `text` (file `file`) that write the table; matches on comment lines are prose, not statements. */
function tableWrites(file: string, text: string): Write[] {
  const writes: Write[] = [];
  for (const pattern of writePatterns(text)) {
    for (const m of text.matchAll(pattern)) {
      const line = text.slice(0, m.index).split('\n').length;
      const lineText = text.split('\n')[line - 1]!.trim();
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
    else if (SOURCE.test(entry)) files.push(rel);
  }
  return files;
}

/** The writes of the table under `root`/src outside the owner files. */
function writesOutsideOwners(root: string): Write[] {
  return sourceFiles(root)
    .filter((file) => !OWNERS.includes(file))
    .flatMap((file) => tableWrites(file, readFileSync(join(root, file), 'utf8')));
}

const show = (writes: Write[]) => writes.map((w) => `${w.file}:${w.line}: ${w.statement}`);

test('only operation-store.ts and operation-queries.ts write rows of the operations table', () => {
  assert.deepEqual(show(writesOutsideOwners(ROOT)), [], `move these statements into ${OWNERS.join(' or ')} and call them from there`);
});

test('the scan finds the statements the owner files hold (it is not blind)', () => {
  const found = OWNERS.flatMap((file) => tableWrites(file, readFileSync(join(ROOT, file), 'utf8'))).map((w) => w.statement.toLowerCase());
  for (const kind of ['.insert(operations)', '.update(operations)', 'insert into operations', 'update operations']) {
    assert.ok(
      found.some((s) => s.startsWith(kind)),
      `no "${kind}" found in the owner files: ${found.join('; ')}`,
    );
  }
});

test('planted writes are caught, in every form; reads, prose and other tables are not', () => {
  const schemaImport = "import { accounts, operations } from '../../db/schema.js';\n";
  const planted: [string, string][] = [
    ['drizzle insert', `${schemaImport}await db.insert(operations).values(row);`],
    ['drizzle update', `${schemaImport}await tx\n  .update(operations)\n  .set({ state: 'FAILED' });`],
    ['drizzle delete', `${schemaImport}await db.delete( operations ).where(x);`],
    ['import alias', "import { operations as ops } from '../../db/schema.js';\nawait db.delete(ops);"],
    ['namespace import', "import * as schema from '../../db/schema.js';\nawait db.update(schema.operations).set({});"],
    ['raw insert', 'await query(`INSERT INTO operations (id) values ($1)`, [id]);'],
    ['raw update, quoted', `await query('update "operations" set state = $1', [s]);`],
    ['raw update, schema-qualified', "await query('update public.operations o set state = $1', [s]);"],
    ['raw delete over two lines', 'await query(`delete\n  from operations where id = $1`, [id]);'],
    ['drizzle sql template', 'await db.execute(sql`update $' + '{operations} set error = $' + '{e}`);'],
    ['truncate', "await query('truncate table operations', []);"],
  ];
  for (const [name, text] of planted) assert.equal(tableWrites('planted.ts', text).length, 1, `${name} not caught: ${text}`);

  const harmless: [string, string][] = [
    ['select', `${schemaImport}await db.select().from(operations).where(eq(operations.id, id));`],
    ['raw select', "await query('select id from operations where id > $1', [after]);"],
    ['another table', `${schemaImport}await db.update(accounts).set({}); await query('update operations_archive set x = 1', []);`],
    ['prose', '// we update operations only in the store\n/**\n * insert into operations happens once\n */'],
    ['a local named operations, no schema import', 'const operations = new Set(); operations.delete(x); list.delete(operations);'],
  ];
  for (const [name, text] of harmless) assert.deepEqual(show(tableWrites('harmless.ts', text)), [], name);
});

test('a file planted under src/ with an operations write fails the scan; the owner files may hold them', () => {
  const root = mkdtempSync(join(tmpdir(), 'outpost-owner-'));
  try {
    const plant = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    const write =
      "import { operations } from '../../db/schema.js';\nexport const f = (db: any) => db.update(operations).set({ state: 'FAILED' });\n";
    plant(OWNERS[0]!, write);
    plant('src/gen/outpost/generated.ts', "const s = 'delete from operations';\n");
    assert.deepEqual(show(writesOutsideOwners(root)), []);
    plant('src/gateway/spinnaker/planted.ts', write);
    plant('src/gateway/operations/legacy.ts', "export const s = `update operations set request = '{}'`;\n");
    assert.deepEqual(show(writesOutsideOwners(root)), [
      'src/gateway/operations/legacy.ts:1: update operations',
      'src/gateway/spinnaker/planted.ts:2: .update(operations)',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
