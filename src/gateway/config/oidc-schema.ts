/**
 * `auth.oidc`: the OpenID Connect providers people sign in with (docs/sign-in.md). Each provider's ID tokens and JWT
 * access tokens are bearer credentials on every surface (identity `oidc:<name>:<username>`), the dashboard signs in
 * through it with the authorization-code flow and PKCE (the gateway keeps the tokens, the browser a session cookie),
 * and `outpost login` signs the CLI in with the device grant or a loopback redirect.
 */
import { z } from 'zod';

/** Hosts an `http://` issuer may name: a provider on this machine (tests, a local Dex); anything else needs https. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True when `url` is https, or http to a loopback host. */
function isTrustedIssuerUrl(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname));
}

const providerName = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/,
    'a provider name is 1-32 of a-z, 0-9 and "-", starting and ending with a letter or digit',
  )
  .describe(
    'Short name: part of identities (`oidc:<name>:<username>`), rules, URLs (`/auth/oidc/<name>/…`) and `outpost login --provider`.',
  );

const oidcProviderSchema = z
  .object({
    name: providerName,
    displayName: z.string().min(1).max(64).optional().describe('Shown on the dashboard\'s "Sign in with …" button; defaults to the name.'),
    issuer: z
      .url()
      .refine(isTrustedIssuerUrl, 'the issuer must be an https:// URL (http:// only to 127.0.0.1, localhost or [::1])')
      .describe("Issuer URL exactly as the provider's tokens carry it in `iss`; its `/.well-known/openid-configuration` is read."),
    clientId: z
      .string()
      .min(1)
      .max(256)
      .describe("Client id of the gateway (the dashboard's confidential or public client); tokens for it are accepted."),
    clientSecretFile: z
      .string()
      .min(1)
      .optional()
      .describe('File holding the client secret (re-read at each sign-in); none for a public client, which signs in with PKCE alone.'),
    cliClientId: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe(
        'Client id `outpost login` uses: a public client (no secret) allowed the device grant and/or the redirect ' +
          '`http://127.0.0.1/callback` on any port. Defaults to clientId (then it must be a public client). Tokens for it are accepted.',
      ),
    audiences: z
      .array(z.string().min(1))
      .default([])
      .describe('More `aud` values accepted, for JWT access tokens issued for an API rather than a client id.'),
    scopes: z
      .array(z.string().min(1))
      .default(['openid', 'profile', 'email', 'offline_access'])
      .describe(
        'Scopes requested at sign-in; add `groups` where the provider needs it for the groups claim (Dex, Keycloak with a mapper).',
      ),
    usernameClaim: z.string().min(1).default('sub').describe('Claim naming the person (`sub`, `email`, `preferred_username`).'),
    groupsClaim: z.string().min(1).default('groups').describe('Claim listing their groups (an array of strings, or one string).'),
    groupsPrefix: z
      .string()
      .max(64)
      .default('')
      .describe('Put before every group of this provider (`okta:`), so groups of two providers never mix; rules match the prefixed name.'),
    clockToleranceSeconds: z.coerce.number().int().min(0).max(600).default(30).describe('Allowed clock skew for exp/nbf/iat.'),
    jwksCacheSeconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(600)
      .describe('How long fetched signing keys are trusted before the JWKS is fetched again (a rotated-out key is refused after it).'),
    jwksCooldownSeconds: z.coerce
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(30)
      .describe('A token with an unknown key id fetches the JWKS at most once per this many seconds (key rotation, rate-limited).'),
  })
  .strict();

/** One configured provider, after defaults. */
export type OidcProviderConfig = z.infer<typeof oidcProviderSchema>;

export const oidcSchema = z
  .object({
    providers: z
      .array(oidcProviderSchema)
      .min(1)
      .describe('The identity providers (Okta, Entra ID, Google, Keycloak, Dex, …).')
      .superRefine((providers, ctx) => {
        const seen = new Map<string, number>();
        providers.forEach((p, i) => {
          for (const [key, value] of [
            ['name', p.name],
            ['issuer', p.issuer],
          ] as const) {
            const first = seen.get(`${key}:${value}`);
            if (first !== undefined) {
              ctx.addIssue({ code: 'custom', path: [i, key], message: `${key} ${JSON.stringify(value)} is also provider ${first}'s` });
            }
            seen.set(`${key}:${value}`, i);
          }
        });
      }),
    externalUrl: z
      .url()
      .optional()
      .describe(
        'URL browsers reach the gateway at (behind a proxy: its public URL). Redirect URIs are `<externalUrl>/auth/oidc/<name>/callback`; ' +
          'an https URL makes the session cookie Secure. Defaults to baseUrl, else the HTTP URL.',
      ),
    sessionHours: z.coerce
      .number()
      .min(0.1)
      .max(720)
      .default(12)
      .describe('A dashboard session ends this long after sign-in, whatever the refresh token allows.'),
    idleMinutes: z.coerce.number().int().min(1).max(10_080).default(120).describe('A dashboard session unused for this long ends.'),
  })
  .strict();

/** `auth.oidc`, after defaults. */
export type OidcConfig = z.infer<typeof oidcSchema>;
