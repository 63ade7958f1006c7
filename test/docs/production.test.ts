/**
 * Runs docs/production.md: every ```sh block, in order, with bash in an empty directory — real psql, openssl,
 * kubectl, curl and `outpost` (bin/outpost.js on the PATH). A block marked `<!-- background: NAME -->` is started
 * and left running (the gateway, the sandbox cluster, the agent), stopped at the end; one marked
 * `<!-- check: NAME -->` must print what the check of that name expects (a read is re-run until it does); any other
 * block must succeed. What the page fixes and a test cannot share is replaced: the Postgres server and the names of
 * the role and database (this run's own, dropped afterwards), and the ports — the programs bind free ports (port 0)
 * and the gateway's printed ports replace 7002 and 9091 in the blocks after it. Skipped, saying so, when Postgres is
 * not reachable (OUTPOST_TEST_POSTGRES, default postgres://postgres@127.0.0.1:5432/postgres).
 */
import assert from 'node:assert/strict';
import { exec, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { eventually, StopWaiting } from '../../testkit/eventually.js';
import { fencedBlocks, readDoc, ROOT } from './doc-blocks.js';

const SERVER = process.env.OUTPOST_TEST_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';
const blocks = fencedBlocks(readDoc('docs/production.md')).filter((b) => b.lang === 'sh');

type Json = Record<string, any>;
const json = (out: string) => JSON.parse(out) as Json;

/** What each `check:` block must print; `retry` for reads that may need a moment (re-run until they pass). */
const CHECKS: Record<string, { retry: boolean; passes: (out: string) => boolean }> = {
  health: { retry: true, passes: (out) => json(out).status === 'ok' && json(out).database === 'ok' },
  unauthenticated: { retry: false, passes: (out) => json(out).error === 'unauthenticated' },
  account: {
    retry: true,
    passes: (out) => json(out).items?.some((a: Json) => a.name === 'cluster-1' && a.state === 'ACTIVE') === true,
  },
  'reader-refused': { retry: false, passes: (out) => json(out).code === 'permission_denied' },
  'operator-scale': { retry: false, passes: (out) => json(out).operation?.state === 'OPERATION_STATE_SUCCEEDED' },
  'cli-operator': { retry: false, passes: (out) => /^web\s/m.test(out) && /^deployment\.apps\/web scaled$/m.test(out) },
  'cli-reader-refused': {
    retry: false,
    passes: (out) => /^error: PermissionDenied: .*\(HTTP 403\)$/m.test(out) && /^exit code 1$/m.test(out),
  },
  kubectl: { retry: true, passes: (out) => /^web-\S+\s+1\/1\s+Running/m.test(out) },
  'dashboard-page': { retry: false, passes: (out) => /<title>Outpost<\/title>/.test(out) },
  'dashboard-signed-in': {
    retry: true,
    passes: (out) => json(out).accounts?.some((a: Json) => a.name === 'cluster-1') === true,
  },
  spinnaker: {
    retry: true,
    passes: (out) => (json(out) as unknown as Json[]).some?.((c) => c.name === 'cluster-1' && c.type === 'kubernetes') === true,
  },
};

/** When each background program is ready, from its output; the gateway's answer carries its ports. */
const READY: Record<string, (log: string) => Json | undefined> = {
  gateway: (log) => {
    const http = /HTTP \(Connect JSON, REST\): https:\/\/\S+:(\d+)/.exec(log)?.[1];
    const grpc = /gRPC \(agents, h2c\): +https:\/\/\S+:(\d+)/.exec(log)?.[1];
    return http && grpc ? { http, grpc } : undefined;
  },
  cluster: (log) => (/^kubeconfig: /m.test(log) ? {} : undefined),
  // The agent is ready when the gateway says its account is: the `account` check after it waits for that.
  agent: () => ({}),
};

/** A background program started from the page. */
interface Background {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<void>;
}

/** Runs a block with bash; resolves with stdout, rejects with stderr (async: nothing here blocks the event loop). */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    exec(`set -euo pipefail\n${script}`, { shell: '/bin/bash', cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script}\nfailed (${err.code ?? err.signal}): ${stderr || err.message}\n${stdout}`));
      else resolve(stdout);
    });
  });
}

describe('docs/production.md', { timeout: 240_000 }, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let reachable: string | undefined;
  let unreachable = '';
  const role = `outpost_doc_${randomBytes(5).toString('hex')}`;
  const running: Background[] = [];

  before(async () => {
    const admin = postgres(SERVER, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      await admin`select 1`;
      reachable = SERVER;
    } catch (err) {
      unreachable = `Postgres not reachable at ${SERVER} (${(err as Error).message})`;
    } finally {
      await admin.end({ timeout: 1 }).catch(() => {});
    }
    dir = mkdtempSync(join(tmpdir(), 'outpost-production-'));
    const bin = join(dir, '.bin');
    mkdirSync(bin);
    symlinkSync(join(ROOT, 'bin/outpost.js'), join(bin, 'outpost'));
    // Only what the page sets decides: no OUTPOST_* from the caller; free ports on the loopback interface.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OUTPOST_')));
    env = {
      ...inherited,
      PATH: `${bin}:${process.env.PATH}`,
      HOME: dir,
      KUBECONFIG: join(dir, '.kube', 'config'),
      KUBECACHEDIR: join(dir, '.kube', 'cache'),
      OUTPOST_GATEWAY_HOST: '127.0.0.1',
      OUTPOST_GATEWAY_HTTP_PORT: '0',
      OUTPOST_GATEWAY_GRPC_PORT: '0',
      OUTPOST_AGENT_ADMIN_PORT: '0',
    };
  });

  after(async () => {
    // The agent first, then the gateway, then the cluster: each gets SIGTERM and a while to close, then SIGKILL.
    for (const proc of running.reverse()) await stop(proc);
    if (reachable) {
      const admin = postgres(reachable, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`drop database if exists ${role} with (force)`);
        await admin.unsafe(`drop role if exists ${role}`);
      } finally {
        await admin.end({ timeout: 5 });
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test('every command block, in order, on Postgres', async (t) => {
    if (!reachable) {
      t.skip(unreachable);
      return;
    }
    assert.ok(blocks.length >= 15, 'the page has its command blocks');
    const server = new URL(reachable);
    const substitutions: [string | RegExp, () => string][] = [
      // This run's Postgres server, role and database instead of the page's.
      ['psql -h 127.0.0.1 -U postgres', () => `psql '${reachable}'`],
      ['CREATE ROLE outpost ', () => `CREATE ROLE ${role} `],
      ['CREATE DATABASE outpost OWNER outpost', () => `CREATE DATABASE ${role} OWNER ${role}`],
      ['postgres://outpost:', () => `postgres://${role}:`],
      ['@127.0.0.1:5432/outpost"', () => `@${server.host}/${role}"`],
      // Free ports: the sandbox binds one and writes it into its kubeconfig; the gateway prints its own.
      ['--port 6443', () => '--port 0'],
      ['127.0.0.1:7002', () => `127.0.0.1:${ports.http}`],
      ['127.0.0.1:9091', () => `127.0.0.1:${ports.grpc}`],
    ];
    const used = new Set<string | RegExp>();
    let ports: Json = {};
    const local = (text: string) => {
      let out = text;
      for (const [from, to] of substitutions) {
        if (!out.includes(from as string)) continue;
        used.add(from);
        out = out.replaceAll(from as string, to());
      }
      return out;
    };
    const seenChecks: string[] = [];
    for (const block of blocks) {
      const marker = block.marker ?? '';
      const background = /^background: (\S+)$/.exec(marker)?.[1];
      const check = /^check: (\S+)$/.exec(marker)?.[1];
      if (background !== undefined) {
        const ready = READY[background];
        assert.ok(ready, `the test knows how to tell that "${background}" is ready`);
        const proc = start(background, local(block.text.trim()), dir, env);
        running.push(proc);
        const answer = await eventually(
          `${background} ready`,
          () => {
            const out = readFileSync(proc.log, 'utf8');
            if (proc.child.exitCode !== null || proc.child.signalCode !== null)
              throw new StopWaiting(`${background} exited first:\n${out.slice(-3000)}`);
            return ready(out);
          },
          { timeoutMs: 60_000, intervalMs: 50 },
        );
        if (background === 'gateway') ports = answer;
        continue;
      }
      if (check !== undefined) {
        const expected = CHECKS[check];
        assert.ok(expected, `the test knows what block "${check}" must print`);
        seenChecks.push(check);
        const attempt = async () => {
          const out = await bash(local(block.text), dir, env);
          let passes = false;
          try {
            passes = expected.passes(out);
          } catch {
            // not JSON (yet): a failed attempt
          }
          if (!passes) assert.fail(`check ${check}, last output: ${out.slice(0, 600)}`);
          return true;
        };
        if (expected.retry) await eventually(`check ${check}`, attempt, { timeoutMs: 60_000, intervalMs: 200 });
        else await attempt();
        continue;
      }
      assert.equal(marker, '', `an unknown marker: ${marker}`);
      await bash(local(block.text), dir, env);
    }
    assert.deepEqual(
      substitutions.map(([from]) => from).filter((from) => !used.has(from)),
      [],
      'every substitution found its text in the page (else the page no longer uses this run’s server and ports)',
    );
    assert.deepEqual(seenChecks.sort(), Object.keys(CHECKS).sort(), 'every check ran');
    assert.deepEqual(
      running.map((p) => p.name),
      ['gateway', 'cluster', 'agent'],
    );
  });
});

/** Starts one background block with bash in its own process group, its output appended to a log file. */
function start(name: string, command: string, cwd: string, env: NodeJS.ProcessEnv): Background {
  const log = join(cwd, `.${name}.log`);
  const fd = openSync(log, 'a');
  let child: ChildProcess;
  try {
    child = spawn('/bin/bash', ['-c', command], { cwd, env, stdio: ['ignore', fd, fd], detached: true });
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never outlive the test process, even when it ends without running `after`.
  process.once('exit', () => signal(child, 'SIGKILL'));
  return { name, child, log, exited };
}

/** SIGTERM to the process group, up to 15 s to exit, then SIGKILL. */
async function stop(proc: Background): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  signal(proc.child, 'SIGTERM');
  const timer = setTimeout(() => signal(proc.child, 'SIGKILL'), 15_000);
  await proc.exited;
  clearTimeout(timer);
}

function signal(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, name);
  } catch {
    // already gone
  }
}
