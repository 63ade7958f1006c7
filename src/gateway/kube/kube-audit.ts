/**
 * The audit entries of one `/k8s/{account}` request (docs/kubectl.md, "Audit"): who, which account, what (verb,
 * resource, namespace, name — read as kube-apiserver reads them — and the path without its query), and, at its end,
 * the answer (status, bytes each way, duration) and whom the agent impersonated. An admitted request gets a `started`
 * entry at once and a `completed` one when it ends, sharing a request id; a refusal gets one `completed` entry. Never
 * a body: Secrets may pass through the proxy, their values are never recorded.
 */
import { performance } from 'node:perf_hooks';
import type { AuditEntry, AuditStage } from '../audit/audit-entry.js';
import type { Admitted } from './kube-admission.js';
import type { ExchangeOutcome } from './kube-exchange.js';
import { kubeRequestInfo } from './kube-request-info.js';

/** Which entry of a request, and the id its entries share. */
export interface KubeAuditStage {
  stage: AuditStage;
  requestId: string;
}

/** When a request started: its `performance.now()` reading, and the wall-clock time every entry of it records. */
export interface KubeRequestStart {
  monotonic: number;
  at: Date;
}

/** The start of a request whose `performance.now()` reading is `monotonic` (now, by default). */
export function requestStart(monotonic = performance.now()): KubeRequestStart {
  return { monotonic, at: new Date(Date.now() - (performance.now() - monotonic)) };
}

/**
 * The entry of a request admitted as `a` and started at `started`: at `stage`, with the outcome so far (nothing yet
 * for `started`). Every entry of a request carries the same start time, so its entries sort by insertion.
 */
export function kubeAuditEntry(
  a: Pick<Admitted, 'account' | 'path' | 'caller'>,
  method: string,
  started: KubeRequestStart,
  outcome: ExchangeOutcome,
  gatewayId: string,
  at: KubeAuditStage,
): AuditEntry {
  const info = kubeRequestInfo(method, a.path);
  const elapsed = performance.now() - started.monotonic;
  return {
    kind: 'kube',
    stage: at.stage,
    requestId: at.requestId,
    operationId: '',
    principal: a.caller.principal,
    groups: a.caller.principalGroups,
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
    startedAt: started.at,
  };
}
