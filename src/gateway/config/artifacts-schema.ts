/**
 * The `spinnaker.artifacts` section of the gateway configuration (docs/spinnaker.md, "Artifacts"): the bounds of every
 * fetch and the artifact accounts Orca and Rosco fetch through (`PUT /artifacts/fetch`). `embedded-artifact`,
 * `custom-artifact` and `kubernetes` are always there; the others are listed here. Credentials are files only (read
 * again when they change); a password or token never sits in the configuration itself.
 */
import { z } from 'zod';
import { parseCidr } from '../../shared/cidr.js';

/** Account names the gateway defines itself. */
const BUILT_IN_ARTIFACT_ACCOUNTS = ['embedded-artifact', 'custom-artifact', 'kubernetes', 'no-auth-http-account'];

const networks = z
  .array(z.string().refine((v) => parseCidr(v) !== undefined, 'a network in CIDR form, e.g. 10.20.0.0/16 or fd00::/8'))
  .default([])
  .describe(
    'Networks (CIDR) this account may fetch from although they are loopback, link-local, private or reserved; every ' +
      'such address is refused otherwise (`127.0.0.1/32` for a server on the same host; `0.0.0.0/0` and `::/0` turn the ' +
      'check off).',
  );

const accountFields = {
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, dots, dashes and underscores')
    .refine((n) => !BUILT_IN_ARTIFACT_ACCOUNTS.includes(n), 'a name the gateway defines itself')
    .describe('The account name Orca, Rosco and Deck use (`artifactAccount`).'),
  username: z.string().min(1).optional().describe('User name for Basic authentication (with passwordFile).'),
  passwordFile: z
    .string()
    .min(1)
    .optional()
    .describe('File holding the Basic password (surrounding whitespace ignored); re-read when it changes.'),
  tokenFile: z
    .string()
    .min(1)
    .optional()
    .describe('File holding a token sent as `Authorization` (instead of Basic); re-read when it changes.'),
  allowedPrivateNetworks: networks,
};

const credentialsRule = <T extends { username?: string; passwordFile?: string; tokenFile?: string }>(a: T, ctx: z.RefinementCtx) => {
  if (a.passwordFile && !a.username) ctx.addIssue({ code: 'custom', path: ['username'], message: 'passwordFile needs a username' });
  if (a.tokenFile && (a.username || a.passwordFile)) {
    ctx.addIssue({ code: 'custom', path: ['tokenFile'], message: 'set either tokenFile or username/passwordFile, not both' });
  }
};

const httpAccount = z.object(accountFields).strict().superRefine(credentialsRule);
const githubAccount = z
  .object({
    ...accountFields,
    tokenFile: accountFields.tokenFile.describe(
      'File holding the GitHub token (sent as `Authorization: token …`); re-read when it changes.',
    ),
    useContentAPI: z
      .boolean()
      .default(false)
      .describe(
        "Clouddriver's `useContentAPI`: true fetches the file raw in one request (`Accept: application/vnd.github.v3.raw`); " +
          "false (Clouddriver's default) reads the file's JSON metadata and downloads its `download_url` (the token is sent " +
          'there only when it is on the API origin, as on GitHub Enterprise).',
      ),
  })
  .strict()
  .superRefine(credentialsRule);
const helmAccount = z
  .object({
    ...accountFields,
    repository: z
      .url({ protocol: /^https?$/ })
      .describe('The chart repository: the URL `index.yaml` is under; relative chart URLs of the index are resolved against it.'),
  })
  .strict()
  .superRefine(credentialsRule);
const gitRepoAccount = z
  .object({
    ...accountFields,
    sshPrivateKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe('Private key for `ssh://` and `user@host:path` clone URLs (OpenSSH format); read on each clone, never logged.'),
    sshPrivateKeyPassphraseFile: z
      .string()
      .min(1)
      .optional()
      .describe("File holding the private key's passphrase, when it has one; read on each clone."),
    sshKnownHostsFile: z
      .string()
      .min(1)
      .optional()
      .describe('known_hosts file the SSH server keys are checked against (by the host name of the clone URL).'),
    sshTrustUnknownHosts: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(false)
      .describe("Accept any SSH server key (Clouddriver's sshTrustUnknownHosts): only for servers reached over a trusted network."),
  })
  .strict()
  .superRefine(credentialsRule)
  .superRefine((a, ctx) => {
    if (a.sshPrivateKeyFile && !a.sshKnownHostsFile && !a.sshTrustUnknownHosts)
      ctx.addIssue({
        code: 'custom',
        path: ['sshKnownHostsFile'],
        message: 'an SSH key needs sshKnownHostsFile (or sshTrustUnknownHosts: true) to check the server it is offered to',
      });
    if (a.sshPrivateKeyPassphraseFile && !a.sshPrivateKeyFile)
      ctx.addIssue({ code: 'custom', path: ['sshPrivateKeyPassphraseFile'], message: 'a passphrase needs sshPrivateKeyFile' });
  });

const uniqueNames = (accounts: { name: string }[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  accounts.forEach((a, i) => {
    if (seen.has(a.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `account ${a.name} is listed twice` });
    seen.add(a.name);
  });
};

export const artifactsSchema = z
  .object({
    maxBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(4 * 1024 * 1024 * 1024)
      .default(100 * 1024 * 1024)
      .describe(
        'Largest artifact (a fetched file, chart, index, or the tar.gz of a git checkout); a larger one fails with 502 ' +
          'and is never held past this size (the first MiB in memory, the rest in a temporary file).',
      ),
    maxRequestBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(8 * 1024 * 1024)
      .describe('Largest `PUT /artifacts/fetch` body (the artifact JSON, an embedded/base64 reference included); larger is a 413.'),
    connectTimeoutSeconds: z.coerce
      .number()
      .positive()
      .max(300)
      .default(10)
      .describe('Longest wait for a connection to an artifact server.'),
    timeoutSeconds: z.coerce
      .number()
      .positive()
      .max(3600)
      .default(60)
      .describe('Longest time one fetch may take, redirects and body included (a git clone and its archive, each).'),
    maxRedirects: z.coerce.number().int().min(0).max(20).default(5).describe('Redirects followed per fetch; each target is checked again.'),
    http: z
      .object({
        noAuthAccount: z
          .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
          .default(false)
          .describe(
            "Add Clouddriver's `no-auth-http-account` (`http/file`, no credentials, public addresses only) when no " +
              'account below uses credentials, as Clouddriver does with `artifacts.http.enabled`.',
          ),
        accounts: z.array(httpAccount).default([]).superRefine(uniqueNames).describe('`http/file` accounts: the reference is the URL.'),
      })
      .strict()
      .default({ noAuthAccount: false, accounts: [] })
      .describe('`http/file` artifacts.'),
    helm: z
      .object({
        accounts: z
          .array(helmAccount)
          .default([])
          .superRefine(uniqueNames)
          .describe('`helm/chart` and `helm/index` accounts, one chart repository each.'),
      })
      .strict()
      .default({ accounts: [] })
      .describe('Helm chart repositories (`index.yaml`).'),
    github: z
      .object({
        accounts: z
          .array(githubAccount)
          .default([])
          .superRefine(uniqueNames)
          .describe('`github/file` accounts: the reference is a contents API URL, the version a ref (default `master`).'),
      })
      .strict()
      .default({ accounts: [] })
      .describe('Files from GitHub (or GitHub Enterprise) through the contents API.'),
    gitRepo: z
      .object({
        cloneDir: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Directory the clones are made in, each in a subdirectory of its own removed after the fetch (a volume with ' +
              "room for the largest repository's checkout); the system's temporary directory when absent.",
          ),
        accounts: z
          .array(gitRepoAccount)
          .default([])
          .superRefine(uniqueNames)
          .describe(
            '`git/repo` accounts: the reference is an http(s) or SSH clone URL; answered as a tar.gz, cloned with the system `git`.',
          ),
      })
      .strict()
      .default({ accounts: [] })
      .describe('Git repositories over http(s) or SSH.'),
  })
  .strict();

/** The resolved `spinnaker.artifacts` section. */
export type ArtifactsConfig = z.output<typeof artifactsSchema>;
/** One account of any type (the fields they share; Helm adds `repository`). */
export type ArtifactAccountConfig = ArtifactsConfig['http']['accounts'][number];
/** A Helm account. */
export type HelmAccountConfig = ArtifactsConfig['helm']['accounts'][number];
/** One `git/repo` account. */
export type GitRepoAccountConfig = ArtifactsConfig['gitRepo']['accounts'][number];
/** One `github/file` account. */
export type GitHubAccountConfig = ArtifactsConfig['github']['accounts'][number];
