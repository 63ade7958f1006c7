/**
 * Writing a suite's summary into its committed doc (docs/chaos.md, docs/hostile-input.md): the text between a start
 * and an end marker is replaced, the rest of the page (written by hand) is kept, and the section names the command
 * and the commit that produced it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

/** The short commit id of HEAD, or `unknown` outside a git checkout. */
function headCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * Replaces the section of `file` between `start` and `end` (markers kept) with a line naming `command`, the date, the
 * commit and Node's version, then `body`. Throws when the markers are missing, changing nothing.
 */
export function writeReportSection(file: string, markers: { start: string; end: string }, command: string, body: string): void {
  const doc = readFileSync(file, 'utf8');
  const at = doc.indexOf(markers.start);
  const until = doc.indexOf(markers.end);
  if (at < 0 || until < at) throw new Error(`${file} has no ${markers.start} … ${markers.end} section`);
  const stamp = `Run by \`${command}\` on ${new Date().toISOString().slice(0, 10)} (code ${headCommit()}, Node ${process.version}).`;
  const section = [markers.start, stamp, '', body, markers.end].join('\n');
  writeFileSync(file, doc.slice(0, at) + section + doc.slice(until + markers.end.length));
}
