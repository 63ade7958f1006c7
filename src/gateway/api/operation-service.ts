/**
 * `outpost.api.v1.OperationService` over Connect (JSON, HTTP/1.1 or 2) and gRPC: a thin adapter over the operation
 * manager. WaitOperation is a server stream, which Connect serves over HTTP/1.1 too (browsers, fetch).
 */
import type { ServiceImpl } from '@connectrpc/connect';
import { OperationService } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { toConnectError } from '../errors.js';
import type { Logger } from '../../shared/logger.js';
import type { OperationManager } from '../operations/operation-manager.js';
import { toOperationRecord } from '../operations/operation-record.js';
import { checkOperationId } from '../operations/operation-validation.js';

/** Creates the service implementation; streams map their own errors (the interceptor covers unary calls). */
export function createOperationService(manager: OperationManager, logger: Logger): ServiceImpl<typeof OperationService> {
  return {
    async submitOperation(req, ctx) {
      const row = await manager.submit(req, ctx.signal);
      return { operation: toOperationRecord(row) };
    },

    async getOperation(req) {
      checkOperationId(req.id);
      return { operation: toOperationRecord(await manager.get(req.id)) };
    },

    async *waitOperation(req, ctx) {
      try {
        checkOperationId(req.id);
        for await (const row of manager.watch(req.id, ctx.signal)) yield { operation: toOperationRecord(row) };
      } catch (err) {
        throw toConnectError(err, logger, 'WaitOperation');
      }
    },

    async listOperations(req) {
      const { rows, nextPageToken } = await manager.list(req);
      return { operations: rows.map(toOperationRecord), nextPageToken };
    },
  };
}
