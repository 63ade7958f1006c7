/**
 * A real HTTP forward proxy for tests: Debian's `/usr/bin/tinyproxy` (`.ci/run` installs it), run in the foreground
 * with a generated configuration on 127.0.0.1. tinyproxy cannot listen on port 0, so a random port in 20000–32000
 * (below Linux's ephemeral range, where outgoing connections take theirs) is tried, and another one when it is taken.
 * Every instance still running when the test process exits is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where the binary is; tests fail with a hint when it is missing. */
const TINYPROXY_BIN = '/usr/bin/tinyproxy';

/** Options of {@link startTinyproxy}. */
export interface TinyproxyOptions {
  /** Require `Proxy-Authorization: Basic` with these credentials (letters, digits, `.`, `_`, `-` only: tinyproxy's parser). */
  auth?: { user: string; password: string };
  /** The only ports CONNECT may reach (default: every port). A port no target uses makes a proxy refuse with 403. */
  connectPorts?: number[];
  /** Refuse every client (403 "Access denied"), as a proxy whose access list does not include the agent. */
  denyAll?: boolean;
}

/** A running (or stopped, until restarted) tinyproxy. */
export interface Tinyproxy {
  /** `http://127.0.0.1:PORT` (without credentials: add them to a copy). */
  readonly url: URL;
  readonly port: number;
  /** Kills it (SIGKILL, like a crash: open tunnels are cut) and removes its temporary directory; idempotent. */
  stop(): Promise<void>;
  /** Stops it if running, then starts it again on the same port, retrying while the port is still taken. */
  restart(): Promise<void>;
  /** Its output so far (connections, refusals), for failure messages. */
  log(): string;
}

/** Attempts at finding a free random port. */
const PORT_ATTEMPTS = 20;
/** How long a restart keeps retrying a port that is still in use, and how long a start may take at most. */
const SAME_PORT_WAIT_MS = 30_000;
const START_TIMEOUT_MS = 30_000;
/** Output kept per instance. */
const LOG_LIMIT = 64 * 1024;

const alive = new Set<ChildProcess>();
let hooked = false;

function configText(port: number, options: TinyproxyOptions): string {
  const lines = [`Port ${port}`, 'Listen 127.0.0.1', 'Timeout 600', 'MaxClients 200', 'LogLevel Info', 'DisableViaHeader Yes'];
  if (options.denyAll) lines.push('Allow 192.0.2.1'); // a TEST-NET-1 address: no client is on the list
  if (options.auth) {
    for (const value of [options.auth.user, options.auth.password]) {
      if (!/^[A-Za-z0-9._-]+$/.test(value)) throw new Error(`tinyproxy BasicAuth accepts only [A-Za-z0-9._-] credentials, got "${value}"`);
    }
    lines.push(`BasicAuth ${options.auth.user} ${options.auth.password}`);
  }
  for (const p of options.connectPorts ?? []) lines.push(`ConnectPort ${p}`);
  return `${lines.join('\n')}\n`;
}

type Launch = { child: ChildProcess; dir: string; exited: Promise<void> } | 'in-use';

/** Starts tinyproxy on `port`; resolves once it accepts connections, or with 'in-use' when the port is taken. */
async function launch(port: number, options: TinyproxyOptions, output: { text: string }): Promise<Launch> {
  const text = configText(port, options); // throws on bad options before anything is created
  const dir = mkdtempSync(join(tmpdir(), 'outpost-tinyproxy-'));
  const conf = join(dir, 'tinyproxy.conf');
  writeFileSync(conf, text);
  const child = spawn(TINYPROXY_BIN, ['-d', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  if (!hooked) {
    hooked = true;
    process.on('exit', () => alive.forEach((c) => c.kill('SIGKILL')));
  }
  alive.add(child);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  void exited.then(() => alive.delete(child));
  return new Promise<Launch>((resolve, reject) => {
    let ready = false;
    let own = ''; // this launch's output (the shared log also holds earlier runs')
    const append = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output.text = (output.text + text).slice(-LOG_LIMIT);
      if (!ready) own += text;
      // Printed after listen(): the port is bound by this instance (a TCP probe could reach another program).
      if (!ready && /Accepting connections/.test(own)) {
        ready = true;
        clearTimeout(timer);
        resolve({ child, dir, exited });
      }
    };
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tinyproxy on port ${port} not ready within ${START_TIMEOUT_MS} ms; output:\n${own}`));
    }, START_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      reject(new Error(`cannot run ${TINYPROXY_BIN} (apt-get install tinyproxy): ${error.message}`));
    });
    void exited.then(() => {
      if (ready) return;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      if (/Could not create listening sockets|Address already in use/i.test(own)) resolve('in-use');
      else reject(new Error(`tinyproxy exited (${child.exitCode ?? child.signalCode}) before listening; output:\n${own}`));
    });
  });
}

/**
 * Starts tinyproxy on a free port in 20000–32000 and resolves once it accepts connections. Call `stop()` when done
 * (in a `finally` or `after`).
 */
export async function startTinyproxy(options: TinyproxyOptions = {}): Promise<Tinyproxy> {
  const output = { text: '' };
  let current: Exclude<Launch, 'in-use'> | undefined;
  let port = 0;
  for (let attempt = 0; attempt < PORT_ATTEMPTS && current === undefined; attempt++) {
    port = 20_000 + Math.floor(Math.random() * 12_000);
    output.text = '';
    const launched = await launch(port, options, output);
    if (launched !== 'in-use') current = launched;
  }
  if (current === undefined) throw new Error(`tinyproxy found no free port in ${PORT_ATTEMPTS} attempts; last output:\n${output.text}`);

  const stop = async () => {
    const running = current;
    current = undefined;
    if (running === undefined) return;
    running.child.kill('SIGKILL');
    await running.exited;
    rmSync(running.dir, { recursive: true, force: true });
  };
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    port,
    stop,
    restart: async () => {
      await stop();
      const deadline = Date.now() + SAME_PORT_WAIT_MS;
      for (;;) {
        const launched = await launch(port, options, output);
        if (launched !== 'in-use') {
          current = launched;
          return;
        }
        if (Date.now() > deadline) throw new Error(`tinyproxy: port ${port} still in use after ${SAME_PORT_WAIT_MS} ms`);
        await sleep(200);
      }
    },
    log: () => output.text,
  };
}
