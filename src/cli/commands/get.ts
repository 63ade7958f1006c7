/**
 * `outpost get KIND [NAME] --account A`: reads live from the cluster through the account's agent: one object by name
 * (404 when missing) or a listing with label/field selectors, printed like kubectl. `--cached` reads the gateway's
 * cache instead (src/client/cached-objects.ts), touching neither the cluster nor the agent.
 */
import { Option, type Command } from 'commander';
import {
  configureClientCommand,
  fail,
  openGateway,
  parseTargetOrFail,
  resolveDeps,
  runOperation,
  type ClientCommandDeps,
  type ClientOptions,
} from '../../client/client-command.js';
import { readCachedObjects } from '../../client/cached-objects.js';
import { describeClientError, ExitCode } from '../../client/errors.js';
import { formatObjects, type OutputFormat } from '../../client/format.js';

interface GetOptions extends ClientOptions {
  selector?: string;
  fieldSelector?: string;
  output?: 'json' | 'yaml' | 'name' | 'wide';
  allNamespaces?: boolean;
  cached?: boolean;
}

/** Registers `get`. */
export function registerGetCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('get')
    .description('read one object or list objects of a kind, live from the cluster (or from the gateway cache: --cached)')
    .argument('<resource>', 'KIND or KIND/NAME (pods, deploy, deployment.apps, ConfigMap…)')
    .argument('[name]', 'object name; without it, list')
    .option('-l, --selector <selector>', 'label selector for listing, e.g. app=web')
    .option('--field-selector <selector>', 'field selector for listing, e.g. status.phase=Running')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['json', 'yaml', 'name', 'wide']))
    .option('--cached', "read the gateway's cache instead of the live cluster (nothing reaches the cluster)");
  configureClientCommand(cmd, ctx).action(async (resource: string, nameArg: string | undefined, opts: GetOptions) => {
    const target = parseTargetOrFail(ctx, resource, nameArg);
    if (!target) return;
    const { kind, name } = target;
    if (name && (opts.selector || opts.fieldSelector)) {
      fail(ctx, ExitCode.USAGE, 'name cannot be provided when a selector is specified');
      return;
    }
    if (name && opts.allNamespaces) {
      fail(ctx, ExitCode.USAGE, 'a resource cannot be retrieved by name across all namespaces');
      return;
    }
    const namespace = kind.clusterScoped || opts.allNamespaces ? '' : (opts.namespace ?? 'default');
    const output: OutputFormat = opts.output ?? 'table';
    const render = (objects: Parameters<typeof formatObjects>[0], single: boolean) =>
      formatObjects(objects, { output, kind: kind.kind, single, namespace, allNamespaces: opts.allNamespaces });
    if (opts.cached) {
      if (opts.fieldSelector || opts.id !== undefined || !opts.wait) {
        fail(ctx, ExitCode.USAGE, '--cached reads the cache: --field-selector, --id and --no-wait do not apply');
        return;
      }
      try {
        const { connection, account } = await openGateway(ctx, opts);
        const objects = await readCachedObjects(connection, {
          account,
          kind: kind.kind,
          namespace,
          name,
          labelSelector: opts.selector,
        });
        const out = render(objects, Boolean(name));
        if (out.stdout) ctx.io.stdout(out.stdout);
        if (out.stderr) ctx.io.stderr(out.stderr);
        ctx.exit(ExitCode.OK);
      } catch (err) {
        const { exitCode, message } = describeClientError(err, opts.gateway);
        fail(ctx, exitCode, message);
      }
      return;
    }
    if (name) {
      await runOperation(ctx, opts, { case: 'get', value: { apiVersion: kind.apiVersion, kind: kind.kind, namespace, name } }, (record) =>
        render(record.result?.objects ?? [], true),
      );
      return;
    }
    await runOperation(
      ctx,
      opts,
      {
        case: 'list',
        value: {
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          namespace,
          labelSelector: opts.selector ?? '',
          fieldSelector: opts.fieldSelector ?? '',
        },
      },
      (record) => render(record.result?.objects ?? [], false),
    );
  });
}
