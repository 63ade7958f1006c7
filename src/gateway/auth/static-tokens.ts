/**
 * Static bearer tokens from the configuration (`auth.tokens`): given inline, in an environment variable (read once at
 * start) or in a file (re-read when it changes, so a rotated token takes effect on the next request and the old one
 * stops working). Comparison is in constant time over SHA-256 digests, and every configured token is compared, so
 * timing reveals neither a token nor which entry matched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../../shared/logger.js';
import type { GatewayAuthConfig } from '../config.js';
import { createFileSource, type FileSource } from './file-source.js';

/** The configured static tokens. */
export interface StaticTokens {
  /** True when at least one token is configured. */
  readonly any: boolean;
  /** The subject of the token that equals `token`, or undefined. */
  match(token: string): Promise<string | undefined>;
}

type Entry = { subject: string; digest: () => Promise<Buffer | undefined> };

/**
 * Resolves every entry now: throws naming the entry when an environment variable is unset or a file unreadable (a
 * gateway must not start with a token it cannot check).
 */
export function createStaticTokens(tokens: GatewayAuthConfig['tokens'], env: NodeJS.ProcessEnv, logger: Logger): StaticTokens {
  const entries: Entry[] = tokens.map((t, i) => {
    const where = `auth.tokens[${i}]`;
    if (t.token !== undefined) {
      const d = digest(t.token);
      return { subject: t.subject, digest: async () => d };
    }
    if (t.tokenEnv !== undefined) {
      const value = env[t.tokenEnv]?.trim();
      if (!value) throw new Error(`${where}.tokenEnv: environment variable ${t.tokenEnv} is not set`);
      const d = digest(value);
      return { subject: t.subject, digest: async () => d };
    }
    const source: FileSource = createFileSource(t.tokenFile!, `${where}.tokenFile`, (err) => logger.error({ err: err.message }, 'token file unreadable; keeping the last token'));
    let last: { raw: Buffer; d: Buffer | undefined } | undefined;
    return {
      subject: t.subject,
      async digest() {
        const raw = await source.read();
        if (last?.raw !== raw) {
          const text = raw.toString('utf8').trim();
          if (text.length < 16) logger.error({ file: source.path }, 'token file holds fewer than 16 characters; token ignored');
          last = { raw, d: text.length >= 16 ? digest(text) : undefined };
        }
        return last.d;
      },
    };
  });
  return {
    any: entries.length > 0,
    async match(token) {
      const presented = digest(token);
      let subject: string | undefined;
      for (const e of entries) {
        const d = await e.digest();
        if (d && timingSafeEqual(d, presented) && subject === undefined) subject = e.subject;
      }
      return subject;
    },
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
