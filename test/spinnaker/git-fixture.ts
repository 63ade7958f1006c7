/**
 * The git repository the git/repo artifact tests clone (over HTTP in artifacts-git.test.ts, over SSH in
 * artifacts-git-ssh.test.ts), and how they read the tar.gz answers.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A bare repository with `master` (README, charts/hello, kustomize/) and `release` (one more file). */
export function makeRepository(root: string): void {
  const work = mkdtempSync(join(tmpdir(), 'outpost-git-src-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=master', ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1' },
    });
  git('init', '-q');
  mkdirSync(join(work, 'charts', 'hello'), { recursive: true });
  mkdirSync(join(work, 'kustomize'));
  writeFileSync(join(work, 'README.md'), '# repo\n');
  writeFileSync(join(work, 'charts', 'hello', 'Chart.yaml'), 'apiVersion: v2\nname: hello\nversion: 1.0.0\n');
  writeFileSync(join(work, 'kustomize', 'kustomization.yaml'), 'resources: []\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'first');
  git('checkout', '-q', '-b', 'release');
  writeFileSync(join(work, 'charts', 'hello', 'values.yaml'), 'replicas: 3\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'release');
  git('checkout', '-q', 'master');
  execFileSync('git', ['clone', '-q', '--bare', work, join(root, 'app.git')], { env: { PATH: process.env.PATH, HOME: work } });
}

/** The entries of a tar.gz, directories left out. */
export function tarEntries(tgz: Buffer): string[] {
  return execFileSync('tar', ['-tzf', '-'], { input: tgz })
    .toString()
    .split('\n')
    .filter((e) => e && !e.endsWith('/'))
    .sort();
}
