/**
 * Runs docs/spinnaker.md, "Trying the stages": the demo the section starts from (started here in-process on free
 * ports, as `outpost demo` does), then every ```sh block of the section, in order, in one bash session — as a person
 * pastes them into one shell, `$task` carrying each task's id to the next block — with real curl and jq, only the
 * demo's default address replaced by this run's. Each `check:` block must print what its check expects (reads are
 * re-run until the task completed, the object is stable, the job finished): every task succeeds, and the reads show
 * each stage's effect in turn.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningDemo } from '../../src/demo/run-demo.js';
import { startQuietDemo } from './quiet-demo.js';
import { eventually, StopWaiting } from '../../testkit/eventually.js';
import { fencedBlocks, readDoc } from './doc-blocks.js';

type Json = Record<string, any>;

/** The ```sh blocks between "## Trying the stages" and the next section. */
function sectionBlocks() {
  const doc = readDoc('docs/spinnaker.md');
  const from = doc.indexOf('## Trying the stages');
  assert.ok(from >= 0, 'docs/spinnaker.md has the section "Trying the stages"');
  const to = doc.indexOf('\n## ', from + 1);
  return fencedBlocks(doc.slice(from, to === -1 ? undefined : to)).filter((b) => b.lang === 'sh');
}

/** What a check block printed: done (passes), not yet (re-run), or a failure that re-running cannot fix. */
type Verdict = 'done' | 'not yet' | string;

const CHECKS: Record<string, (out: Json) => Verdict> = {
  task: (status) => (!status.completed ? 'not yet' : status.failed ? `the task failed: ${status.status}` : 'done'),
  manifest: (m) => (m.stable === true ? 'done' : 'not yet'),
  job: (j) => (j.jobState === 'Running' ? 'not yet' : j.jobState === 'Succeeded' ? 'done' : `the job ended ${j.jobState}`),
  'job-properties': (p) => (p.version === '1.2.3' ? 'done' : `properties ${JSON.stringify(p)}`),
};

/** One bash session fed block after block on its stdin, like a terminal a person pastes into. */
class Session {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private err = '';
  private count = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn('/bin/bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8').on('data', (c: string) => (this.out += c));
    this.child.stderr.setEncoding('utf8').on('data', (c: string) => (this.err += c));
    // A failing command marks the block failed (the session goes on, as a terminal would).
    this.child.stdin.write('set -o pipefail -o errtrace\ntrap \'echo "__FAILED__ line $LINENO: $BASH_COMMAND" >&2\' ERR\n');
  }

  /** Runs a script in the session; resolves with its stdout, rejects with its stderr when a command failed. */
  async run(script: string): Promise<string> {
    const end = `__END_${++this.count}__`;
    const [outStart, errStart] = [this.out.length, this.err.length];
    this.child.stdin.write(`${script}\nprintf '\\n${end}\\n'; printf '\\n${end}\\n' >&2\n`);
    await eventually(
      `the session ran: ${script.slice(0, 80)}`,
      () => {
        if (this.child.exitCode !== null) throw new StopWaiting(`bash exited: ${this.err.slice(errStart)}`);
        return this.out.includes(end, outStart) && this.err.includes(end, errStart);
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    const stdout = this.out.slice(outStart, this.out.indexOf(`\n${end}`, outStart));
    const stderr = this.err.slice(errStart, this.err.indexOf(`\n${end}`, errStart));
    if (stderr.includes('__FAILED__')) throw new Error(`${script}\nfailed: ${stderr}\n${stdout}`);
    return stdout;
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

describe('docs/spinnaker.md: trying the stages', () => {
  let demo: RunningDemo;
  let dir: string;
  let shell: Session;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-spinnaker-stages-'));
    demo = await startQuietDemo(dir);
    shell = new Session(dir, { ...process.env, HOME: dir });
  });

  after(async () => {
    shell?.close();
    await demo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every block, in order, against a demo: each task succeeds and each read shows its stage', async () => {
    const blocks = sectionBlocks();
    assert.ok(blocks.length >= 18, 'the section has its blocks');
    const local = (text: string) => {
      assert.ok(!/:(7002|9091)\b/.test(text) || text.includes('http://127.0.0.1:7002'), `only the demo's address: ${text}`);
      return text.replaceAll('http://127.0.0.1:7002', demo.gateway.httpUrl);
    };
    // The account must be ACTIVE before the first submission, as it is a few seconds after `npm run demo`.
    await eventually('account sandbox ACTIVE', async () => {
      const res = await fetch(`${demo.gateway.httpUrl}/armory/accounts`);
      return ((await res.json()) as Json).items?.some((a: Json) => a.name === 'sandbox' && a.state === 'ACTIVE');
    });

    const manifests: Json[] = [];
    const checked: string[] = [];
    for (const block of blocks) {
      const check = /^check: (\S+)$/.exec(block.marker ?? '')?.[1];
      if (check === undefined) {
        assert.equal(block.marker, undefined, `an unknown marker: ${block.marker}`);
        await shell.run(local(block.text));
        if (block.text.includes('/kubernetes/ops')) {
          const task = (await shell.run('printf %s "$task"')).trim();
          assert.match(task, /^[\w.-]+$/, `the submission answered a task id: ${task}`);
          assert.notEqual(task, 'null', `the submission was refused: ${block.text.slice(0, 200)}`);
        }
        continue;
      }
      const verdict = CHECKS[check];
      assert.ok(verdict, `the test knows what block "${check}" must print`);
      checked.push(check);
      const answer = await eventually(
        `check ${check}`,
        async () => {
          const out = await shell.run(local(block.text));
          const parsed = JSON.parse(out) as Json;
          const said = verdict(parsed);
          if (said === 'done') return parsed;
          if (said === 'not yet') return undefined;
          throw new StopWaiting(`check ${check}: ${said}\n${out}`);
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      if (check === 'manifest') manifests.push(answer);
    }

    // Every stage Outpost serves to Orca's manifest stages was sent, each once.
    const sent = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as Json[]).flatMap((op) => Object.keys(op)));
    assert.deepEqual(sent.sort(), ['deleteManifest', 'deployManifest', 'patchManifest', 'runJob', 'scaleManifest', 'undoRolloutManifest']);
    assert.equal(checked.filter((c) => c === 'task').length, 6, 'every submission is followed by a read of its task');
    // Deploy, scale, patch, undo, each seen in the live object.
    assert.deepEqual(
      manifests.map((m) => [m.name, m.replicas, m.image]),
      [
        ['deployment try-web', 2, 'nginx:1.25'],
        ['deployment try-web', 3, 'nginx:1.25'],
        ['deployment try-web', 3, 'nginx:1.27'],
        ['deployment try-web', 3, 'nginx:1.25'],
      ],
    );
    // The last stage deleted it.
    assert.equal(demo.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'try-web'), undefined);
  });
});
