/**
 * A real OpenSSH server for the git-over-SSH tests: a Node TCP server on 127.0.0.1, port 0, that hands every
 * connection to its own `sshd -i` (inetd mode: the protocol on stdin/stdout), because sshd cannot listen on port 0 and
 * say which port it got. The server accepts only public-key logins of the current user with the keys of
 * `authorizedKeys`, with its own host key; git runs on it as over any SSH host (`git-upload-pack`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { execFileSync } from 'node:child_process';

/** A running SSH server. */
export interface TestSshServer {
  readonly port: number;
  /** The user git logs in as (the current one). */
  readonly user: string;
  /** The server's host public key line (`ssh-ed25519 AAAA…`), for known_hosts files. */
  readonly hostKey: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Makes an ed25519 key pair at `path` (and `path.pub`), with a passphrase when given; returns the public key line. */
export function makeKeyPair(path: string, passphrase = ''): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'outpost-test', '-f', path]);
  return execFileSync('ssh-keygen', ['-y', '-P', passphrase, '-f', path]).toString().trim();
}

/** Starts the server in `dir` (its keys and configuration go there). */
export async function startTestSshServer(dir: string, authorizedKeys: readonly string[]): Promise<TestSshServer> {
  // sshd run by root checks for its privilege-separation directory even in inetd mode
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true });
  const hostKey = makeKeyPair(join(dir, 'host-key'));
  writeFileSync(join(dir, 'authorized_keys'), `${authorizedKeys.join('\n')}\n`);
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `HostKey ${join(dir, 'host-key')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'StrictModes no',
      'UsePAM no',
      'PidFile none',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count++;
    sockets.add(socket);
    const sshd = spawn('/usr/sbin/sshd', ['-i', '-f', config], { stdio: ['pipe', 'pipe', 'ignore'] });
    socket.pipe(sshd.stdin);
    sshd.stdout.pipe(socket);
    sshd.stdin.on('error', () => {});
    socket.on('error', () => sshd.kill());
    socket.on('close', () => {
      sockets.delete(socket);
      sshd.kill();
    });
    sshd.on('close', () => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    user: userInfo().username,
    hostKey,
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
