/**
 * `outpost agent --config FILE`: runs the agent (watching FILE: account changes apply without a restart) until
 * SIGTERM/SIGINT, then closes the stream, stops the watches and exits 0. An invalid configuration is printed (every
 * key path and problem) on stderr with exit code 1, no stack.
 */
import type { Command } from 'commander';
import { waitForSignal } from '../wait-for-signal.js';

/** Registers the `agent` command. */
export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('watch the configured Kubernetes clusters and stream their objects to the gateway')
    .requiredOption('--config <file>', 'agent configuration file (YAML; the reference agent keys are accepted)')
    .option('--log-level <level>', 'log level (trace, debug, info, warn, error); overrides logging.level')
    .action(async (opts: { config: string; logLevel?: string }) => {
      // Loaded on use, so `outpost --help` and the other commands never load the agent; the configuration is checked
      // before the (heavier) Kubernetes client is loaded.
      const { loadAgentConfig, AgentConfigError } = await import('../../agent/config/load.js');
      let config: ReturnType<typeof loadAgentConfig>;
      try {
        config = loadAgentConfig(opts.config);
      } catch (err) {
        if (err instanceof AgentConfigError) {
          process.stderr.write(`outpost agent: ${err.message}\n`);
          process.exitCode = 1;
          return;
        }
        throw err;
      }
      const { createLogger } = await import('../../shared/logger.js');
      const logger = createLogger({ level: opts.logLevel ?? config.logging.level, name: 'agent' });
      const { startAgent } = await import('../../agent/index.js');
      const agent = await startAgent(config, { logger, configFile: opts.config });
      const signal = await waitForSignal();
      logger.info({ signal }, 'stopping');
      await agent.close();
      process.exitCode = 0;
    });
}
