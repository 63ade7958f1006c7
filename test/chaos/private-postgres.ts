/**
 * A Postgres server of the chaos suite's own: a fresh cluster (initdb) in a temp dir on a free port, which the suite
 * may restart or crash at will without disturbing the machine's shared server that other tests use. Runs the
 * machine's Postgres binaries (Debian: /usr/lib/postgresql/<version>/bin); as root they run as the `postgres` user,
 * since Postgres refuses to run as root.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../testkit/cluster-config.js';

/** A running private server. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: a server URL for createTestDatabase. */
  readonly url: string;
  readonly port: number;
  /** Stops the server the way a crash would (`immediate`: no checkpoint, clients cut) or cleanly (`fast`), then starts it again. */
  restart(mode: 'fast' | 'immediate'): Promise<void>;
  /** The server's log so far. */
  log(): string;
  /** Stops the server and removes its files. Idempotent. */
  close(): Promise<void>;
}

/** The directory of the newest installed Postgres version's binaries; throws when there is none. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error(`no Postgres server binaries under ${root} (apt-get install postgresql)`);
  versions.sort((a, b) => Number(b) - Number(a));
  return join(root, versions[0]!, 'bin');
}

/** Initialises and starts a private server; resolves once it accepts connections. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-chaos-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new Error(`${tool} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}${log}`);
    }
  };
  const [port] = await freePorts(1);
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  // fsync off keeps the suite fast and loses nothing when only the server process dies (the operating system keeps
  // what was written); synchronous_commit stays on: without it a crash forgets commits the gateway already
  // acknowledged to an agent, and the cache could never converge (a real server must not run like that either).
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
  const start = () => run('pg_ctl', ['start', '-D', data, '-l', logFile, '-w', '-t', '60', '-o', options]);
  start();
  let closed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port: port!,
    async restart(mode) {
      run('pg_ctl', ['stop', '-D', data, '-m', mode, '-w', '-t', '60']);
      start();
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async close() {
      if (closed) return;
      closed = true;
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '30']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
