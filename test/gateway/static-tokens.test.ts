/**
 * The configured static tokens (`auth.tokens`) and how a presented token is matched: inline, from the environment
 * (trimmed, refused at start when unset) and from a file (re-read on change; a deleted or too short file revokes its
 * token, and `changed()` reports every rotation and revocation so live streams are re-checked). A token that stopped
 * working must never keep matching, so each of these is pinned without a server.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Logger } from '../../src/shared/logger.js';
import { createStaticTokens, tokenDigest } from '../../src/gateway/auth/static-tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'static-tokens-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A logger that records its error calls. */
function recordingLogger(): { logger: Logger; errors: unknown[][] } {
  const errors: unknown[][] = [];
  return { logger: { error: (...args: unknown[]) => errors.push(args) } as unknown as Logger, errors };
}

let counter = 0;
/** Writes `contents` to `path` through a new inode, as a rotation does. */
function writeFile(path: string, contents: string): void {
  const tmp = join(dir, `.tmp-${counter++}`);
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

const A = 'token-a-0123456789abcdef';
const B = 'token-b-0123456789abcdef';

test('the digest is the SHA-256 of the UTF-8 token', () => {
  assert.equal(tokenDigest('é-token').toString('hex'), createHash('sha256').update(Buffer.from('é-token', 'utf8')).digest('hex'));
  assert.equal(tokenDigest('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('an inline token matches its subject, by token and by digest; any other token matches nothing', async () => {
  const { logger } = recordingLogger();
  const tokens = createStaticTokens([{ subject: 'alice', token: A, groups: [] }], {}, logger);
  assert.equal(tokens.any, true);
  assert.equal(tokens.watched, false);
  assert.equal(await tokens.match(A), 'alice');
  assert.equal(await tokens.matchDigest(tokenDigest(A)), 'alice');
  assert.equal(await tokens.match(B), undefined);
  assert.equal(await tokens.match(`${A} `), undefined);
  assert.equal(await tokens.changed(), false);
});

test('no configured token: none at all, nothing watched, nothing matches', async () => {
  const tokens = createStaticTokens([], {}, recordingLogger().logger);
  assert.equal(tokens.any, false);
  assert.equal(tokens.watched, false);
  assert.equal(await tokens.match(A), undefined);
  assert.equal(await tokens.changed(), false);
});

test('when two entries hold the same token, the first one configured gives the subject', async () => {
  const tokens = createStaticTokens(
    [
      { subject: 'first', token: A, groups: [] },
      { subject: 'second', tokenEnv: 'TOK', groups: [] },
      { subject: 'other', token: B, groups: [] },
    ],
    { TOK: A },
    recordingLogger().logger,
  );
  assert.equal(await tokens.match(A), 'first');
  assert.equal(await tokens.match(B), 'other');
});

test('a token from the environment is trimmed; an unset or blank variable refuses the configuration, naming the entry', async () => {
  const tokens = createStaticTokens([{ subject: 'env', tokenEnv: 'TOK', groups: [] }], { TOK: `  ${A}\n` }, recordingLogger().logger);
  assert.equal(await tokens.match(A), 'env');
  assert.equal(tokens.watched, false);
  const config = [
    { subject: 'a', token: A, groups: [] },
    { subject: 'b', tokenEnv: 'MISSING_TOK', groups: [] },
  ];
  const message = 'auth.tokens[1].tokenEnv: environment variable MISSING_TOK is not set';
  assert.throws(() => createStaticTokens(config, {}, recordingLogger().logger), { message });
  assert.throws(() => createStaticTokens(config, { MISSING_TOK: ' \n ' }, recordingLogger().logger), { message });
});

test('a token file that cannot be read at start refuses the configuration, naming the entry', () => {
  const path = join(dir, 'absent');
  assert.throws(
    () => createStaticTokens([{ subject: 'f', tokenFile: path, groups: [] }], {}, recordingLogger().logger),
    (err: Error) => err.message.startsWith(`auth.tokens[0].tokenFile: cannot read ${path}: `),
  );
});

test('a token file is trimmed, watched, and a rotation takes effect at once and is reported once', async () => {
  const path = join(dir, 'rotated');
  writeFile(path, `${A}\n`);
  const { logger, errors } = recordingLogger();
  const tokens = createStaticTokens(
    [
      { subject: 'inline', token: B, groups: [] },
      { subject: 'file', tokenFile: path, groups: [] },
    ],
    {},
    logger,
  );
  assert.equal(tokens.any, true);
  assert.equal(tokens.watched, true);
  assert.equal(await tokens.changed(), false);
  assert.equal(await tokens.match(A), 'file');
  assert.equal(await tokens.changed(), false);
  writeFile(path, `  ${B}x  `);
  assert.equal(await tokens.match(A), undefined);
  assert.equal(await tokens.match(`${B}x`), 'file');
  assert.equal(await tokens.changed(), true);
  assert.equal(await tokens.changed(), false);
  assert.deepEqual(errors, []);
});

test('a deleted token file revokes its token until it is written again, and both are reported', async () => {
  const path = join(dir, 'deleted');
  writeFile(path, A);
  const { logger, errors } = recordingLogger();
  const tokens = createStaticTokens([{ subject: 'file', tokenFile: path, groups: [] }], {}, logger);
  assert.equal(await tokens.changed(), false);
  rmSync(path);
  assert.equal(await tokens.match(A), undefined);
  assert.equal(await tokens.changed(), true);
  assert.equal(await tokens.changed(), false);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]![1], 'token file unreadable; its token is revoked until the file is readable again');
  assert.match((errors[0]![0] as { err: string }).err, /^auth\.tokens\[0\]\.tokenFile: cannot read /);
  writeFile(path, A);
  assert.equal(await tokens.changed(), true);
  assert.equal(await tokens.match(A), 'file');
});

test('a token file of fewer than 16 characters holds no token, logged once; 16 characters are enough', async () => {
  const path = join(dir, 'short');
  const fifteen = '0123456789abcde';
  writeFile(path, `${fifteen}\n`);
  const { logger, errors } = recordingLogger();
  const tokens = createStaticTokens([{ subject: 'file', tokenFile: path, groups: [] }], {}, logger);
  assert.equal(await tokens.changed(), false);
  assert.equal(await tokens.match(fifteen), undefined);
  assert.equal(await tokens.match(fifteen), undefined);
  assert.deepEqual(errors, [[{ file: path }, 'token file holds fewer than 16 characters; token ignored']]);
  writeFile(path, `${fifteen}f`);
  assert.equal(await tokens.match(`${fifteen}f`), 'file');
  assert.equal(await tokens.changed(), true);
  assert.equal(errors.length, 1);
  writeFile(path, ' ');
  assert.equal(await tokens.changed(), true);
  assert.equal(await tokens.match(`${fifteen}f`), undefined);
});

test('a rotation of one token file among several is reported', async () => {
  const one = join(dir, 'one');
  const two = join(dir, 'two');
  writeFile(one, A);
  writeFile(two, B);
  const tokens = createStaticTokens(
    [
      { subject: 'one', tokenFile: one, groups: [] },
      { subject: 'two', tokenFile: two, groups: [] },
    ],
    {},
    recordingLogger().logger,
  );
  assert.equal(await tokens.changed(), false);
  writeFile(two, `${B}-rotated`);
  assert.equal(await tokens.changed(), true);
  assert.equal(await tokens.match(A), 'one');
  assert.equal(await tokens.match(`${B}-rotated`), 'two');
  assert.equal(await tokens.match(B), undefined);
  rmSync(one);
  assert.equal(await tokens.changed(), true);
  assert.equal(await tokens.match(A), undefined);
});
