/**
 * The internal routes replicas call on each other (role `replica`: a replica token, or any caller in insecure dev
 * mode); the result relay on the reference's path, forwarding on a path of its own (the reference's POST shares its
 * path with the GET of the operation history):
 * - `POST /armory/agent/forwardedoperations` `{operation, origin}`: run an operation on a stream of this replica. `operation`
 *   is the protobuf JSON of `outpost.agent.v1.Operation` (an object or its serialized text); `origin` the replica id
 *   its result goes back to. It must be an open operation `origin` stored, as stored (404 `not_found` for an unknown
 *   id, 403 `permission_denied` when it differs, 409 `failed_precondition` once it ended). 200
 *   `{agentId, sessionId, gatewayId}` once a local stream took it; 409 `no_stream` when none serves the account here
 *   (the caller tries elsewhere). Never forwarded again. With `answer: "row"` the 200 is `application/x-ndjson` in two
 *   lines on the same call (one hop): that object at once, then `{id, row}` — what the operation's terminal update
 *   changed, sent once committed here — unless the operation does not end within its time (the line is left out and
 *   the result goes back by the relay).
 * - `POST /armory/agent/operations`: the same route on its earlier path (beside the GET of the operation history),
 *   still served for replicas of earlier versions during a rolling upgrade; to be removed later (docs/replicas.md).
 * - `POST /armory/agent/operationresults` `{result, sessionId, sessionToken}`: the result of an operation this replica
 *   received, relayed by the replica holding the agent's stream; recorded once. 401 for a wrong session token.
 * Bodies are JSON of at most 4 MiB; anything malformed is a 400 and changes nothing.
 */
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import type { Context, Hono } from 'hono';
import { OperationResultSchema, OperationSchema, type Operation, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';
import { ANSWER_WITH_ROW, FORWARD_PATH, LEGACY_FORWARD_PATH } from '../replicas/dispatch.js';
import { answerPart } from '../operations/forwarded-intake.js';
import type { OperationManager } from '../operations/operation-manager.js';
import { durationToMs } from '../../shared/durations.js';
import { readJsonBody } from '../http/json-body.js';
import { nestingProblem } from '../../shared/nesting-depth.js';

/** Largest body of an internal route (an operation carries at most a 1 MiB manifest by default). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_ID_CHARS = 253;

/** Adds the internal routes to `app`. */
export function addReplicaRoutes(
  app: Hono<RestEnv>,
  operations: Pick<OperationManager, 'acceptForwarded' | 'relayedResult'>,
  selfId: string,
): void {
  const forwarded = async (c: Context<RestEnv>) => {
    const body = objectBody(await readJsonBody(c, MAX_BODY_BYTES));
    const origin = idField(body, 'origin');
    const operation = message(body.operation, 'operation', (json) => fromJson(OperationSchema, json)) as Operation;
    if (!operation.id) throw new HttpError(400, 'bad_request', 'operation.id is required');
    if (!operation.account) throw new HttpError(400, 'bad_request', 'operation.account is required');
    if (operation.spec.case === undefined) throw new HttpError(400, 'bad_request', 'operation names no kind of operation (spec is empty)');
    if (!operation.timeout || !(durationToMs(operation.timeout) > 0)) {
      throw new HttpError(400, 'bad_request', 'operation.timeout must be greater than 0 (the time the origin has left)');
    }
    const target = await operations.acceptForwarded(origin, operation, body.answer === ANSWER_WITH_ROW);
    if (!target) {
      throw new HttpError(409, 'no_stream', `no agent stream serves account ${JSON.stringify(operation.account)} on replica ${selfId}`);
    }
    const head = { agentId: target.agentId, sessionId: target.sessionId, gatewayId: selfId };
    const outcome = target.outcome;
    if (!outcome) return c.json(head);
    const encoder = new TextEncoder();
    const line = (value: unknown) => encoder.encode(`${JSON.stringify(value)}\n`);
    const answer = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(line(head));
      },
      async pull(controller) {
        const row = await outcome.row;
        if (row) controller.enqueue(line(answerPart(row)));
        controller.close();
      },
      // The caller went away: a result arriving later goes back by the relay.
      cancel() {
        outcome.cancel();
      },
    });
    return c.body(answer, 200, { 'content-type': 'application/x-ndjson' });
  };
  app.post(FORWARD_PATH, forwarded);
  app.post(LEGACY_FORWARD_PATH, forwarded);

  app.post('/armory/agent/operationresults', async (c: Context<RestEnv>) => {
    const body = objectBody(await readJsonBody(c, MAX_BODY_BYTES));
    const sessionId = idField(body, 'sessionId');
    const sessionToken = idField(body, 'sessionToken');
    const result = message(body.result, 'result', (json) => fromJson(OperationResultSchema, json)) as OperationResult;
    if (!result.id) throw new HttpError(400, 'bad_request', 'result.id is required');
    await operations.relayedResult(result, sessionId, sessionToken);
    return c.json({ recorded: true });
  });
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'bad_request', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function idField(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string' || value === '' || value.length > MAX_ID_CHARS) {
    throw new HttpError(400, 'bad_request', `${key} must be a non-empty string of at most ${MAX_ID_CHARS} characters`);
  }
  return value;
}

/** Decodes a protobuf JSON field given as an object or as its serialized text (the reference sends text). */
function message(value: unknown, key: string, decode: (json: JsonValue) => unknown): unknown {
  let json: unknown = value;
  if (typeof value === 'string') {
    try {
      json = JSON.parse(value);
    } catch {
      throw new HttpError(400, 'bad_request', `${key} is not valid JSON`);
    }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new HttpError(400, 'bad_request', `${key} must be a JSON object`);
  const tooDeep = nestingProblem(json, key);
  if (tooDeep) throw new HttpError(400, 'bad_request', tooDeep);
  try {
    return decode(json as JsonValue);
  } catch (err) {
    throw new HttpError(
      400,
      'bad_request',
      `${key} is not a valid ${key === 'result' ? 'OperationResult' : 'Operation'}: ${(err as Error).message}`,
    );
  }
}
