#!/usr/bin/env node
// Writes docs/configuration.md from the configuration schemas (see scripts/config-reference.ts).
// Usage: npm run docs:config             regenerate the file
//        npm run docs:config -- --check  exit 1 when the committed file differs (what the test checks)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIGURATION_DOC, renderConfigurationReference } from './config-reference.js';

const file = fileURLToPath(new URL(`../${CONFIGURATION_DOC}`, import.meta.url));
const text = renderConfigurationReference();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // a missing file is stale too
  }
  if (current !== text) {
    console.error(`${CONFIGURATION_DOC} is out of date: run npm run docs:config`);
    process.exit(1);
  }
  console.log(`${CONFIGURATION_DOC} is up to date`);
} else {
  writeFileSync(file, text);
  console.log(`wrote ${CONFIGURATION_DOC}`);
}
