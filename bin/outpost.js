#!/usr/bin/env node
// Entry point of the `outpost` command. Runs the compiled build (dist/, `npm run build:server`) when it exists and is
// newer than every source file; otherwise the TypeScript sources through tsx, so a checkout works without a build and
// an edited source is never shadowed by a stale build. OUTPOST_RUNTIME=dist or =tsx forces one.
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from './build-freshness.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function useBuild() {
  const forced = process.env.OUTPOST_RUNTIME;
  if (forced === 'dist' || forced === 'tsx') return forced === 'dist';
  return isBuildFresh(root);
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
