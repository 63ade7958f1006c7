/**
 * An instance's console output (Deck's "Console output" link on a Kubernetes instance: Gate forwards
 * `GET /instances/{account}/{namespace}/{name}/console`, the Deck contract's §1a #10 and §2.6): the logs of every
 * container of the pod, init containers first, read live through the account's agent as Clouddriver reads them from
 * the API server. `{output: [{name, output}]}`; a pod that is gone answers Clouddriver's single "Error" entry; a
 * container the cluster will not give logs for carries the cluster's reason as its output. The caller needs READ on
 * the account (rules, X-SPINNAKER-ACCOUNTS, Fiat): 403 otherwise.
 */
import type { Context, Hono } from 'hono';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import type { AccountLookup } from '../account-lookup.js';
import type { LiveReads } from '../live-reads.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';

/** What the route needs. */
export interface ConsoleRoutesDeps {
  accounts: AccountLookup;
  /** The reads of one request, as its caller (never stored: live-reads.ts). */
  reads(c: Context<RestEnv>): LiveReads;
  access: SpinnakerAccess;
}

/** One container's log, as Clouddriver's `ContainerLog`. */
interface ContainerLog {
  name: string;
  output: string;
}

/** The pod name of an instance name `pod <name>` (kind matched case-insensitively, as Clouddriver's full names). */
function podNameOf(instance: string): string {
  const match = /^pod\s+(\S+)$/i.exec(instance.trim());
  if (!match)
    throw new HttpError(400, 'Bad Request', `not a Kubernetes instance name: ${JSON.stringify(instance)} (expected "pod <name>")`);
  return match[1]!;
}

/** The container names of a pod's spec: init containers first, then the others. */
function containerNames(pod: Record<string, unknown>): string[] {
  const spec = (pod.spec ?? {}) as { initContainers?: { name?: unknown }[]; containers?: { name?: unknown }[] };
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])]
    .map((c) => c.name)
    .filter((n): n is string => typeof n === 'string' && n !== '');
}

/** Adds the route. */
export function addConsoleRoutes(app: Hono<RestEnv>, deps: ConsoleRoutesDeps): void {
  app.get('/instances/:account/:namespace/:name/console', async (c) => {
    const { account, namespace, name } = c.req.param();
    await deps.access.requireAccount(c, account, 'READ');
    if (!(await deps.accounts.exists(account))) throw new HttpError(404, 'Not Found', `no account named ${JSON.stringify(account)}`);
    const podName = podNameOf(name);
    const reads = deps.reads(c);
    const pod = await reads.get(account, 'Pod', namespace, podName);
    if (!pod) return c.json({ output: [{ name: 'Error', output: 'Failed to retrieve pod data; pod may have been deleted.' }] });
    const output: ContainerLog[] = [];
    for (const container of containerNames(pod as unknown as Record<string, unknown>)) {
      const text = await reads
        .logs(account, namespace, podName, container)
        .catch((err: unknown) => `Failed to retrieve logs of container ${container}: ${(err as Error).message}`);
      output.push({ name: container, output: text });
    }
    return c.json({ output });
  });
}
