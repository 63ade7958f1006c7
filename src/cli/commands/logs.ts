/**
 * `outpost logs POD --account A [-c CONTAINER] [--tail N]`: a pod's logs, read by the account's agent.
 */
import { InvalidArgumentError, type Command } from 'commander';
import {
  configureClientCommand,
  fail,
  resolveDeps,
  runOperation,
  type ClientCommandDeps,
  type ClientOptions,
} from '../../client/client-command.js';
import { ExitCode } from '../../client/errors.js';
import { resolveKind, splitTarget } from '../../shared/kind-names.js';

function parseTail(value: string): number {
  if (!/^-?\d+$/.test(value) || Number(value) < -1) throw new InvalidArgumentError('must be a non-negative integer (-1 = all lines)');
  return Number(value);
}

interface LogsOptions extends ClientOptions {
  container?: string;
  tail?: number;
  previous?: boolean;
}

/** Registers `logs`. */
export function registerLogsCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('logs')
    .description("print a pod's logs")
    .argument('<pod>', 'pod name (or pod/NAME)')
    .option('-c, --container <name>', 'container (default: the only one)')
    .option('--tail <lines>', 'only the last N lines (-1 = all)', parseTail)
    .option('-p, --previous', 'logs of the previous container instance');
  configureClientCommand(cmd, ctx).action(async (podArg: string, opts: LogsOptions) => {
    let pod = podArg;
    try {
      const target = splitTarget(podArg);
      if (podArg.includes('/')) {
        if (resolveKind(target.kindText).kind !== 'Pod') throw new Error(`logs reads pods only, not ${target.kindText}`);
        pod = target.name;
      }
    } catch (err) {
      fail(ctx, ExitCode.USAGE, (err as Error).message);
      return;
    }
    await runOperation(
      ctx,
      opts,
      {
        case: 'logs',
        value: {
          namespace: opts.namespace ?? 'default',
          pod,
          container: opts.container ?? '',
          tailLines: opts.tail === undefined || opts.tail < 0 ? undefined : BigInt(opts.tail),
          previous: opts.previous ?? false,
        },
      },
      (record) => {
        const logs = record.result?.logs ?? '';
        return logs === '' || logs.endsWith('\n') ? logs : `${logs}\n`;
      },
    );
  });
}
