/**
 * Drives the agent's Kubernetes API proxy the way the gateway does, without a gateway: KubeRequest parts in (a head,
 * body chunks sent only within the credit the agent granted, an end), KubeResponse parts collected per request id.
 * Every agent-side proxy test builds its accounts, heads and answers here.
 */
import { create } from '@bufbuild/protobuf';
import { KubeRequestSchema, type KubeRequest, type KubeResponse } from '../../src/gen/outpost/agent/v1/kube_pb.js';
import { createAccountRuntime, unpreparedAccount } from '../../src/agent/accounts/account-runtime.js';
import { accountSchema } from '../../src/agent/config/schema.js';
import { createKubeClient, type KubeClient } from '../../src/agent/kube/kube-client.js';
import { createKubeProxy, type KubeProxy } from '../../src/agent/kube-proxy/kube-proxy.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';

/** An account of the agent on a cluster (a kubeconfig, or a client already made), with its `kubeProxy` settings. */
export function proxyAccount(name: string, cluster: KubeConfig | KubeClient, kubeProxy: unknown = {}) {
  const config = accountSchema.parse({ name, kubeconfigFile: '/unused', kubeProxy });
  const client = 'rawRequest' in cluster ? cluster : createKubeClient(cluster);
  return createAccountRuntime({ ...unpreparedAccount(config), client }, 'file');
}

/** A proxy serving `accounts` (at most `maxRequests` at once when given), and every part it sent. */
export function proxyFor(accounts: ReturnType<typeof proxyAccount>[], maxRequests?: number): { proxy: KubeProxy; out: KubeResponse[] } {
  const out: KubeResponse[] = [];
  const proxy = createKubeProxy({
    account: (name) => accounts.find((a) => a.prepared.config.name === name),
    send: (r) => out.push(r),
    logger: createSilentLogger(),
    maxRequests,
  });
  return { proxy, out };
}

/** The fields of a head; `path` is required, the rest default as {@link kubeHead} says. */
export interface HeadInit {
  path: string;
  account?: string;
  method?: string;
  headers?: { name: string; value: string }[];
  caller?: { principal?: string; user?: string; groups?: string[] };
  upgrade?: boolean;
  window?: number;
  noBody?: boolean;
}

/**
 * The head part of request `id` as the gateway sends it: account `sandbox`, GET, `accept: application/json`, the
 * caller `token:alice` mapped to `outpost:alice`, a 1 MiB window — each replaced by what `head` gives.
 */
export function kubeHead(id: bigint, head: HeadInit): KubeRequest {
  return create(KubeRequestSchema, {
    id,
    part: {
      case: 'head',
      value: {
        account: 'sandbox',
        method: 'GET',
        headers: [{ name: 'accept', value: 'application/json' }],
        caller: { principal: 'token:alice', user: 'outpost:alice', groups: [] },
        window: 1 << 20,
        ...head,
      },
    },
  });
}

/** The end part of request `id` (the caller's body is complete). */
export function kubeEnd(id: bigint): KubeRequest {
  return create(KubeRequestSchema, { id, part: { case: 'end', value: {} } });
}

/** One request as the gateway would send it. */
export interface DrivenRequest {
  account?: string;
  method?: string;
  path: string;
  headers?: Array<[string, string]>;
  body?: string | Buffer;
  upgrade?: boolean;
  user?: string;
}

/** Credit the agent granted request `id` so far (its window parts). */
function granted(out: KubeResponse[], id: bigint): number {
  let total = 0;
  for (const r of out) if (r.id === id && r.part.case === 'window') total += r.part.value.bytes;
  return total;
}

/** Sends request `id`: its head, then its body in 32 KiB chunks as the agent grants credit, then its end. */
export async function drive(proxy: KubeProxy, out: KubeResponse[], id: bigint, request: DrivenRequest): Promise<void> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  proxy.received(
    kubeHead(id, {
      ...(request.account ? { account: request.account } : {}),
      ...(request.method ? { method: request.method } : {}),
      path: request.path,
      ...(request.headers ? { headers: request.headers.map(([name, value]) => ({ name, value })) } : {}),
      ...(request.user !== undefined ? { caller: { principal: 'token:alice', user: request.user, groups: [] } } : {}),
      upgrade: request.upgrade ?? false,
      noBody: body === undefined,
    }),
  );
  if (body === undefined) return;
  let sent = 0;
  while (sent < body.length) {
    const ended = () => out.some((r) => r.id === id && r.part.case === 'end');
    await eventually(`credit for request ${id}`, () => granted(out, id) > sent || ended() || undefined);
    if (ended()) return;
    const size = Math.min(32 * 1024, granted(out, id) - sent, body.length - sent);
    proxy.received(create(KubeRequestSchema, { id, part: { case: 'body', value: body.subarray(sent, sent + size) } }));
    sent += size;
  }
  proxy.received(kubeEnd(id));
}

/** Cancels request `id` (a caller that went away). */
export function cancel(proxy: KubeProxy, id: bigint): void {
  proxy.received(create(KubeRequestSchema, { id, part: { case: 'cancel', value: { reason: 'test' } } }));
}

/**
 * What came back for `id` so far: status (0 without a head), headers, the impersonated user, body text, whether it
 * ended, end error and code.
 */
export function partsOf(out: KubeResponse[], id: bigint) {
  const mine = out.filter((r) => r.id === id);
  const head = mine.find((r) => r.part.case === 'head')?.part;
  const end = mine.find((r) => r.part.case === 'end')?.part;
  return {
    status: head?.case === 'head' ? head.value.status : 0,
    headers: head?.case === 'head' ? head.value.headers : [],
    user: head?.case === 'head' ? head.value.impersonatedUser : '',
    body: Buffer.concat(mine.flatMap((r) => (r.part.case === 'body' ? [Buffer.from(r.part.value)] : []))).toString('utf8'),
    ended: end !== undefined,
    error: end?.case === 'end' ? end.value.error : '',
    code: end?.case === 'end' ? end.value.code : '',
  };
}

/** The answer of `id` once it ended — or, for an upgrade, once its 101 came (its end comes when the socket closes). */
export async function answerOf(out: KubeResponse[], id: bigint) {
  await eventually(`the answer of ${id}`, () => {
    const parts = partsOf(out, id);
    return parts.ended || parts.status === 101 || undefined;
  });
  return partsOf(out, id);
}
