/**
 * Users' Fiat permissions, kept for `cacheTtlSeconds` after they arrive and then asked for again (Clouddriver keeps
 * them 20 s, kork's `permissionsCache` expire-after-write): a change made in Fiat is seen at most that long later.
 * One call per user at a time (concurrent requests of one user share it); at most `maxCachedUsers` users kept, the
 * oldest answer dropped first. A failed call is never cached and never falls back to an older answer: the caller gets
 * `undefined` and refuses (docs/spinnaker.md, "Fiat": writes 503, lists filtered to nothing). The clock is injected
 * so tests move time instead of sleeping.
 */
import type { Logger } from '../../../shared/logger.js';
import type { FiatRecorder } from '../../metrics/gateway-metrics.js';
import { FiatUnavailableError, type FiatClient } from './fiat-client.js';
import type { UserPermission } from './user-permission.js';

/** What a lookup found: the permissions, or why there are none to use. */
export type PermissionLookup = { ok: true; permission: UserPermission } | { ok: false; reason: string };

/** See the module comment. */
export interface FiatPermissions {
  /** The user's permissions, from the cache while fresh, else from Fiat. Never throws. */
  lookup(user: string): Promise<PermissionLookup>;
}

/** What the cache needs. */
export interface FiatPermissionsDeps {
  client: FiatClient;
  ttlMs: number;
  maxEntries: number;
  logger: Logger;
  metrics?: FiatRecorder;
  /** Milliseconds of a monotonic clock; `performance.now` by default. */
  now?: () => number;
}

/** Creates the cache. */
export function createFiatPermissions(deps: FiatPermissionsDeps): FiatPermissions {
  const now = deps.now ?? (() => performance.now());
  const entries = new Map<string, { permission: UserPermission; expiresAt: number }>();
  const inFlight = new Map<string, Promise<PermissionLookup>>();

  const fetchFor = async (user: string, key: string): Promise<PermissionLookup> => {
    try {
      const permission = await deps.client.userPermission(user);
      entries.delete(key);
      entries.set(key, { permission, expiresAt: now() + deps.ttlMs });
      while (entries.size > deps.maxEntries) entries.delete(entries.keys().next().value as string);
      deps.metrics?.fiatLookup('miss');
      return { ok: true, permission };
    } catch (err) {
      deps.metrics?.fiatLookup('failure');
      const reason = err instanceof FiatUnavailableError ? err.message : `Fiat lookup failed: ${(err as Error).message}`;
      deps.logger.warn(
        { user, reason },
        'Fiat could not answer for a Spinnaker user: what needs its permissions is refused (or, with legacyFallback, decided by the fallback view)',
      );
      return { ok: false, reason };
    }
  };

  return {
    lookup(user) {
      const key = user.toLowerCase();
      const cached = entries.get(key);
      if (cached && cached.expiresAt > now()) {
        deps.metrics?.fiatLookup('hit');
        return Promise.resolve({ ok: true, permission: cached.permission });
      }
      let pending = inFlight.get(key);
      if (!pending) {
        pending = fetchFor(user, key).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}
