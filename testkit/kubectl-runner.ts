/**
 * Runs a real kubectl binary against a sandbox: a temp kubeconfig, HOME and KUBECACHEDIR per run (no cache shared
 * with the machine), `execFile` with a timeout, and a streaming reader for `kubectl get -w -o json`.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../src/sandbox/index.js';

/** Result of one kubectl run. */
interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl bound to one sandbox. */
export interface Kubectl {
  readonly bin: string;
  run(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Runs and throws with stderr when the exit code is not 0. */
  ok(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<string>;
  /** Starts `kubectl get … -w --output-watch-events -o json` and collects the events it prints. */
  watch(args: string[]): WatchProcess;
  /** Starts a long-running kubectl (`logs -f`, `port-forward`) and collects what it prints. */
  stream(args: string[]): StreamProcess;
  /** Starts a long-running kubectl (port-forward, logs -f); `cleanup()` kills it if the test did not. */
  spawn(args: string[]): ChildProcessWithoutNullStreams;
  cleanup(): void;
}

/** A running `kubectl get -w`. */
interface WatchProcess {
  events: { type: string; object: { metadata: { name: string } } }[];
  waitFor(predicate: (events: WatchProcess['events']) => boolean, timeoutMs?: number): Promise<void>;
  stop(): void;
}

/** A running long-lived kubectl. */
interface StreamProcess {
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the first match of `pattern` in the output (a bound on a hang: rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once it exited. */
  exited: Promise<number | null>;
  stop(): void;
}

/** Splits concatenated (pretty-printed) JSON documents. */
function takeDocuments(buffer: string): { docs: unknown[]; rest: string } {
  const docs: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  let consumed = 0;
  for (let i = 0; i < buffer.length; i++) {
    const ch = buffer[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0 && start >= 0) {
        docs.push(JSON.parse(buffer.slice(start, i + 1)));
        consumed = i + 1;
        start = -1;
      }
    }
  }
  return { docs, rest: buffer.slice(consumed) };
}

/** Prepares a kubectl for a sandbox (writes its kubeconfig into a temp dir). */
export function createKubectl(bin: string, sandbox: Sandbox): Promise<Kubectl> {
  return createKubectlWith(bin, (path) => sandbox.writeKubeconfig(path));
}

/**
 * Prepares a kubectl whose kubeconfig `write` puts at the path it is given (any server: a gateway's `/k8s/…`).
 * `extraEnv` joins kubectl's environment (and so its exec credential plugins': `OUTPOST_CONFIG_DIR`).
 */
export async function createKubectlWith(
  bin: string,
  write: (path: string) => Promise<void> | void,
  extraEnv: Record<string, string> = {},
): Promise<Kubectl> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await write(kubeconfig);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    KUBECACHEDIR: join(dir, 'cache'),
    KUBECONFIG: kubeconfig,
    ...extraEnv,
  };
  const children = new Set<ReturnType<typeof spawn>>();

  function run(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return new Promise((resolve) => {
      const child = execFile(
        bin,
        ['--kubeconfig', kubeconfig, ...args],
        { env, timeout: opts.timeoutMs ?? 20000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
          resolve({ code, stdout, stderr: err && !stderr ? String(err.message) : stderr });
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  return {
    bin,
    run,
    async ok(args, opts) {
      const r = await run(args, opts);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}${r.stdout}`);
      return r.stdout;
    },
    spawn(args) {
      const child = spawn(bin, ['--kubeconfig', kubeconfig, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      children.add(child);
      child.on('exit', () => children.delete(child));
      return child;
    },
    watch(args) {
      const child = spawn(bin, ['--kubeconfig', kubeconfig, ...args, '-w', '--output-watch-events', '-o', 'json'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      const events: WatchProcess['events'] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let stderr = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const { docs, rest } = takeDocuments(buffer + chunk);
        buffer = rest;
        events.push(...(docs as WatchProcess['events']));
        for (const w of [...waiters]) w();
      });
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      return {
        events,
        async waitFor(predicate, timeoutMs = 30_000) {
          await waitForOutput(
            waiters,
            () => predicate(events) || undefined,
            timeoutMs,
            () =>
              `kubectl watch did not see the expected events: ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))} ${stderr}`,
          );
        },
        stop() {
          child.kill('SIGTERM');
          children.delete(child);
        },
      };
    },
    stream(args) {
      const child = spawn(bin, ['--kubeconfig', kubeconfig, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      children.add(child);
      let output = '';
      const waiters = new Set<() => void>();
      const collect = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        for (const w of [...waiters]) w();
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      return {
        output: () => output,
        exited,
        waitFor(pattern, timeoutMs = 30_000) {
          return waitForOutput(
            waiters,
            () => pattern.exec(output) ?? undefined,
            timeoutMs,
            () => `kubectl ${args.join(' ')} did not print ${pattern}: ${output.slice(-2000)}`,
          );
        },
        stop() {
          child.kill('SIGTERM');
          children.delete(child);
        },
      };
    },
    cleanup() {
      for (const c of children) c.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves with what `found` returns once it returns something, checked now and every time the process's output
 * calls the `waiters`; rejects with `failure()` after `timeoutMs` (a bound on a hang, not a timing assertion).
 */
function waitForOutput<T>(waiters: Set<() => void>, found: () => T | undefined, timeoutMs: number, failure: () => string): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const value = found();
      if (value === undefined) return;
      waiters.delete(check);
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(failure()));
    }, timeoutMs);
    waiters.add(check);
    check();
  });
}
