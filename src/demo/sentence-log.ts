/**
 * The demo's log output: one sentence per log line (`warning (gateway): INSECURE MODE: …`) instead of JSON, so what
 * the gateway, agent and sandbox report reads like the banner around it. Programs run for real keep JSON lines.
 */
import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

/** Turns one pino JSON line into a sentence; a line that is not JSON is returned as it is. */
export function sentenceOf(line: string): string {
  let entry: { level?: number; msg?: string; component?: string; err?: { message?: string } };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return line;
  }
  const level = LEVELS[entry.level ?? 30] ?? 'info';
  const where = entry.component ? ` (${entry.component})` : '';
  const cause = entry.err?.message ? `: ${entry.err.message}` : '';
  return `${level}${where}: ${entry.msg ?? ''}${cause}`;
}

/** A destination for the demo's logger writing sentences to `out`. */
export function createSentenceStream(out: NodeJS.WritableStream = process.stdout): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') out.write(`${sentenceOf(line)}\n`);
      done();
    },
  });
}
