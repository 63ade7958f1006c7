/**
 * Commands that are not operation commands (no `--account`/`--timeout` flag set) still report like them: help and
 * errors on the injected streams, and command-line errors with exit code 2.
 */
import { type Command, CommanderError } from 'commander';
import type { ClientContext } from './client-command.js';
import { ExitCode } from './errors.js';

/** Routes commander's output to `ctx.io` and turns its command-line errors into exit code 2. */
export function configureCommandOutput(cmd: Command, ctx: ClientContext): Command {
  return cmd
    .showHelpAfterError(`See 'outpost ${cmd.name()} --help' for usage.`)
    .configureOutput({ writeOut: (s) => ctx.io.stdout(s), writeErr: (s) => ctx.io.stderr(s) })
    .exitOverride((err) => {
      if (err.exitCode === 0) throw err;
      throw new CommanderError(ExitCode.USAGE, err.code, err.message);
    });
}
