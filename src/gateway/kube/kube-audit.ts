/**
 * What the audit log keeps of one `/k8s/{account}` request (docs/kubectl.md, "Audit"): who, which account, what
 * (verb, resource, namespace, name, path without its query), the answer (status, bytes each way, duration) and whom
 * the agent impersonated. Never a body: Secrets pass through the proxy, their values are never recorded.
 */

/** One proxied request, as recorded. */
export interface KubeAuditEntry {
  /** The gateway identity key (`token:alice`). */
  principal: string;
  account: string;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
  /** HTTP status answered; 0 when the caller left before any answer. */
  status: number;
  bytesIn: number;
  bytesOut: number;
  durationMs: number;
  impersonatedUser: string;
  impersonatedGroups: string[];
  gatewayId: string;
  error: string;
  startedAt: Date;
}
