/**
 * `POST /armory/agent/forwardedreads` (role `replica`): a read of a cluster another replica passes to this one because
 * a stream here serves the account (src/gateway/operations/read-forward.ts). Body `{operation, caller, role,
 * requestedBy}`: `operation` the protobuf JSON of an `outpost.agent.v1.Operation` whose spec is a read (get, list,
 * logs, history) with the time left; `caller` the forwarding replica's description of its caller (base64url JSON,
 * vouched-principal.ts); `role` the role whose rules allowed it there (`write` or `spinnaker`).
 *
 * The caller is admitted again here as if it had come here itself — roles and accounts from THIS replica's rules
 * (403 `permission_denied` when they do not reach the account) — and the read runs on a local stream only, never
 * forwarded again: 409 `no_stream` when none serves the account here. A taken read is answered 200
 * `application/x-ndjson` in two lines on the same call: `{agentId, sessionId, gatewayId}` at once, then `{row}`, the
 * read's terminal row. Nothing is stored. Anything malformed is a 400 and runs nothing.
 */
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { ConnectError } from '@connectrpc/connect';
import type { Context, Hono } from 'hono';
import { OperationSchema, type Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import { isValidAccountName } from '../../shared/account-name.js';
import type { Authenticator } from '../auth/authenticator.js';
import { mayReach } from '../auth/principal.js';
import type { RestEnv } from '../auth/rest-auth.js';
import { decodeDescription } from '../auth/vouched-principal.js';
import { HttpError } from '../http/errors.js';
import { type ReadRunner, isReadType } from '../operations/read-runner.js';
import { checkOperationId, MAX_TIMEOUT_MS } from '../operations/operation-validation.js';
import { durationToMs } from '../../shared/durations.js';
import { READ_FORWARD_PATH } from '../operations/read-forward.js';
import { nestingProblem } from '../../shared/nesting-depth.js';
import { readJsonBody } from '../http/json-body.js';

/** A read's body is small: a spec with names and selectors. */
const MAX_BODY_BYTES = 64 * 1024;
const ROLES = new Set(['write', 'spinnaker']);

/** Adds the route to `app`. */
export function addReadForwardRoute(
  app: Hono<RestEnv>,
  reads: Pick<ReadRunner, 'startLocal'>,
  authenticator: Pick<Authenticator, 'vouched'>,
  selfId: string,
): void {
  app.post(READ_FORWARD_PATH, async (c: Context<RestEnv>) => {
    const body = await readJsonBody(c, MAX_BODY_BYTES);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new HttpError(400, 'bad_request', 'the body must be a JSON object');
    const { operation: json, caller, role, requestedBy } = body as Record<string, unknown>;
    const operation = readOperation(json);
    if (typeof role !== 'string' || !ROLES.has(role)) throw new HttpError(400, 'bad_request', 'role must be "write" or "spinnaker"');
    if (typeof requestedBy !== 'string' || requestedBy.length > 1024)
      throw new HttpError(400, 'bad_request', 'requestedBy must be a string of at most 1024 characters');
    const description = decodeDescription(caller as string | undefined);
    if (!description) throw new HttpError(400, 'bad_request', 'caller is not a well-formed principal description');
    const principal = authenticator.vouched(description);
    if (!mayReach(principal, role as 'write' | 'spinnaker', operation.account)) {
      throw new HttpError(
        403,
        'permission_denied',
        `${principal.subject} may not read account ${JSON.stringify(operation.account)} (authorization.rules of replica ${selfId}: the ${role} role and its accounts)`,
      );
    }
    const local = reads.startLocal({
      account: operation.account,
      spec: operation.spec,
      timeoutMs: durationToMs(operation.timeout!),
      id: operation.id,
      requestedBy,
    });
    if (!local)
      throw new HttpError(409, 'no_stream', `no agent stream serves account ${JSON.stringify(operation.account)} on replica ${selfId}`);
    const encoder = new TextEncoder();
    const line = (value: unknown) => encoder.encode(`${JSON.stringify(value)}\n`);
    const answer = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(line({ agentId: local.agentId, sessionId: local.sessionId, gatewayId: selfId }));
      },
      async pull(controller) {
        controller.enqueue(line({ row: await local.row }));
        controller.close();
      },
    });
    return c.body(answer, 200, { 'content-type': 'application/x-ndjson' });
  });
}

/** The forwarded operation, checked: a read, a valid id and account name, a time in (0, 1 h]. */
function readOperation(json: unknown): Operation {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new HttpError(400, 'bad_request', 'operation must be a JSON object');
  const tooDeep = nestingProblem(json, 'operation');
  if (tooDeep) throw new HttpError(400, 'bad_request', tooDeep);
  let operation: Operation;
  try {
    operation = fromJson(OperationSchema, json as JsonValue);
  } catch (err) {
    throw new HttpError(400, 'bad_request', `operation is not a valid Operation: ${(err as Error).message}`);
  }
  if (!isReadType(operation.spec.case)) {
    throw new HttpError(
      400,
      'bad_request',
      `only reads (get, list, logs, history) are forwarded here, not ${JSON.stringify(operation.spec.case ?? '')}`,
    );
  }
  try {
    checkOperationId(operation.id, 'operation.id');
  } catch (err) {
    throw new HttpError(400, 'bad_request', err instanceof ConnectError ? err.rawMessage : String(err));
  }
  if (!isValidAccountName(operation.account)) throw new HttpError(400, 'bad_request', 'operation.account is not an account name');
  const ms = operation.timeout ? durationToMs(operation.timeout) : 0;
  if (!(ms > 0) || ms > MAX_TIMEOUT_MS) throw new HttpError(400, 'bad_request', 'operation.timeout must be greater than 0 and at most 1h');
  return operation;
}
