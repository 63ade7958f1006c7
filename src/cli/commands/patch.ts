/**
 * `outpost patch KIND NAME -p PATCH [--type strategic|merge|json] --account A`: patches one live object through the
 * account's agent (PatchSpec). The patch is checked first: a patch that does not parse, has the wrong shape for its
 * type, or is a JSON patch of a Secret that would read the Secret's values (src/shared/secret-patch-rules.ts; the
 * gateway refuses it too), exits 2 and sends nothing.
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
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
import { checkPatchDocument, type PatchKind } from '../../client/patch-document.js';
import { displayType, isClusterScopedKind } from '../../shared/kind-names.js';
import { isSecretKind } from '../../shared/secret-kind.js';
import { secretPatchProblem } from '../../shared/secret-patch-rules.js';
import { PatchType } from '../../gen/outpost/agent/v1/operation_pb.js';

const PATCH_TYPES: Record<PatchKind, PatchType> = {
  strategic: PatchType.STRATEGIC,
  merge: PatchType.MERGE,
  json: PatchType.JSON,
};

interface PatchOptions extends ClientOptions {
  patch?: string;
  patchFile?: string;
  type: PatchKind;
}

/** Registers `patch`. */
export function registerPatchCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('patch')
    .description('update fields of a live object with a strategic merge, JSON merge or JSON (RFC 6902) patch')
    .argument('<resource>', 'KIND/NAME or KIND (with the name as second argument)')
    .argument('[name]', 'object name (when not given as KIND/NAME)')
    .option('-p, --patch <patch>', 'the patch as JSON (or YAML), e.g. \'{"spec":{"replicas":2}}\'')
    .option('--patch-file <file>', 'read the patch from this file instead of -p')
    .addOption(new Option('--type <type>', 'patch format').choices(['strategic', 'merge', 'json']).default('strategic'));
  configureClientCommand(cmd, ctx).action(async (resource: string, nameArg: string | undefined, opts: PatchOptions) => {
    const target = parseTargetOrFail(ctx, resource, nameArg);
    if (!target) return;
    const { kind, name } = target;
    if (!name) {
      fail(ctx, ExitCode.USAGE, 'a name is required: patch KIND/NAME -p PATCH');
      return;
    }
    if ((opts.patch === undefined) === (opts.patchFile === undefined)) {
      fail(ctx, ExitCode.USAGE, 'give the patch with exactly one of -p/--patch or --patch-file');
      return;
    }
    let patch: string;
    try {
      const text = opts.patch ?? (await readPatchFile(opts.patchFile!));
      patch = checkPatchDocument(text, opts.type);
    } catch (err) {
      fail(ctx, ExitCode.USAGE, (err as Error).message);
      return;
    }
    const problem = opts.type === 'json' && isSecretKind(kind.kind) ? secretPatchProblem(JSON.parse(patch)) : undefined;
    if (problem) {
      fail(ctx, ExitCode.USAGE, `refusing to patch secret/${name}: ${problem}`);
      return;
    }
    const namespace = kind.clusterScoped || isClusterScopedKind(kind.kind) ? '' : (opts.namespace ?? 'default');
    await runOperation(
      ctx,
      opts,
      { case: 'patch', value: { apiVersion: kind.apiVersion, kind: kind.kind, namespace, name, type: PATCH_TYPES[opts.type], patch } },
      (record) => formatActed(record, 'patched', kind.kind, `${displayType('', kind.kind)}/${name}`),
    );
  });
}

async function readPatchFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
  }
}
