#!/usr/bin/env node
// Finds test files that leave something running after their tests end (docs/development.md, "Tests"): each file runs
// alone in its own process (`node --import tsx --test`), and once it printed its summary the process must exit within
// GRACE_MS. A file whose process lingers is reported with its live handles and the hottest
// functions of a short CPU profile (scripts/lingering-report.mjs, loaded into the child), then killed.
// Usage: node scripts/find-lingering.mjs [PATH...]   (default: test/; OUTPOST_TEST_POSTGRES as for npm test)
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const GRACE_MS = 8_000;
const HARD_LIMIT_MS = 600_000;

function collect(path, out) {
  if (statSync(path).isFile()) return [...out, path];
  for (const entry of readdirSync(path).sort()) {
    const child = join(path, entry);
    if (statSync(child).isDirectory()) collect(child, out);
    else if (entry.endsWith('.test.ts')) out.push(child);
  }
  return out;
}

function runFile(file) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './scripts/lingering-report.mjs', '--test-reporter=spec', '--test', file],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    let summaryAt;
    let lingering = false;
    const hard = setTimeout(() => child.kill('SIGKILL'), HARD_LIMIT_MS);
    let grace;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (summaryAt === undefined && /ℹ duration_ms \d/.test(out)) {
        summaryAt = Date.now();
        grace = setTimeout(() => {
          lingering = true;
          child.kill('SIGUSR2');
          setTimeout(() => child.kill('SIGKILL'), 5_000);
        }, GRACE_MS);
      }
    });
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code, signal) => {
      clearTimeout(hard);
      clearTimeout(grace);
      const failed = /ℹ fail [1-9]/.test(out);
      resolve({
        file,
        code,
        signal,
        failed,
        lingering,
        exitAfterMs: summaryAt ? Date.now() - summaryAt : undefined,
        report: err,
      });
    });
  });
}

const files = (process.argv.length > 2 ? process.argv.slice(2) : ['test']).reduce((acc, p) => collect(p, acc), []);
const found = [];
for (const file of files) {
  const r = await runFile(file);
  const note = r.lingering ? 'LINGERS' : `exit ${r.code ?? r.signal} after ${r.exitAfterMs ?? '?'} ms`;
  process.stdout.write(`${r.failed ? 'FAILED ' : ''}${file}: ${note}\n`);
  if (r.lingering) {
    found.push(r);
    process.stdout.write(
      `${r.report
        .split('\n')
        .filter((l) => l.startsWith('lingering:') || l.startsWith('  '))
        .join('\n')}\n`,
    );
  }
}
process.stdout.write(`\n${found.length} of ${files.length} files left their process running after their summary\n`);
for (const r of found) process.stdout.write(`  ${r.file}\n`);
process.exitCode = found.length > 0 ? 1 : 0;
