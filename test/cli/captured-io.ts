/**
 * The in-memory standard streams the CLI tests run client commands with — everything a command writes is kept, its
 * stdin is the given text — and the one in-process runner of commands over them. Lives with the tests: the commands
 * themselves only know {@link CliIo}.
 */
import { Command, CommanderError } from 'commander';
import type { CliIo } from '../../src/client/io.js';

/** An in-memory IO for tests: everything written is kept; stdin is the given text. */
interface CapturedIo extends CliIo {
  readonly out: string;
  readonly err: string;
}

/** Creates an in-memory {@link CliIo}. */
function createCapturedIo(stdin = ''): CapturedIo {
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

/** Result of one in-process CLI run. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** What the commands run in process are given: the captured IO, the environment, the exit recorder, maybe a clock. */
interface InProcessDeps {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  exit: (code: number) => void;
  now?: () => Date;
}

/**
 * Runs `outpost ARGS…` in process with only `registers` registered, their output captured and the exit code kept
 * (the one a command set, or commander's for a usage error).
 */
export async function runInProcess(
  registers: readonly ((program: Command, deps: InProcessDeps) => void)[],
  args: string[],
  deps: { env: NodeJS.ProcessEnv; now?: () => Date },
  stdin = '',
): Promise<CliRun> {
  const io = createCapturedIo(stdin);
  let code = 0;
  const all: InProcessDeps = { ...deps, io, exit: (c) => void (code = c) };
  const program = new Command('outpost').exitOverride();
  program.configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const register of registers) register(program, all);
  try {
    await program.parseAsync(['node', 'outpost', ...args]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    code = err.exitCode;
  }
  return { code, out: io.out, err: io.err };
}
