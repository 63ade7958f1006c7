/**
 * Static bearer tokens from the configuration (`auth.tokens`): given inline, in an environment variable (read once at
 * start) or in a file (re-read when it changes, so a rotated token takes effect on the next request and the old one
 * stops working; a deleted, unreadable, emptied or too short file revokes its token until a valid one is written — a
 * revoked credential must never survive a reload). One token per file. Comparison is in constant time over SHA-256
 * digests, and every configured token is compared, so timing reveals neither a token nor which entry matched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../../shared/logger.js';
import type { GatewayAuthConfig } from '../config/schema.js';
import { createFileSource, type FileSource } from './file-source.js';

/** The configured static tokens. */
export interface StaticTokens {
  /** True when at least one token is configured. */
  readonly any: boolean;
  /** The subject of the token that equals `token`, or undefined. */
  match(token: string): Promise<string | undefined>;
  /** As {@link StaticTokens.match}, for the SHA-256 digest of a token (see {@link tokenDigest}). */
  matchDigest(presented: Buffer): Promise<string | undefined>;
  /** True when token files are configured (only they change at run time). */
  readonly watched: boolean;
  /**
   * Re-reads every token file; resolves true when a token changed or was revoked since the previous call (the caller
   * then re-checks live streams: {@link Authenticator}).
   */
  changed(): Promise<boolean>;
}

type Entry = { subject: string; file?: boolean; digest: () => Promise<Buffer | undefined> };

/**
 * Resolves every entry now: throws naming the entry when an environment variable is unset or a file unreadable (a
 * gateway must not start with a token it cannot check).
 */
export function createStaticTokens(tokens: GatewayAuthConfig['tokens'], env: NodeJS.ProcessEnv, logger: Logger): StaticTokens {
  const entries: Entry[] = tokens.map((t, i) => {
    const where = `auth.tokens[${i}]`;
    if (t.token !== undefined) {
      const d = tokenDigest(t.token);
      return { subject: t.subject, digest: async () => d };
    }
    if (t.tokenEnv !== undefined) {
      const value = env[t.tokenEnv]?.trim();
      if (!value) throw new Error(`${where}.tokenEnv: environment variable ${t.tokenEnv} is not set`);
      const d = tokenDigest(value);
      return { subject: t.subject, digest: async () => d };
    }
    const source: FileSource = createFileSource(t.tokenFile!, `${where}.tokenFile`, (err) =>
      logger.error({ err: err.message }, 'token file unreadable; its token is revoked until the file is readable again'),
    );
    let last: { raw: Buffer; d: Buffer | undefined } | undefined;
    return {
      subject: t.subject,
      file: true,
      async digest() {
        const raw = await source.readIfReadable();
        if (raw === undefined) return undefined;
        if (last?.raw !== raw) {
          const text = raw.toString('utf8').trim();
          if (text.length < 16) logger.error({ file: source.path }, 'token file holds fewer than 16 characters; token ignored');
          last = { raw, d: text.length >= 16 ? tokenDigest(text) : undefined };
        }
        return last.d;
      },
    };
  });
  const matchDigest = async (presented: Buffer) => {
    let subject: string | undefined;
    for (const e of entries) {
      const d = await e.digest();
      if (d && timingSafeEqual(d, presented) && subject === undefined) subject = e.subject;
    }
    return subject;
  };
  const files = entries.filter((e) => e.file);
  let seen: (Buffer | undefined)[] | undefined;
  return {
    any: entries.length > 0,
    watched: files.length > 0,
    match: (token) => matchDigest(tokenDigest(token)),
    matchDigest,
    async changed() {
      const now = await Promise.all(files.map((e) => e.digest()));
      const before = seen;
      seen = now;
      return before !== undefined && now.some((d, i) => !(d === undefined ? before[i] === undefined : before[i]?.equals(d)));
    },
  };
}

/** The SHA-256 digest tokens are compared by: what a principal keeps to re-check its token (never the token). */
export function tokenDigest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
