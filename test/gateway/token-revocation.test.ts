/**
 * Revocation of token-file tokens while long streams hold them (src/gateway/auth/token-revocation.ts): the token files
 * are polled only while a stream subscribes and files are configured, every `checkMs`, one check at a time; a stream
 * that joined is re-checked at the next check whatever it finds, every stream when a file changed; a stream whose
 * credential is no longer valid is told once, with the message its stream ends with, and never after it ended. The
 * files are a fake whose checks each test answers, and time is node:test's mocked setTimeout: nothing waits on the
 * wall clock (a `setImmediate` only lets the promises already settled run).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { createTokenRevocations } from '../../src/gateway/auth/token-revocation.js';
import type { Logger } from '../../src/shared/logger.js';

const CHECK_MS = 500;

/** Lets every promise already settled run its callbacks (nothing here does I/O). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A logger that keeps what `error` hears. */
function recordingLogger(): { logger: Logger; errors: { err: unknown; msg: string }[] } {
  const errors: { err: unknown; msg: string }[] = [];
  const error = (fields: { err: unknown }, msg: string) => errors.push({ err: fields.err, msg });
  return { logger: { error } as unknown as Logger, errors };
}

/** Token files whose every check (`changed()`) waits until the test answers it. */
function fakeFiles(watched = true) {
  const pending: ((answer: boolean | Error) => void)[] = [];
  const files = {
    checks: 0,
    tokens: {
      watched,
      changed: () => {
        files.checks++;
        return new Promise<boolean>((resolve, reject) =>
          pending.push((answer) => (answer instanceof Error ? reject(answer) : resolve(answer))),
        );
      },
    },
    /** Answers the oldest check in flight: whether a file changed, or its failure. */
    async answer(answer: boolean | Error) {
      const next = pending.shift();
      assert.ok(next, 'no token file check in flight');
      next(answer);
      await settle();
    },
    get inFlight() {
      return pending.length;
    },
  };
  return files;
}

/** A stream's credential: how often it was re-checked, whether it is still valid, what the stream was told. */
function credential(name: string) {
  const c = {
    valid: true,
    rechecks: 0,
    told: [] as string[],
    /** Set to make the re-checks wait until the test answers them. */
    held: undefined as ((valid: boolean | Error) => void)[] | undefined,
    stillValid: (): Promise<boolean> => {
      c.rechecks++;
      if (c.held) {
        const held = c.held;
        return new Promise<boolean>((resolve, reject) => held.push((v) => (v instanceof Error ? reject(v) : resolve(v))));
      }
      return Promise.resolve(c.valid);
    },
    onRevoked: (message: string) => {
      c.told.push(message);
    },
    name,
  };
  return c;
}

function setUp(t: TestContext, watched = true) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const files = fakeFiles(watched);
  const { logger, errors } = recordingLogger();
  const revocations = createTokenRevocations(files.tokens, logger, CHECK_MS);
  t.after(() => revocations.close());
  const subscribe = (c: ReturnType<typeof credential>, what = 'static token') =>
    revocations.revocationOf(c.stillValid, what).subscribe(c.onRevoked);
  return { files, errors, revocations, subscribe };
}

describe('polling the token files', () => {
  test('the first stream starts a check at once, then one every checkMs after the previous one ended', async (t) => {
    const { files, subscribe } = setUp(t);
    assert.equal(files.checks, 0, 'nothing is polled before a stream subscribes');
    subscribe(credential('a'));
    assert.equal(files.checks, 1, 'the first subscriber checks the files at once');
    await files.answer(false);
    t.mock.timers.tick(CHECK_MS - 1);
    assert.equal(files.checks, 1, 'no check before checkMs');
    t.mock.timers.tick(1);
    assert.equal(files.checks, 2, 'a check every checkMs');
    t.mock.timers.tick(CHECK_MS * 3);
    assert.equal(files.checks, 2, 'the next check waits for the one in flight to end');
    await files.answer(false);
    t.mock.timers.tick(CHECK_MS);
    assert.equal(files.checks, 3);
  });

  test('another stream joining does not check the files again before the next poll', async (t) => {
    const { files, subscribe } = setUp(t);
    subscribe(credential('a'));
    await files.answer(false);
    const b = credential('b');
    subscribe(b);
    assert.equal(files.checks, 1);
    assert.equal(b.rechecks, 0, 'a joining stream is not re-checked before the next poll');
  });

  test('a check still in flight when the poll comes round is not doubled', async (t) => {
    const { files, subscribe } = setUp(t);
    subscribe(credential('a'));
    t.mock.timers.tick(CHECK_MS);
    assert.equal(files.checks, 1, 'the first check has not ended: the poll skips its round');
    await files.answer(false);
    t.mock.timers.tick(CHECK_MS);
    assert.equal(files.checks, 2, 'and polls again once it ended');
  });

  test('no token file configured: the files are never polled', async (t) => {
    const { files, subscribe } = setUp(t, false);
    const a = credential('a');
    subscribe(a);
    t.mock.timers.tick(CHECK_MS * 10);
    await settle();
    assert.equal(files.checks, 0);
    assert.equal(a.rechecks, 0);
  });

  test('polling stops when the last stream unsubscribes, and starts again with the next one', async (t) => {
    const { files, subscribe } = setUp(t);
    const stopA = subscribe(credential('a'));
    const stopB = subscribe(credential('b'));
    await files.answer(false);
    stopA();
    t.mock.timers.tick(CHECK_MS);
    assert.equal(files.checks, 2, 'a stream still subscribed keeps the polling');
    await files.answer(false);
    stopB();
    t.mock.timers.tick(CHECK_MS * 10);
    assert.equal(files.checks, 2, 'nobody subscribed: no polling');
    const c = credential('c');
    subscribe(c);
    assert.equal(files.checks, 3, 'the next subscriber checks at once');
    await files.answer(false);
    assert.equal(c.rechecks, 1);
  });

  test('close stops the polling and forgets every stream', async (t) => {
    const { files, revocations, subscribe } = setUp(t);
    const a = credential('a');
    subscribe(a);
    await files.answer(false);
    assert.equal(a.rechecks, 1);
    revocations.close();
    t.mock.timers.tick(CHECK_MS * 10);
    assert.equal(files.checks, 1, 'no polling after close');
    const b = credential('b');
    subscribe(b);
    a.valid = false;
    await files.answer(true);
    assert.equal(b.rechecks, 1);
    assert.equal(a.rechecks, 1, 'a stream subscribed before close is not re-checked');
    assert.deepEqual(a.told, []);
  });

  test('a failed check is logged and the polling goes on', async (t) => {
    const { files, errors, subscribe } = setUp(t);
    const a = credential('a');
    subscribe(a);
    const failure = new Error('EIO');
    await files.answer(failure);
    assert.deepEqual(errors, [{ err: failure, msg: 'token file check failed' }]);
    assert.equal(a.rechecks, 0, 'nothing is re-checked on a failed check');
    t.mock.timers.tick(CHECK_MS);
    assert.equal(files.checks, 2);
    await files.answer(true);
    assert.equal(a.rechecks, 1, 'the next check that finds a change re-checks the stream');
  });

  test('a stream whose first check failed is still re-checked by the next one, even when it finds no change', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    subscribe(a);
    await files.answer(new Error('EIO'));
    const b = credential('b');
    subscribe(b);
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 1], 'a joined before the failed check: its token may have come and gone');
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 1], 'owed once, not forever');
  });

  test('a stream that ended while a check that then failed was in flight is not re-checked by the next', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    const end = subscribe(a);
    const b = credential('b');
    subscribe(b);
    end();
    await files.answer(new Error('EIO'));
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [0, 1]);
  });
});

describe('which streams a check re-checks', () => {
  test('a file that changed re-checks every stream; no change re-checks only those that joined since', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    subscribe(a);
    await files.answer(false);
    assert.equal(a.rechecks, 1, 'the first check re-checks the stream that started it');
    const b = credential('b');
    subscribe(b);
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 1], 'no change: only the stream that joined since');
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 1], 'no change and nobody joined: nothing re-checked');
    t.mock.timers.tick(CHECK_MS);
    await files.answer(true);
    assert.deepEqual([a.rechecks, b.rechecks], [2, 2], 'a change: every stream');
  });

  test('a stream joining during the first check is re-checked by it and again by the next', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    subscribe(a);
    const b = credential('b');
    subscribe(b);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 1], 'the first check re-checks every stream, whatever it finds');
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 2], 'b joined after that check began: its token may have come and gone');
  });

  test('a stream that ended while a check was in flight is not re-checked by it', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    subscribe(a);
    await files.answer(false);
    const b = credential('b');
    const stopB = subscribe(b);
    t.mock.timers.tick(CHECK_MS);
    stopB();
    await files.answer(false);
    assert.deepEqual([a.rechecks, b.rechecks], [1, 0]);
  });

  test('a stream that ended between joining and the next check is not re-checked', async (t) => {
    const { files, subscribe } = setUp(t);
    subscribe(credential('a'));
    await files.answer(false);
    const b = credential('b');
    const stopB = subscribe(b);
    stopB();
    t.mock.timers.tick(CHECK_MS);
    await files.answer(false);
    assert.equal(b.rechecks, 0);
  });
});

describe('telling a stream its credential was revoked', () => {
  test('a credential no longer valid is told once, naming what was revoked, and never re-checked again', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    const b = credential('b');
    subscribe(a, 'static token');
    subscribe(b, 'static token');
    await files.answer(false);
    a.valid = false;
    t.mock.timers.tick(CHECK_MS);
    await files.answer(true);
    assert.deepEqual(a.told, ['static token was revoked; reconnect with a valid credential']);
    assert.deepEqual(b.told, [], 'a credential still valid keeps its stream');
    t.mock.timers.tick(CHECK_MS);
    await files.answer(true);
    assert.deepEqual([a.rechecks, b.rechecks], [2, 3], 'the revoked stream is not re-checked any more');
    assert.equal(a.told.length, 1);
  });

  test('the message names the credential as given', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    a.valid = false;
    subscribe(a, 'the token of ops');
    await files.answer(false);
    assert.deepEqual(a.told, ['the token of ops was revoked; reconnect with a valid credential']);
  });

  test('two re-checks in flight that both find the credential invalid tell the stream once', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    a.held = [];
    subscribe(a);
    await files.answer(true);
    t.mock.timers.tick(CHECK_MS);
    await files.answer(true);
    assert.equal(a.held.length, 2, 'two re-checks in flight');
    a.held[0]!(false);
    a.held[1]!(false);
    await settle();
    assert.equal(a.told.length, 1);
  });

  test('a re-check that ends after the stream ended tells it nothing', async (t) => {
    const { files, subscribe } = setUp(t);
    const a = credential('a');
    a.held = [];
    const stop = subscribe(a);
    await files.answer(false);
    stop();
    a.held[0]!(false);
    await settle();
    assert.deepEqual(a.told, []);
  });

  test('a re-check that fails is logged and the stream lives on', async (t) => {
    const { files, errors, subscribe } = setUp(t);
    const a = credential('a');
    a.held = [];
    subscribe(a);
    await files.answer(false);
    const failure = new Error('EACCES');
    a.held[0]!(failure);
    await settle();
    assert.deepEqual(errors, [{ err: failure, msg: 'credential re-check failed' }]);
    assert.deepEqual(a.told, []);
    t.mock.timers.tick(CHECK_MS);
    await files.answer(true);
    assert.equal(a.rechecks, 2, 'it is re-checked at the next change');
  });
});
