/**
 * The replicas: this replica's part in the group — the lease keeper that renews the leases of the accounts its
 * streams serve, and the discovery of the others (heartbeat rows or Kubernetes Endpoints) under the base URL. The
 * directory and the lease keeper themselves are the core's (dispatch and agent streams use them); this module starts
 * them, marks the replica not ready at the drain, and stops the lease keeper. Discovery failures are logged and
 * retried by the directory: they never stop the gateway serving.
 */
import type { GatewayModule } from './module.js';

/** The replicas module (module-list.ts). */
export const replicasModule: GatewayModule = {
  name: 'replicas',
  serves: 'the lease keeper, discovery of the other replicas, the replica row (`/armory/clouddrivers` reads it)',
  build: (core) => ({
    start: async () => {
      core.leaseKeeper.start();
      core.closers.defer('lease keeper', () => core.leaseKeeper.stop());
      // Peers see this replica not ready at once, before its streams and sockets close.
      core.state.onDrain(() => core.replicas.markDraining().catch(() => {}));
      await core.replicas.start().catch((err) => core.logger.error({ err }, 'replica discovery could not start; retrying'));
    },
  }),
};
