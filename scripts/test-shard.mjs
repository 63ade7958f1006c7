#!/usr/bin/env node
// One shard of the test suite (started by scripts/run-tests.mjs as `node --import tsx --test-reporter=spec
// scripts/test-shard.mjs FILE...`): imports each test file in turn, which registers its tests with node:test in this
// process; they then run one file after another, as each would alone. Not meant to be run by hand.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
