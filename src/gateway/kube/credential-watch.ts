/**
 * The life of the credential behind one `/k8s` request (docs/kubectl.md, "Audit"; docs/security.md, "Tokens"): a
 * watch, `logs -f`, `exec` or `port-forward` may stay open for hours, and must end when the credential that opened it
 * stops being valid — a static token removed from or changed in its file, a JWT past its `exp` — as agent streams do.
 */
import type { Principal } from '../auth/principal.js';

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A running watch; stop it once the request ended. */
export interface CredentialWatch {
  stop(): void;
}

/**
 * Calls `onEnd` once, with why, when the principal's credential is revoked or expires (at once when it already has);
 * nothing for a credential that neither expires nor can be revoked.
 */
export function watchCredential(principal: Pick<Principal, 'revocation' | 'expiresAt'>, onEnd: (reason: string) => void): CredentialWatch {
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  const end = (reason: string) => {
    if (ended) return;
    ended = true;
    stop();
    onEnd(reason);
  };
  unsubscribe = principal.revocation?.subscribe((message) => end(`the credential was revoked: ${message}`));
  // Told at once (already revoked): the subscription came back after the end.
  if (ended) unsubscribe?.();
  const expiresAt = principal.expiresAt;
  const arm = () => {
    if (expiresAt === undefined || ended) return;
    const left = expiresAt - Date.now();
    if (left <= 0) return end(`the credential expired at ${new Date(expiresAt).toISOString()}`);
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    timer.unref();
  };
  function stop(): void {
    clearTimeout(timer);
    unsubscribe?.();
  }
  arm();
  return { stop };
}
