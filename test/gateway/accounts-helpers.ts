/**
 * Helpers for the account management tests: JSON calls to the REST routes, a snapshot of every account-related table
 * (to prove a refused request changed nothing), and the agent-side messages of dynamic accounts.
 */
import type { ConnectResponse } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { TestAgentStream } from '../../testkit/test-agent-stream.js';
import type { TestGateway } from '../../testkit/test-gateway.js';

/** Answer of a REST call. */
export interface RestAnswer {
  status: number;
  body: any;
  contentType: string;
}

/** Sends `body` as JSON (or raw when a string with `raw`), returns the parsed answer. */
export async function rest(
  t: TestGateway,
  method: string,
  path: string,
  body?: unknown,
  opts: { raw?: boolean; headers?: Record<string, string> } = {},
): Promise<RestAnswer> {
  const headers: Record<string, string> = { ...(body !== undefined && { 'Content-Type': 'application/json' }), ...opts.headers };
  const send = () =>
    fetch(`${t.gateway.httpUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : opts.raw ? (body as string) : JSON.stringify(body),
    });
  let res: Response;
  try {
    res = await send();
  } catch (err) {
    // A keep-alive socket the server closed after refusing a huge body (413 mid-upload) may be picked for the next
    // request, which then fails before reaching the server: that request is sent again on a fresh socket.
    if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    res = await send();
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text
  }
  return { status: res.status, body: parsed, contentType: res.headers.get('content-type') ?? '' };
}

/** Every row of the tables account management touches, as one comparable value. */
export async function snapshot(t: TestGateway): Promise<string> {
  const parts = await Promise.all([
    // The lease expiry moves with every renewal: it is not a change a request made.
    t.query(`select to_jsonb(a) - 'lease_expires_at' as row from accounts a order by name`),
    t.query('select id, account, from_state, to_state, reason, actor from account_transitions order by id'),
    t.query('select account, kind, namespace, name, resource_version from objects order by account, kind, namespace, name'),
    t.query('select account, api_version, kind, watch_namespace, resource_version from watch_states order by 1, 2, 3, 4'),
  ]);
  return JSON.stringify(parts);
}

/** The AccountInfo an agent announces for a dynamic account it started serving. */
export function accountInfo(name: string, apiHost = `https://cluster-${name}:6443`, caFingerprint = 'ab'.repeat(32)) {
  return {
    name,
    apiHost,
    caFingerprint,
    kubernetesVersion: 'v1.30.0',
    kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }],
  };
}

/** An `accountsChanged` request message. */
export function accountsChanged(changeId: number, added: ReturnType<typeof accountInfo>[], removed: string[] = []) {
  return { case: 'accountsChanged' as const, value: { changeId: BigInt(changeId), added, removed } };
}

/** Reads responses until one of the given case arrives (others are skipped). */
export async function nextOf<K extends NonNullable<ConnectResponse['message']['case']>>(
  stream: TestAgentStream,
  kind: K,
  timeoutMs = 30_000,
): Promise<Extract<ConnectResponse['message'], { case: K }>['value']> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stream.next(Math.max(1, deadline - Date.now()));
    if (res.message.case === kind) return res.message.value as never;
  }
}

/** Transitions of an account as `from→to` strings, oldest first, from GET /armory/accounts/{name}. */
export async function transitionsOf(t: TestGateway, name: string): Promise<string[]> {
  const rows = await t.query<{ from_state: string; to_state: string }>(
    `select from_state, to_state from account_transitions where account = '${name}' order by id`,
  );
  return rows.map((r) => `${r.from_state || '(new)'}→${r.to_state}`);
}
