#!/usr/bin/env node
// npm's `prepare` script (run by `npm ci` and `npm install` in a checkout): compiles the server and CLI
// (`npm run build:server`) so `outpost` starts from the compiled build rather than through tsx. A failed build is
// reported and does not fail the install: bin/outpost.js then runs the TypeScript sources, which always work.
// OUTPOST_SKIP_PREPARE=1 skips it (the container build compiles in its own step).
import { spawnSync } from 'node:child_process';

if (process.env.OUTPOST_SKIP_PREPARE === '1') process.exit(0);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', '--silent', 'build:server'], { stdio: 'inherit' });
if (result.status !== 0) {
  console.warn(
    'outpost: the compiled build failed (see above); `outpost` will run the TypeScript sources through tsx instead (slower to start). Run `npm run build:server` to retry.',
  );
}
