/**
 * `outpost demo`: runs sandbox + gateway + agent in one process (see src/demo/run-demo.ts).
 */
import type { Command } from 'commander';
import { podReadyDelayOption, podStartDelayOption } from '../pace-options.js';
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
    .addOption(podStartDelayOption())
    .addOption(podReadyDelayOption())
    .action(async (opts) => {
      // Loaded on use, so `outpost --help` and the other commands never load the whole system.
      const { startDemo } = await import('../../demo/run-demo.js');
      const { createSentenceStream } = await import('../../demo/sentence-log.js');
      // Sentences, not JSON lines: the demo's output is read by a person, between the lines of its banner.
      const { createLogger } = await import('../../shared/logger.js');
      const logger = createLogger({ level: opts.logLevel, name: 'demo', destination: createSentenceStream() });
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
        podStartDelayMs: opts.podStartDelayMs,
        podReadyDelayMs: opts.podReadyDelayMs,
        logger,
      }).catch((err: unknown) => {
        throw portInUse(err, opts) ?? err;
      });
      process.stdout.write(demo.banner);
      await waitForSignal();
      process.stdout.write('Stopping…\n');
      await demo.close();
    });
}

/** A port already taken (a second demo, say) named with the flag that moves it; undefined for any other error. */
function portInUse(err: unknown, opts: Record<string, unknown>): Error | undefined {
  // The gateway wraps its listen errors (`cannot listen on …`, with the cause).
  const e = ((err as { code?: string }).code === 'EADDRINUSE' ? err : (err as { cause?: unknown }).cause) as
    | { code?: string; port?: number }
    | undefined;
  if (e?.code !== 'EADDRINUSE') return undefined;
  const flags: Array<[string, string, string]> = [
    ['sandboxPort', '--sandbox-port', 'the sandbox API server'],
    ['httpPort', '--http-port', "the gateway's HTTP port"],
    ['grpcPort', '--grpc-port', "the gateway's gRPC port"],
    ['agentPort', '--agent-port', "the agent's admin port"],
  ];
  const hit = flags.find(([key]) => opts[key] === e.port);
  const moves = flags.map(([, flag]) => flag).join(', ');
  if (!hit) return new Error(`a port the demo needs is in use (${String(e.port ?? 'unknown')}); move them with ${moves}`);
  return new Error(
    `port ${e.port} (${hit[2]}) is in use — is another demo running? Move it with ${hit[1]} (each port has its flag: ${moves})`,
  );
}
