/**
 * The absolute path of this installation's `outpost` entry point (bin/outpost.js), for kubeconfig exec entries that
 * make kubectl run `outpost credential`. The sources (src/client/) and the build (dist/client/) sit at the same depth
 * under the package root, so one relative URL finds it from either.
 */
import { fileURLToPath } from 'node:url';

/** `<package root>/bin/outpost.js`, resolved from this module's own location (symbolic links are not followed). */
export function outpostEntryPath(): string {
  return fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));
}
