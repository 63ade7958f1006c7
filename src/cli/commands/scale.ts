/**
 * `outpost scale KIND/NAME --replicas N --account A`: sets the replica count through the scale subresource.
 */
import { InvalidArgumentError, type Command } from 'commander';
import {
  configureClientCommand,
  fail,
  parseTargetOrFail,
  resolveDeps,
  runOperation,
  type ClientCommandDeps,
  type ClientOptions,
} from '../../client/client-command.js';
import { ExitCode } from '../../client/errors.js';
import { formatActed } from '../../client/format.js';
import { displayType } from '../../shared/kind-names.js';

function parseReplicas(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 2 ** 31 - 1) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
}

interface ScaleOptions extends ClientOptions {
  replicas: number;
}

/** Registers `scale`. */
export function registerScaleCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('scale')
    .description('set the replica count of a Deployment, ReplicaSet or StatefulSet (scale subresource)')
    .argument('<resource>', 'KIND/NAME or KIND (with the name as second argument)')
    .argument('[name]', 'object name (when not given as KIND/NAME)')
    .requiredOption('--replicas <count>', 'new number of replicas', parseReplicas);
  configureClientCommand(cmd, ctx).action(async (resource: string, nameArg: string | undefined, opts: ScaleOptions) => {
    const target = parseTargetOrFail(ctx, resource, nameArg);
    if (!target) return;
    const { kind, name } = target;
    if (!name) {
      fail(ctx, ExitCode.USAGE, 'a name is required: scale KIND/NAME --replicas N');
      return;
    }
    await runOperation(
      ctx,
      opts,
      {
        case: 'scale',
        value: { apiVersion: kind.apiVersion, kind: kind.kind, namespace: opts.namespace ?? 'default', name, replicas: opts.replicas },
      },
      (record) => formatActed(record, 'scaled', kind.kind, `${displayType('', kind.kind)}/${name}`),
    );
  });
}
