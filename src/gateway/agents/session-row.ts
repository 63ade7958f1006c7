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
  return new StreamSessionRow(owner, store);
}

/** A class rather than closures: one lives per agent stream, and a gateway holds thousands of them. */
class StreamSessionRow implements SessionRow {
  written = false;
  private lastTouch = 0;

  constructor(
    private readonly owner: SessionRowOwner,
    private readonly store: AgentSessionStore,
  ) {}

  async start(row: NewAgentSession, tokenHash: string): Promise<void> {
    await this.store.start(row, tokenHash);
    this.written = true;
    this.lastTouch = Date.now();
  }

  touch(): void {
    if (!this.written || this.owner.stopped || Date.now() - this.lastTouch < SESSION_TOUCH_INTERVAL_MS) return;
    this.lastTouch = Date.now();
    this.owner.runInBackground(this.store.touch(this.owner.id), 'could not record that the agent was seen');
  }

  updateVerdicts(verdicts: ReadonlyMap<string, Verdict>): Promise<void> {
    return this.store.updateVerdicts(this.owner.id, toVerdictLists(verdicts));
  }

  async end(): Promise<void> {
    if (!this.written) return;
    try {
      await this.store.end(this.owner.id);
    } catch (err) {
      this.owner.log.error({ err }, 'could not mark the agent session ended');
    }
  }
}
