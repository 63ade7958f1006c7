/**
 * A Postgres server of the chaos suite's own: a fresh cluster (initdb) in a temp dir on a port of its own, which the
 * suite may restart or crash at will without disturbing the machine's shared server that other tests use. Runs the
 * machine's Postgres binaries (Debian: /usr/lib/postgresql/<version>/bin); as root they run as the `postgres` user,
 * since Postgres refuses to run as root.
 *
 * The port: Postgres binds it itself, and must bind the same one again after a restart (the gateways hold its URL).
 * It is drawn at random below the kernel's ephemeral range, so neither an outgoing connection nor another process's
 * listen(0) can take it while the server is down; a port found taken at the first start is replaced by another one,
 * and at a restart the bind is retried for a while (see {@link startPrivatePostgres}).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error(`no Postgres server binaries under ${root} (apt-get install postgresql)`);
  versions.sort((a, b) => Number(b) - Number(a));
  return join(root, versions[0]!, 'bin');
}

/** The first port of the kernel's ephemeral range (Linux; 32768 when unknown). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** A port to offer Postgres: at random in [10000, the ephemeral range), or in [10000, 20000) when that range starts lower. */
function candidatePort(): number {
  const high = Math.max(20_000, Math.min(ephemeralLow(), 65_536));
  return 10_000 + Math.floor(Math.random() * (high - 10_000));
}

/** Raised when the server did not start because its port is taken (another process listens on it). */
class PortTakenError extends Error {}

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
  const logSize = () => (existsSync(logFile) ? readFileSync(logFile).length : 0);
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    const logFrom = logSize();
    const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) {
      const log = existsSync(logFile) ? readFileSync(logFile).subarray(logFrom).toString('utf8') : '';
      const message = `${tool} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}${log.slice(-2000)}`;
      throw /could not bind .*Address already in use/.test(log) ? new PortTakenError(message) : new Error(message);
    }
  };
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  // fsync off keeps the suite fast and loses nothing when only the server process dies (the operating system keeps
  // what was written); synchronous_commit stays on: without it a crash forgets commits the gateway already
  // acknowledged to an agent, and the cache could never converge (a real server must not run like that either).
  const start = (port: number) => {
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
    run('pg_ctl', ['start', '-D', data, '-l', logFile, '-w', '-t', '60', '-o', options]);
  };
  let port = candidatePort();
  for (let attempt = 1; ; attempt++) {
    try {
      start(port);
      break;
    } catch (err) {
      // Nobody knows this port yet: another one will do.
      if (!(err instanceof PortTakenError) || attempt >= 20) throw err;
      port = candidatePort();
    }
  }
  let closed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart(mode) {
      run('pg_ctl', ['stop', '-D', data, '-m', mode, '-w', '-t', '60']);
      // The clients hold this port: the server must come back on it. Outside the ephemeral range nothing should take
      // it meanwhile; should a process still hold it (one that picked the same number), wait for it to let go, bounded.
      for (const deadline = Date.now() + 30_000; ; ) {
        try {
          start(port);
          break;
        } catch (err) {
          if (!(err instanceof PortTakenError) || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
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
