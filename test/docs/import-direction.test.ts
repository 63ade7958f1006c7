/**
 * Which way imports go (docs/architecture.md, "Which way imports go"): the doc's two tables are the declaration, and
 * this test holds the code to them. Between the programs of src/, an import is allowed only where the program table
 * lists it; inside the gateway, its folders are ordered from the bottom (the core) to the top (the features, then the
 * composition files directly in src/gateway/), and a file may import only from its own folder or from a folder listed
 * below it. Type-only imports count: they couple the folders as much. The scan reads every `import`/`export … from`
 * and `import()` of a relative path in src/ (the generated code aside); tests are not scanned.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tableAfter } from './doc-blocks.js';
import { sourceFiles } from './source-files.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One import of one file: the importing file and the imported one, as repository paths. */
interface Edge {
  from: string;
  to: string;
  line: number;
}

/** What the doc declares. */
interface Declaration {
  /** Gateway folders from the bottom up (`accounts`, …); the composition files come above the last. */
  gatewayOrder: string[];
  /** Program folder of src/ → the program folders it may import. */
  programs: Map<string, Set<string>>;
}

/** The backquoted folder names of a cell: `` `agents/` `` → `agents`. */
const foldersIn = (cell: string) => [...cell.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]!);

/** Reads the two tables of the doc. */
function declaration(doc: string): Declaration {
  const gatewayOrder = tableAfter(doc, 'Gateway folders, from the bottom up', 'docs/architecture.md').flatMap((row) => foldersIn(row[1]!));
  const programs = new Map<string, Set<string>>();
  for (const row of tableAfter(doc, 'Programs and what they may import', 'docs/architecture.md')) {
    for (const program of foldersIn(row[0]!)) programs.set(program, new Set(foldersIn(row[1]!)));
  }
  return { gatewayOrder, programs };
}

/** The relative imports of `file` (its text `text`), resolved to repository paths of .ts files. */
function importsOf(file: string, text: string): Edge[] {
  const edges: Edge[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of text.matchAll(pattern)) {
    const to = posix.normalize(posix.join(posix.dirname(file), m[1]!)).replace(/\.js$/, '.ts');
    edges.push({ from: file, to, line: text.slice(0, m.index).split('\n').length });
  }
  return edges;
}

/** `src/gateway/cache/x.ts` → `cache`; a file directly in src/gateway → `(composition)`; elsewhere undefined. */
function gatewayFolder(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'src' || parts[1] !== 'gateway') return undefined;
  return parts.length === 3 ? '(composition)' : parts[2];
}

/** `src/agent/x/y.ts` → `agent`. */
const programOf = (path: string) => path.split('/')[1]!;

/** Every import under `root` that the declaration forbids, as readable lines. */
function violations(root: string, decl: Declaration): string[] {
  const rank = new Map(decl.gatewayOrder.map((f, i) => [f, i]));
  rank.set('(composition)', decl.gatewayOrder.length);
  const found: string[] = [];
  for (const file of sourceFiles(root)) {
    for (const edge of importsOf(file, readFileSync(join(root, file), 'utf8'))) {
      const at = `${edge.from}:${edge.line} imports ${edge.to}`;
      const [pa, pb] = [programOf(edge.from), programOf(edge.to)];
      if (pa !== pb) {
        if (!decl.programs.get(pa)?.has(pb)) found.push(`${at}: program ${pa} may not import ${pb}`);
        continue;
      }
      const [fa, fb] = [gatewayFolder(edge.from), gatewayFolder(edge.to)];
      if (fa === undefined || fb === undefined || fa === fb) continue;
      const [ra, rb] = [rank.get(fa), rank.get(fb)];
      if (ra === undefined || rb === undefined) found.push(`${at}: folder ${ra === undefined ? fa : fb} is not in the table`);
      else if (rb >= ra) found.push(`${at}: ${fa} may not import ${fb}, which is listed above it`);
    }
  }
  return found;
}

const doc = () => readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

describe('which way imports go', () => {
  test('every gateway folder and every program of src/ is in the tables, once, and nothing else is', () => {
    const decl = declaration(doc());
    const folders = readdirSync(join(ROOT, 'src/gateway')).filter((e) => statSync(join(ROOT, 'src/gateway', e)).isDirectory());
    assert.deepEqual([...decl.gatewayOrder].sort(), folders.sort());
    assert.equal(new Set(decl.gatewayOrder).size, decl.gatewayOrder.length, 'a folder is listed twice');
    const programs = readdirSync(join(ROOT, 'src')).filter((e) => statSync(join(ROOT, 'src', e)).isDirectory());
    assert.deepEqual([...decl.programs.keys()].sort(), programs.sort());
  });

  test('no import goes up: src/ follows the tables', () => {
    assert.deepEqual(
      violations(ROOT, declaration(doc())),
      [],
      'a folder imports one listed above it: move the shared piece down, or hand it in from above (docs/architecture.md)',
    );
  });

  test('planted violations are caught: an upward import, a type-only one, a dynamic one, a program that may not import another', () => {
    const root = mkdtempSync(join(tmpdir(), 'outpost-imports-'));
    try {
      const plant = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      const decl: Declaration = {
        gatewayOrder: ['http', 'cache', 'spinnaker'],
        programs: new Map([
          ['lib', new Set<string>()],
          ['gateway', new Set(['lib'])],
          ['agent', new Set(['lib'])],
        ]),
      };
      plant('src/lib/a.ts', 'export const a = 1;\n');
      plant('src/gateway/http/errors.ts', "import { a } from '../../lib/a.js';\n");
      plant('src/gateway/spinnaker/routes.ts', "import { x } from '../cache/x.js';\nimport { e } from '../http/errors.js';\n");
      plant('src/gateway/index.ts', "import { r } from './spinnaker/routes.js';\n");
      plant('src/gateway/cache/x.ts', "export { y } from './y.js';\n");
      assert.deepEqual(violations(root, decl), [], 'downward imports and the composition are allowed');

      plant('src/gateway/cache/up.ts', "import type { R } from '../spinnaker/routes.js';\n");
      plant('src/gateway/http/dyn.ts', "const m = await import('../cache/x.js');\n");
      plant('src/gateway/cache/side.ts', "import { main } from '../index.js';\n");
      plant('src/agent/uses-gateway.ts', "import { x } from '../gateway/cache/x.js';\n");
      plant('src/gateway/newfolder/n.ts', "import { e } from '../http/errors.js';\n");
      const found = violations(root, decl);
      for (const expected of [
        'src/agent/uses-gateway.ts:1 imports src/gateway/cache/x.ts: program agent may not import gateway',
        'src/gateway/cache/side.ts:1 imports src/gateway/index.ts: cache may not import (composition), which is listed above it',
        'src/gateway/cache/up.ts:1 imports src/gateway/spinnaker/routes.ts: cache may not import spinnaker, which is listed above it',
        'src/gateway/http/dyn.ts:1 imports src/gateway/cache/x.ts: http may not import cache, which is listed above it',
        'src/gateway/newfolder/n.ts:1 imports src/gateway/http/errors.ts: folder newfolder is not in the table',
      ]) {
        assert.ok(found.includes(expected), `not caught: ${expected}\nfound: ${found.join('\n')}`);
      }
      assert.equal(found.length, 5, found.join('\n'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
