/**
 * `outpost.api.v1.AuditService` over Connect and gRPC: a thin adapter over the audit log's reads (admin only: the
 * authorization table in auth/authorization.ts). Bad filters are INVALID_ARGUMENT (audit/audit-list.ts).
 */
import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { type AuditEvent, AuditEventSchema, type AuditService } from '../../gen/outpost/api/v1/audit_service_pb.js';
import type { AuditLog, StoredAuditEntry } from '../audit/audit-log.js';

/** Creates the service implementation over the audit log. */
export function createAuditService(audit: Pick<AuditLog, 'list'>): ServiceImpl<typeof AuditService> {
  return {
    async listAuditEvents(req) {
      const { entries, nextPageToken } = await audit.list({
        account: req.account,
        principal: req.principal,
        kind: req.kind,
        since: req.since ? timestampDate(req.since) : undefined,
        until: req.until ? timestampDate(req.until) : undefined,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      return { events: entries.map(toAuditEvent), nextPageToken };
    },
  };
}

/** The wire form of a stored entry. */
function toAuditEvent(e: StoredAuditEntry): AuditEvent {
  return create(AuditEventSchema, {
    id: e.id,
    kind: e.kind,
    principal: e.principal,
    groups: [...(e.groups ?? [])],
    account: e.account,
    verb: e.verb,
    apiGroup: e.apiGroup,
    resource: e.resource,
    subresource: e.subresource,
    namespace: e.namespace,
    name: e.name,
    path: e.path,
    status: e.status,
    bytesIn: BigInt(e.bytesIn),
    bytesOut: BigInt(e.bytesOut),
    durationMs: BigInt(e.durationMs),
    impersonatedUser: e.impersonatedUser,
    impersonatedGroups: e.impersonatedGroups,
    gatewayId: e.gatewayId,
    operationId: e.operationId,
    error: e.error,
    startedAt: timestampFromDate(e.startedAt),
    stage: e.stage,
    requestId: e.requestId,
  });
}
