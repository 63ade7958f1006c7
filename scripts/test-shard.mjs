#!/usr/bin/env node
// One shard of the test suite (started by scripts/run-tests.mjs as `node --import tsx --test-reporter=spec
// scripts/test-shard.mjs FILE...`): imports each test file in turn, which registers its tests with node:test in this
// process; they then run one file after another, as each would alone. Not meant to be run by hand.
//
// A shard still alive 12 s after its summary is sent SIGUSR2 by run-tests.mjs: ./lingering-report.mjs then prints its
// live handles and a 3-second CPU profile's hottest functions to stderr (and run-tests.mjs kills it 30 s after its
// summary). `node scripts/find-lingering.mjs` runs each file alone to find the one that leaves something running.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import './lingering-report.mjs';

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
