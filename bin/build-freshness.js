// Whether the compiled build (dist/, `npm run build:server`) is fresh: it exists and its stamp is newer than every
// source file. bin/outpost.js runs dist/ only then; the benchmark skips its own build then. Not an entry point.
import { existsSync, readdirSync, statSync } from 'node:fs';

/** Newest modification time (ms) of the .ts files under `dir`, tests excluded. */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * True when `root`/dist holds a build stamped after the newest source under `root`/src (or when there are no
 * sources, as in the container image). `root` ends with a slash.
 */
export function isBuildFresh(root) {
  const stamp = `${root}dist/.build-stamp`;
  if (!existsSync(`${root}dist/cli/main.js`) || !existsSync(stamp)) return false;
  if (!existsSync(`${root}src`)) return true;
  return statSync(stamp).mtimeMs >= newestSource(`${root}src`);
}
