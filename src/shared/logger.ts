/**
 * Structured logging for every Outpost program: JSON lines (pino) by default, human-readable when the output is a
 * terminal. Child loggers carry account, agent, session and operation ids.
 */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** pino level name; defaults to `info`, or OUTPOST_LOG_LEVEL. */
  level?: string;
  /** Component name written on every line (`gateway`, `agent`, `sandbox`). */
  name?: string;
  /** Pretty-print; defaults to true when stdout is a terminal. */
  pretty?: boolean;
  /** Write somewhere other than stdout (tests capture logs this way). */
  destination?: NodeJS.WritableStream;
}

/** Creates a root logger. Call once per program and pass children down; never log secrets or object bodies. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.OUTPOST_LOG_LEVEL ?? 'info';
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  const base = { name: options.name };
  if (pretty) {
    return pino({ level, base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l' } } });
  }
  if (options.destination) return pino({ level, base }, options.destination as pino.DestinationStream);
  return pino({ level, base });
}

/** A logger that discards everything; for tests and library callers that pass none. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
