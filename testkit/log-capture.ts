/**
 * The log lines a program under test writes, kept in memory: pass `stream` as the pino destination of a gateway or an
 * agent started in the test process, then search the lines. The agent and end-to-end suites both assert on what was
 * logged.
 */
import { Writable } from 'node:stream';

/** Captured log lines (pino JSON), searchable. */
export interface LogCapture {
  lines: () => Record<string, unknown>[];
  text: () => string;
  stream: Writable;
}

/** Creates a log capture usable as a pino destination. */
export function captureLogs(): LogCapture {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const text = () => chunks.join('');
  return {
    stream,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
