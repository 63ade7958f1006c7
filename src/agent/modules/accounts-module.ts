/**
 * The agent's accounts: the account manager prepares the accounts of the config file and of the gateway (clients,
 * discovery) and runs their watches under the core's stop signal. Its stop waits for the preparation under way to
 * finish (the watches themselves stop with the signal).
 */
import { setMaxListeners } from 'node:events';
import { dirname, resolve } from 'node:path';
import { createAccountManager } from '../accounts/account-manager.js';
import type { AgentModule } from './module.js';

/** The accounts module (module-list.ts). */
export const accountsModule: AgentModule = {
  name: 'accounts',
  serves: 'the account manager: accounts of the file and of the gateway, their clients and watches',
  start: (core) => {
    const { configFile } = core.deps;
    setMaxListeners(0, core.stop.signal); // parallel API requests of every account listen on it
    const accounts = createAccountManager({
      state: core.state,
      mirrors: core.states.slice(1),
      logger: core.log,
      signal: core.stop.signal,
      baseDir: configFile !== undefined ? dirname(resolve(configFile)) : undefined,
      kubeconfigDirs: core.config.kubernetes.dynamicKubeconfigDirs,
      kubeRecorder: core.metrics,
    });
    core.closers.defer('account preparation', () => accounts.idle());
    return { accounts };
  },
};
