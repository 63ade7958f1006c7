/**
 * Plain text tables in kubectl's layout (header row, columns three spaces apart, no trailing blanks) for rows that
 * are already strings: objects (table.ts), accounts, operations, kinds of an account.
 */
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { formatDuration } from './duration.js';

/** Renders `rows` under `header`; every row must have the header's length. Ends with a newline. */
export function renderRows(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return `${all
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]! + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** kubectl-style age of a timestamp (`12s`, `3m4s`, `2d`), `<none>` when absent. */
export function ageOf(timestamp: Timestamp | undefined, now = Date.now()): string {
  if (!timestamp) return '<none>';
  return formatDuration(Math.max(now - timestampDate(timestamp).getTime(), 0));
}

/** `key: value` lines with the values aligned (kubectl describe's layout); empty values print `<none>`. */
export function renderFields(fields: [string, string][]): string {
  const width = Math.max(...fields.map(([k]) => k.length)) + 2;
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width)}${v || '<none>'}\n`).join('');
}
