/**
 * bin/outpost.js picks the compiled build only while it is fresh: run in a scratch tree holding a copy of the real
 * entry point, a stub build and stub sources (each printing which one ran), so the repository's own dist/ and src/
 * are never touched while other tests spawn the command.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function scratchTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-runtime-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  copyFileSync(join(ROOT, 'bin', 'outpost.js'), join(dir, 'bin', 'outpost.js'));
  copyFileSync(join(ROOT, 'bin', 'build-freshness.js'), join(dir, 'bin', 'build-freshness.js'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  writeFileSync(join(dir, 'dist', 'cli', 'main.js'), "export async function main() { console.log('dist'); }\n");
  writeFileSync(join(dir, 'src', 'cli', 'main.ts'), "export async function main(_argv: string[]): Promise<void> { console.log('src'); }\n");
  return dir;
}

function run(dir: string, env: Record<string, string> = {}, args: string[] = []): string {
  const { OUTPOST_RUNTIME: _, ...rest } = process.env;
  const r = spawnSync(process.execPath, [join(dir, 'bin', 'outpost.js'), ...args], { encoding: 'utf8', env: { ...rest, ...env } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe('bin/outpost.js runtime', () => {
  test('the build while its stamp is newer than every source; the sources otherwise; OUTPOST_RUNTIME forces one', () => {
    const dir = scratchTree();
    try {
      const stamp = join(dir, 'dist', '.build-stamp');
      const source = join(dir, 'src', 'cli', 'main.ts');
      assert.equal(run(dir), 'src', 'no stamp: never built');
      writeFileSync(stamp, 'now\n');
      const past = new Date(Date.now() - 60_000);
      utimesSync(source, past, past);
      assert.equal(run(dir), 'dist', 'fresh build');
      utimesSync(source, new Date(), new Date(Date.now() + 1000));
      assert.equal(run(dir), 'src', 'a source edited after the build');
      assert.equal(run(dir, { OUTPOST_RUNTIME: 'dist' }), 'dist');
      utimesSync(source, past, past);
      assert.equal(run(dir, { OUTPOST_RUNTIME: 'tsx' }), 'src');
      rmSync(join(dir, 'src'), { recursive: true });
      assert.equal(run(dir), 'dist', 'an install without sources runs the build');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('within a fresh build, client commands run from the bundle and the long-running programs from dist/cli', () => {
    const dir = scratchTree();
    try {
      writeFileSync(join(dir, 'dist', '.build-stamp'), 'now\n');
      const past = new Date(Date.now() - 60_000);
      utimesSync(join(dir, 'src', 'cli', 'main.ts'), past, past);
      assert.equal(run(dir, {}, ['get', 'pods']), 'dist', 'no bundle yet: dist/cli');
      mkdirSync(join(dir, 'dist', 'bundle'));
      writeFileSync(join(dir, 'dist', 'bundle', 'outpost.mjs'), "export async function main() { console.log('bundle'); }\n");
      for (const args of [['get', 'pods'], ['--gateway', 'x'], ['accounts'], ['--help'], []])
        assert.equal(run(dir, {}, args), 'bundle', args.join(' '));
      for (const program of ['gateway', 'agent', 'sandbox', 'demo']) assert.equal(run(dir, {}, [program, '--x']), 'dist', program);
      assert.equal(run(dir, { OUTPOST_RUNTIME: 'tsx' }, ['get']), 'src', 'forced sources');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--version says which one runs', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'outpost.js'), '--version'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^outpost \d+\.\d+\.\d+ \((compiled build|TypeScript sources through tsx), node v\d+/);
  });
});
