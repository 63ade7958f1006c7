/**
 * Gateway configuration, the security sections: TLS, bearer tokens and JWTs, authorization rules, pre-authentication
 * limits and the key file for Secret values. Part of the one schema in ./schema.ts (every default lives here).
 */
import { z } from 'zod';
import { oidcSchema } from './oidc-schema.js';
import { kubeNameProblem } from '../../shared/kube-names.js';
import { positiveSeconds } from './fields.js';

export const limitsSchema = z
  .object({
    maxConcurrentStreams: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe('HTTP/2 streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); an agent needs one.'),
    idleConnectionSeconds: z.coerce
      .number()
      .positive()
      .max(3600)
      .default(10)
      .describe(
        'A connection that has not completed TLS and sent a request within this time — or whose last request was ' +
          'refused and that sends nothing more — is closed, until one of its requests is admitted.',
      ),
    maxUnauthenticatedConnections: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(1000)
      .describe('Connections (both ports together) that have had no request admitted yet; beyond it, new connections are closed at once.'),
    maxRefusedRequestsPerConnection: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(100)
      .describe('Refused (unauthenticated or unauthorized) requests on a connection that has had none admitted, before it is closed.'),
  })
  .strict();

export const secretsSchema = z
  .object({
    keyFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'File of AES-256 keys that encrypt Secret values inside stored operation requests, and the identity ' +
          "providers' tokens of the dashboard's sessions: one `keyId:base64` line " +
          'per key (32 random bytes each, e.g. `echo "k1:$(openssl rand -base64 32)"`); the first line encrypts, every ' +
          'line decrypts (add a new first line to rotate, drop an old line once no open operation or session uses it). ' +
          'Re-read when it changes; the same file on every replica. Unset: with --insecure an ephemeral key (lost on ' +
          'restart); otherwise operations carrying Secret values are refused, and a gateway with auth.oidc does not start.',
      ),
  })
  .strict();

const regex = z
  .string()
  .min(1)
  .refine((source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  }, 'not a valid regular expression');

/** Certificate subject attribute name (`CN`, `O`, `OU`, … or a dotted OID) → anchored regex over its value. */
const attributeMatchers = z
  .record(z.string().regex(/^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$/, 'an attribute name like CN, O, OU or an OID'), regex)
  .refine((m) => Object.keys(m).length > 0, 'name at least one attribute');

export const tlsSchema = z
  .object({
    certFile: z.string().min(1).describe('PEM certificate (chain) served on both ports. Re-read when the file changes.'),
    keyFile: z.string().min(1).describe('PEM private key of certFile. Re-read when the file changes.'),
    caFile: z
      .string()
      .min(1)
      .optional()
      .describe('PEM CA bundle that client certificates must chain to (needed unless clientAuth is NONE).'),
    clientAuth: z
      .enum(['NONE', 'OPTIONAL', 'REQUIRE'])
      .default('NONE')
      .describe('NONE: no client certificate asked; OPTIONAL: verified when presented; REQUIRE: every connection must present ' + 'one.'),
    subjectFilters: z
      .array(z.union([regex, z.object({ attributes: attributeMatchers }).strict()]))
      .default([])
      .describe(
        'Client certificate subject filters; any match admits, empty admits all. A string is a regular expression over ' +
          'the RFC 4514 subject (`CN=agent-1,O=Example`, special characters in values escaped: `CN=a\\,O=b`); ' +
          '`{attributes: {CN: "agent-.*", O: "agents"}}` matches parsed attributes (each an anchored regex, all must ' +
          'match) and is the safer form.',
      ),
    reloadIntervalSeconds: positiveSeconds.default(5).describe('How often the certificate, key and CA files are checked for changes.'),
  })
  .strict()
  .refine((t) => t.clientAuth === 'NONE' || t.caFile !== undefined, {
    message: 'caFile is required when clientAuth is OPTIONAL or REQUIRE',
    path: ['caFile'],
  });

const staticTokenSchema = z
  .object({
    subject: z.string().min(1).max(253).describe('Identity the token authenticates as; authorization rules match it.'),
    token: z.string().min(16).optional().describe('The token itself (prefer tokenFile or tokenEnv: config files get copied around).'),
    tokenFile: z.string().min(1).optional().describe('File holding the token (surrounding whitespace ignored); re-read when it changes.'),
    tokenEnv: z.string().min(1).optional().describe('Environment variable holding the token.'),
    groups: z
      .array(z.string().min(1).max(253))
      .default([])
      .describe('Groups of the subject, impersonated (with kube.groupsPrefix) by kubectl through the gateway.'),
  })
  .strict()
  .refine((t) => [t.token, t.tokenFile, t.tokenEnv].filter((v) => v !== undefined).length === 1, {
    message: 'set exactly one of token, tokenFile, tokenEnv',
  })
  .superRefine((t, ctx) => {
    // The subject and groups become Kubernetes names for kubectl through the gateway: refused here, at start-up,
    // rather than on every request (src/shared/kube-names.ts).
    const names: [string, (string | number)[]][] = [
      [t.subject, ['subject']],
      ...t.groups.map((g, i): [string, (string | number)[]] => [g, ['groups', i]]),
    ];
    for (const [name, path] of names) {
      const problem = kubeNameProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', path, message: `${JSON.stringify(name)} ${problem}: it cannot be a Kubernetes name` });
    }
  });

const jwtSchema = z
  .object({
    issuer: z.string().min(1).describe('Expected `iss`.'),
    audience: z.string().min(1).describe('Expected `aud`.'),
    secretFile: z.string().min(1).optional().describe('HMAC secret (HS256/384/512) in a file; or use publicKeyFile.'),
    publicKeyFile: z.string().min(1).optional().describe('PEM public key (SPKI) for RS*, PS*, ES* or EdDSA tokens.'),
    algorithms: z.array(z.string().min(1)).optional().describe('Accepted algorithms; defaults to those the key type allows.'),
    subjectClaim: z.string().min(1).default('sub').describe('Claim whose value is the subject.'),
    groupsClaim: z
      .string()
      .min(1)
      .default('groups')
      .describe("Claim listing the subject's groups (an array of strings, or one string), for kubectl through the gateway."),
    clockToleranceSeconds: z.coerce.number().int().min(0).max(600).default(30).describe('Allowed clock skew for exp/nbf.'),
    maxLifetimeSeconds: z.coerce
      .number()
      .int()
      .min(60)
      .max(31_536_000)
      .default(86_400)
      .describe(
        'Longest accepted token lifetime, `exp - iat` (or `exp - now` without `iat`); longer-lived tokens are refused. ' +
          "Every token must carry `exp`. Default 24 h: long enough for a workday's operator token and for agent tokens " +
          'rotated daily, short enough that a leaked token dies the same day.',
      ),
  })
  .strict()
  .refine((j) => (j.secretFile === undefined) !== (j.publicKeyFile === undefined), {
    message: 'set exactly one of secretFile, publicKeyFile',
  });

export const authSchema = z
  .object({
    tokens: z.array(staticTokenSchema).default([]).describe('Static bearer tokens.'),
    jwt: jwtSchema.optional().describe('Signed JWT bearer tokens.'),
    oidc: oidcSchema
      .optional()
      .describe('OpenID Connect providers people sign in with: the dashboard, `outpost login`, kubectl (docs/sign-in.md).'),
    replicaSecretFile: z
      .string()
      .min(1)
      .optional()
      .describe('File holding the secret replicas sign their internal tokens with (the same file on every replica).'),
    readAccess: z
      .enum(['authenticated', 'open'])
      .default('authenticated')
      .describe(
        'Who may call read routes (object, account and operation reads): `authenticated` principals with the read ' +
          'role, or `open` to anyone.',
      ),
  })
  .strict();

const identityKindSchema = z.enum(['token', 'jwt', 'oidc', 'certificate'], {
  message:
    'kind is required: set kind: token (auth.tokens subjects), jwt (JWT subject claims), oidc (people signed in with ' +
    'auth.oidc) or certificate (client certificate subjects); a rule meant for several kinds becomes one rule per kind',
});

export const roleSchema = z.enum(['agent', 'read', 'write', 'admin', 'replica', 'spinnaker', 'kube']);

/**
 * The roles whose reach `authorization.rules[].accounts` narrows (docs/security.md, "Authorization"); read, admin and
 * replica reach every account.
 */
export const ACCOUNT_SCOPED_ROLES = ['agent', 'write', 'kube', 'spinnaker'] as const;

export const ruleSchema = z
  .object({
    kind: identityKindSchema.describe(
      'Which identities the rule applies to: `token` (auth.tokens), `jwt` (auth.jwt subject claim), `oidc` (auth.oidc: ' +
        'the subject is `<provider>:<username>`) or `certificate` (client certificate subject). Kinds are separate ' +
        'namespaces: a JWT with `sub: admin` never matches a token rule.',
    ),
    subject: regex
      .optional()
      .describe(
        'Regular expression over the subject within that kind (token subject, JWT claim, or the RFC 4514 certificate ' +
          'subject with escaped values); anchored by you. Set subject, groups, attributes (certificates), or several: all must match.',
      ),
    groups: z
      .array(regex)
      .min(1)
      .optional()
      .describe(
        "Anchored regular expressions over the identity's groups (an OIDC or JWT groups claim with its provider prefix, a " +
          "static token's groups, a certificate's O values): the rule applies when one group matches one of them.",
      ),
    attributes: attributeMatchers
      .optional()
      .describe(
        'kind certificate only: anchored regular expressions per subject attribute (`{CN: "agent-.*", O: "agents"}`); ' +
          "all must match one of the attribute's values.",
      ),
    roles: z
      .array(roleSchema)
      .min(1)
      .describe(
        'agent: may open agent streams; read: read routes; write: submit operations; admin: manage accounts; replica: ' +
          'internal routes; spinnaker: the Clouddriver API Orca and Gate call (docs/spinnaker.md); kube: the Kubernetes ' +
          'API of the accounts listed in `accounts` through `/k8s/{account}` (docs/kubectl.md).',
      ),
    accounts: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Glob patterns (`*` any run of characters) of the account names the rule's account-scoped roles reach: agent " +
          '(the names it may register), write (the accounts it may submit operations to), kube (the accounts reachable ' +
          'through `/k8s/{account}`), spinnaker (the accounts the Clouddriver API may read and deploy to, tasks ' +
          'included). Required with any of them (`["*"]` for every account); refused on a rule granting only read, ' +
          'admin or replica, which reach every account.',
      ),
  })
  .strict()
  .refine((r) => r.subject !== undefined || r.attributes !== undefined || r.groups !== undefined, {
    message: 'set subject, groups, attributes (certificates), or several',
  })
  .superRefine((r, ctx) => {
    // docs/security.md, "Authorization": accounts narrow exactly the account-scoped roles; a setting that would do
    // nothing is refused rather than ignored.
    const scoped = r.roles.filter((role) => (ACCOUNT_SCOPED_ROLES as readonly string[]).includes(role));
    if (scoped.length > 0 && r.accounts.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['accounts'],
        message:
          `the role${scoped.length > 1 ? 's' : ''} ${scoped.join(', ')} reach${scoped.length > 1 ? '' : 'es'} accounts: ` +
          'list the account name patterns the subject may reach (["*"] for every account)',
      });
    }
    if (scoped.length === 0 && r.accounts.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['accounts'],
        message:
          `accounts has no effect on the roles ${r.roles.join(', ')} (they reach every account): remove it, or grant ` +
          `one of ${ACCOUNT_SCOPED_ROLES.join(', ')}`,
      });
    }
  })
  .refine((r) => r.attributes === undefined || r.kind === 'certificate', {
    message: 'attributes apply to kind certificate only',
    path: ['attributes'],
  });

export const authorizationSchema = z
  .object({
    rules: z
      .array(ruleSchema)
      .default([])
      .describe('Every rule whose subject matches applies; roles and account patterns add up. No rule matches: no rights.'),
  })
  .strict();
