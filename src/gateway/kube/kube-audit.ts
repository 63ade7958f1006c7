/**
 * The audit entry of one `/k8s/{account}` request (docs/kubectl.md, "Audit"): who, which account, what (verb,
 * resource, namespace, name — read as kube-apiserver reads them — and the path without its query), the answer
 * (status, bytes each way, duration) and whom the agent impersonated. Never a body: Secrets pass through the proxy,
 * their values are never recorded.
 */
import { performance } from 'node:perf_hooks';
import type { AuditEntry } from '../audit/audit-log.js';
import type { Admitted } from './kube-admission.js';
import type { ExchangeOutcome } from './kube-exchange.js';
import { kubeRequestInfo } from './kube-request-info.js';

/** The entry of a request admitted as `a` and started at `started` (`performance.now()`). */
export function kubeAuditEntry(
  a: Pick<Admitted, 'account' | 'path' | 'caller'>,
  method: string,
  started: number,
  outcome: ExchangeOutcome,
  gatewayId: string,
): AuditEntry {
  const info = kubeRequestInfo(method, a.path);
  const elapsed = performance.now() - started;
  return {
    kind: 'kube',
    operationId: '',
    principal: a.caller.principal,
    account: a.account,
    verb: info.verb,
    apiGroup: info.apiGroup,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
    path: a.path.split('?')[0]!,
    status: outcome.status,
    bytesIn: outcome.bytesIn,
    bytesOut: outcome.bytesOut,
    durationMs: Math.round(elapsed),
    impersonatedUser: outcome.impersonatedUser,
    impersonatedGroups: outcome.impersonatedGroups,
    gatewayId,
    error: outcome.error,
    startedAt: new Date(Date.now() - elapsed),
  };
}
