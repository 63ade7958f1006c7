import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Code } from '@connectrpc/connect';
import { startHarness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

const authorization = (h: Awaited<ReturnType<typeof startHarness>>, stream: number) =>
  h.gateway.streams[stream]?.headers.get('authorization');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('agent authentication to the gateway', () => {
  test('a static token is sent as a bearer token on the stream', async () => {
    const h = await startHarness({ seed: 'none', config: { clouddriver: { auth: { token: 'static-token-1' } } } });
    try {
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      assert.equal(authorization(h, 0), 'Bearer static-token-1');
      assert.equal(h.logs.text().includes('static-token-1'), false, 'the token is never logged');
    } finally {
      await h.close();
    }
  });

  test('tokenCommand: re-run on its interval, the new token used on the next connection; a failing run keeps the old one', async () => {
    let script = '';
    const h = await startHarness({
      seed: 'none',
      configFrom: (dir) => {
        script = join(dir, 'token.sh');
        writeFileSync(script, 'echo "  cmd-token-1  "\n');
        return { clouddriver: { auth: { tokenCommand: `sh ${script}`, tokenCommandIntervalSeconds: 0.3 } } };
      },
    });
    try {
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      assert.equal(authorization(h, 0), 'Bearer cmd-token-1', 'stdout trimmed');

      writeFileSync(script, 'echo cmd-token-2\n');
      await eventually('the background re-run', () => /token command gave a new token/.test(h.logs.text()), { timeoutMs: 30_000 });
      h.gateway.streams[0]!.drop();
      await eventually('second session', () => h.gateway.streams.length >= 2 && h.agent.status().sessionId === 'session-1', {
        timeoutMs: 30_000,
      });
      assert.equal(authorization(h, 1), 'Bearer cmd-token-2');

      writeFileSync(script, 'echo "vault is sealed" >&2\nexit 3\n');
      await eventually(
        'the failure logged',
        () => /tokenCommand failed: exited with code 3; stderr: vault is sealed; keeping the previous token/.test(h.logs.text()),
        { timeoutMs: 30_000 },
      );
      h.gateway.streams[1]!.drop();
      await eventually('third session', () => h.gateway.streams.length >= 3 && h.agent.status().sessionId === 'session-2', {
        timeoutMs: 30_000,
      });
      assert.equal(authorization(h, 2), 'Bearer cmd-token-2', 'the previous token is kept');

      writeFileSync(script, 'true\n');
      await eventually('empty output is a failure', () => /tokenCommand failed: printed no token on stdout/.test(h.logs.text()), {
        timeoutMs: 30_000,
      });
      for (const secret of ['cmd-token-1', 'cmd-token-2']) assert.equal(h.logs.text().includes(secret), false, 'tokens are never logged');
    } finally {
      await h.close();
    }
  });

  test('tokenCommand {command, args} runs without a shell', async () => {
    const h = await startHarness({
      seed: 'none',
      config: { clouddriver: { auth: { tokenCommand: { command: '/bin/echo', args: ['args-token', '$HOME'] } } } },
    });
    try {
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      assert.equal(authorization(h, 0), 'Bearer args-token $HOME', 'arguments are passed verbatim, not expanded by a shell');
    } finally {
      await h.close();
    }
  });

  test('tokenCommand that never worked: no connection attempt, a clear log line, backoff', async () => {
    const h = await startHarness({
      seed: 'none',
      config: {
        clouddriver: {
          auth: { tokenCommand: 'echo "no credentials" >&2; exit 1' },
          reconnect: { baseSeconds: 0.02, factor: 1, maxSeconds: 0.02 },
        },
      },
    });
    try {
      await eventually('two failed attempts', () => (h.logs.text().match(/cannot connect to the gateway/g)?.length ?? 0) >= 2, {
        timeoutMs: 30_000,
      });
      const line = h.logs.lines().find((l) => String(l.msg).startsWith('cannot connect to the gateway'))!;
      assert.match(
        String(line.msg),
        /no bearer token: clouddriver\.auth\.tokenCommand failed: exited with code 1; stderr: no credentials; next retry in/,
      );
      assert.equal(h.gateway.streams.length, 0, 'never connected without a token');
    } finally {
      await h.close();
    }
  });

  test('tokenCommand timeout: killed, logged, previous token kept', async () => {
    let script = '';
    const h = await startHarness({
      seed: 'none',
      configFrom: (dir) => {
        script = join(dir, 'token.sh');
        writeFileSync(script, 'echo slow-token-1\n');
        // The timeout must be far longer than a quick run takes on a loaded machine (spawning sh alone can take some
        // 100 ms there), or the first run times out too and the agent never gets a token; the slow run below never
        // ends by itself, so it is the timeout that ends it whatever the ratio.
        return {
          clouddriver: { auth: { tokenCommand: `sh ${script}`, tokenCommandIntervalSeconds: 0.2, tokenCommandTimeoutSeconds: 3 } },
        };
      },
    });
    try {
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      writeFileSync(script, 'sleep 600\necho slow-token-2\n');
      await eventually(
        'the timeout logged',
        () => /tokenCommand failed: timed out after 3 s; keeping the previous token/.test(h.logs.text()),
        { timeoutMs: 30_000 },
      );
      h.gateway.streams[0]!.drop();
      await eventually('second session', () => h.agent.status().sessionId === 'session-1', { timeoutMs: 30_000 });
      assert.equal(authorization(h, 1), 'Bearer slow-token-1');
    } finally {
      await h.close();
    }
  });

  test('tokenFile: read for each connection attempt', async () => {
    let file = '';
    const h = await startHarness({
      seed: 'none',
      configFrom: (dir) => {
        file = join(dir, 'token');
        writeFileSync(file, 'file-token-1\n');
        return { clouddriver: { auth: { tokenFile: file } } };
      },
    });
    try {
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      assert.equal(authorization(h, 0), 'Bearer file-token-1');
      writeFileSync(file, 'file-token-2\n');
      h.gateway.streams[0]!.drop();
      await eventually('second session', () => h.agent.status().sessionId === 'session-1', { timeoutMs: 30_000 });
      assert.equal(authorization(h, 1), 'Bearer file-token-2');
    } finally {
      await h.close();
    }
  });

  test('per-stream token: the Welcome token is presented on reconnect, and dropped after UNAUTHENTICATED', async () => {
    const h = await startHarness({
      seed: 'none',
      gateway: {
        welcome: (_hello, stream) =>
          stream === 1
            ? { refuse: { code: Code.Unauthenticated, message: 'wrong session token' } }
            : { sessionToken: `sess-secret-${stream}` },
      },
    });
    try {
      await eventually('first session', () => h.agent.status().sessionId === 'session-0', { timeoutMs: 30_000 });
      assert.equal(h.gateway.streams[0]!.hello!.resumeSessionId, '');
      assert.equal(h.gateway.streams[0]!.hello!.resumeSessionToken, '');
      h.gateway.streams[0]!.drop();
      await eventually('a fresh session after the refusal', () => h.agent.status().sessionId === 'session-2', { timeoutMs: 30_000 });
      const resumed = h.gateway.streams[1]!.hello!;
      assert.equal(resumed.resumeSessionId, 'session-0');
      assert.equal(resumed.resumeSessionToken, 'sess-secret-0');
      const fresh = h.gateway.streams[2]!.hello!;
      assert.equal(fresh.resumeSessionId, '', 'the refused session is not presented again');
      assert.equal(fresh.resumeSessionToken, '');
      assert.match(h.logs.text(), /the gateway refused to resume session session-0; the next attempt connects as a new session/);

      // The next reconnect resumes the newest session.
      h.gateway.streams[2]!.drop();
      await eventually('fourth session', () => h.agent.status().sessionId === 'session-3', { timeoutMs: 30_000 });
      assert.equal(h.gateway.streams[3]!.hello!.resumeSessionId, 'session-2');
      assert.equal(h.gateway.streams[3]!.hello!.resumeSessionToken, 'sess-secret-2');
      await pause(50);
      assert.equal(/sess-secret/.test(h.logs.text()), false, 'session tokens are never logged');
    } finally {
      await h.close();
    }
  });
});
