/**
 * `git/repo` accounts (Clouddriver's `GitRepoArtifactCredentials` with its `GitJobExecutor`): the artifact's
 * `reference` is an http(s) clone URL, `version` the branch or tag (`master` when blank), the sub-directory `location`
 * or else `metadata.subPath`. As Clouddriver, the system `git` clones `--depth 1 --branch <version>` and `git archive
 * --format=tgz` answers the tree (only the sub-directory when one is named, its paths still relative to the
 * repository root, as Rosco expects), into a temporary directory removed afterwards.
 *
 * The bounds of bounded-fetch.ts, for a process that opens its own connections: only http and https
 * (`protocol.allow`), the host resolved and checked once by the gateway and pinned for git with `http.curloptResolve`
 * (git 2.37 or later), no redirects (`http.followRedirects=false`), the timeout for the clone and again for the
 * archive, the archive held to `maxBytes`. Credentials reach git through the environment (`GIT_CONFIG_*`, an
 * `Authorization` header), never its command line, and no configuration of the host (system, global, credential
 * helpers, prompts) is read.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { ArtifactAccount, ArtifactRequest } from './artifact-account.js';
import { createFileSource } from '../../auth/file-source.js';
import type { GitRepoAccountConfig } from '../../config/artifacts-schema.js';
import { artifactNotFound, badArtifact, displayUrl, scrubMessage, upstreamFailed } from './artifact-errors.js';
import { type ArtifactBody, spoolBounded } from './artifact-spool.js';
import { createAccountAuth } from './account-auth.js';
import type { FetchLimits } from './bounded-fetch.js';
import { checkTarget, TargetRefused, createTargetPolicy } from './target-policy.js';
import { displaySshRemote, parseSshRemote, pinnedSshUrl, type SshRemote, sshEnvironment } from './git-ssh.js';

/** Where git clones from: the URL it is given, the URL shown in messages, its `-c` flags. */
interface Remote {
  url: string;
  display: string;
  flags: string[];
}

/** The sub-directory of the artifact: `location`, else `metadata.subPath`; '' for the whole tree. */
function subPathOf(artifact: ArtifactRequest): string {
  const raw = artifact.location || (typeof artifact.metadata.subPath === 'string' ? artifact.metadata.subPath : '');
  const path = posix
    .normalize(raw.trim())
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '');
  if (path === '.' || path === '') return '';
  if (path.startsWith('..') || path.startsWith('-') || path.includes('\0'))
    throw badArtifact(`not a sub-path of the repository: ${JSON.stringify(raw)}`);
  return path;
}

/** One `git/repo` account (clones in `cloneDir`, else the system's temporary directory); reads its credential files now. */
export function createGitRepoAccount(config: GitRepoAccountConfig, limits: FetchLimits, cloneDir?: string): ArtifactAccount {
  const auth = createAccountAuth(config.name, config);
  const policy = createTargetPolicy(config.allowedPrivateNetworks);
  if (config.sshPrivateKeyFile) createFileSource(config.sshPrivateKeyFile, `artifact account ${config.name}: sshPrivateKeyFile`);
  const check = (host: string, shown: string) =>
    checkTarget(host, policy).catch((err: Error) => {
      if (err instanceof TargetRefused) throw badArtifact(`refused to fetch ${shown}: ${err.message}`);
      throw upstreamFailed(`cannot resolve ${host}: ${err.message}`);
    });

  /** An http(s) clone URL: only http(s) allowed to git, the checked address pinned with curl's resolve option. */
  const httpRemote = async (reference: string): Promise<Remote> => {
    let url: URL;
    try {
      url = new URL(reference);
    } catch {
      throw badArtifact('the reference of a git/repo artifact must be an http(s) or ssh clone URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw badArtifact(`only http(s) and ssh clone URLs are supported, not ${displayUrl(url)}`);
    if (url.username || url.password)
      throw badArtifact(`${displayUrl(url)} carries credentials in the URL; configure them on the artifact account instead`);
    const target = await check(url.hostname, displayUrl(url));
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const pinned = `${url.hostname}:${port}:${target.family === 6 ? `[${target.address}]` : target.address}`;
    const flags = ['-c', 'protocol.allow=never', '-c', 'protocol.http.allow=always', '-c', 'protocol.https.allow=always'];
    flags.push('-c', 'http.followRedirects=false', '-c', `http.curloptResolve=${pinned}`);
    return { url: url.toString(), display: displayUrl(url), flags };
  };

  /** An SSH clone URL: only ssh allowed to git, the URL rewritten to the checked address (git-ssh.ts). */
  const sshRemote = async (remote: SshRemote): Promise<Remote> => {
    const display = displaySshRemote(remote);
    const target = await check(remote.host, display);
    const flags = ['-c', 'protocol.allow=never', '-c', 'protocol.ssh.allow=always'];
    return { url: pinnedSshUrl(remote, target.address, target.family), display, flags };
  };
  return {
    name: config.name,
    types: ['git/repo'],
    type: 'artifacts-gitrepo',
    handles: (type) => type === 'git/repo',
    async download(artifact) {
      const version = artifact.version || 'master';
      if (version.startsWith('-') || /[\s\0]/.test(version)) throw badArtifact(`not a branch or tag: ${JSON.stringify(version)}`);
      const subPath = subPathOf(artifact);
      const ssh = parseSshRemote(artifact.reference);
      const remote = ssh ? await sshRemote(ssh) : await httpRemote(artifact.reference);
      const { authorization, secrets } = ssh ? { authorization: undefined, secrets: [] } : await auth.material();
      const dir = await mkdtemp(join(cloneDir ?? tmpdir(), 'outpost-git-'));
      try {
        const env = {
          ...gitEnvironment(dir, authorization),
          ...(ssh ? await sshEnvironment(dir, ssh, config, limits.connectTimeoutMs) : {}),
        };
        const clone = [...remote.flags, '-c', 'credential.helper=', 'clone', '--quiet', '--bare', '--depth', '1', '--single-branch'];
        clone.push('--branch', version, '--', remote.url, join(dir, 'repo'));
        await run(clone, env, limits.timeoutMs).catch((err: Error) => {
          const message = scrubMessage(err.message, secrets);
          if (/Remote branch .* not found|couldn't find remote ref/i.test(message))
            throw artifactNotFound(`git/repo ${remote.display} has no branch or tag ${version}`);
          throw upstreamFailed(`cloning ${remote.display} at ${version} failed: ${message}`);
        });
        const archive = ['--git-dir', join(dir, 'repo'), 'archive', '--format=tgz', 'HEAD', ...(subPath ? ['--', subPath] : [])];
        return await archiveBounded(archive, env, limits, `the tar.gz of ${remote.display} at ${version}`, subPath);
      } finally {
        await rm(dir, { recursive: true, force: true }).catch(() => {});
      }
    },
  };
}

/** git's environment: nothing of the host's configuration, no prompts, the Authorization header when there is one. */
function gitEnvironment(home: string, authorization: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    LC_ALL: 'C',
  };
  if (authorization)
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: ${authorization}`,
    });
  return env;
}

function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { env, timeout: timeoutMs, maxBuffer: 256 * 1024, killSignal: 'SIGKILL' }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const killed = (err as { killed?: boolean }).killed;
      reject(
        new Error(
          killed ? `no answer within ${timeoutMs / 1000} s (spinnaker.artifacts.timeoutSeconds)` : String(stderr).trim() || err.message,
        ),
      );
    });
  });
}

/** `git archive` to a bounded body; a 404 for a sub-path the tree does not have. */
async function archiveBounded(
  args: string[],
  env: NodeJS.ProcessEnv,
  limits: FetchLimits,
  what: string,
  subPath: string,
): Promise<ArtifactBody> {
  const child = spawn('git', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), limits.timeoutMs);
  try {
    const body = await spoolBounded(child.stdout, limits.maxBytes, what).catch(async (err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    });
    const code = await exited;
    if (code === 0) return body;
    await body.dispose();
    if (/did not match any files/i.test(stderr)) throw artifactNotFound(`${what}: the repository has no ${subPath}`);
    throw upstreamFailed(`${what} failed: ${stderr.trim() || `git exited with ${code}`}`);
  } finally {
    clearTimeout(timer);
  }
}
