/**
 * The one seam through which features send an operation to an agent serving an account, wherever its stream is:
 * this replica's caching session (while its lease is known valid), else a STANDBY session here, else another replica
 * that holds a serving stream — the lease holder first — reached with `POST /armory/agent/forwardedoperations`.
 * Callers never know which replica took it. A forward is answered in two parts on the same call (one hop): at once
 * which stream took it, then — when the agent answered within the operation's time — what the holding replica
 * committed as its outcome ({@link DispatchTarget.answer}). Otherwise (an earlier version, a broken call) the result
 * comes back through the operations feature (relayed by the replica that holds the stream). An operation forwarded to
 * this replica is dispatched here only ({@link dispatchLocal}), never forwarded again, so forwards cannot loop.
 */
import { performance } from 'node:perf_hooks';
import { toJson } from '@bufbuild/protobuf';
import { OperationSchema, type Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { LiveSession, SessionRegistry } from '../agents/session-registry.js';
import { readyOwners, type OwnerLookup } from './owner-lookup.js';
import { durationToMs } from '../../shared/durations.js';
import type { PeerClient, PeerResponse } from './peer-client.js';
import type { ReplicaDirectory } from './replica-directory.js';

/** Where an operation went. */
export interface DispatchTarget {
  agentId: string;
  sessionId: string;
  /** The replica holding the stream (this one unless forwarded). */
  gatewayId?: string;
  /**
   * Forwarded only: the second part of the forward's answer — `{id, row}`, what the operation's terminal update changed
   * as the holding replica committed it (JSON, dates as ISO text; forwarded-intake.ts reads it) — or undefined when
   * none came (the result then arrives by the relay, or the row is read again). Never rejects.
   */
  answer?: Promise<unknown>;
}

/** Asks a replica of this version to answer a forward with the operation's terminal row too, on the same call. */
export const ANSWER_WITH_ROW = 'row';
/** The extra time a forward's second part may take past the operation's own timeout. */
const ANSWER_GRACE_MS = 5000;

/**
 * Sends `operation` (whose `timeout` the caller already set to the time remaining) to a stream serving the account.
 * Resolves undefined when none could take it — the caller keeps the operation pending and retries when a session
 * starts. Delivery is at least once: the agent de-duplicates on the operation id.
 */
export type Dispatch = (account: string, operation: Operation) => Promise<DispatchTarget | undefined>;

/** Path of the internal forwarding route. */
export const FORWARD_PATH = '/armory/agent/forwardedoperations';
/**
 * Where replicas of earlier versions forward (a POST beside the GET of the operation history) and still may during a
 * rolling upgrade: served as an alias of {@link FORWARD_PATH}, and used when a peer does not know FORWARD_PATH yet. To
 * be removed in a later release (docs/replicas.md).
 */
export const LEGACY_FORWARD_PATH = '/armory/agent/operations';
/**
 * What a replica of an earlier version answers a POST to {@link FORWARD_PATH}: 403 (the path requires the admin role
 * there) or 404 (no such route, in insecure mode). Nothing was sent to an agent on such an answer, so sending the
 * operation again on {@link LEGACY_FORWARD_PATH} cannot run it twice; a current replica that refused it (403, 404)
 * refuses it there again, with the same checks.
 */
const UNKNOWN_PATH_STATUSES = new Set([403, 404]);

/**
 * Sends to this replica's streams only: the caching session if its lease is valid, else a STANDBY session. Returns
 * undefined when no local stream could take it.
 */
export function dispatchLocal(registry: SessionRegistry, account: string, operation: Operation): DispatchTarget | undefined {
  const session = sendLocal(registry, account, operation);
  return session ? { agentId: session.agentId, sessionId: session.id } : undefined;
}

/** As {@link dispatchLocal}, returning the session that took the operation (a read waits on its end). */
export function sendLocal(registry: SessionRegistry, account: string, operation: Operation): LiveSession | undefined {
  const lease = registry.leaseOf(account);
  const candidates: LiveSession[] = [];
  // A lease not known valid (not yet granted, or a renewal overdue) must not be used: another replica may own it now.
  if (lease && lease.validUntil > performance.now()) candidates.push(lease.session);
  for (const s of registry.all()) if (s !== lease?.session && s.serves(account)) candidates.push(s);
  return candidates.find((session) => session.sendOperation(operation));
}

/** True for errors raised before a request could reach the peer (nothing was sent, so another replica may be tried). */
function neverReached(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EAI_AGAIN';
}

/** What {@link createDispatch} needs for forwarding; without it only local streams are used. */
export interface ForwardingDeps {
  selfId: string;
  owners: OwnerLookup;
  replicas: Pick<ReplicaDirectory, 'get'>;
  peers: PeerClient;
  logger: Logger;
  /** Counts forwards by outcome; none when absent. */
  metrics?: { forwarded(taken: boolean): void };
}

/** Creates the dispatcher over this replica's live sessions, forwarding to other replicas when `forwarding` is given. */
export function createDispatch(registry: SessionRegistry, forwarding?: ForwardingDeps): Dispatch {
  return async (account, operation) => {
    const local = dispatchLocal(registry, account, operation);
    if (local || !forwarding) return local;
    const { owners, replicas, peers, logger, selfId } = forwarding;
    const body = { operation: toJson(OperationSchema, operation), origin: selfId, answer: ANSWER_WITH_ROW };
    const answerWithinMs = (operation.timeout ? durationToMs(operation.timeout) : 0) + ANSWER_GRACE_MS;
    for await (const replica of readyOwners(owners, replicas, account)) {
      const { id } = replica;
      try {
        let res: PeerResponse & { rest?: Promise<unknown> } = await peers.postAnswered(replica.baseUrl, FORWARD_PATH, body, answerWithinMs);
        if (UNKNOWN_PATH_STATUSES.has(res.status)) res = await peers.post(replica.baseUrl, LEGACY_FORWARD_PATH, body);
        const target = res.body as Partial<DispatchTarget> | undefined;
        forwarding.metrics?.forwarded(res.status === 200);
        if (res.status === 200 && target?.agentId && target.sessionId) {
          return { agentId: target.agentId, sessionId: target.sessionId, gatewayId: id, ...(res.rest ? { answer: res.rest } : {}) };
        }
        logger.warn(
          { operationId: operation.id, account, replica: id, status: res.status, answer: res.body },
          'replica did not take the forwarded operation',
        );
      } catch (err) {
        forwarding.metrics?.forwarded(false);
        if (!neverReached(err)) {
          // The request may have reached the replica, which may have sent it to its agent before the answer was lost:
          // sending it anywhere else could apply it twice. It counts as sent; its result (relayed, or delivered by the
          // agent on its next stream) or its deadline ends it.
          logger.warn({ err, operationId: operation.id, account, replica: id }, 'forwarded operation unanswered: not sending it elsewhere');
          owners.forget(account);
          return { agentId: `(unknown: forwarded to ${id}, no answer)`, sessionId: '', gatewayId: id };
        }
        logger.warn({ err, operationId: operation.id, account, replica: id }, 'could not forward the operation');
      }
      owners.forget(account);
    }
    return undefined;
  };
}
