/**
 * What the audit log records: per proxied Kubernetes API request (`kind: 'kube'`) an entry when it is admitted
 * (`stage: 'started'`) and one when it ends (`'completed'`: status, bytes, duration), the two sharing a `requestId` —
 * so a watch open for hours is visible, and one whose replica died is still on record; a refusal is one `completed`
 * entry — per operation submitted (`kind: 'operation'`) one `completed` entry, and per dashboard sign-in, sign-out and
 * refused session request (`kind: 'session'`) one `completed` entry. Metadata only — never a request or
 * response body (a Secret's data must not reach the table or the logs); callers pass what they know and '' / 0 for the
 * rest.
 */

/**
 * The kinds of audited actions: a proxied Kubernetes API request, a submitted operation, a dashboard session's
 * sign-in, sign-out or refused request (src/gateway/sign-in/).
 */
export const AUDIT_KINDS = ['kube', 'operation', 'session'] as const;
/** A kind of audited action. */
type AuditKind = (typeof AUDIT_KINDS)[number];

/** The kind of a stored or received value: one of {@link AUDIT_KINDS}, else `kube` (the oldest rows'). */
export function auditKindOf(value: unknown): AuditKind {
  return (AUDIT_KINDS as readonly unknown[]).includes(value) ? (value as AuditKind) : 'kube';
}

/** When an entry was written: at admission of a request still running, or at its end (refusals included). */
const AUDIT_STAGES = ['started', 'completed'] as const;
/** A stage of {@link AUDIT_STAGES}. */
export type AuditStage = (typeof AUDIT_STAGES)[number];

/** One audited action. */
export interface AuditEntry {
  kind: AuditKind;
  /** Default `completed`. */
  stage?: AuditStage;
  /** kube: the same random id on a request's `started` and `completed` entries; '' otherwise. */
  requestId?: string;
  /** identityOf(principal) from src/gateway/auth/principal.ts, e.g. `token:alice`. */
  principal: string;
  /**
   * The caller's groups as its credential names them (an OIDC or JWT groups claim with the provider's prefix, a static
   * token's groups, a certificate's O values): who acted, by group. [] when it names none.
   */
  groups?: readonly string[];
  account: string;
  /**
   * kube: the Kubernetes verb (get, list, watch, create, update, patch, delete, deletecollection, connect for
   * exec/attach/portforward…); operation: the operation kind (e.g. deploy, scale, delete, patch, rollout…); session:
   * `sign-in`, `sign-out` or `refused`.
   */
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** kube: the request path below /k8s/{account} without query; operation: ''. */
  path: string;
  /**
   * kube: HTTP status answered (0 when the caller went away before an answer); operation: HTTP-like status of the
   * submission (200 accepted, 4xx refused).
   */
  status: number;
  bytesIn: number;
  bytesOut: number;
  durationMs: number;
  impersonatedUser: string;
  impersonatedGroups: string[];
  /** Replica that served it; the audit log fills in its own id when ''. */
  gatewayId: string;
  /** The operation (or Spinnaker task) id; '' for kube. */
  operationId: string;
  /** '' when none. */
  error: string;
  startedAt: Date;
}

/** An entry as stored: with its database id (grows with insertion order). */
export interface StoredAuditEntry extends AuditEntry {
  id: string;
  stage: AuditStage;
  requestId: string;
}

/** What {@link AuditLog.list} filters on; every field optional ('' / undefined: no filter). */
export interface AuditFilter {
  account?: string;
  principal?: string;
  /** `kube`, `operation` or `session`; anything else is INVALID_ARGUMENT. */
  kind?: string;
  /** Entries started at or after this time. */
  since?: Date;
  /** Entries started before this time. */
  until?: Date;
  /** 0 or undefined means 50; at most {@link MAX_AUDIT_PAGE_SIZE}; negative is INVALID_ARGUMENT. */
  pageSize?: number;
  /** The `nextPageToken` of a previous page with the same filters. */
  pageToken?: string;
}

/** Default page size of a list. */
export const DEFAULT_AUDIT_PAGE_SIZE = 50;
/** Largest page size of a list. */
export const MAX_AUDIT_PAGE_SIZE = 500;

/** Longest text kept per field (longer values are cut: an entry is metadata, not a payload). */
const MAX_TEXT = 2048;
const MAX_GROUPS = 64;
const MAX_INT32 = 2_147_483_647;

/**
 * The entry made safe to store and log: strings without NUL characters (Postgres refuses them) and at most
 * {@link MAX_TEXT} characters, numbers finite, non-negative and in their column's range, a valid start time. A bad
 * field never makes the whole batch fail.
 */
export function sanitizeEntry(entry: AuditEntry, gatewayId: string): AuditEntry & Pick<StoredAuditEntry, 'stage' | 'requestId'> {
  const startedAt = entry.startedAt instanceof Date && !Number.isNaN(entry.startedAt.getTime()) ? entry.startedAt : new Date();
  return {
    kind: auditKindOf(entry.kind),
    stage: entry.stage === 'started' ? 'started' : 'completed',
    requestId: text(entry.requestId),
    principal: text(entry.principal),
    groups: Array.isArray(entry.groups) ? entry.groups.slice(0, MAX_GROUPS).map(text) : [],
    account: text(entry.account),
    verb: text(entry.verb),
    apiGroup: text(entry.apiGroup),
    resource: text(entry.resource),
    subresource: text(entry.subresource),
    namespace: text(entry.namespace),
    name: text(entry.name),
    path: text(entry.path),
    status: whole(entry.status, 999),
    bytesIn: whole(entry.bytesIn, Number.MAX_SAFE_INTEGER),
    bytesOut: whole(entry.bytesOut, Number.MAX_SAFE_INTEGER),
    durationMs: whole(entry.durationMs, MAX_INT32),
    impersonatedUser: text(entry.impersonatedUser),
    impersonatedGroups: Array.isArray(entry.impersonatedGroups) ? entry.impersonatedGroups.slice(0, MAX_GROUPS).map(text) : [],
    gatewayId: text(entry.gatewayId) || gatewayId,
    operationId: text(entry.operationId),
    error: text(entry.error),
    startedAt,
  };
}

function text(value: unknown): string {
  if (typeof value !== 'string') return '';
  const clean = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  return clean.length > MAX_TEXT ? clean.slice(0, MAX_TEXT) : clean;
}

function whole(value: unknown, max: number): number {
  const n = typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : 0;
  return Math.min(max, Math.max(0, n));
}
