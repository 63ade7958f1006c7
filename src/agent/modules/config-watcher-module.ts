/**
 * The config file watcher: account changes in the file take effect without a restart (other settings need one).
 * Left out when the agent was not given the file its config came from.
 */
import { watchConfigFile } from '../config/config-watcher.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import { needPart, type AgentModule } from './module.js';

/** The config watcher module (module-list.ts). */
export const configWatcherModule: AgentModule = {
  name: 'config-watcher',
  serves: 'reloads of the accounts in the config file, when the agent knows its file',
  enabled: (core) => core.deps.configFile !== undefined,
  start: async (core, earlier) => {
    const accounts = needPart(earlier, 'accounts', 'config-watcher');
    const watcher = await watchConfigFile({
      file: core.deps.configFile!,
      env: core.deps.env,
      running: core.config,
      intervalMs: core.deps.configPollMs ?? AGENT_DEFAULTS.configPollMs,
      logger: core.log,
      onAccounts: (next) => accounts.setFileAccounts(next),
    });
    core.closers.defer('configuration file watcher', () => watcher.close());
    return undefined;
  },
};
