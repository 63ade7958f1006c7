/**
 * The audit entries of the dashboard's sessions (kind `session`, docs/security.md "Audit log"): a sign-in, a
 * sign-out, and a request refused by the CSRF rules — the caller was authenticated by the cookie, so the entry names
 * the person and their groups, like every other audited action.
 */
import type { AuditEntry } from '../audit/audit-entry.js';
import { identityOf } from '../auth/principal.js';

/** What a session entry records. */
export interface SessionEvent {
  verb: 'sign-in' | 'sign-out' | 'refused';
  /** The session's subject (`<provider>:<username>`) and groups. */
  subject: string;
  groups: readonly string[];
  /** The request's path (the callback, `/auth/logout`, or the refused request's). */
  path: string;
  /** The HTTP status answered. */
  status: number;
  /** Why, for a refusal. */
  error?: string;
  at: Date;
}

/** The audit entry of a session event. */
export function sessionAuditEntry(event: SessionEvent): AuditEntry {
  return {
    kind: 'session',
    principal: identityOf({ method: 'oidc', subject: event.subject }),
    groups: event.groups,
    account: '',
    verb: event.verb,
    apiGroup: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
    path: event.path,
    status: event.status,
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    impersonatedUser: '',
    impersonatedGroups: [],
    gatewayId: '',
    operationId: '',
    error: event.error ?? '',
    startedAt: event.at,
  };
}
