/**
 * The timers of one agent stream: heartbeats to the agent (from its Welcome on); the dead-peer check that closes the
 * stream DEADLINE_EXCEEDED when the agent sent nothing for `deadAfterSeconds` while the gateway was idle (a message
 * being handled or a batch being written does not count as silence); and the credential expiry that closes it
 * UNAUTHENTICATED when the credentials it authenticated with expire (a JWT's `exp`): a stream never outlives its
 * token, and the agent reconnects with a fresh one; and the maximum age that closes it UNAVAILABLE with the
 * {@link RECONNECT_HEADER} trailer after `agents.maxStreamAgeSeconds` ±10%, so agents behind a load balancer spread
 * over the replicas again (the agent reconnects at once and resumes its session).
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { ConnectResponseSchema } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { Outbox } from './outbox.js';

/** The message of the error that ends a stream whose credentials expired; the agent reconnects with a fresh token. */
const CREDENTIALS_EXPIRED = 'credentials expired; reconnect with a fresh token';

/** Trailer (value {@link RECONNECT_NOW}) on a stream the gateway ended on purpose: the agent reconnects at once. */
export const RECONNECT_HEADER = 'x-outpost-reconnect';
/** Value of {@link RECONNECT_HEADER}. */
export const RECONNECT_NOW = 'now';
/** The message of the error that ends a stream at its maximum age. */
export const STREAM_MAX_AGE = 'stream reached its maximum age; reconnect now';

/**
 * A maximum age jittered by ±10% (uniform), in ms, so streams opened together (a fleet after a restart) do not all
 * end together. `random` is injectable for tests.
 */
export function jitteredMaxAgeMs(maxAgeSeconds: number, random: () => number = Math.random): number {
  return Math.round(maxAgeSeconds * 1000 * (0.9 + 0.2 * random()));
}

/** Longest delay `setTimeout` takes (a longer one fires at once); later expiries are re-armed in steps. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Settings and callbacks of the timers. */
export interface StreamTimerOptions {
  gatewayId: string;
  heartbeatIntervalSeconds: number;
  deadAfterSeconds: number;
  outbox: Outbox;
  /** The stream's current logger. */
  log: () => Logger;
  /** True while the stream writes (the agent may wait for acks then). */
  isWriting: () => boolean;
  /** Ends the stream with the error. */
  close: (error: ConnectError) => void;
}

/** The timers of one stream. {@link StreamTimers.stop} must run when the stream ends. */
export interface StreamTimers {
  /** Call when an agent message arrives: it counts as a sign of life, and the peer is not dead while it is handled. */
  messageStarted(): void;
  /** Call when the handling of a message ended (whether it threw or not). */
  messageDone(): void;
  /** Starts the dead-peer check; call once, when the stream starts. */
  startDeadPeerCheck(): void;
  /** Starts sending heartbeats; call once, after the Welcome was queued. */
  startHeartbeats(): void;
  /**
   * Closes the stream UNAUTHENTICATED {@link CREDENTIALS_EXPIRED} at `expiresAt` (epoch ms; at once when it is
   * already past). Call once, when the stream starts, when its principal's credentials expire.
   */
  startCredentialExpiry(expiresAt: number): void;
  /**
   * Closes the stream UNAVAILABLE {@link STREAM_MAX_AGE} with the reconnect trailer after `maxAgeSeconds` ±10%.
   * Call once, when the stream starts.
   */
  startMaxAge(maxAgeSeconds: number): void;
  /** Clears every timer (intervals and timeouts alike). */
  stop(): void;
}

/** Creates the timers (none running yet). */
export function createStreamTimers(options: StreamTimerOptions): StreamTimers {
  return new Timers(options);
}

/** A class rather than closures: one lives per agent stream, and a gateway holds thousands of them. */
class Timers implements StreamTimers {
  /** Intervals and timeouts; Node's clearInterval clears either kind. */
  private timers: NodeJS.Timeout[] = [];
  /** The dead-peer check: one timeout per stream, re-armed for when the silence would reach the limit. */
  private deadPeer: NodeJS.Timeout | undefined;
  private lastSeen = Date.now();
  private busy = false;

  constructor(private readonly options: StreamTimerOptions) {}

  messageStarted(): void {
    this.lastSeen = Date.now();
    this.busy = true;
  }

  messageDone(): void {
    this.busy = false;
    this.lastSeen = Date.now();
  }

  startDeadPeerCheck(): void {
    // Not a ticking interval: thousands of idle streams would each wake every second for nothing.
    this.armDeadPeer(this.options.deadAfterSeconds * 1000);
  }

  startHeartbeats(): void {
    const { outbox, gatewayId } = this.options;
    const timer = setInterval(() => {
      outbox.push(
        create(ConnectResponseSchema, { message: { case: 'heartbeat', value: { agentId: gatewayId, sentAtUnixMs: BigInt(Date.now()) } } }),
      );
    }, this.options.heartbeatIntervalSeconds * 1000);
    timer.unref();
    this.timers.push(timer);
  }

  startCredentialExpiry(expiresAt: number): void {
    const arm = () => {
      const left = expiresAt - Date.now();
      const timer =
        left > MAX_TIMER_DELAY_MS
          ? setTimeout(arm, MAX_TIMER_DELAY_MS)
          : setTimeout(
              () => {
                this.options.log().info({ expiredAt: new Date(expiresAt).toISOString() }, 'agent credentials expired; closing its stream');
                this.options.close(new ConnectError(CREDENTIALS_EXPIRED, Code.Unauthenticated));
              },
              Math.max(0, left),
            );
      timer.unref();
      this.timers.push(timer);
    };
    arm();
  }

  startMaxAge(maxAgeSeconds: number): void {
    const ageMs = jitteredMaxAgeMs(maxAgeSeconds);
    const arm = (left: number) => {
      const timer =
        left > MAX_TIMER_DELAY_MS
          ? setTimeout(() => arm(left - MAX_TIMER_DELAY_MS), MAX_TIMER_DELAY_MS)
          : setTimeout(() => {
              this.options
                .log()
                .info(
                  { maxStreamAgeSeconds: maxAgeSeconds, ageSeconds: ageMs / 1000 },
                  'agent stream reached its maximum age; closing it so the agent reconnects',
                );
              this.options.close(new ConnectError(STREAM_MAX_AGE, Code.Unavailable, { [RECONNECT_HEADER]: RECONNECT_NOW }));
            }, left);
      timer.unref();
      this.timers.push(timer);
    };
    arm(ageMs);
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    clearTimeout(this.deadPeer);
  }

  private armDeadPeer(ms: number): void {
    this.deadPeer = setTimeout(() => this.checkDeadPeer(), ms);
    this.deadPeer.unref();
  }

  private checkDeadPeer(): void {
    const { deadAfterSeconds } = this.options;
    const deadMs = deadAfterSeconds * 1000;
    if (this.busy || this.options.isWriting()) return this.armDeadPeer(Math.max(50, Math.min(1000, deadMs / 4)));
    const silentMs = Date.now() - this.lastSeen;
    if (silentMs <= deadMs) return this.armDeadPeer(deadMs - silentMs + 1);
    this.options.log().warn({ deadAfterSeconds }, 'agent silent for too long; closing its stream');
    this.options.close(new ConnectError(`no message from the agent for ${deadAfterSeconds}s`, Code.DeadlineExceeded));
  }
}
