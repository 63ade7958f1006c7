#!/usr/bin/env node
// Run after `tsc -p tsconfig.build.json` (npm run build:server): bundles dist/cli/main.js into dist/bundle/ with
// esbuild, so a client command (`outpost get`, `apply`, `accounts`…) loads a few files instead of the ~600 ES modules
// of its dependencies — loading them one by one was most of a CLI call's time. Commands the CLI loads on demand (the
// gateway, agent, sandbox and demo programs) become separate chunks that a client command never reads; bin/outpost.js
// runs those programs from dist/cli/ anyway (see there). Packages that find files next to their own code at run time
// (pino's worker transport, PGlite's wasm, Vite) stay in node_modules.
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;

await build({
  absWorkingDir: root,
  entryPoints: { outpost: 'dist/cli/main.js' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  external: ['vite', 'lightningcss', '@electric-sql/pglite', 'pino', 'pino-pretty', 'thread-stream'],
  // Bundled CommonJS packages call require(); give the ES module bundle one.
  banner: { js: "import { createRequire as __outpostRequire } from 'node:module'; const require = __outpostRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
});
