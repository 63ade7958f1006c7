/**
 * Operations: the manager's timers (deadlines, retries, waiters), started once the gateway serves, and the background
 * sealing of requests an older version stored in plaintext. The manager itself is the core's (recovered before any
 * module is built; the client API, `/armory` and the Clouddriver API submit to it). Its timers stop and its waiters
 * end before the modules listed before it stop and before the agent streams end — and after the Spinnaker tasks that
 * wait on operations.
 */
import type { GatewayModule } from './module.js';

/** The operations module (module-list.ts). */
export const operationsModule: GatewayModule = {
  name: 'operations',
  serves: 'operation deadlines, retries and waiters; the sealing of requests stored in plaintext',
  build: (core) => ({
    start: () => {
      core.operations.start();
      core.closers.defer('operations', () => core.operations.close());
      core.legacySealing.start();
    },
  }),
};
