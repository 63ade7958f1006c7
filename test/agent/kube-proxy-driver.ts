/**
 * Drives the agent's Kubernetes API proxy the way the gateway does, without a gateway: KubeRequest parts in (a head,
 * body chunks sent only within the credit the agent granted, an end), KubeResponse parts collected per request id.
 */
import { create } from '@bufbuild/protobuf';
import { KubeRequestSchema, type KubeResponse } from '../../src/gen/outpost/agent/v1/kube_pb.js';
import { createAccountRuntime, unpreparedAccount } from '../../src/agent/accounts/account-runtime.js';
import { accountSchema } from '../../src/agent/config/schema.js';
import { createKubeClient } from '../../src/agent/kube/kube-client.js';
import { createKubeProxy, type KubeProxy } from '../../src/agent/kube-proxy/kube-proxy.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';

/** An account of the agent on the cluster `kubeConfig`, with its `kubeProxy` settings. */
export function proxyAccount(name: string, kubeConfig: KubeConfig, kubeProxy: unknown = {}) {
  const config = accountSchema.parse({ name, kubeconfigFile: '/unused', kubeProxy });
  return createAccountRuntime({ ...unpreparedAccount(config), client: createKubeClient(kubeConfig) }, 'file');
}

/** A proxy serving `accounts`, and every part it sent. */
export function proxyFor(accounts: ReturnType<typeof proxyAccount>[]): { proxy: KubeProxy; out: KubeResponse[] } {
  const out: KubeResponse[] = [];
  const proxy = createKubeProxy({
    account: (name) => accounts.find((a) => a.prepared.config.name === name),
    send: (r) => out.push(r),
    logger: createSilentLogger(),
  });
  return { proxy, out };
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
    create(KubeRequestSchema, {
      id,
      part: {
        case: 'head',
        value: {
          account: request.account ?? 'sandbox',
          method: request.method ?? 'GET',
          path: request.path,
          headers: (request.headers ?? [['accept', 'application/json']]).map(([name, value]) => ({ name, value })),
          caller: { principal: 'token:alice', user: request.user ?? 'outpost:alice', groups: [] },
          upgrade: request.upgrade ?? false,
          window: 1 << 20,
          noBody: body === undefined,
        },
      },
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
  proxy.received(create(KubeRequestSchema, { id, part: { case: 'end', value: {} } }));
}

/** Cancels request `id` (a caller that went away). */
export function cancel(proxy: KubeProxy, id: bigint): void {
  proxy.received(create(KubeRequestSchema, { id, part: { case: 'cancel', value: { reason: 'test' } } }));
}

/** What came back for `id` so far: status (0 without a head), headers, body text, whether it ended, end error and code. */
export function partsOf(out: KubeResponse[], id: bigint) {
  const mine = out.filter((r) => r.id === id);
  const head = mine.find((r) => r.part.case === 'head')?.part;
  const end = mine.find((r) => r.part.case === 'end')?.part;
  return {
    status: head?.case === 'head' ? head.value.status : 0,
    headers: head?.case === 'head' ? head.value.headers : [],
    body: Buffer.concat(mine.flatMap((r) => (r.part.case === 'body' ? [Buffer.from(r.part.value)] : []))).toString('utf8'),
    ended: end !== undefined,
    error: end?.case === 'end' ? end.value.error : '',
    code: end?.case === 'end' ? end.value.code : '',
  };
}

/** The answer of `id` once it ended. */
export async function answerOf(out: KubeResponse[], id: bigint) {
  await eventually(`the answer of ${id}`, () => partsOf(out, id).ended || undefined);
  return partsOf(out, id);
}
