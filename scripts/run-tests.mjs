#!/usr/bin/env node
// Runs the test suite with node's test runner (TypeScript through tsx) and fails when no test ran.
// Usage: npm test [-- PATH...]  (files or directories; default: test/ and src/)
// Node 20's runner silently runs nothing for a quoted glob, so the files are listed here explicitly.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new Error(`no such test path: ${path}`);
  if (st.isFile()) {
    out.push(path);
    return out;
  }
  for (const entry of readdirSync(path).sort()) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const child = join(path, entry);
    if (statSync(child).isDirectory()) collect(child, out);
    else if (entry.endsWith('.test.ts')) out.push(child);
  }
  return out;
}

const args = process.argv.slice(2);
const roots = args.length > 0 ? args : ['src', 'test'];
const files = roots.flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const concurrency = process.env.OUTPOST_TEST_CONCURRENCY ?? '2';
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...files],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
// The summary lines come before the list of failures, which can be long: remember the last value of each as it streams.
const summary = {};
let partial = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (partial + chunk.toString()).split('\n');
  partial = lines.pop() ?? '';
  for (const line of lines) {
    const m = /^\u2139 (tests|pass|fail) (\d+)\s*$/.exec(line);
    if (m) summary[m[1]] = Number(m[2]);
  }
});
child.on('exit', (code, signal) => {
  const count = (name) => summary[name] ?? NaN;
  const tests = count('tests');
  const pass = count('pass');
  const fail = count('fail');
  if (!Number.isFinite(tests) || tests === 0) {
    console.error(`run-tests: the runner executed no tests (exit ${code ?? signal})`);
    process.exit(1);
  }
  console.log(`${pass} passed, ${fail} failed`);
  process.exit(code === 0 && fail === 0 ? 0 : 1);
});
