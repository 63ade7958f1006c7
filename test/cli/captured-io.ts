/**
 * The in-memory standard streams the CLI tests run client commands with: everything a command writes is kept, its
 * stdin is the given text. Lives with the tests: the commands themselves only know {@link CliIo}.
 */
import type { CliIo } from '../../src/client/io.js';

/** An in-memory IO for tests: everything written is kept; stdin is the given text. */
export interface CapturedIo extends CliIo {
  readonly out: string;
  readonly err: string;
}

/** Creates an in-memory {@link CliIo}. */
export function createCapturedIo(stdin = ''): CapturedIo {
  let out = '';
  let err = '';
  return {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    readStdin: async () => stdin,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
  };
}
