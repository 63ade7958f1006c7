/**
 * `outpost rollout undo|pause|resume|restart|history|status KIND/NAME --account A`: kubectl's rollout verbs, run by the
 * account's agent (undo to `--to-revision`, or the previous revision); `status` waits (./rollout-status.ts).
 */
import { Argument, InvalidArgumentError, type Command } from 'commander';
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
import { formatActed, formatHistory } from '../../client/format.js';
import { displayType } from '../../shared/kind-names.js';
import { runRolloutStatus } from './rollout-status.js';
import { RolloutAction } from '../../gen/outpost/agent/v1/operation_pb.js';

const ACTIONS: Record<string, { action: RolloutAction; verb: string }> = {
  undo: { action: RolloutAction.UNDO, verb: 'rolled back' },
  pause: { action: RolloutAction.PAUSE, verb: 'paused' },
  resume: { action: RolloutAction.RESUME, verb: 'resumed' },
  restart: { action: RolloutAction.RESTART, verb: 'restarted' },
};

function parseWatch(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('must be true or false (--watch=false)');
}

function parseRevision(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a non-negative integer (0 = the previous revision)');
  return Number(value);
}

interface RolloutOptions extends ClientOptions {
  toRevision?: number;
  watch?: boolean;
}

/** Registers `rollout`. */
export function registerRolloutCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('rollout')
    .description(
      'manage a rollout: undo (to a revision), pause, resume, restart, show its history, or wait for it (status; ' +
        '--timeout is then the whole wait, default none)',
    )
    .addArgument(new Argument('<action>', 'what to do').choices(['undo', 'pause', 'resume', 'restart', 'history', 'status']))
    .argument('<resource>', 'KIND/NAME (deployment/web) or KIND with the name as next argument')
    .argument('[name]', 'object name (when not given as KIND/NAME)')
    .option('--to-revision <revision>', 'undo: revision to roll back to (default: the previous one)', parseRevision)
    .option('-w, --watch [bool]', 'status: wait until the rollout ends (--watch=false reports once)', parseWatch);
  configureClientCommand(cmd, ctx).action(async (action: string, resource: string, nameArg: string | undefined, opts: RolloutOptions) => {
    const parsed = parseTargetOrFail(ctx, resource, nameArg);
    if (!parsed) return;
    const { kind, name } = parsed;
    if (!name) {
      fail(ctx, ExitCode.USAGE, `a name is required: rollout ${action} KIND/NAME`);
      return;
    }
    if (opts.toRevision !== undefined && action !== 'undo') {
      fail(ctx, ExitCode.USAGE, '--to-revision only applies to rollout undo');
      return;
    }
    if (opts.watch !== undefined && action !== 'status') {
      fail(ctx, ExitCode.USAGE, '--watch only applies to rollout status');
      return;
    }
    if (action === 'status') {
      await runRolloutStatus(ctx, { ...opts, watch: opts.watch ?? true }, kind, name);
      return;
    }
    const ref = `${displayType('', kind.kind)}/${name}`;
    const target = { apiVersion: kind.apiVersion, kind: kind.kind, namespace: opts.namespace ?? 'default', name };
    if (action === 'history') {
      await runOperation(ctx, opts, { case: 'history', value: target }, (record) => formatHistory(record, ref));
      return;
    }
    const { action: rolloutAction, verb } = ACTIONS[action]!;
    await runOperation(
      ctx,
      opts,
      { case: 'rollout', value: { ...target, action: rolloutAction, toRevision: BigInt(opts.toRevision ?? 0) } },
      (record) => formatActed(record, verb, kind.kind, ref),
    );
  });
}
