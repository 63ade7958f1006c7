/**
 * Revocation of token-file tokens while they are in use: a long stream (agent stream, WatchFleet, WaitOperation)
 * subscribes through its principal's {@link CredentialRevocation}; while anyone is subscribed the token files are
 * polled, and when one changed every subscriber re-checks its credential and is told when it is no longer valid, so
 * its stream ends UNAUTHENTICATED. Requests end soon anyway and never subscribe.
 */
import type { Logger } from '../../shared/logger.js';
import { createPeriodicJob } from '../../shared/periodic-job.js';
import type { CredentialRevocation } from './principal.js';
import type { StaticTokens } from './static-tokens.js';

/** Hands out revocations and polls the token files while they have subscribers. */
export interface TokenRevocations {
  /** A revocation whose holders are told once `stillValid` turns false after a token file changed. */
  revocationOf(stillValid: () => Promise<boolean>, what: string): CredentialRevocation;
  /** Stops polling and forgets every subscriber. */
  close(): void;
}

/** Creates the revocations over the static tokens; files are checked every `checkMs` while streams subscribe. */
export function createTokenRevocations(
  tokens: Pick<StaticTokens, 'watched' | 'changed'>,
  logger: Logger,
  checkMs: number,
): TokenRevocations {
  const subscribers = new Set<() => void>();
  // Subscribers that joined since the last check are re-checked at the next one whatever it finds: their token may
  // have been written and removed again between two checks, which comparing two checks cannot see.
  const fresh = new Set<() => void>();
  let checking = false;
  const checkFiles = async (first: boolean) => {
    if (checking) return;
    checking = true;
    const joined = [...fresh];
    fresh.clear();
    try {
      const all = (await tokens.changed()) || first;
      for (const recheck of all ? [...subscribers] : joined) if (subscribers.has(recheck)) recheck();
    } catch (err) {
      // Those that joined are still owed their re-check: the next check does it, whatever it finds (those that ended
      // by then are passed over there).
      for (const recheck of joined) fresh.add(recheck);
      logger.error({ err }, 'token file check failed');
    } finally {
      checking = false;
    }
  };
  // Stryker disable next-line StringLiteral: checkFiles catches its own failures, so the job never logs a failed round
  const poll = createPeriodicJob({ run: () => checkFiles(false), intervalMs: checkMs, logger, errorMessage: 'token file check failed' });
  return {
    revocationOf: (stillValid, what) => ({
      subscribe(onRevoked) {
        let done = false;
        const recheck = () => {
          void stillValid().then(
            (valid) => {
              if (valid || done) return;
              done = true;
              subscribers.delete(recheck);
              fresh.delete(recheck);
              onRevoked(`${what} was revoked; reconnect with a valid credential`);
            },
            (err) => logger.error({ err }, 'credential re-check failed'),
          );
        };
        subscribers.add(recheck);
        fresh.add(recheck);
        if (!poll.started && tokens.watched) {
          poll.start();
          void checkFiles(true);
        }
        return () => {
          done = true;
          subscribers.delete(recheck);
          fresh.delete(recheck);
          if (subscribers.size === 0) void poll.stop();
        };
      },
    }),
    close() {
      void poll.stop();
      subscribers.clear();
      fresh.clear();
    },
  };
}
