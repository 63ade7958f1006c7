/**
 * `outpost delete KIND/NAME | KIND NAME | KIND -l SELECTOR --account A`: deletes through the account's agent, which
 * waits until the objects are gone (bounded by the operation timeout) and returns their names.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
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
import { formatDeleted } from '../../client/format.js';
import { displayType, isClusterScopedKind } from '../../shared/kind-names.js';
import { PropagationPolicy } from '../../gen/outpost/agent/v1/operation_pb.js';

const CASCADE: Record<string, PropagationPolicy> = {
  background: PropagationPolicy.BACKGROUND,
  foreground: PropagationPolicy.FOREGROUND,
  orphan: PropagationPolicy.ORPHAN,
  // kubectl's older boolean forms.
  true: PropagationPolicy.BACKGROUND,
  false: PropagationPolicy.ORPHAN,
};

function parseGracePeriod(value: string): number {
  if (!/^-?\d+$/.test(value) || Number(value) < -1)
    throw new InvalidArgumentError("must be an integer ≥ 0 (or -1 for the object's default)");
  return Number(value);
}

interface DeleteOptions extends ClientOptions {
  selector?: string;
  cascade: string;
  gracePeriod?: number;
}

/** Registers `delete`. */
export function registerDeleteCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('delete')
    .description('delete an object by name, or every object of a kind matching a label selector, and wait until gone')
    .argument('<resource>', 'KIND or KIND/NAME (deployment, deploy, deployment.apps, Deployment…)')
    .argument('[name]', 'object name (when not given as KIND/NAME)')
    .option('-l, --selector <selector>', 'label selector instead of a name, e.g. app=web,tier!=db')
    .addOption(
      new Option('--cascade <policy>', 'what happens to dependents')
        .choices(['background', 'foreground', 'orphan', 'true', 'false'])
        .default('background'),
    )
    .option('--grace-period <seconds>', "seconds before pods are killed (-1 = the object's default)", parseGracePeriod);
  configureClientCommand(cmd, ctx).action(async (resource: string, nameArg: string | undefined, opts: DeleteOptions) => {
    const target = parseTargetOrFail(ctx, resource, nameArg);
    if (!target) return;
    const { kind, name } = target;
    if (!name && !opts.selector) {
      fail(ctx, ExitCode.USAGE, 'resource(s) were provided, but no name or label selector was specified');
      return;
    }
    if (name && opts.selector) {
      fail(ctx, ExitCode.USAGE, 'name cannot be provided when a selector is specified');
      return;
    }
    const namespace = kind.clusterScoped || isClusterScopedKind(kind.kind) ? '' : (opts.namespace ?? 'default');
    await runOperation(
      ctx,
      opts,
      {
        case: 'delete',
        value: {
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          namespace,
          name,
          labelSelector: opts.selector ?? '',
          propagationPolicy: CASCADE[opts.cascade]!,
          gracePeriodSeconds: opts.gracePeriod === undefined || opts.gracePeriod < 0 ? undefined : BigInt(opts.gracePeriod),
        },
      },
      (record) => formatDeleted(record, displayType('', kind.kind)),
    );
  });
}
