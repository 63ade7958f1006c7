/**
 * The accounts' sweeps: the sweeper times out account changes no agent confirmed in time, the clean-up deletes the
 * accounts no agent served for the grace period (and their caches). Account administration itself is the core's
 * (the client API, `/armory` and the Clouddriver API share it). Both sweeps stop before the servers close.
 */
import { createAccountCleanup } from '../accounts/account-cleanup.js';
import { createAccountSweeper } from '../accounts/account-sweeper.js';
import { removeAccountCaches } from '../cache/cache-removal.js';
import type { GatewayModule } from './module.js';

/** The accounts module (module-list.ts). */
export const accountsModule: GatewayModule = {
  name: 'accounts',
  serves: 'the account sweeper (unconfirmed changes) and the clean-up of accounts without agents',
  build: (core) => {
    const { config, database, logger } = core;
    const sweeper = createAccountSweeper({
      database,
      timeoutSeconds: config.accounts.activationTimeoutSeconds,
      intervalMs: Math.max(50, Math.min(1000, config.accounts.activationTimeoutSeconds * 250)),
      logger: logger.child({ component: 'accounts' }),
    });
    const cleanup = createAccountCleanup({
      database,
      graceSeconds: config.accounts.cleanupGraceSeconds,
      intervalMs: Math.max(50, Math.min(30_000, config.accounts.cleanupGraceSeconds * 100)),
      logger: logger.child({ component: 'accounts' }),
      removeCaches: removeAccountCaches,
    });
    return {
      start: () => {
        cleanup.start();
        core.closers.defer('account cleanup', () => cleanup.stop());
        sweeper.start();
        core.closers.defer('account sweeper', () => sweeper.stop());
      },
    };
  },
};
