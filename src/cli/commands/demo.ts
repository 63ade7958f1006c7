/**
 * `outpost demo`: runs sandbox + gateway + agent in one process (see src/demo/run-demo.ts).
 */
import type { Command } from 'commander';
import { createLogger } from '../../shared/logger.js';
import { parsePort } from '../parse.js';
import { waitForSignal } from '../wait-for-signal.js';

/** Registers the `demo` command. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run a seeded sandbox cluster, a gateway on the embedded database and an agent, in one process')
    .option('--dir <path>', 'where the demo writes its kubeconfig and agent config', '.outpost/demo')
    .option('--sandbox-port <port>', 'sandbox Kubernetes API port', parsePort, 6443)
    .option('--http-port <port>', 'gateway HTTP port (Connect JSON, REST)', parsePort, 7002)
    .option('--grpc-port <port>', 'gateway gRPC port (agents)', parsePort, 9091)
    .option('--agent-port <port>', 'agent admin port', parsePort, 8082)
    .option('--database <url>', 'gateway database: memory://, a PGlite directory or postgres://…', 'memory://')
    .option('--log-level <level>', 'log level (trace, debug, info, warn, error)', 'warn')
    .option('--no-build', 'do not build the dashboard (web/dist) when it is missing or older than its sources')
    .action(async (opts) => {
      // Loaded on use, so `outpost --help` and the other commands never load the whole system.
      const { startDemo } = await import('../../demo/run-demo.js');
      const logger = createLogger({ level: opts.logLevel, name: 'demo' });
      if (opts.build) {
        const { ensureWebBuild } = await import('../../demo/web-build.js');
        await ensureWebBuild(logger);
      }
      const demo = await startDemo({
        dir: opts.dir,
        sandboxPort: opts.sandboxPort,
        httpPort: opts.httpPort,
        grpcPort: opts.grpcPort,
        agentPort: opts.agentPort,
        database: opts.database,
        logger,
      });
      process.stdout.write(demo.banner);
      await waitForSignal();
      process.stdout.write('Stopping…\n');
      await demo.close();
    });
}
