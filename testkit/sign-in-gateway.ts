/**
 * A secure gateway people sign in to through the dashboard, against the real test provider (oidc-provider on
 * loopback): provider `corp` ("Corp SSO", the confidential dashboard client with its secret in a file, groups
 * prefixed `corp:`), a key file sealing the sessions, and the rules of the sign-in tests — platform-admins read,
 * write and administer every account, developers read. Several gateways (replicas, restarts) may share one set-up:
 * each registers its callback with the provider, and they share the key file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayConfigInput, GatewayDeps } from '../src/gateway/index.js';
import { DASHBOARD_CLIENT_ID, DASHBOARD_CLIENT_SECRET, startTestOidcProvider, type TestOidcProvider } from './oidc-test-provider.js';

/** The rules of the sign-in tests (the brief's): by the provider's groups, prefixed. */
const SIGN_IN_RULES = [
  {
    kind: 'oidc' as const,
    groups: ['corp:platform-admins'],
    roles: ['read' as const, 'write' as const, 'admin' as const],
    accounts: ['*'],
  },
  { kind: 'oidc' as const, groups: ['corp:developers'], roles: ['read' as const] },
];

/** What the gateways of one test share. */
export interface SignInSetup {
  provider: TestOidcProvider;
  /** `secrets.keyFile` of every gateway of the set-up. */
  keyFile: string;
  /**
   * The configuration of a gateway of this set-up; `oidc` adds to `auth.oidc` (sessionHours, idleMinutes,
   * externalUrl), `overrides` replace top-level sections.
   */
  config(oidc?: Record<string, unknown>, overrides?: GatewayConfigInput): GatewayConfigInput;
  /** Tells the provider the gateway at `httpUrl` signs people in (its callback and its page after sign-out). */
  register(httpUrl: string): void;
  close(): Promise<void>;
}

/** Options of {@link createSignInSetup}. */
export interface SignInSetupOptions {
  /** ID and access token lifetime of the provider (seconds; default 3600). */
  tokenSeconds?: number;
}

/** Starts the provider and writes the key and client secret files. */
export async function createSignInSetup(options: SignInSetupOptions = {}): Promise<SignInSetup> {
  const provider = await startTestOidcProvider();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-sign-in-'));
  const keyFile = writeKeyFile(dir);
  const clientSecretFile = join(dir, 'client-secret');
  writeFileSync(clientSecretFile, `${DASHBOARD_CLIENT_SECRET}\n`);
  const gateways: string[] = [];
  const configure = () =>
    provider.configure({
      dashboardRedirectUris: gateways.map((url) => `${url}/auth/oidc/corp/callback`),
      postLogoutRedirectUris: gateways.map((url) => `${url}/`),
      tokenSeconds: options.tokenSeconds,
    });
  configure();
  return {
    provider,
    keyFile,
    config: (oidc = {}, overrides = {}) => ({
      insecure: false,
      auth: {
        oidc: {
          providers: [
            {
              name: 'corp',
              displayName: 'Corp SSO',
              issuer: provider.issuer,
              clientId: DASHBOARD_CLIENT_ID,
              clientSecretFile,
              groupsPrefix: 'corp:',
              scopes: ['openid', 'profile', 'email', 'offline_access', 'groups'],
            },
          ],
          ...oidc,
        },
      },
      secrets: { keyFile },
      authorization: { rules: SIGN_IN_RULES },
      ...overrides,
    }),
    register(httpUrl) {
      gateways.push(httpUrl);
      configure();
    },
    async close() {
      await provider.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a `secrets.keyFile` with one fresh key into `dir`; returns its path. */
export function writeKeyFile(dir: string): string {
  const keyFile = join(dir, 'keys');
  writeFileSync(keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
  return keyFile;
}

/** A clock tests move by hand (epoch ms), starting now; hand `now` to the gateway as its `sessionClock`. */
export interface DrivenClock {
  now: NonNullable<GatewayDeps['sessionClock']>;
  advance(ms: number): void;
}

/** Creates a {@link DrivenClock}. */
export function drivenClock(start = Date.now()): DrivenClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}
