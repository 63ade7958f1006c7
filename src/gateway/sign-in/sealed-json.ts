/**
 * What sign-in keeps sealed with the gateway's key ring (`secrets.keyFile`): a session's tokens in its row, and a
 * sign-in's PKCE verifier, state and nonce in the login cookie. AES-256-GCM envelopes (secrets/envelope.ts) bound to
 * a context — the row's key, the provider's callback — so a value moved elsewhere does not open. Every replica with
 * the same key file opens what another sealed.
 */
import { isEnvelope, open, seal, type Envelope } from '../secrets/envelope.js';
import type { KeyRing } from '../secrets/key-ring.js';

/** Seals `value`'s JSON with the active key, bound to `context`. */
export async function sealJson(keys: KeyRing, value: unknown, context: string): Promise<Envelope> {
  return seal(JSON.stringify(value), await keys.active(), context);
}

/**
 * Opens what {@link sealJson} sealed; throws an Error saying why (not an envelope, a key no longer in the file,
 * altered or moved) — callers turn it into their own refusal and never show the value.
 */
export async function openJson(keys: KeyRing, envelope: unknown, context: string): Promise<unknown> {
  if (!isEnvelope(envelope)) throw new Error('not a sealed value');
  let key: Awaited<ReturnType<KeyRing['get']>>;
  try {
    key = await keys.get(envelope.kid);
  } catch {
    throw new Error(`sealed with key ${JSON.stringify(envelope.kid)}, which secrets.keyFile no longer holds`);
  }
  try {
    return JSON.parse(open(envelope, key, context));
  } catch {
    throw new Error('does not open (altered, or sealed for another place)');
  }
}

/** An envelope as cookie text (base64url of its JSON). */
export function envelopeToCookie(envelope: Envelope): string {
  return Buffer.from(JSON.stringify(envelope)).toString('base64url');
}

/** The envelope of a cookie's text, or undefined when it is not one. */
export function envelopeFromCookie(text: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    // not base64url JSON: no envelope
  }
  return isEnvelope(value) ? value : undefined;
}
