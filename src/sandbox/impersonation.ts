/**
 * Kubernetes user impersonation (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-*`),
 * checked like kube-apiserver's impersonation filter: the authenticated user needs verb `impersonate` on `users` (or
 * `serviceaccounts` for `system:serviceaccount:<ns>:<name>`), on `groups` for each group, on `uids` and on
 * `userextras/<key>` (authentication.k8s.io) for what it sets. The request then runs as the impersonated user only:
 * RBAC, access reviews and the fault endpoint all see that user, never the one who impersonates.
 */
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from './auth.js';
import { errors } from './errors.js';
import { type AccessAttributes, type Authorizer, forbiddenMessage } from './rbac.js';

const AUTHENTICATED = 'system:authenticated';
const EXTRA_PREFIX = 'impersonate-extra-';
const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** What a request asks to be treated as; undefined when it carries no impersonation header. */
interface ImpersonationRequest {
  user?: string;
  groups: string[];
  uid?: string;
  extra: Record<string, string[]>;
}

/** Reads the impersonation headers (repeated `Impersonate-Group`/`Impersonate-Extra-*` headers each count). */
function readImpersonation(req: IncomingMessage): ImpersonationRequest | undefined {
  const h = req.headersDistinct;
  const user = h['impersonate-user']?.[0];
  const groups = h['impersonate-group'] ?? [];
  const uid = h['impersonate-uid']?.[0];
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(h)) {
    if (!name.startsWith(EXTRA_PREFIX) || !values) continue;
    let key = name.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // kube-apiserver keeps a key it cannot unescape as it is
    }
    extra[key] = [...(extra[key] ?? []), ...values];
  }
  if (user === undefined && groups.length === 0 && uid === undefined && Object.keys(extra).length === 0) return undefined;
  return { user, groups, uid, extra };
}

function check(authorizer: Authorizer, actor: UserInfo, attrs: AccessAttributes): void {
  if (authorizer.authorize(actor, attrs).allowed) return;
  throw errors.forbidden(forbiddenMessage(actor, attrs), { name: attrs.name, group: attrs.group, kind: attrs.resource });
}

/**
 * Returns the user a request acts as: `actor` itself without impersonation headers, else the impersonated user
 * (its groups plus `system:authenticated`, as kube-apiserver adds). Throws 403 (`users "x" is forbidden: User "y"
 * cannot impersonate resource "users" in API group "" at the cluster scope`) when a check fails, and 400 when
 * groups, a uid or extras are asked for without a user.
 */
export function impersonate(authorizer: Authorizer, actor: UserInfo, req: IncomingMessage): UserInfo {
  const wanted = readImpersonation(req);
  if (!wanted) return actor;
  if (wanted.user === undefined || wanted.user === '') {
    const asked = [
      ...wanted.groups.map((g) => `Impersonate-Group: ${g}`),
      ...(wanted.uid !== undefined ? [`Impersonate-Uid: ${wanted.uid}`] : []),
      ...Object.keys(wanted.extra).map((k) => `Impersonate-Extra-${k}`),
    ];
    throw errors.badRequest(`requested [${asked.join(', ')}] without impersonating a user`);
  }
  const base = { resourceRequest: true, verb: 'impersonate' } as const;
  const sa = SERVICE_ACCOUNT.exec(wanted.user);
  const groups = [...wanted.groups];
  if (sa) {
    check(authorizer, actor, { ...base, group: '', resource: 'serviceaccounts', namespace: sa[1], name: sa[2] });
    if (groups.length === 0) groups.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
  } else {
    check(authorizer, actor, { ...base, group: '', resource: 'users', name: wanted.user });
  }
  for (const group of wanted.groups) check(authorizer, actor, { ...base, group: '', resource: 'groups', name: group });
  if (wanted.uid !== undefined) {
    check(authorizer, actor, { ...base, group: 'authentication.k8s.io', resource: 'uids', name: wanted.uid });
  }
  for (const [key, values] of Object.entries(wanted.extra)) {
    for (const value of values) {
      check(authorizer, actor, { ...base, group: 'authentication.k8s.io', resource: 'userextras', subresource: key, name: value });
    }
  }
  if (wanted.user !== 'system:anonymous' && !groups.includes(AUTHENTICATED)) groups.push(AUTHENTICATED);
  const user: UserInfo = { username: wanted.user, groups };
  if (wanted.uid !== undefined) user.uid = wanted.uid;
  if (Object.keys(wanted.extra).length > 0) user.extra = wanted.extra;
  return user;
}
