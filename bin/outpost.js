#!/usr/bin/env node
// Entry point of the `outpost` command. Runs the compiled build (dist/, `npm run build:server`) when it exists and is
// newer than every source file; otherwise the TypeScript sources through tsx, so a checkout works without a build and
// an edited source is never shadowed by a stale build. OUTPOST_RUNTIME=dist or =tsx forces one.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = `${root}dist/.build-stamp`;

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

function useBuild() {
  const forced = process.env.OUTPOST_RUNTIME;
  if (forced === 'dist' || forced === 'tsx') return forced === 'dist';
  if (!existsSync(`${root}dist/cli/main.js`) || !existsSync(stamp)) return false;
  if (!existsSync(`${root}src`)) return true;
  return statSync(stamp).mtimeMs >= newestSource(`${root}src`);
}

if (useBuild()) {
  const { main } = await import('../dist/cli/main.js');
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli/main.ts');
  await main(process.argv);
}
