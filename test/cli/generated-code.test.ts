/**
 * The generated protobuf code in src/gen/ is committed; this proves it is exactly what `buf generate` makes from
 * proto/ today, and that `buf lint` passes — so nobody edits either by hand.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const buf = join(repo, 'node_modules/.bin/buf');

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const p = join(d, entry);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

test('src/gen matches buf generate and buf lint passes', { timeout: 60_000 }, async () => {
  await run(buf, ['lint'], { cwd: repo });
  const out = mkdtempSync(join(tmpdir(), 'outpost-gen-'));
  try {
    await run(buf, ['generate', '-o', out], {
      cwd: repo,
      env: { ...process.env, PATH: `${join(repo, 'node_modules/.bin')}:${process.env.PATH}` },
    });
    const fresh = files(join(out, 'src/gen'));
    const committed = files(join(repo, 'src/gen'));
    assert.deepEqual([...committed.keys()].sort(), [...fresh.keys()].sort());
    for (const [path, text] of fresh) assert.equal(committed.get(path), text, `src/gen/${path} is stale: run npm run generate`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
