/**
 * `outpost.api.v1.OperationService` over Connect (JSON, HTTP/1.1 or 2) and gRPC: a thin adapter over the operation
 * manager. WaitOperation is a server stream, which Connect serves over HTTP/1.1 too (browsers, fetch).
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { identityOf, mayReach, principalKey, type Principal } from '../auth/principal.js';
import type { OperationService, SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { type ReadRunner, isReadType } from '../operations/read-runner.js';
import { toConnectError } from '../http/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { OperationManager } from '../operations/operation-manager.js';
import { toOperationRecord } from '../operations/operation-record.js';
import { checkOperationId, validateSubmission, type ValidationLimits } from '../operations/operation-validation.js';
import type { AuditLog } from '../audit/audit-log.js';
import { recordSubmission } from '../audit/operation-audit.js';

/** How SubmitOperation runs reads (get, list, logs, history): never stored (read-runner.ts). */
export interface ServiceReads {
  cluster: Pick<ReadRunner, 'run'>;
  /** Validation limits, as the manager's (the default timeout). */
  limits: ValidationLimits;
  /** `audit.reads`: record accepted reads in the audit log too (refused ones always are). */
  audit: boolean;
}

/**
 * Creates the service implementation; streams map their own errors (the interceptor covers unary calls). With `audit`,
 * every SubmitOperation call — accepted or refused — is recorded in the audit log, but an accepted read only with
 * `reads.audit`. With `reads`, a read is run without being stored and answered once it ended, whatever `wait` says.
 */
export function createOperationService(
  manager: OperationManager,
  logger: Logger,
  audit?: Pick<AuditLog, 'record'>,
  reads?: ServiceReads,
): ServiceImpl<typeof OperationService> {
  /** Runs a read: validated as any submission, run in memory, its terminal record returned. */
  const read = async (req: SubmitOperationRequest, principal: Principal, identity: string) => {
    const v = validateSubmission(req, reads!.limits);
    const row = await reads!.cluster.run(
      { account: req.account, spec: v.operation.spec, timeoutMs: v.timeoutMs, id: req.id, requestedBy: identity },
      { principal, role: 'write' },
    );
    return toOperationRecord(row);
  };
  return {
    async submitOperation(req, ctx) {
      const principal = ctx.values.get(principalKey);
      const identity = principal ? identityOf(principal) : '';
      const startedAt = new Date();
      try {
        // The write role reaches only the accounts its rules list (docs/security.md, "Authorization"): checked before
        // anything is validated or stored, and recorded in the audit log like every refusal.
        if (!mayReach(principal, 'write', req.account)) {
          throw new ConnectError(
            `${principal?.subject ?? 'the caller'} may not submit operations to account ${JSON.stringify(req.account.slice(0, 253))} ` +
              '(authorization.rules: the write role and its accounts)',
            Code.PermissionDenied,
          );
        }
        if (reads && principal && isReadType(req.spec.case)) {
          const operation = await read(req, principal, identity);
          if (audit && reads.audit)
            recordSubmission(audit, req, { principal: identity, groups: principal.groups, startedAt, operationId: operation.id });
          return { operation };
        }
        const row = await manager.submit(req, ctx.signal, identity);
        if (audit) recordSubmission(audit, req, { principal: identity, groups: principal?.groups, startedAt, operationId: row.id });
        return { operation: toOperationRecord(row) };
      } catch (err) {
        if (audit)
          recordSubmission(audit, req, { principal: identity, groups: principal?.groups, startedAt, operationId: req.id, error: err });
        throw err;
      }
    },

    async getOperation(req) {
      checkOperationId(req.id);
      return { operation: toOperationRecord(await manager.get(req.id)) };
    },

    async *waitOperation(req, ctx) {
      // A credential revoked while the stream is open (a token file deleted or changed) ends it UNAUTHENTICATED.
      const revoked = new AbortController();
      let reason = '';
      const unsubscribe = ctx.values?.get(principalKey)?.revocation?.subscribe((message) => {
        reason = message;
        revoked.abort();
      });
      try {
        checkOperationId(req.id);
        for await (const row of manager.watch(req.id, AbortSignal.any([ctx.signal, revoked.signal])))
          yield { operation: toOperationRecord(row) };
        if (revoked.signal.aborted) throw new ConnectError(reason, Code.Unauthenticated);
      } catch (err) {
        throw toConnectError(err, logger, 'WaitOperation');
      } finally {
        unsubscribe?.();
      }
    },

    async listOperations(req) {
      const { rows, nextPageToken } = await manager.list(req);
      return { operations: rows.map(toOperationRecord), nextPageToken };
    },
  };
}
