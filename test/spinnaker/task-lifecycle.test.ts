/**
 * Clouddriver tasks on a real database (each driver): stored RUNNING with Orca's request id unique per caller, history
 * written as it happens, one terminal state; a gateway that shuts down fails its running tasks saying so; a task left
 * running by a replica that died is failed at that replica's next start, or by another replica reading it once its
 * replica is gone and its row has stopped moving — never while it still moves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createClouddriverTasks } from '../../src/gateway/spinnaker/clouddriver-tasks.js';
import type { AgentCalls } from '../../src/gateway/spinnaker/agent-calls.js';
import { createTaskRunner, type PreparedOperation } from '../../src/gateway/spinnaker/task-runner.js';
import { createTaskStore } from '../../src/gateway/spinnaker/task-store.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';

const context = { user: 'alice', application: 'app', executionId: 'exec' };
const noCalls: AgentCalls = { run: async () => assert.fail('no cluster call expected') };

/** An operation that reports progress, then waits until released (or the runner stops). */
function gated(): { op: PreparedOperation; release: () => void; started: Promise<void> } {
  let release!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  const gate = new Promise<void>((r) => (release = r));
  return {
    release,
    started,
    op: {
      name: 'scaleManifest',
      operationClass: 'KubernetesScaleManifestOperation',
      account: 'a',
      async run(ctx) {
        ctx.status('SCALE_KUBERNETES_MANIFEST', 'working');
        markStarted();
        await Promise.race([
          gate,
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
        ]);
        return { done: true };
      },
    },
  };
}

/**
 * Waits until the operation's progress line ("working") is stored: the runner writes history lines in the background,
 * in order, after the operation reported them.
 */
async function progressStored(
  tasks: { view(id: string): Promise<{ history: { status: string }[] } | undefined> },
  id: string,
): Promise<void> {
  for (const until = Date.now() + 20_000; !(await tasks.view(id))?.history.some((h) => h.status === 'working'); ) {
    assert.ok(Date.now() < until, 'the progress line was stored');
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const driver of testDrivers()) {
  describe(`Clouddriver task lifecycle (${driver})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    const replica = (selfId: string, alive: (id: string) => boolean = () => false, touchMs?: number) => {
      const store = createTaskStore(database);
      const runner = createTaskRunner({ store, logger: createSilentLogger(), callsFor: () => noCalls, touchMs });
      return { store, runner, tasks: createClouddriverTasks({ selfId, store, runner, logger: createSilentLogger(), replicaAlive: alive }) };
    };
    const age = (id: string, seconds: number) =>
      database.db.execute(sql`update spinnaker_tasks set updated_at = now() - make_interval(secs => ${seconds}) where id = ${id}`);

    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test('a task runs to one terminal state; the same request id from the same caller returns it, another caller gets its own', async () => {
      const { tasks, runner } = replica('gw-1');
      const { op, release, started } = gated();
      const first = await tasks.submit({ principal: 'token:orca', clientRequestId: 'r-1', operations: [op], context });
      await started;
      await progressStored(tasks, first.id);
      assert.equal((await tasks.view(first.id))!.status.completed, false, 'progress is visible while it runs');
      const again = await tasks.submit({ principal: 'token:orca', clientRequestId: 'r-1', operations: [op], context });
      assert.deepEqual([again.id, again.created], [first.id, false]);
      const other = await tasks.submit({ principal: 'token:other', clientRequestId: 'r-1', operations: [gated().op], context });
      assert.notEqual(other.id, first.id);
      release();
      await first.done;
      const view = (await tasks.view(first.id))!;
      assert.deepEqual(view.status, {
        phase: 'ORCHESTRATION',
        status: 'Orchestration completed.',
        complete: true,
        completed: true,
        failed: false,
        retryable: false,
      });
      assert.deepEqual(view.resultObjects, [{ done: true }]);
      assert.equal(view.requestId, 'r-1');
      await runner.close();
    });

    test('a gateway that shuts down fails its running tasks, saying the last operation may or may not have been applied', async () => {
      const { tasks, runner } = replica('gw-2');
      const { op, started } = gated();
      const { id } = await tasks.submit({ principal: 'token:orca', operations: [op], context });
      await started;
      await runner.close();
      const view = (await tasks.view(id))!;
      assert.equal(view.status.failed, true);
      assert.equal(view.resultObjects[0]!.type, 'EXCEPTION');
      assert.match(
        String(view.resultObjects[0]!.message),
        /shut down while the task ran; its last operation may or may not have been applied/,
      );
    });

    test("a replica's next start fails what its previous process left running; another replica does so only once the row stopped moving and the replica is gone", async () => {
      // Its row is never touched again (as after kill -9), however long the test takes.
      const dead = replica('gw-dead', () => false, 3_600_000);
      const { op, started } = gated();
      const { id } = await dead.tasks.submit({ principal: 'token:orca', operations: [op], context });
      await started;
      // The last write this runner makes: it cannot land after the row is aged below.
      await progressStored(dead.tasks, id);
      // The process dies: nothing more is written (the runner is abandoned, not closed).
      let aliveAnswer = true;
      const reader = replica('gw-reader', () => aliveAnswer);
      assert.equal((await reader.tasks.view(id))!.status.completed, false, 'its replica is alive: still running');
      aliveAnswer = false;
      assert.equal((await reader.tasks.view(id))!.status.completed, false, 'the row moved moments ago: still running');
      await age(id, 60);
      const lost = (await reader.tasks.view(id))!;
      assert.equal(lost.status.failed, true);
      assert.match(String(lost.resultObjects[0]!.message), /replica running this task \(gw-dead\) stopped before it finished/);

      const second = await dead.tasks.submit({ principal: 'token:orca', operations: [gated().op], context });
      const restarted = replica('gw-dead');
      assert.equal(await restarted.tasks.recover(), 1);
      assert.equal((await restarted.tasks.view(second.id))!.status.failed, true);
      await dead.runner.close();
    });
  });
}
