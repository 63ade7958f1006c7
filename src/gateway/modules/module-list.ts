/**
 * The gateway's modules, in the order they are built and started; they stop in reverse. docs/architecture.md
 * ("Inside the gateway", the modules table) lists them in this order, and test/docs/gateway-modules.test.ts holds the
 * two together.
 *
 * The order is the shutdown order, read bottom-up. On `close()` the gateway runs, each step awaited before the next:
 *
 * 1. drain — the state turns draining (health 503 / NOT_SERVING, this replica listed not ready to its peers);
 * 2. the purge of ended dashboard sessions (sign-in); Spinnaker tasks stop waiting and record why (spinnaker), before
 *    the operations they wait on close;
 * 3. operation timers stop and waiters end (operations), before the agent streams end and the servers wait;
 * 4. the audit purge (audit), the account sweeper and clean-up (accounts), the lease keeper (replicas);
 * 5. the health Watch and WatchFleet streams end (client-api), as they never end by themselves;
 * 6. the history writer finishes its step and gives its lease up (history), before the database closes;
 * 7. kubectl requests forwarded to other replicas are cut (kube): their callers reconnect to another replica;
 * 8. the servers stop accepting and the agent streams end with "reconnect now" (the composition's own step);
 * 9. then the core (gateway-core.ts), in reverse of its opening: the recovered operations' timers, reads, the audit log
 *    (after everything that records into it), the replica directory, the peer client, the sealing of legacy requests,
 *    the TLS context, the authenticator, the database last.
 *
 * Hence the list: a module whose parts must stop later comes earlier. The agent stream, the dashboard and the REST
 * app start nothing; the client API comes after the agent stream and the history (the services its reflection names) and the REST app (armory) after every module that
 * contributes routes or files, as each assembles what the modules before it contributed.
 */
import { accountsModule } from './accounts-module.js';
import { agentStreamModule } from './agent-stream-module.js';
import { armoryModule } from './armory-module.js';
import { auditModule } from './audit-module.js';
import { clientApiModule } from './client-api-module.js';
import { dashboardModule } from './dashboard-module.js';
import { historyModule } from './history-module.js';
import { kubeModule } from './kube-module.js';
import type { GatewayModule } from './module.js';
import { operationsModule } from './operations-module.js';
import { replicasModule } from './replicas-module.js';
import { signInModule } from './sign-in-module.js';
import { spinnakerModule } from './spinnaker-module.js';

/** Every module of the gateway, in start order (see above for why this order). */
export const GATEWAY_MODULES: readonly GatewayModule[] = [
  agentStreamModule,
  kubeModule,
  historyModule,
  clientApiModule,
  replicasModule,
  accountsModule,
  auditModule,
  operationsModule,
  spinnakerModule,
  signInModule,
  dashboardModule,
  armoryModule,
];
