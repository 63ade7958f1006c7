/**
 * The agent's operations: the runners (the core's, one per connection) close once the stream stopped sending them
 * work, and the Kubernetes clients they use close after them.
 */
import type { AgentModule } from './module.js';

/** The operations module (module-list.ts). */
export const operationsModule: AgentModule = {
  name: 'operations',
  serves: 'the operation runners and the Kubernetes clients they use',
  start: (core) => {
    // The Kubernetes clients close after the operations that use them have stopped.
    core.closers.defer('kubernetes clients', () => {
      for (const account of core.state.accounts) account.prepared.client?.close();
    });
    core.closers.defer('operations', () => Promise.all(core.runners.map((r) => r.close())).then(() => undefined));
    return undefined;
  },
};
