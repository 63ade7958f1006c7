/**
 * `git/repo` over SSH (Clouddriver's `sshPrivateKeyFilePath`, `sshPrivateKeyPassphrase`, `sshKnownHostsFilePath`,
 * `sshTrustUnknownHosts`): the clone URL is `ssh://[user@]host[:port]/path` or scp-like `[user@]host:path`. The host is
 * resolved and checked by the gateway's target policy like any fetch, and ssh connects to the checked address (the
 * URL is rewritten to it) while `HostKeyAlias` keeps the host key checked under the name the operator's known_hosts
 * file lists — so DNS rebinding cannot move the connection and the key check still means something. ssh reads no
 * configuration of the host (`-F /dev/null`, no agent, no global known hosts), offers only the account's key (a copy
 * made 0600 in the clone's temporary directory), never prompts, and answers a passphrase through an askpass script
 * that reads it from a 0600 file of that directory: no secret is on a command line.
 */
import { chmod, copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { badArtifact } from './artifact-errors.js';

/** An SSH clone URL, parsed. */
export interface SshRemote {
  user: string;
  host: string;
  /** '' for the default port. */
  port: string;
  /** As written: absolute for `ssh://`, relative to the login's home for the scp-like form. */
  path: string;
  scpLike: boolean;
}

/** The SSH settings of an account (config/artifacts-schema.ts). */
export interface SshAccountConfig {
  sshPrivateKeyFile?: string;
  sshPrivateKeyPassphraseFile?: string;
  sshKnownHostsFile?: string;
  sshTrustUnknownHosts: boolean;
}

const SCP_LIKE = /^(?:([^@/:\s]+)@)?([^@/:\s[\]]+|\[[0-9a-fA-F:.]+\]):(?!\/\/)([^\s]+)$/;

/** Parses `reference` as an SSH clone URL; undefined when it is not one (an http(s) URL, say). */
export function parseSshRemote(reference: string): SshRemote | undefined {
  if (/^ssh:\/\//i.test(reference)) {
    let url: URL;
    try {
      url = new URL(reference);
    } catch {
      throw badArtifact('the reference of a git/repo artifact is not a valid ssh:// URL');
    }
    if (url.password) throw badArtifact('an ssh:// clone URL must not carry a password; configure a key on the account');
    if (!url.hostname || url.pathname.length < 2) throw badArtifact('an ssh:// clone URL needs a host and a path');
    return {
      user: decodeURIComponent(url.username),
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port,
      path: decodeURIComponent(url.pathname),
      scpLike: false,
    };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(reference)) return undefined;
  const m = SCP_LIKE.exec(reference);
  if (!m) return undefined;
  return { user: m[1] ?? '', host: m[2]!.replace(/^\[|\]$/g, ''), port: '', path: m[3]!, scpLike: true };
}

/** The remote as shown in messages: the host as written, no address. */
export function displaySshRemote(remote: SshRemote): string {
  const user = remote.user ? `${remote.user}@` : '';
  return remote.scpLike
    ? `${user}${remote.host}:${remote.path}`
    : `ssh://${user}${remote.host}${remote.port ? `:${remote.port}` : ''}${remote.path}`;
}

/** The clone URL git is given: the remote with its host replaced by the checked address. */
export function pinnedSshUrl(remote: SshRemote, address: string, family: number): string {
  const host = family === 6 ? `[${address}]` : address;
  const user = remote.user ? `${encodeURIComponent(remote.user)}@` : '';
  if (remote.scpLike) return `${remote.user ? `${remote.user}@` : ''}${host}:${remote.path}`;
  return `ssh://${user}${host}${remote.port ? `:${remote.port}` : ''}${remote.path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The name ssh checks the host key under: `host`, or `[host]:port` off port 22 (as known_hosts writes it). */
export function hostKeyAlias(remote: SshRemote): string {
  return remote.port && remote.port !== '22' ? `[${remote.host}]:${remote.port}` : remote.host;
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * Prepares `dir` (the clone's private temporary directory) and returns the environment git needs for ssh. The key and
 * the passphrase are read here, on each use, so a rotated file is picked up.
 */
export async function sshEnvironment(
  dir: string,
  remote: SshRemote,
  config: SshAccountConfig,
  connectTimeoutMs: number,
): Promise<NodeJS.ProcessEnv> {
  if (!config.sshPrivateKeyFile) throw badArtifact('this git/repo account has no sshPrivateKeyFile, so it cannot clone over SSH');
  const key = join(dir, 'ssh-key');
  await copyFile(config.sshPrivateKeyFile, key).catch(() => {
    throw badArtifact('the SSH key of this git/repo account cannot be read');
  });
  await chmod(key, 0o600);
  const env: NodeJS.ProcessEnv = { SSH_ASKPASS_REQUIRE: 'never', DISPLAY: '' };
  if (config.sshPrivateKeyPassphraseFile) {
    const passphrase = join(dir, 'ssh-passphrase');
    await copyFile(config.sshPrivateKeyPassphraseFile, passphrase).catch(() => {
      throw badArtifact('the SSH key passphrase file of this git/repo account cannot be read');
    });
    await chmod(passphrase, 0o600);
    const askpass = join(dir, 'ssh-askpass');
    await writeFile(askpass, `#!/bin/sh\nexec tr -d '\\n' < ${quote(passphrase)}\n`, { mode: 0o700 });
    Object.assign(env, { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force' });
  }
  const options = [
    '-F',
    '/dev/null',
    '-i',
    key,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'PasswordAuthentication=no',
    '-o',
    'KbdInteractiveAuthentication=no',
    '-o',
    `BatchMode=${config.sshPrivateKeyPassphraseFile ? 'no' : 'yes'}`,
    '-o',
    `StrictHostKeyChecking=${config.sshTrustUnknownHosts ? 'no' : 'yes'}`,
    '-o',
    // trusting unknown hosts checks no key at all (Clouddriver's sshTrustUnknownHosts), and writes none anywhere
    `UserKnownHostsFile=${config.sshTrustUnknownHosts ? '/dev/null' : (config.sshKnownHostsFile ?? '/dev/null')}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'UpdateHostKeys=no',
    '-o',
    `HostKeyAlias=${hostKeyAlias(remote)}`,
    '-o',
    `ConnectTimeout=${Math.max(1, Math.ceil(connectTimeoutMs / 1000))}`,
    '-o',
    'LogLevel=ERROR',
  ];
  return { ...env, GIT_SSH_VARIANT: 'ssh', GIT_SSH_COMMAND: ['ssh', ...options].map(quote).join(' ') };
}
