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
export const CREDENTIALS_EXPIRED = 'credentials expired; reconnect with a fresh token';

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
  const { outbox, deadAfterSeconds } = options;
  /** Intervals and timeouts; Node's clearInterval clears either kind. */
  let timers: NodeJS.Timeout[] = [];
  let lastSeen = Date.now();
  let busy = false;

  const every = (ms: number, tick: () => void) => {
    const timer = setInterval(tick, ms);
    timer.unref();
    timers.push(timer);
  };

  return {
    messageStarted() {
      lastSeen = Date.now();
      busy = true;
    },
    messageDone() {
      busy = false;
      lastSeen = Date.now();
    },
    startDeadPeerCheck() {
      const deadMs = deadAfterSeconds * 1000;
      every(Math.max(50, Math.min(1000, deadMs / 4)), () => {
        if (busy || options.isWriting() || Date.now() - lastSeen <= deadMs) return;
        options.log().warn({ deadAfterSeconds }, 'agent silent for too long; closing its stream');
        options.close(new ConnectError(`no message from the agent for ${deadAfterSeconds}s`, Code.DeadlineExceeded));
      });
    },
    startHeartbeats() {
      every(options.heartbeatIntervalSeconds * 1000, () => {
        outbox.push(
          create(ConnectResponseSchema, {
            message: { case: 'heartbeat', value: { agentId: options.gatewayId, sentAtUnixMs: BigInt(Date.now()) } },
          }),
        );
      });
    },
    startCredentialExpiry(expiresAt) {
      const arm = () => {
        const left = expiresAt - Date.now();
        const timer =
          left > MAX_TIMER_DELAY_MS
            ? setTimeout(arm, MAX_TIMER_DELAY_MS)
            : setTimeout(() => {
                options.log().info({ expiredAt: new Date(expiresAt).toISOString() }, 'agent credentials expired; closing its stream');
                options.close(new ConnectError(CREDENTIALS_EXPIRED, Code.Unauthenticated));
              }, Math.max(0, left));
        timer.unref();
        timers.push(timer);
      };
      arm();
    },
    startMaxAge(maxAgeSeconds) {
      const ageMs = jitteredMaxAgeMs(maxAgeSeconds);
      const arm = (left: number) => {
        const timer =
          left > MAX_TIMER_DELAY_MS
            ? setTimeout(() => arm(left - MAX_TIMER_DELAY_MS), MAX_TIMER_DELAY_MS)
            : setTimeout(() => {
                options
                  .log()
                  .info({ maxStreamAgeSeconds: maxAgeSeconds, ageSeconds: ageMs / 1000 }, 'agent stream reached its maximum age; closing it so the agent reconnects');
                options.close(new ConnectError(STREAM_MAX_AGE, Code.Unavailable, { [RECONNECT_HEADER]: RECONNECT_NOW }));
              }, left);
        timer.unref();
        timers.push(timer);
      };
      arm(ageMs);
    },
    stop() {
      for (const t of timers) clearInterval(t);
      timers = [];
    },
  };
}
