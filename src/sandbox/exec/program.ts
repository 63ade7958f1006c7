/**
 * What a sandbox "process" sees when kubectl exec or attach runs it: stdout/stderr writers, a stdin reader and an
 * abort signal. The sandbox never starts a real process; every program is a small built-in (see builtins.ts).
 */

/** The I/O of one exec/attach session, whatever the wire protocol. */
export interface ProgramIo {
  /** Writes to stdout or stderr (dropped when the client did not ask for that stream; stderr goes to stdout with a TTY). */
  write(stream: 'stdout' | 'stderr', data: string | Buffer): void;
  /** The next stdin chunk; null once stdin is closed (at once when the client sent no stdin). */
  readStdin(): Promise<Buffer | null>;
  /** Whether the client attached stdin. */
  readonly hasStdin: boolean;
  /** Aborted when the client goes away; a program must then return promptly. */
  readonly signal: AbortSignal;
}

/** A built-in program: resolves with its exit code. */
export type Program = (io: ProgramIo) => Promise<number>;

/** Resolves after `ms`, or early (without error) when `signal` aborts. The timer never keeps the process alive. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done);
  });
}

/** Copies stdin to stdout until stdin closes or the client leaves. */
export async function echoStdin(io: ProgramIo): Promise<void> {
  for (;;) {
    const chunk = await io.readStdin();
    if (chunk === null || io.signal.aborted) return;
    io.write('stdout', chunk);
  }
}
