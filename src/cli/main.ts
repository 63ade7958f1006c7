/**
 * The `outpost` command line. Each program registers its own sub-command; this file only lists them.
 */
import { Command, CommanderError } from 'commander';

/** Builds the program with every sub-command registered. Exported for tests that check `--help`. */
export function createProgram(): Command {
  const program = new Command('outpost')
    .description('Outpost: connect Kubernetes clusters to a central gateway over one outbound gRPC stream per agent.')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  return program;
}

/** Parses argv and runs the chosen command; sets a non-zero exit code on failure. */
export async function main(argv: string[]): Promise<void> {
  const program = createProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    process.stderr.write(`outpost: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
