/**
 * The accounts the Clouddriver API knows: every account the gateway knows (agent-registered, admin-created or
 * dynamic, whatever its state), read through the account administration feature.
 */
import type { Account } from '../../gen/outpost/api/v1/account_service_pb.js';
import { AccountAdminError } from '../accounts/account-errors.js';
import type { AccountAdmin } from '../account-admin/account-admin.js';

/** Reads accounts for the Clouddriver API. */
export interface AccountLookup {
  /** The account, or undefined when the gateway does not know it. */
  get(name: string): Promise<Account | undefined>;
  /** Every account, by name. */
  all(): Promise<Account[]>;
  /** Every account's name, sorted: for routes that only filter by account (no views built, no objects counted). */
  names(): Promise<string[]>;
  /** Whether the gateway knows the account: for routes that only need to know it exists (no view built). */
  exists(name: string): Promise<boolean>;
}

/** Creates the lookup over `admin`. */
export function createAccountLookup(admin: Pick<AccountAdmin, 'get' | 'list' | 'names' | 'exists' | 'limits'>): AccountLookup {
  return {
    names: () => admin.names(),
    exists: (name) => admin.exists(name),
    async get(name) {
      try {
        return (await admin.get(name)).account;
      } catch (err) {
        if (err instanceof AccountAdminError && err.kind === 'not_found') return undefined;
        throw err;
      }
    },
    async all() {
      const out: Account[] = [];
      const limit = admin.limits.maxPageSize;
      for (let page = 1; ; page++) {
        const result = await admin.list({ page, limit });
        out.push(...result.accounts);
        if (result.accounts.length < limit || out.length >= result.total) return out;
      }
    },
  };
}
