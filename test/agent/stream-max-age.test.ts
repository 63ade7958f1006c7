/**
 * The real agent against the real gateway (PGlite) and the sandbox, with a short `agents.maxStreamAgeSeconds`: the
 * gateway ends each stream at its (jittered) maximum age; the agent reconnects at once — not after a backoff delay,
 * and not logged as a lost stream — resumes its session, its watches go on from the resume points without listing
 * again, and the account is ACTIVE after every reconnect.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createLogger } from '../../src/shared/logger.js';
import { captureLogs } from '../../testkit/log-capture.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack } from '../../testkit/stack.js';

// Long enough for the first session to list (and store) the account before its end, on a loaded machine too.
const MAX_AGE = 6;

test('at its maximum age the stream ends; the agent reconnects at once, resumes its session and does not list again', async () => {
  const stack = await startStack({
    persistent: true,
    sandbox: { bookmarkIntervalMs: 200 },
    gateway: { agents: { maxStreamAgeSeconds: MAX_AGE } },
  });
  const { gateway } = stack;
  const logs = captureLogs();
  const agent = await stack.startAgent({
    id: 'max-age-agent',
    account: { name: 'alpha', namespaces: ['demo'], kinds: ['ConfigMap'] },
    // A failure would wait up to 20 s (full jitter): the reconnects below must not go through the backoff.
    config: { clouddriver: { reconnect: { baseSeconds: 20, factor: 2, maxSeconds: 60 } }, agent: { zone: 'test' } },
    configFile: join(stack.dir, 'agent.yaml'),
    logger: createLogger({ level: 'debug', destination: logs.stream }),
  });
  const alpha = () => agent.status().accounts.find((a) => a.name === 'alpha');
  const query = async (text: string) => {
    const result = await gateway.database.db.execute(sql.raw(text));
    return Array.from((result as unknown as { rows?: Record<string, unknown>[] }).rows ?? (result as unknown as Record<string, unknown>[]));
  };
  const watchStates = () =>
    query(`select sync_gen, synced, resource_version from watch_states where account = 'alpha' order by kind, watch_namespace`);
  const welcomes = () => logs.lines().filter((l) => l.msg === 'welcomed by the gateway');
  try {
    await eventually('alpha watching', () => alpha()?.watches.some((w) => w.state === 'watching'));
    await eventually('the first list stored', async () =>
      (await watchStates()).some((r) => r.synced === true && r.resource_version !== ''),
    );
    const listed = await watchStates();
    assert.equal(welcomes().length, 1, 'the first session must be set up before its maximum age (slow machine?)');

    // Two maximum ages: two reconnects, each resuming the session before it.
    await eventually('two reconnects after the maximum age', () => welcomes().length >= 3, { timeoutMs: MAX_AGE * 1100 * 2 + 5000 });
    const all = welcomes();
    for (let i = 1; i < all.length; i++) {
      assert.equal(all[i]!.resumed, all[i - 1]!.sessionId, `welcome ${i} resumed the previous session`);
    }
    // Each stream lasted at least 90% of the maximum age: from the agent's 'connecting' line (before the gateway
    // opened the stream) to its reconnect line (after the gateway ended it). No upper bound: timers fire late on a
    // loaded machine; that the reconnect came at once, not after a backoff, shows in the log below.
    const connects = logs.lines().filter((l) => l.msg === 'connecting to the gateway');
    const ends = logs.lines().filter((l) => l.msg === 'the gateway asked for a reconnect; reconnecting now');
    assert.ok(ends.length >= 2, `${ends.length} reconnects`);
    for (const [i, end] of ends.entries()) {
      const lasted = (end.time as number) - (connects[i]!.time as number);
      assert.ok(lasted >= MAX_AGE * 900, `session ${i} ended ${lasted} ms after it was opened`);
    }
    const text = logs.text();
    assert.match(text, /the gateway asked for a reconnect; reconnecting now/);
    assert.equal(/lost the gateway stream|cannot connect to the gateway/.test(text), false, 'a maximum-age end is not a failure');

    await eventually('alpha watching again', () => alpha()?.verdict === 'caching' && alpha()!.watches.every((w) => w.state === 'watching'));
    const [account] = await query(`select state from accounts where name = 'alpha'`);
    assert.equal(account?.state, 'ACTIVE');
    // Resumed from the stored resource versions: no new full list (a list would start a new generation).
    assert.deepEqual(
      (await watchStates()).map((r) => r.sync_gen),
      listed.map((r) => r.sync_gen),
    );
  } finally {
    await stack.close();
  }
});
