/**
 * Audit entries of submitted operations (`kind: 'operation'`): one per OperationService.SubmitOperation call and per
 * description of a Clouddriver ops submission, accepted (status 200) or refused (the HTTP status of the refusal).
 * Only what names the target is taken from a request — never a manifest or a patch body.
 */
import { ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus } from '@connectrpc/connect/protocol-connect';
import type { SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { HttpError } from '../http/errors.js';
import type { AuditEntry } from './audit-entry.js';
import type { AuditLog } from './audit-log.js';

/** Who submitted, when, and how it ended. */
export interface SubmissionOutcome {
  principal: string;
  /** The caller's groups (Principal.groups). */
  groups?: readonly string[];
  startedAt: Date;
  /** The operation (or task) id: the stored one when accepted, the client's when refused ('' when it chose none). */
  operationId: string;
  /** Undefined when accepted. */
  error?: unknown;
}

/** The HTTP-like status of a submission: 200 when accepted, else the status the refusal maps to (500 when unknown). */
function submissionStatus(error: unknown): number {
  if (error === undefined) return 200;
  if (error instanceof HttpError) return error.status;
  if (error instanceof ConnectError) return codeToHttpStatus(error.code);
  return 500;
}

/** The message recorded for a refusal: a ConnectError's or HttpError's own message; 'internal error' otherwise. */
function submissionError(error: unknown): string {
  if (error === undefined) return '';
  if (error instanceof ConnectError) return error.rawMessage;
  if (error instanceof HttpError) return error.message;
  return 'internal error';
}

/** A `kind: 'operation'` entry with the target fields empty; callers fill in what they know. */
export function operationEntry(outcome: SubmissionOutcome, target: Pick<AuditEntry, 'account' | 'verb'> & Partial<AuditEntry>): AuditEntry {
  return {
    kind: 'operation',
    principal: outcome.principal,
    groups: outcome.groups ?? [],
    apiGroup: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
    path: '',
    status: submissionStatus(outcome.error),
    bytesIn: 0,
    bytesOut: 0,
    durationMs: Date.now() - outcome.startedAt.getTime(),
    impersonatedUser: '',
    impersonatedGroups: [],
    gatewayId: '',
    operationId: outcome.operationId,
    error: submissionError(outcome.error),
    startedAt: outcome.startedAt,
    ...target,
  };
}

/** Records the entry of one SubmitOperation call (verb: the spec's case, `apply`, `delete`, `scale`, …). */
export function recordSubmission(audit: Pick<AuditLog, 'record'>, req: SubmitOperationRequest, outcome: SubmissionOutcome): void {
  audit.record(operationEntry(outcome, { account: req.account, verb: req.spec.case ?? '', ...targetOf(req) }));
}

/** The object an operation names (kind as the resource), from the spec's naming fields only. */
function targetOf(req: SubmitOperationRequest): Partial<AuditEntry> {
  const spec = req.spec;
  switch (spec.case) {
    case 'logs':
      return { resource: 'pods', subresource: 'log', namespace: spec.value.namespace, name: spec.value.pod };
    case 'delete':
    case 'scale':
    case 'patch':
    case 'rollout':
    case 'get':
    case 'history':
      return {
        apiGroup: groupOf(spec.value.apiVersion),
        resource: spec.value.kind,
        namespace: spec.value.namespace,
        name: spec.value.name,
      };
    case 'list':
      return { apiGroup: groupOf(spec.value.apiVersion), resource: spec.value.kind, namespace: spec.value.namespace };
    default:
      // apply: the objects are in the manifests text, which is never read for the audit log.
      return {};
  }
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
