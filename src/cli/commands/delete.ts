/**
 * `outpost delete KIND/NAME… | KIND NAME… | KIND -l SELECTOR | -f FILE… --account A`: deletes through the account's
 * agent, which waits until the objects are gone (bounded by the operation timeout) and returns their names. Several
 * objects are one operation each, in order; the exit code is the worst of theirs. Bad input (malformed YAML, a
 * document without kind or name) exits 2 before anything is sent.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  configureClientCommand,
  fail,
  parseTargetOrFail,
  resolveDeps,
  type ClientCommandDeps,
  type ClientContext,
  type ClientOptions,
} from '../../client/client-command.js';
import { objectsOfManifest } from '../../client/manifest-objects.js';
import { runOperations } from '../../client/run-operations.js';
import { readManifests } from './apply.js';
import { ExitCode } from '../../client/errors.js';
import { formatDeleted } from '../../client/format.js';
import { displayType, isClusterScopedKind, type ResolvedKind } from '../../shared/kind-names.js';
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
  filename?: string[];
}

/** What to delete: by name (one or more), by selector, or the objects of manifests. */
type Target = { apiVersion: string; kind: string; namespace: string; name: string; labelSelector: string };

/** Registers `delete`. */
export function registerDeleteCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('delete')
    .description('delete objects by name, by label selector, or those of manifest files, and wait until they are gone')
    .argument('[resource]', 'KIND, or KIND/NAME (deployment, deploy, deployment.apps, Deployment…); not with -f')
    .argument('[names...]', 'object names after KIND, or more KIND/NAME targets')
    .option('-f, --filename <file...>', 'delete every object of these manifest files or directories (- for stdin)')
    .option('-l, --selector <selector>', 'label selector instead of a name, e.g. app=web,tier!=db')
    .addOption(
      new Option('--cascade <policy>', 'what happens to dependents')
        .choices(['background', 'foreground', 'orphan', 'true', 'false'])
        .default('background'),
    )
    .option('--grace-period <seconds>', "seconds before pods are killed (-1 = the object's default)", parseGracePeriod);
  configureClientCommand(cmd, ctx).action(async (resource: string | undefined, names: string[], opts: DeleteOptions) => {
    const targets = opts.filename ? await fromFiles(ctx, resource, opts) : fromArguments(ctx, resource, names, opts);
    if (!targets) return;
    if (targets.length > 1 && opts.id) {
      fail(ctx, ExitCode.USAGE, '--id names one operation; it cannot be used when deleting several objects');
      return;
    }
    if (targets.length === 0) {
      fail(ctx, ExitCode.USAGE, 'no objects to delete in the given files');
      return;
    }
    const propagationPolicy = CASCADE[opts.cascade]!;
    const gracePeriodSeconds = opts.gracePeriod === undefined || opts.gracePeriod < 0 ? undefined : BigInt(opts.gracePeriod);
    await runOperations(
      ctx,
      opts,
      targets.map((t) => ({
        spec: { case: 'delete', value: { ...t, propagationPolicy, gracePeriodSeconds } },
        render: (record) => formatDeleted(record, displayType(t.apiVersion, t.kind)),
      })),
    );
  });
}

function namespaceFor(kind: ResolvedKind | string, namespace: string | undefined): string {
  const clusterScoped = typeof kind === 'string' ? isClusterScopedKind(kind) : kind.clusterScoped || isClusterScopedKind(kind.kind);
  return clusterScoped ? '' : namespace || 'default';
}

/** `KIND NAME…`, `KIND/NAME…` or `KIND -l SEL`; undefined after reporting a usage error. */
function fromArguments(ctx: ClientContext, resource: string | undefined, names: string[], opts: DeleteOptions): Target[] | undefined {
  if (!resource) {
    fail(ctx, ExitCode.USAGE, 'you must provide one or more resources by argument or filename (-f)');
    return undefined;
  }
  const pairs: { kind: ResolvedKind; name: string }[] = [];
  if (resource.includes('/')) {
    for (const arg of [resource, ...names]) {
      if (!arg.includes('/')) {
        fail(
          ctx,
          ExitCode.USAGE,
          `there is already a name in "${resource}"; do not also pass "${arg}" (use KIND/NAME for each, or KIND NAME NAME…)`,
        );
        return undefined;
      }
      const target = parseTargetOrFail(ctx, arg, undefined);
      if (!target) return undefined;
      pairs.push(target);
    }
  } else {
    for (const name of names.length > 0 ? names : ['']) {
      const target = parseTargetOrFail(ctx, resource, name || undefined);
      if (!target) return undefined;
      pairs.push(target);
    }
  }
  const named = pairs.some((p) => p.name);
  if (!named && !opts.selector) {
    fail(ctx, ExitCode.USAGE, 'resource(s) were provided, but no name or label selector was specified');
    return undefined;
  }
  if (named && opts.selector) {
    fail(ctx, ExitCode.USAGE, 'name cannot be provided when a selector is specified');
    return undefined;
  }
  return pairs.map(({ kind, name }) => ({
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    namespace: namespaceFor(kind, opts.namespace),
    name,
    labelSelector: opts.selector ?? '',
  }));
}

/** Every object of the `-f` sources; undefined after reporting a usage error (nothing is sent then). */
async function fromFiles(ctx: ClientContext, resource: string | undefined, opts: DeleteOptions): Promise<Target[] | undefined> {
  if (resource) {
    fail(ctx, ExitCode.USAGE, `-f names the objects; do not also pass "${resource}"`);
    return undefined;
  }
  if (opts.selector) {
    fail(ctx, ExitCode.USAGE, '-l cannot be combined with -f');
    return undefined;
  }
  const targets: Target[] = [];
  try {
    for (const source of opts.filename!) {
      const text = await readManifests([source], ctx.io);
      for (const o of objectsOfManifest(text, source === '-' ? 'stdin' : source)) {
        targets.push({ ...o, namespace: namespaceFor(o.kind, o.namespace || opts.namespace), labelSelector: '' });
      }
    }
  } catch (err) {
    fail(ctx, ExitCode.USAGE, (err as Error).message);
    return undefined;
  }
  return targets;
}
