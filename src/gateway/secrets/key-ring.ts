/**
 * The AES-256 keys that encrypt Secret values inside stored operation requests (`secrets.keyFile`): one `keyId:base64`
 * line per key, the first one encrypting, every one decrypting, so a key is rotated by adding a new first line and
 * dropping the old one once no open operation needs it. The file is re-read when it changes (like every other key file
 * of the gateway); a file that becomes unreadable or invalid keeps the last good keys and is logged. Without a file,
 * dev mode gets one ephemeral random key (rows it sealed cannot be read after a restart) and secure mode gets none:
 * operations carrying Secret values are then refused with FAILED_PRECONDITION naming the setting.
 */
import { randomBytes } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger } from '../../shared/logger.js';
import { createFileSource, type FileSource } from '../auth/file-source.js';

/** One key. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** The current keys. */
export interface KeyRing {
  /** The key that encrypts now; FAILED_PRECONDITION when the gateway has none. */
  active(): Promise<SecretKey>;
  /** The key with this id; FAILED_PRECONDITION naming the id when it is not (or no longer) in the file. */
  get(id: string): Promise<SecretKey>;
  /** Where the keys come from, for logs: the file, `ephemeral` or `none`. */
  readonly source: string;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Parses the key file's text; throws an error naming the line at fault (never quoting a key). */
export function parseKeyFile(text: string, path: string): SecretKey[] {
  const keys: SecretKey[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const id = colon > 0 ? line.slice(0, colon) : '';
    if (!KEY_ID.test(id)) throw new Error(`${path} line ${index + 1}: expected keyId:base64key (keyId of A-Z, a-z, 0-9, '.', '_', '-')`);
    const encoded = line.slice(colon + 1).trim();
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
    if (key.length !== 32) throw new Error(`${path} line ${index + 1}: key ${id} is not 32 bytes of base64 (AES-256)`);
    if (keys.some((k) => k.id === id)) throw new Error(`${path} line ${index + 1}: key id ${id} appears twice`);
    keys.push({ id, key });
  });
  if (keys.length === 0) throw new Error(`${path}: no key (expected lines of keyId:base64key)`);
  return keys;
}

/** Reads `keyFile` now (throwing a clear error when it is missing or invalid), or makes the dev/none ring. */
export function createKeyRing(options: { keyFile?: string; insecure: boolean; logger: Logger }): KeyRing {
  const { keyFile, logger } = options;
  if (keyFile === undefined) {
    if (!options.insecure) return noKeys();
    const ephemeral: SecretKey = { id: `ephemeral-${randomBytes(4).toString('hex')}`, key: randomBytes(32) };
    return {
      source: 'ephemeral',
      active: async () => ephemeral,
      get: async (id) => (id === ephemeral.id ? ephemeral : missing(id, 'the ephemeral key of an earlier run is gone')),
    };
  }
  const file: FileSource = createFileSource(keyFile, 'secrets.keyFile', (err) =>
    logger.error({ err: err.message }, 'secrets key file unreadable; keeping the last keys'),
  );
  let last = { raw: file.current(), keys: parseOrThrow(file.current(), keyFile) };
  const current = async () => {
    const raw = await file.read();
    if (raw !== last.raw) {
      try {
        last = { raw, keys: parseKeyFile(raw.toString('utf8'), keyFile) };
        logger.info({ file: keyFile, keys: last.keys.map((k) => k.id) }, 'secrets key file reloaded');
      } catch (err) {
        last = { raw, keys: last.keys };
        logger.error({ err: (err as Error).message }, 'secrets key file invalid; keeping the last keys');
      }
    }
    return last.keys;
  };
  return {
    source: keyFile,
    active: async () => (await current())[0]!,
    async get(id) {
      return (await current()).find((k) => k.id === id) ?? missing(id, `it is not in ${keyFile}`);
    },
  };
}

function parseOrThrow(raw: Buffer, path: string): SecretKey[] {
  try {
    return parseKeyFile(raw.toString('utf8'), path);
  } catch (err) {
    throw new Error(`secrets.keyFile: ${(err as Error).message}`);
  }
}

function noKeys(): KeyRing {
  const refuse = async (): Promise<never> => {
    throw new ConnectError(
      'this operation carries Secret values, and the gateway has no key to encrypt them at rest: set secrets.keyFile (see docs/security.md)',
      Code.FailedPrecondition,
    );
  };
  return { source: 'none', active: refuse, get: refuse };
}

function missing(id: string, why: string): never {
  throw new ConnectError(
    `cannot decrypt the Secret values of this operation: key ${JSON.stringify(id)} is unknown (${why})`,
    Code.FailedPrecondition,
  );
}
