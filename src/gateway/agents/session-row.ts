/**
 * The `agent_sessions` row of one stream: written when the stream is welcomed, touched (throttled) while the agent's
 * messages arrive, its verdict lists replaced after an AccountsChanged, and ended when the stream ends. Nothing is
 * touched or ended for a stream that was never welcomed.
 */
import type { Verdict } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Logger } from '../../shared/logger.js';
import { SESSION_TOUCH_INTERVAL_MS, toVerdictLists, type AgentSessionStore, type NewAgentSession } from './agent-session-store.js';

/** The row of one stream. */
export interface SessionRow {
  /** True once {@link start} wrote the row. */
  readonly written: boolean;
  /** Inserts the row (only the token's hash is stored). */
  start(row: NewAgentSession, tokenHash: string): Promise<void>;
  /**
   * Records that the agent was seen, at most once per {@link SESSION_TOUCH_INTERVAL_MS}, without waiting for the
   * write (it runs as the stream's background work). A no-op before {@link start} or once the stream stopped.
   */
  touch(): void;
  /** Replaces the row's verdict lists with the stream's current verdicts. */
  updateVerdicts(verdicts: ReadonlyMap<string, Verdict>): Promise<void>;
  /** Marks the row ended if it was written; a failure is logged, never thrown. */
  end(): Promise<void>;
}

/** What the row needs from its stream. */
export interface SessionRowOwner {
  readonly id: string;
  readonly stopped: boolean;
  readonly log: Logger;
  runInBackground(work: Promise<void>, failure: string): void;
}

/** Creates the (not yet written) row of a stream. */
export function createSessionRow(owner: SessionRowOwner, store: AgentSessionStore): SessionRow {
  let written = false;
  let lastTouch = 0;
  return {
    get written() {
      return written;
    },
    async start(row, tokenHash) {
      await store.start(row, tokenHash);
      written = true;
      lastTouch = Date.now();
    },
    touch() {
      if (!written || owner.stopped || Date.now() - lastTouch < SESSION_TOUCH_INTERVAL_MS) return;
      lastTouch = Date.now();
      owner.runInBackground(store.touch(owner.id), 'could not record that the agent was seen');
    },
    updateVerdicts: (verdicts) => store.updateVerdicts(owner.id, toVerdictLists(verdicts)),
    async end() {
      if (!written) return;
      try {
        await store.end(owner.id);
      } catch (err) {
        owner.log.error({ err }, 'could not mark the agent session ended');
      }
    },
  };
}
