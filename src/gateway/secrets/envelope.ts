/**
 * A sealed value: AES-256-GCM with a random 96-bit IV, the key's id, and associated data that binds it to where it is
 * stored (an operation's id and account), so a sealed value copied into another row does not open there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import type { SecretKey } from './key-ring.js';

/** What is stored: every binary part in base64. */
export interface Envelope {
  v: 1;
  kid: string;
  iv: string;
  tag: string;
  data: string;
}

/** Encrypts `plaintext` with `key`, bound to `context`. */
export function seal(plaintext: string, key: SecretKey, context: string): Envelope {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { v: 1, kid: key.id, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/** True for a value shaped like an {@link Envelope}. */
export function isEnvelope(value: unknown): value is Envelope {
  const e = value as Partial<Envelope> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    e.v === 1 &&
    typeof e.kid === 'string' &&
    typeof e.iv === 'string' &&
    typeof e.tag === 'string' &&
    typeof e.data === 'string'
  );
}

/** Decrypts; DATA_LOSS when the envelope was altered, moved to another context, or sealed with another key. */
export function open(envelope: Envelope, key: SecretKey, context: string): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(envelope.iv, 'base64'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(envelope.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new ConnectError(
      `the sealed Secret values of this operation do not open with key ${envelope.kid} (altered or moved)`,
      Code.DataLoss,
    );
  }
}
