/**
 * Relative paths in a configuration file name files beside it, not in whatever directory the program was started
 * from: both programs resolve them against the directory of their `--config` file (docs/configuration.md). This is
 * the one walk that does it, over a list of the keys that hold paths.
 */
import { isAbsolute, resolve } from 'node:path';

/**
 * A key holding a path: its key path from the top of the configuration, `'*'` standing for every element of a list
 * (`['auth', 'tokens', '*', 'tokenFile']`), and optionally which values are paths at all (a key that also takes URLs).
 */
export interface ConfigPathKey {
  readonly path: readonly string[];
  /** True for a value that is a path; every non-empty string when absent. */
  readonly isPath?: (value: string) => boolean;
}

/** The dotted form a reference uses: `auth.tokens[].tokenFile`. */
export function configPathName(key: ConfigPathKey): string {
  return key.path.map((part, i) => (part === '*' ? '[]' : i === 0 ? part : `.${part}`)).join('');
}

/**
 * Rewrites, in place, every relative path found at `keys` in `config` to an absolute path under `baseDir`. Anything
 * that is not where a key says (a missing section, a string where an object belongs) is left alone for the schema to
 * judge, so this may run on a configuration before it is validated.
 */
export function resolveConfigPaths(config: unknown, keys: readonly ConfigPathKey[], baseDir: string): void {
  for (const key of keys) visit(config, key.path, (value) => (key.isPath ?? isAnyPath)(value), baseDir);
}

function isAnyPath(): boolean {
  return true;
}

function visit(node: unknown, path: readonly string[], isPath: (value: string) => boolean, baseDir: string): void {
  if (typeof node !== 'object' || node === null) return;
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '*') {
    if (!Array.isArray(node)) return;
    if (rest.length === 0) {
      node.forEach((value, i) => {
        node[i] = resolved(value, isPath, baseDir);
      });
    } else for (const item of node) visit(item, rest, isPath, baseDir);
    return;
  }
  if (Array.isArray(node) || !Object.hasOwn(node, head)) return;
  const record = node as Record<string, unknown>;
  if (rest.length === 0) record[head] = resolved(record[head], isPath, baseDir);
  else visit(record[head], rest, isPath, baseDir);
}

function resolved(value: unknown, isPath: (value: string) => boolean, baseDir: string): unknown {
  if (typeof value !== 'string' || value === '' || isAbsolute(value) || !isPath(value)) return value;
  return resolve(baseDir, value);
}
