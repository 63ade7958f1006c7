/**
 * `outpost sandbox`: runs the sandbox Kubernetes API server until interrupted, writing a kubeconfig (contexts
 * `sandbox` for the admin token and `sandbox-restricted`) and printing the URL.
 * `outpost sandbox fault ACTION [VALUE]`: injects a fault into a running sandbox through its kubeconfig.
 * The sandbox and the Kubernetes client are loaded when one of these runs, not by every `outpost` command.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { Command, Option } from 'commander';
import { podReadyDelayOption, podStartDelayOption } from '../pace-options.js';
import { waitForSignal } from '../wait-for-signal.js';

const FAULT_ACTIONS = ['close-watches', 'fail-next-watches', 'expire-history', 'error-rate', 'latency', 'pause', 'resume', 'show'] as const;

function faultBody(action: string, value: string | undefined, status: string): Record<string, unknown> {
  const needNumber = (what: string) => {
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n)) throw new Error(`fault ${action} needs a numeric ${what}`);
    return n;
  };
  switch (action) {
    case 'fail-next-watches':
      return { count: value === undefined ? 1 : needNumber('count'), status: Number(status) };
    case 'error-rate':
      return { rate: needNumber('rate between 0 and 1') };
    case 'latency':
      return { ms: needNumber('number of milliseconds') };
    default:
      return {};
  }
}

/** Sends one fault request to the sandbox named by a kubeconfig; resolves to the sandbox's answer. */
async function sendFault(
  kubeconfigPath: string,
  context: string | undefined,
  action: string,
  body: Record<string, unknown>,
): Promise<string> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  if (context) kc.setCurrentContext(context);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`no current cluster in ${kubeconfigPath}`);
  const url = new URL(action === 'show' ? '/sandbox/faults' : `/sandbox/faults/${action}`, cluster.server);
  const opts: RequestOptions = { method: action === 'show' ? 'GET' : 'POST', headers: { 'Content-Type': 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        if ((res.statusCode ?? 500) >= 400) reject(new Error(`sandbox answered ${res.statusCode}: ${text}`));
        else resolve(text);
      });
    });
    req.on('error', reject);
    req.end(action === 'show' ? undefined : payload);
  });
}

/** Registers `sandbox` (and its `fault` sub-command) on the program. */
export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('Run a small Kubernetes API server (for tests, benchmarks and demos)')
    .option('--port <port>', 'port to listen on (0: ephemeral)', '6443')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--kubeconfig <file>', 'write a kubeconfig for the admin and restricted users to this file')
    .option('--seed <seed>', 'objects to create: none, demo or scale:N', 'none')
    .option('--tls', 'serve HTTPS with a generated CA (the default)')
    .option('--no-tls', 'serve plain HTTP (kubectl sends no bearer token over it: for clients that do, or tests)')
    .option('--history-window <events>', 'watch history kept for resume', '10000')
    .option('--bookmark-interval-ms <ms>', 'interval of watch BOOKMARK events', '5000')
    .option('--error-rate <rate>', 'start with this share (0..1) of requests failing with 500', '0')
    .option('--latency-ms <ms>', 'start with this latency added to every request', '0')
    .addOption(podStartDelayOption())
    .addOption(podReadyDelayOption())
    .action(async (opts: Record<string, string | number | boolean | undefined>) => {
      const { parseSeed, startSandbox } = await import('../../sandbox/index.js');
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${String(opts.port)}`);
      const seed = parseSeed(String(opts.seed));
      const { createLogger } = await import('../../shared/logger.js');
      const logger = createLogger({ name: 'sandbox' });
      const sb = await startSandbox({
        port,
        host: String(opts.host),
        tls: opts.tls !== false,
        seed,
        historyWindow: Number(opts.historyWindow),
        bookmarkIntervalMs: Number(opts.bookmarkIntervalMs),
        podStartDelayMs: opts.podStartDelayMs as number | undefined,
        podReadyDelayMs: opts.podReadyDelayMs as number | undefined,
        logger,
      });
      sb.faults.setErrorRate(Number(opts.errorRate));
      sb.faults.setLatency(Number(opts.latencyMs));
      if (typeof opts.kubeconfig === 'string') await sb.writeKubeconfig(opts.kubeconfig);
      process.stdout.write(`sandbox API server: ${sb.url}\n`);
      if (typeof opts.kubeconfig === 'string') {
        process.stdout.write(`kubeconfig: ${opts.kubeconfig} (contexts: sandbox = admin, sandbox-restricted)\n`);
        if (opts.tls === false) {
          process.stdout.write(
            'note: kubectl sends bearer tokens only over TLS; start without --no-tls to use this kubeconfig with kubectl\n',
          );
        }
      }
      await waitForSignal();
      await sb.close();
    });

  sandbox
    .command('fault')
    .description('Inject a fault into a running sandbox')
    .addArgument(new Command().createArgument('<action>', 'what to do').choices(FAULT_ACTIONS))
    .argument('[value]', 'count (fail-next-watches), rate (error-rate) or milliseconds (latency)')
    .option('--kubeconfig <file>', 'kubeconfig written by `outpost sandbox` (required)')
    .option('--context <name>', 'kubeconfig context (default: current)')
    .addOption(new Option('--status <code>', 'status for fail-next-watches').choices(['410', '500']).default('410'))
    .action(async (action: string, value: string | undefined, _opts: unknown, command: Command) => {
      // `--kubeconfig` is also an option of `sandbox`, which may claim it: read both levels
      const opts = command.optsWithGlobals<{ kubeconfig?: string; context?: string; status: string }>();
      if (!opts.kubeconfig) throw new Error('outpost sandbox fault: --kubeconfig FILE is required');
      const answer = await sendFault(opts.kubeconfig, opts.context, action, faultBody(action, value, opts.status));
      process.stdout.write(`${answer}\n`);
    });
}
