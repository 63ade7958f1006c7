/**
 * `outpost gateway`: runs the gateway until SIGTERM/SIGINT. Configuration comes from defaults < `--config` YAML <
 * `OUTPOST_GATEWAY_*` environment < flags; an invalid configuration exits non-zero naming the bad key.
 */
import type { Command } from 'commander';
import { parsePort } from '../parse.js';
import { waitForSignal } from '../wait-for-signal.js';

/** Registers the `gateway` command. */
export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('run the gateway: agent streams (gRPC), client API (gRPC + Connect JSON) and REST on two ports')
    .option('--config <file>', 'YAML configuration file (see config/gateway.example.yaml)')
    .option('--http-port <port>', 'HTTP/1.1 port for Connect JSON and REST (default 7002; 0 = any free port)', parsePort)
    .option('--grpc-port <port>', 'cleartext HTTP/2 (h2c) port for agents and gRPC clients (default 9091)', parsePort)
    .option('--host <host>', 'address to listen on (default 0.0.0.0)')
    .option('--database <url>', 'postgres://…, a PGlite directory (default .outpost/db) or memory://')
    .option('--id <id>', 'replica id (default <hostname>-<http port>)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (default info)')
    .option(
      '--insecure',
      'development only: requests without credentials get every right and any agent may register any account name (logged as a warning)',
    )
    .action(async (opts) => {
      // Loaded on use, so `outpost --help` and the other commands never load the gateway.
      const { loadGatewayConfig, startGateway } = await import('../../gateway/index.js');
      const config = loadGatewayConfig({
        file: opts.config,
        env: process.env,
        overrides: {
          httpPort: opts.httpPort,
          grpcPort: opts.grpcPort,
          host: opts.host,
          database: opts.database,
          id: opts.id,
          logLevel: opts.logLevel,
          insecure: opts.insecure === true ? true : undefined,
        },
      });
      const { createLogger } = await import('../../shared/logger.js');
      const logger = createLogger({ level: config.logLevel, name: 'gateway' });
      const gateway = await startGateway(config, { logger });
      process.stdout.write(
        `outpost gateway ${gateway.id}\n  HTTP (Connect JSON, REST): ${gateway.httpUrl}\n  gRPC (agents, h2c):        ${gateway.grpcUrl}\n`,
      );
      await waitForSignal();
      await gateway.close();
    });
}
