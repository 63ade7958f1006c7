/**
 * Where the client commands read and write. Commands never touch `process.stdout`/`stderr`/`stdin` directly, so tests
 * can run them in-process with an in-memory {@link CliIo} (test/cli/captured-io.ts) and read what a shell user would
 * have seen.
 */

/** The three standard streams of a client command. */
export interface CliIo {
  /** Writes to standard output (results: objects, tables, logs, ids). */
  stdout(text: string): void;
  /** Writes to standard error (errors, progress notes). */
  stderr(text: string): void;
  /** Reads all of standard input (`apply -f -`). Rejects when stdin cannot be read. */
  readStdin(): Promise<string>;
}

/** The process's own streams. */
export function createProcessIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
