/**
 * Where the kubeconfig is and how it is read and written: the first path of `KUBECONFIG`, else ~/.kube/config (as
 * kubectl picks the file it writes), read as text, and replaced atomically (a temp file beside it, then a rename)
 * with mode 0600 because it holds credentials.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { CliError, ExitCode } from './errors.js';

/** The kubeconfig kubectl would write to: the first non-empty entry of `KUBECONFIG`, else `$HOME/.kube/config`. */
export function defaultKubeconfigPath(env: NodeJS.ProcessEnv): string {
  const first = (env.KUBECONFIG ?? '').split(delimiter).find((p) => p.trim() !== '');
  if (first) return resolve(first);
  return join(env.HOME || homedir(), '.kube', 'config');
}

/** The file's text, or undefined when it does not exist. Throws CliError (exit 2) naming the file otherwise. */
export function readKubeconfigText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new CliError(`cannot read the kubeconfig ${path} (${code ?? (err as Error).message}); it was left unchanged`, ExitCode.USAGE);
  }
}

/** The file a write to `path` lands in: through a symbolic link (a dotfiles checkout), else `path` itself. */
function writeTarget(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Replaces `path` with `text` atomically, mode 0600, creating its directory (mode 0700) when missing. Returns the
 * file written (the link target when `path` is a symbolic link). Throws CliError (exit 1) when it cannot write;
 * the old file is then untouched.
 */
export function writeKubeconfigAtomically(path: string, text: string): string {
  const target = writeTarget(path);
  const dir = dirname(target);
  const temp = join(dir, `.${basename(target)}.outpost-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(temp, 'wx', 0o600);
    try {
      fchmodSync(fd, 0o600); // whatever the umask
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
    return target;
  } catch (err) {
    rmSync(temp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot write the kubeconfig ${target} (${code ?? (err as Error).message})`, ExitCode.FAILED);
  }
}
