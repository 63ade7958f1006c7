/**
 * Results of operations this replica dispatched for another one (forwarded to it, or stored by another replica and
 * delivered here when an agent connected) go back to the replica that received the operation — its submitter waits
 * there — with `POST <origin>/armory/agent/operationresults`, carrying the session id and token of the stream the
 * result came on (a session id alone proves nothing). When the origin cannot be reached, the caller records the result
 * itself: the row is shared, the origin's waiters see it on their next read, and the conditional update records it once.
 * An operation whose forward still waits for its answer ({@link ResultRelay.answerInForward}) is not relayed: this
 * replica records the result and the forward's answer carries the committed row back (one hop, docs/replicas.md).
 */
import { toJson } from '@bufbuild/protobuf';
import { OperationResultSchema, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { PeerClient } from '../replicas/peer-client.js';
import type { ReplicaDirectory } from '../replicas/replica-directory.js';
import type { OperationRow } from './operation-store.js';

/** Path of the internal result route. */
const RESULT_PATH = '/armory/agent/operationresults';

/** The JSON body of `POST /armory/agent/operationresults`. */
interface RelayedResultBody {
  /** Protobuf JSON of `outpost.agent.v1.OperationResult` (an object, or its serialized text). */
  result: unknown;
  /** The agent stream the result arrived on, and that stream's session token. */
  sessionId: string;
  sessionToken: string;
}

/** Where results of operations dispatched for other replicas go. */
export interface ResultRelay {
  /**
   * Remembers that operation `id` came from replica `origin` and was sent here on stream session `sessionId`, until
   * `untilMs` (epoch ms); `row`, its stored row as just read, spares the result's intake reading it again.
   */
  remember(id: string, origin: string, untilMs: number, sessionId: string, row?: OperationRow): void;
  /** The stored row given to {@link remember}, while its origin is remembered. */
  rowOf(id: string): OperationRow | undefined;
  /** The remembered origin (another replica), if any. */
  originOf(id: string): string | undefined;
  /**
   * The session this replica sent operation `id` on, while its origin is remembered: when the origin cannot be reached
   * and this replica records the result itself, it vouches for that session (the origin's SENT mark may be unwritten).
   */
  sentOn(id: string): string | undefined;
  /**
   * The forward of operation `id` waits for its answer: until the returned function is called, {@link send} declines
   * its result (false), so the caller records it here and the forward's answer carries it. Call the function when the
   * forward's answer ends (sent, or the call broke): a result arriving later is relayed again.
   */
  answerInForward(id: string): () => void;
  /**
   * Sends the result to its origin; true once the origin answered 200 (it recorded it, or already had it). False when
   * it could not, or when the operation's forward carries its answer ({@link answerInForward}).
   */
  send(origin: string, result: OperationResult, session: LiveSession): Promise<boolean>;
}

/** Options of {@link createResultRelay}. */
export interface ResultRelayOptions {
  selfId: string;
  replicas: Pick<ReplicaDirectory, 'get'>;
  peers: PeerClient;
  logger: Logger;
}

/** Creates the relay. Entries are dropped once relayed or past their time. */
export function createResultRelay(options: ResultRelayOptions): ResultRelay {
  const origins = new Map<string, { origin: string; until: number; sessionId: string; row?: OperationRow }>();
  /** Operations whose forward answers with their row, by id: how many such forwards wait (a retried forward may overlap). */
  const answering = new Map<string, number>();
  const prune = () => {
    const now = Date.now();
    for (const [id, entry] of origins) if (entry.until < now) origins.delete(id);
  };
  const live = (id: string) => {
    const entry = origins.get(id);
    if (entry && entry.until < Date.now()) {
      origins.delete(id);
      return undefined;
    }
    return entry;
  };
  return {
    remember(id, origin, untilMs, sessionId, row) {
      if (origin === options.selfId) return;
      if (origins.size >= 10_000) prune();
      origins.set(id, { origin, until: untilMs, sessionId, ...(row ? { row } : {}) });
    },
    rowOf: (id) => live(id)?.row,
    originOf: (id) => live(id)?.origin,
    sentOn: (id) => live(id)?.sessionId,
    answerInForward(id) {
      answering.set(id, (answering.get(id) ?? 0) + 1);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const n = (answering.get(id) ?? 1) - 1;
        if (n > 0) answering.set(id, n);
        else answering.delete(id);
      };
    },
    async send(origin, result, session) {
      if (answering.has(result.id)) return false;
      const replica = options.replicas.get(origin);
      if (!replica) return false;
      const body: RelayedResultBody = {
        result: toJson(OperationResultSchema, result),
        sessionId: session.id,
        sessionToken: session.sessionToken,
      };
      try {
        const res = await options.peers.post(replica.baseUrl, RESULT_PATH, body);
        if (res.status === 200) {
          origins.delete(result.id);
          return true;
        }
        options.logger.warn(
          { operationId: result.id, origin, status: res.status, answer: res.body },
          'origin replica refused the relayed result',
        );
      } catch (err) {
        options.logger.warn({ err, operationId: result.id, origin }, 'could not relay the result to its origin replica');
      }
      return false;
    },
  };
}
