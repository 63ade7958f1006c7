/**
 * The headers of a proxied Kubernetes API request as the agent sends it to its cluster (docs/kubectl.md): the
 * caller's headers without hop-by-hop headers, credentials or impersonation headers of its own, then the agent's
 * credentials and the impersonation headers of the identity the account's `kubeProxy` setting chooses — so the
 * cluster's RBAC decides what the caller may do, never the agent's own rights.
 */
import { HOP_BY_HOP } from '../../shared/hop-by-hop.js';
import type { KubeHeader, KubeIdentity } from '../../gen/outpost/agent/v1/kube_pb.js';
import type { AccountConfig } from '../config/schema.js';

/** Hop-by-hop headers, and what only the proxy may set. */
const DROPPED = new Set([...HOP_BY_HOP, 'host', 'authorization', 'cookie', 'content-length']);

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
 * (a caller without a user): the agent never sends a request as itself.
 */
export function impersonationFor(config: AccountConfig, caller: KubeIdentity | undefined): Impersonation {
  const proxy = config.kubeProxy;
  if (proxy.identity === 'static') return { user: proxy.user!, groups: [...proxy.groups] };
  if (!caller || caller.user === '') throw new Error('the request names no caller to impersonate');
  return { user: caller.user, groups: [...caller.groups] };
}

/**
 * The headers to send: the caller's (filtered; `content-length` kept only when the body's length is known), the
 * agent's credentials (`credentials`, from its kubeconfig), the impersonation headers, and for an upgrade the
 * `connection`/`upgrade` pair.
 */
export function outgoingHeaders(
  headers: readonly KubeHeader[],
  credentials: Record<string, string>,
  identity: Impersonation,
  upgrade: boolean,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let upgradeTo = '';
  for (const { name, value } of headers) {
    const key = name.toLowerCase();
    if (key === 'upgrade') upgradeTo = value;
    if (DROPPED.has(key) && !(key === 'content-length' && !upgrade)) continue;
    if (key.startsWith('impersonate-')) continue;
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else out[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  for (const [name, value] of Object.entries(credentials)) out[name.toLowerCase()] = value;
  out['impersonate-user'] = identity.user;
  if (identity.groups.length > 0) out['impersonate-group'] = identity.groups;
  if (upgrade) {
    out.connection = 'Upgrade';
    out.upgrade = upgradeTo || 'websocket';
  }
  return out;
}

/** A Node response's raw headers as proto headers (names lower-cased, hop-by-hop dropped unless an upgrade's). */
export function responseHeaders(raw: readonly string[], upgrade: boolean): HeaderInit[] {
  const out: HeaderInit[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (DROPPED.has(name) && !(upgrade && (name === 'connection' || name === 'upgrade')) && name !== 'content-length') continue;
    out.push({ name, value: raw[i + 1]! });
  }
  return out;
}
