/**
 * Runs every cell of the authorization table against the matrix gateway — a few at a time, so the file stays fast on
 * two cores — and compares each outcome with the table. The summary counts rows, cells and failures, and lists each
 * failure as `target [scenario] / credential (identity): expected X, got Y`.
 */
import { sendProbe } from './matrix-probes.js';
import type { MatrixGateway } from './matrix-gateway.js';
import { CREDENTIALS, type Credential, type MatrixRow } from './matrix-types.js';
import { runPool } from '../../testkit/run-pool.js';

/** The outcome of one cell. */
export interface CellResult {
  row: MatrixRow;
  credential: Credential;
  expected: string;
  actual: string;
}

/** What a run found. */
export interface MatrixRun {
  results: CellResult[];
  failures: CellResult[];
  rows: number;
  cells: number;
  ms: number;
}

/** Sends every cell of `table` (a refusal or a transport error is an outcome, never a throw). */
export async function runMatrix(gw: MatrixGateway, table: readonly MatrixRow[], concurrency = 6): Promise<MatrixRun> {
  const started = Date.now();
  const cells = table.flatMap((row) => CREDENTIALS.map((credential) => ({ row, credential })));
  const results = await runPool(cells, concurrency, async ({ row, credential }): Promise<CellResult> => {
    const cell = row.cells[credential];
    let actual: string;
    try {
      actual = await sendProbe(gw.context, cell.request ?? row.request, gw.authorization(cell.as));
    } catch (err) {
      actual = `error: ${(err as Error).message}`;
    }
    return { row, credential, expected: cell.expect, actual };
  });
  const failures = results.filter((r) => r.actual !== r.expected);
  return { results, failures, rows: table.length, cells: results.length, ms: Date.now() - started };
}

/** A failure as one line. */
export function describeFailure(f: CellResult): string {
  const scenario = f.row.scenario ? ` [${f.row.scenario}]` : '';
  return `${f.row.target}${scenario} / ${f.credential} (${f.row.cells[f.credential].as}): expected ${f.expected}, got ${f.actual}`;
}

/** The summary the suite prints: counts, then a compact outcome table per row, then the failures. */
export function summarize(run: MatrixRun): string {
  const lines = [
    `authorization matrix: ${run.rows} rows × ${CREDENTIALS.length} credential kinds = ${run.cells} cells, ${run.failures.length} failures (${run.ms} ms)`,
  ];
  const width = Math.max(...run.results.map((r) => r.row.target.length + (r.row.scenario ? 2 : 0)));
  for (let i = 0; i < run.results.length; i += CREDENTIALS.length) {
    const cells = run.results.slice(i, i + CREDENTIALS.length);
    const row = cells[0]!.row;
    const name = `${row.target}${row.scenario ? ' *' : ''}`.padEnd(width);
    lines.push(
      `  ${name}  ${cells.map((c) => `${c.credential}=${c.actual}${c.actual === c.expected ? '' : ` (expected ${c.expected})`}`).join('  ')}`,
    );
  }
  for (const f of run.failures) lines.push(`FAIL ${describeFailure(f)}`);
  return lines.join('\n');
}
