/**
 * The headers of a proxied Kubernetes API request as the agent sends it to its cluster (docs/kubectl.md): the
 * caller's headers that the shared allow-list admits (src/shared/kube-headers.ts — checked here again, whatever the
 * gateway sent), then the agent's credentials and the impersonation headers of the identity the account's
 * `kubeProxy` setting chooses — so the cluster's RBAC decides what the caller may do, never the agent's own rights.
 * A caller's names are checked again (src/shared/kube-names.ts): the agent never impersonates a `system:` name it did
 * not take from its own static identity.
 */
import { HOP_BY_HOP } from '../../shared/hop-by-hop.js';
import type { KubeHeader, KubeIdentity } from '../../gen/outpost/agent/v1/kube_pb.js';
import { isKubeRequestHeader } from '../../shared/kube-headers.js';
import { callerNameProblem } from '../../shared/kube-names.js';
import type { AccountConfig } from '../config/schema.js';

/**
 * Response headers not passed back: hop-by-hop ones (an upgrade's `connection`/`upgrade` aside), and the request's own
 * `host`, `authorization` and `cookie`.
 */
const DROPPED = new Set([...HOP_BY_HOP, 'host', 'authorization', 'cookie']);

/** One header, as a message field takes it. */
export interface HeaderInit {
  name: string;
  value: string;
}

/** The identity a request is made as. */
export interface Impersonation {
  user: string;
  groups: string[];
}

/**
 * The identity to impersonate for the account: its static identity, or the caller's. Throws when there is none
 * (a caller without a user: the agent never sends a request as itself) and when a caller's user or group is not a
 * name an HTTP header carries verbatim or is in the cluster's `system:` namespace.
 */
export function impersonationFor(config: AccountConfig, caller: KubeIdentity | undefined): Impersonation {
  const proxy = config.kubeProxy;
  if (proxy.identity === 'static') return { user: proxy.user!, groups: [...proxy.groups] };
  if (!caller || caller.user === '') throw new Error('the request names no caller to impersonate');
  for (const [what, name] of [['user', caller.user], ...caller.groups.map((g) => ['group', g])] as const) {
    const problem = callerNameProblem(name);
    if (problem) throw new Error(`the caller's ${what} ${JSON.stringify(name.slice(0, 100))} ${problem}: not impersonated`);
  }
  return { user: caller.user, groups: [...caller.groups] };
}

/**
 * The headers to send: the caller's that the allow-list admits (`content-length` kept only when the body is streamed
 * as it came, not on an upgrade), the agent's credentials (`credentials`, from its kubeconfig), the impersonation
 * headers, and for an upgrade the `connection`/`upgrade` pair.
 */
export function outgoingHeaders(
  headers: readonly KubeHeader[],
  credentials: Record<string, string>,
  identity: Impersonation,
  upgrade: boolean,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // Stryker disable next-line StringLiteral: with no caller Upgrade header, any start but "websocket" asks websocket too
  let upgradeTo = '';
  for (const { name, value } of headers) {
    const key = name.toLowerCase();
    if (key === 'upgrade') upgradeTo = value;
    if (!isKubeRequestHeader(key, false) || (key === 'content-length' && upgrade)) continue;
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else out[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  for (const [name, value] of Object.entries(credentials)) out[name.toLowerCase()] = value;
  out['impersonate-user'] = identity.user;
  if (identity.groups.length > 0) out['impersonate-group'] = identity.groups;
  if (upgrade) {
    out.connection = 'Upgrade';
    // WebSocket is the only upgrade carried (the gateway refuses the others).
    out.upgrade = /^websocket$/i.test(upgradeTo) ? upgradeTo : 'websocket';
  }
  return out;
}

/** A Node response's raw headers as proto headers (names lower-cased, hop-by-hop dropped unless an upgrade's). */
export function responseHeaders(raw: readonly string[], upgrade: boolean): HeaderInit[] {
  const out: HeaderInit[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (DROPPED.has(name) && !(upgrade && (name === 'connection' || name === 'upgrade'))) continue;
    out.push({ name, value: raw[i + 1]! });
  }
  return out;
}
