/**
 * `GET /credentials[?expand=true]` and `GET /credentials/{account}`: the gateway's accounts as Clouddriver's
 * Kubernetes credentials, for Gate (which serves Deck's account and namespace pickers from them) and Orca's optional
 * account cache. `type` and `cloudProvider` are "kubernetes"; `environment` and `accountType` default to the account
 * name as in Clouddriver, and come from the account properties `environment` / `accountType` when set; `permissions`
 * from the properties `permissions.READ`, `permissions.WRITE`, `permissions.EXECUTE` (comma-separated roles).
 * Expanded entries add `namespaces` (from the cache), `spinnakerKindMap` and Clouddriver's other Kubernetes fields.
 * `X-SPINNAKER-ACCOUNTS`, when present, hides the accounts it does not list. With Fiat, a request naming a user
 * (`X-SPINNAKER-USER`) sees only the accounts that user may READ (Fiat not answering: none, and 503 for one account);
 * a request naming none is not checked by Fiat, as Clouddriver checks neither route: Gate's and Fiat's background
 * refreshes call it without a user and need every account (Gate then marks each one `authorized` per user).
 */
import type { Hono } from 'hono';
import type { Account } from '../../../gen/outpost/api/v1/account_service_pb.js';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import type { AccountLookup } from '../account-lookup.js';
import type { CacheReads } from '../cache-reads.js';
import { spinnakerKindMap } from '../../status/kind-names.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';
import { mayTouchAccount, spinnakerContextOf } from '../spinnaker-headers.js';

const PERMISSIONS = ['READ', 'WRITE', 'EXECUTE'] as const;

/** The summary fields Clouddriver keeps without `expand`. */
function summary(account: Account): Record<string, unknown> {
  const props = account.definition?.properties ?? {};
  const permissions: Record<string, string[]> = {};
  for (const p of PERMISSIONS) {
    const roles = (props[`permissions.${p}`] ?? '')
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
    if (roles.length) permissions[p] = roles;
  }
  return {
    name: account.name,
    environment: props.environment || account.name,
    accountType: props.accountType || account.name,
    cloudProvider: 'kubernetes',
    type: 'kubernetes',
    requiredGroupMembership: [],
    permissions,
    accountId: null,
    challengeDestructiveActions: props.challengeDestructiveActions === 'true',
    primaryAccount: props.primaryAccount === 'true',
  };
}

/** Adds the routes. */
export function addCredentialsRoutes(app: Hono<RestEnv>, accounts: AccountLookup, cache: CacheReads, access: SpinnakerAccess): void {
  const expanded = async (account: Account) => ({
    ...summary(account),
    providerVersion: 'v2',
    namespaces: await cache.namespacesOf(account.name),
    omitNamespaces: [],
    kinds: account.definition?.kinds ?? [],
    omitKinds: account.definition?.omitKinds ?? [],
    spinnakerKindMap: spinnakerKindMap(),
    dockerRegistries: [],
    cacheThreads: 1,
    cacheIntervalSeconds: 30,
    onlySpinnakerManaged: false,
    state: account.state,
  });
  app.get('/credentials', async (c) => {
    const expand = c.req.query('expand') === 'true';
    const context = spinnakerContextOf(c);
    const all = await accounts.all();
    const permitted = context.user
      ? await access.filter(c, all, { account: (a) => a.name })
      : all.filter((a) => mayTouchAccount(context, a.name));
    const visible = permitted.sort((a, b) => (a.name < b.name ? -1 : 1));
    return c.json(expand ? await Promise.all(visible.map(expanded)) : visible.map(summary));
  });
  app.get('/credentials/:account', async (c) => {
    const name = c.req.param('account');
    const context = spinnakerContextOf(c);
    const verdict = context.user ? await access.fiatVerdict(context, [{ type: 'ACCOUNT', name, authorization: 'READ' }]) : undefined;
    if (verdict && !verdict.allowed && verdict.status === 503) throw new HttpError(503, 'Service Unavailable', verdict.message);
    const account = mayTouchAccount(context, name) && (verdict?.allowed ?? true) ? await accounts.get(name) : undefined;
    if (!account) throw new HttpError(404, 'Not Found', `no account named ${JSON.stringify(name)}`);
    return c.json(await expanded(account));
  });
}
