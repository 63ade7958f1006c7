/**
 * The `outpost` command line. Each program registers its own sub-command; this file only lists them.
 */
import { Command, CommanderError } from 'commander';
import { registerAccountsCommand } from './commands/accounts.js';
import { registerAgentCommand } from './commands/agent.js';
import { registerApplyCommand } from './commands/apply.js';
import { registerCredentialCommand } from './commands/credential.js';
import { registerDeleteCommand } from './commands/delete.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerGatewayCommand } from './commands/gateway.js';
import { registerGetCommand } from './commands/get.js';
import { registerKubeconfigCommand } from './commands/kubeconfig.js';
import { registerLoginCommand } from './commands/login.js';
import { registerLogoutCommand } from './commands/logout.js';
import { registerLogsCommand } from './commands/logs.js';
import { registerOperationsCommand } from './commands/operations.js';
import { registerPatchCommand } from './commands/patch.js';
import { registerRolloutCommand } from './commands/rollout.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerScaleCommand } from './commands/scale.js';
import { agentVersion } from '../agent/version.js';

/** Builds the program with every sub-command registered. */
function createProgram(): Command {
  const program = new Command('outpost')
    .description('Outpost: connect Kubernetes clusters to a central gateway over one outbound gRPC stream per agent.')
    .version(versionText(), '-V, --version', 'print the version, and whether the compiled build or the sources run')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  registerAgentCommand(program);
  registerDemoCommand(program);
  registerGatewayCommand(program);
  registerSandboxCommand(program);
  registerApplyCommand(program);
  registerDeleteCommand(program);
  registerScaleCommand(program);
  registerPatchCommand(program);
  registerRolloutCommand(program);
  registerGetCommand(program);
  registerLogsCommand(program);
  registerAccountsCommand(program);
  registerOperationsCommand(program);
  registerKubeconfigCommand(program);
  registerCredentialCommand(program);
  registerLoginCommand(program);
  registerLogoutCommand(program);
  program.addHelpText('after', () => describeCommands(program));
  return program;
}

/** `outpost 0.1.0 (compiled build, node v20.20.2)`: bin/outpost.js runs dist/ when it is fresh, else the sources. */
function versionText(): string {
  const runtime = import.meta.url.endsWith('.ts') ? 'TypeScript sources through tsx' : 'compiled build';
  return `outpost ${agentVersion()} (${runtime}, node ${process.version})`;
}

/** Every sub-command with all of its flags, appended to `outpost --help`. */
function describeCommands(program: Command): string {
  const lines = ['', 'Commands and their flags:'];
  for (const cmd of [...program.commands].sort((a, b) => a.name().localeCompare(b.name()))) {
    lines.push('', `  outpost ${cmd.name()} ${cmd.usage()}`, `    ${cmd.description()}`);
    for (const arg of cmd.registeredArguments) {
      if (arg.argChoices) lines.push(`      ${`<${arg.name()}>`.padEnd(28)} ${arg.description} (one of: ${arg.argChoices.join(', ')})`);
    }
    for (const opt of cmd.options) {
      const choices = opt.argChoices ? ` (one of: ${opt.argChoices.join(', ')})` : '';
      const def = opt.defaultValue === undefined ? '' : ` (default: ${JSON.stringify(opt.defaultValue)})`;
      lines.push(`      ${opt.flags.padEnd(28)} ${opt.description}${choices}${def}`);
    }
  }
  return `${lines.join('\n')}\n`;
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
