import { Code, ConnectError } from '@connectrpc/connect';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import type { Api } from './api.js';
import { isTerminal } from './format.js';

const RETRYABLE = new Set([Code.Unavailable, Code.Unknown, Code.Internal, Code.DeadlineExceeded, Code.Aborted]);
const MAX_RETRIES = 6;

/**
 * Follows an operation with OperationService.WaitOperation until it is terminal, calling `onUpdate` with every
 * state the server sends. A dropped stream (gateway restart, network) is reopened with backoff, up to 6 times in a
 * row; a stream that ends early is checked with GetOperation. Resolves when terminal or when `signal` aborts;
 * rejects with the ConnectError when it gives up or the error cannot be retried (NotFound, PermissionDenied…).
 */
export async function followOperation(
  api: Api,
  id: string,
  onUpdate: (record: OperationRecord) => void,
  signal: AbortSignal,
): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    try {
      for await (const response of api.operations.waitOperation({ id }, { signal })) {
        if (!response.operation) continue;
        failures = 0;
        onUpdate(response.operation);
        if (isTerminal(response.operation.state)) return;
      }
      const { operation } = await api.operations.getOperation({ id }, { signal });
      if (operation) {
        onUpdate(operation);
        if (isTerminal(operation.state)) return;
      }
    } catch (e) {
      if (signal.aborted) return;
      const error = ConnectError.from(e);
      if (!RETRYABLE.has(error.code) || ++failures > MAX_RETRIES) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** failures, 8000)));
  }
}
