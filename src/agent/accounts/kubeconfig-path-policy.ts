/**
 * Where the kubeconfig of a dynamic account may come from. A dynamic account is defined at the gateway, so its
 * `kubeconfigFile` is a path chosen by whoever administers the gateway, not by whoever runs the agent: without a
 * bound, an agent would read any file it can (`/etc/shadow`, another cluster's kubeconfig, `/proc/self/environ`).
 * The path must lie under one of the directories the agent's own configuration allows
 * (`kubernetes.dynamicKubeconfigDirs`), checked on the path as written (after `..` is resolved) and again on the
 * real path (after symbolic links), before anything is read. Accounts from the agent's own config file are trusted.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** True when `path` is `dir` or lies below it (both absolute and normalized). */
function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Why a dynamic account may not use `kubeconfigFile` (undefined when it may): not under an allowed directory as
 * written, or a symbolic link leading out of them. `allowedDirs` undefined or empty allows no path at all. Never reads
 * the file; a missing file is left for the loader to report.
 */
export function dynamicKubeconfigRefusal(kubeconfigFile: string, allowedDirs: readonly string[] | undefined): string | undefined {
  const dirs = allowedDirs ?? [];
  const where =
    dirs.length === 0
      ? 'no directory is allowed (kubernetes.dynamicKubeconfigDirs)'
      : `allowed: ${dirs.join(', ')} (kubernetes.dynamicKubeconfigDirs)`;
  const written = resolve(kubeconfigFile);
  if (!dirs.some((d) => within(written, resolve(d)))) return `kubeconfig ${written} is not under an allowed directory; ${where}`;
  const target = real(written);
  if (target !== undefined && !dirs.some((d) => within(target, real(resolve(d)) ?? resolve(d)))) {
    return `kubeconfig ${written} leads outside the allowed directories (symbolic link); ${where}`;
  }
  return undefined;
}
