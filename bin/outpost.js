#!/usr/bin/env node
// Entry point of the `outpost` command. Runs the compiled build (dist/, `npm run build:server`, run by `npm ci` /
// `npm install` through the `prepare` script) when it exists and is newer than every source file; otherwise the
// TypeScript sources through tsx, so a checkout works without a build and an edited source is never shadowed by a
// stale build. OUTPOST_RUNTIME=dist or =tsx forces one.
// Within the build, client commands run from the esbuild bundle (dist/bundle/, a few files: start-up in a fraction of
// the time of loading every ES module one by one), the long-running programs from dist/cli/ (their modules locate
// files such as migrations and the dashboard relative to their own paths).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from './build-freshness.js';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The sub-commands that start a long-running program rather than call a gateway. */
const PROGRAMS = new Set(['gateway', 'agent', 'sandbox', 'demo']);

function useBuild() {
  const forced = process.env.OUTPOST_RUNTIME;
  if (forced === 'dist' || forced === 'tsx') return forced === 'dist';
  return isBuildFresh(root);
}

if (useBuild()) {
  const command = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
  const bundled = !PROGRAMS.has(command ?? '') && existsSync(`${root}dist/bundle/outpost.mjs`);
  const { main } = bundled ? await import('../dist/bundle/outpost.mjs') : await import('../dist/cli/main.js');
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli/main.ts');
  await main(process.argv);
}
