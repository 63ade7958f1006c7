/**
 * The page and the suite cannot drift apart: docs/agent-protocol.md's section-9 table is parsed and compared with the
 * suite's registry (status-cases.ts) — same row ids, same status, same trailer — and the conformance sources must
 * declare, for every row, at least one case with `rowTest('<id>', …)` (which binds the case to that row's status), and
 * name no row the table does not list. The page's own references to rows (`[E5](#9-…)` next to a status) must agree
 * with the table too.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { GRPC_STATUS, STATUS_ROWS, type StatusName, type StatusRow } from './status-cases.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = readFileSync(`${ROOT}docs/agent-protocol.md`, 'utf8');
const HERE = fileURLToPath(new URL('./', import.meta.url));

/** One parsed row of the page's table. */
interface PageRow {
  id: string;
  status: string;
  trailer?: { name: string; value: string };
  when: string;
}

/** Parses the table of "## 9. Every status the gateway sends". */
function parseStatusTable(page: string): PageRow[] {
  const start = page.search(/^## 9\. /m);
  assert.ok(start >= 0, 'the page has a section 9');
  const rest = page.slice(start);
  const end = rest.slice(3).search(/^## /m);
  const section = end >= 0 ? rest.slice(0, end + 3) : rest;
  const rows: PageRow[] = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*(E\d+)\s*\|\s*(.+?)\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (!m) continue;
    const [, id, statusCell, when] = m;
    const status = /^`([A-Z_]+)`/.exec(statusCell!)?.[1];
    assert.ok(status, `row ${id}: the status cell starts with a backticked status: ${statusCell}`);
    const trailer = /\+\s*`([a-z0-9-]+):\s*([^`]+)`/.exec(statusCell!);
    rows.push({ id: id!, status, when: when!, ...(trailer ? { trailer: { name: trailer[1]!, value: trailer[2]!.trim() } } : {}) });
  }
  return rows;
}

/** The conformance test sources (this directory's *.test.ts), by file name. */
function testSources(): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of readdirSync(HERE).sort()) if (f.endsWith('.test.ts')) out.set(f, readFileSync(`${HERE}${f}`, 'utf8'));
  return out;
}

describe('docs/agent-protocol.md section 9 and the conformance suite agree', () => {
  const rows = parseStatusTable(PAGE);
  const registry = STATUS_ROWS as Record<string, StatusRow>;

  test('the table parses: rows E1… in order, each with a gRPC status name', () => {
    assert.ok(rows.length >= 20, `parsed ${rows.length} rows`);
    rows.forEach((r, i) => assert.equal(r.id, `E${i + 1}`, 'row ids are E1, E2, … in order'));
    for (const r of rows) assert.ok(r.status in GRPC_STATUS, `${r.id}: ${r.status} is a gRPC status`);
    assert.ok(!rows.some((r) => r.status === 'UNKNOWN'), 'nothing ends UNKNOWN');
  });

  test("the registry holds exactly the table's rows, with the same status and trailer", () => {
    assert.deepEqual(
      Object.keys(registry),
      rows.map((r) => r.id),
    );
    for (const r of rows) {
      const mine = registry[r.id]!;
      assert.equal(mine.status, r.status as StatusName, `${r.id}: status`);
      assert.deepEqual(mine.trailer, r.trailer, `${r.id}: trailer`);
    }
  });

  test('every row has a conformance case that triggers it (rowTest with its id), and no case names a row the table does not list', () => {
    const declared = new Map<string, string[]>();
    for (const [file, text] of testSources()) {
      for (const m of text.matchAll(/rowTest\(\s*['"`](E\d+)['"`]/g)) declared.set(m[1]!, [...(declared.get(m[1]!) ?? []), file]);
      for (const m of text.matchAll(/\bE(\d+)\b/g))
        assert.ok(registry[`E${m[1]}`], `${file} names E${m[1]}, which the table does not list`);
    }
    const missing = rows.filter((r) => !declared.has(r.id)).map((r) => r.id);
    assert.deepEqual(missing, [], 'rows without a case');
    for (const id of declared.keys()) assert.ok(registry[id], `a case claims ${id}, which the table does not list`);
  });

  test("each case checks its row's status through the registry, never a code of its own", () => {
    for (const [file, text] of testSources()) {
      if (file === 'protocol-doc.test.ts') continue;
      assert.doesNotMatch(text, /expectRow\(/, `${file}: cases use the expect their rowTest gives them`);
      for (const m of text.matchAll(/rowTest\(\s*['"`](E\d+)['"`]\s*,\s*(['"`])(?:(?!\2).)*\2\s*,\s*async \((\w*)\)/g)) {
        assert.equal(m[3], 'expect', `${file}: the ${m[1]} case takes the row's expect`);
      }
    }
  });

  test("the page's references to rows agree with the table (the status named next to a link is the row's)", () => {
    const ids = new Set(rows.map((r) => r.id));
    const body = PAGE.slice(0, PAGE.search(/^## 9\. /m));
    const referenced = new Set<string>();
    for (const m of body.matchAll(/\[(E\d+)\]\(#9-every-status-the-gateway-sends\)/g)) {
      const id = m[1]!;
      assert.ok(ids.has(id), `the page links ${id}, which the table does not list`);
      referenced.add(id);
      // The status written just before the link (same clause), when there is one, must be the row's.
      const before = body.slice(Math.max(0, m.index! - 160), m.index!);
      const clause = before.split(/[.;]\s|\n\n|^- /m).at(-1) ?? '';
      const named = [...clause.matchAll(/`([A-Z_]{5,})`/g)].map((x) => x[1]!).filter((s) => s in GRPC_STATUS);
      if (named.length > 0)
        assert.equal(named.at(-1), registry[id]!.status, `the page names ${named.at(-1)} next to ${id}: "${clause.trim()}"`);
    }
    assert.deepEqual(
      rows.map((r) => r.id).filter((id) => !referenced.has(id)),
      [],
      'every row is referenced from the rule it enforces',
    );
  });
});
