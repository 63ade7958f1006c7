/**
 * A promotion whose database claim was granted but that fails before the agent is told CACHING (its resume points
 * or the binding read throw) must not leave the account "promoting": it goes back to STANDBY and out of the registry,
 * so the lease keeper stops renewing a lease nobody uses, and a later standby check promotes again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { openDatabase, type Database } from '../../src/db/database.js';
import { AccountInfoSchema, AccountVerdictSchema, Verdict, type ConnectResponse } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { createAccountStreamState } from '../../src/gateway/agents/account-stream-state.js';
import { promoteStandby, type PromotionDeps } from '../../src/gateway/agents/session-promotion.js';
import { createSessionRegistry } from '../../src/gateway/agents/session-registry.js';
import type { StreamState } from '../../src/gateway/agents/stream-state.js';
import type { SyncState } from '../../src/gateway/cache/sync-state.js';
import { createLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';

/** A STANDBY stream as promotion sees it: real account records, an outbox that records what it is given. */
function standbyStream(id: string, accounts: string[]) {
  const state = createAccountStreamState();
  const infos = accounts.map((name) => create(AccountInfoSchema, { name, apiHost: `https://${name}.example:6443` }));
  state.admit(
    accounts.map((account) => create(AccountVerdictSchema, { account, verdict: Verdict.STANDBY })),
    infos,
  );
  state.verdictSent(accounts);
  const sent: ConnectResponse[] = [];
  const stream = {
    id,
    agentId: 'agent-1',
    zone: '',
    connection: 0,
    principal: { method: 'token', subject: 'agent-1', roles: new Set(['agent']) },
    stopped: false,
    accounts: state,
    outbox: { push: (m: ConnectResponse) => sent.push(m) },
    row: { updateVerdicts: async () => {} },
    log: createLogger({ level: 'silent' }),
  } as unknown as StreamState;
  return { stream, sent };
}

for (const driver of testDrivers()) {
  describe(`a promotion that fails after its claim (${driver})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    const deps = (syncState: Partial<SyncState>): PromotionDeps => ({
      gatewayId: 'gw-1',
      resumeMaxAgeSeconds: 600,
      leaseSeconds: 30,
      registry: createSessionRegistry(),
      db: database.db,
      syncState: syncState as SyncState,
    });

    it('puts the account back to STANDBY and releases it when the resume points cannot be read; a retry promotes it', async () => {
      const { stream, sent } = standbyStream('session-1', ['cluster-a']);
      let failing = true;
      const d = deps({
        resumePoints: async () => {
          if (failing) throw new Error('resume points unreadable');
          return [];
        },
      });
      await assert.rejects(promoteStandby(stream, ['cluster-a'], d), /resume points unreadable/);
      assert.equal(stream.accounts.phaseOf('cluster-a'), 'standby', 'not left promoting');
      assert.equal(d.registry.ownerOf('cluster-a'), undefined, 'released: the lease keeper no longer renews it');
      assert.equal(d.registry.leases().length, 0);
      assert.equal(sent.length, 0, 'the agent was told nothing');

      // The next standby check tries again (the row is leased to this very session, so the claim is granted again).
      failing = false;
      assert.deepEqual(await promoteStandby(stream, ['cluster-a'], d), ['cluster-a']);
      assert.equal(stream.accounts.phaseOf('cluster-a'), 'caching');
      assert.equal(d.registry.ownerOf('cluster-a'), stream);
      const verdicts = sent.map((m) => (m.message.case === 'verdicts' ? m.message.value.accounts.map((a) => Verdict[a.verdict]) : []));
      assert.deepEqual(verdicts, [['CACHING']]);
    });
  });
}
