#!/usr/bin/env node
// Run after `tsc -p tsconfig.build.json` (npm run build:server): marks dist/ as built now. bin/outpost.js runs dist/
// only while this stamp is newer than every source file (tsc's incremental build leaves files it did not need to
// rewrite untouched, so their times say nothing about when the build ran).
import { writeFileSync } from 'node:fs';

writeFileSync(new URL('../dist/.build-stamp', import.meta.url), `${new Date().toISOString()}\n`);
