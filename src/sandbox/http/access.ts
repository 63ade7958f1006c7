/**
 * Who a request acts as and whether it may: the steps every request takes before it is served, plain or upgraded
 * (exec, attach, port-forward). Authentication by bearer token, then impersonation, then RBAC on the parsed request.
 */
import type { IncomingMessage } from 'node:http';
import type { Authenticator, UserInfo } from '../auth.js';
import { errors } from '../errors.js';
import { impersonate } from '../impersonation.js';
import { type AccessAttributes, type Authorizer, forbiddenMessage } from '../rbac.js';
import type { RequestInfo } from './request-info.js';

/** The user a request acts as: its token's user, or the user it impersonates (401/403/400 on failure). */
export function resolveUser(authenticator: Authenticator, authorizer: Authorizer, req: IncomingMessage): UserInfo {
  return impersonate(authorizer, authenticator.authenticate(req), req);
}

/** The RBAC attributes of a parsed request, optionally with another verb (upgrades check `create` too). */
export function accessAttributes(ri: RequestInfo, verb = ri.verb): AccessAttributes {
  return ri.resourceRequest
    ? {
        resourceRequest: true,
        verb,
        group: ri.group,
        resource: ri.resource,
        subresource: ri.subresource,
        name: ri.name,
        namespace: ri.namespace,
      }
    : { resourceRequest: false, verb, path: ri.path };
}

/** Throws kube-apiserver's 403 unless `user` may do `attrs`. */
export function authorizeOrThrow(authorizer: Authorizer, user: UserInfo, ri: RequestInfo, attrs = accessAttributes(ri)): void {
  if (authorizer.authorize(user, attrs).allowed) return;
  throw errors.forbidden(
    forbiddenMessage(user, attrs),
    ri.resourceRequest ? { name: ri.name, group: ri.group, kind: ri.resource } : undefined,
  );
}
