/**
 * `outpost apply -f FILE|DIR|- --account A`: sends manifests (YAML multi-document or JSON) to the account's agent,
 * which applies them (client-side by default, server-side when asked) and returns the applied objects.
 */
import { objectsOfManifest } from '../../client/manifest-objects.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  configureClientCommand,
  fail,
  resolveDeps,
  runOperation,
  type ClientCommandDeps,
  type ClientOptions,
} from '../../client/client-command.js';
import { ExitCode } from '../../client/errors.js';
import { formatApplied } from '../../client/format.js';
import type { CliIo } from '../../client/io.js';

/** Largest manifest text the CLI sends (the gateway enforces the same limit). */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/**
 * Reads every `-f` source: `-` is stdin, a directory contributes its *.yaml/*.yml/*.json files (sorted, not
 * recursive). Several sources are joined as YAML documents. Rejects with a message naming the unreadable path, the
 * source, line and column of malformed YAML, or the source and document of one without a kind or `metadata.name`
 * (manifest-objects.ts: the checks `delete -f` makes too; nothing is sent then).
 */
export async function readManifests(sources: string[], io: CliIo): Promise<string> {
  const texts: string[] = [];
  for (const source of sources) {
    if (source === '-') {
      const text = await io.readStdin();
      objectsOfManifest(text, 'stdin');
      texts.push(text);
      continue;
    }
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(source);
    } catch (err) {
      throw new Error(
        `cannot read ${source}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`,
      );
    }
    const files = info.isDirectory()
      ? (await readdir(source))
          .filter((f) => /\.(ya?ml|json)$/.test(f))
          .sort()
          .map((f) => join(source, f))
      : [source];
    if (files.length === 0) throw new Error(`no .yaml, .yml or .json files in directory ${source}`);
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new Error(`cannot read ${file}: ${(err as Error).message}`);
      }
      objectsOfManifest(text, file);
      texts.push(text);
    }
  }
  return texts.length === 1 ? texts[0]! : texts.map((t) => t.replace(/\s+$/, '')).join('\n---\n');
}

interface ApplyOptions extends ClientOptions {
  filename: string[];
  serverSide?: boolean;
  forceConflicts?: boolean;
  fieldManager?: string;
}

/** Registers `apply`. */
export function registerApplyCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('apply')
    .description("create or update objects from manifests (YAML or JSON, multi-document) in an account's cluster")
    .requiredOption('-f, --filename <file...>', 'manifest file, directory of manifests, or - for stdin (repeatable)')
    .option('--server-side', 'server-side apply instead of client-side apply (last-applied annotation)')
    .option('--force-conflicts', 'server-side apply: take ownership of fields another manager owns')
    .option('--field-manager <name>', 'field manager name (default "outpost")');
  configureClientCommand(cmd, ctx).action(async (opts: ApplyOptions) => {
    let manifests: string;
    try {
      manifests = await readManifests(opts.filename, ctx.io);
    } catch (err) {
      fail(ctx, ExitCode.USAGE, (err as Error).message);
      return;
    }
    if (Buffer.byteLength(manifests) > MAX_MANIFEST_BYTES) {
      fail(ctx, ExitCode.USAGE, `manifests are ${Buffer.byteLength(manifests)} bytes; the limit is ${MAX_MANIFEST_BYTES} bytes (1 MiB)`);
      return;
    }
    if (opts.forceConflicts && !opts.serverSide) {
      fail(ctx, ExitCode.USAGE, '--force-conflicts only applies with --server-side');
      return;
    }
    await runOperation(
      ctx,
      opts,
      {
        case: 'apply',
        value: {
          manifests,
          serverSide: opts.serverSide ?? false,
          forceConflicts: opts.forceConflicts ?? false,
          fieldManager: opts.fieldManager ?? '',
          namespace: opts.namespace ?? '',
        },
      },
      formatApplied,
    );
  });
}
