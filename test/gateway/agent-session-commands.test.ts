/**
 * Account commands over real HTTP/2 streams: the gateway's AccountCommandBus reaches the welcomed streams of the
 * zone it names (every stream for ''), and the dynamic accounts of an agent's zone are pushed as ADD commands right
 * after its Welcome.
 */
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { after, before, describe, test } from 'node:test';
import {
  AccountAction,
  AccountCommandSchema,
  AccountDefinitionSchema,
  type AccountCommand,
  type AccountDefinition,
  type ConnectResponse,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { DynamicAccountSource } from '../../src/gateway/agents/account-commands.js';
import { testDrivers } from '../../testkit/databases.js';
import { hello, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

function definition(name: string): AccountDefinition {
  return create(AccountDefinitionSchema, {
    name,
    kubeconfigFile: `/etc/outpost/${name}.kubeconfig`,
    namespaces: ['default'],
    kinds: ['ConfigMap'],
  });
}

function command(action: AccountAction, name: string): AccountCommand {
  return create(AccountCommandSchema, { action, account: definition(name) });
}

/** Every account command received so far, as "ADD name" / "REMOVE name". */
function commandsOf(s: TestAgentStream): string[] {
  return s.received
    .filter((m): m is ConnectResponse & { message: { case: 'accountCommand' } } => m.message.case === 'accountCommand')
    .map((m) => `${AccountAction[m.message.value.action]} ${m.message.value.account?.name}`);
}

for (const driver of testDrivers()) {
  describe(`agent account commands (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const asked: string[] = [];
    const dynamic: Record<string, string[]> = { east: ['dyn-east-1', 'dyn-east-2'], west: [] };
    const source: DynamicAccountSource = {
      async activeFor(zone) {
        asked.push(zone);
        return (dynamic[zone] ?? []).map(definition);
      },
    };
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 5 } }, { dynamicAccounts: source });
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
    });
    /** Connects an agent in `zone` and waits for its Welcome. */
    const connect = async (agentId: string, zone: string, account: string) => {
      const s = openAgentStream(t.gateway.grpcUrl);
      streams.push(s);
      s.send(hello(agentId, [{ name: account }], { zone }));
      assert.equal((await s.next()).message.case, 'welcome');
      return s;
    };

    test('the dynamic accounts of the zone are pushed as ADD commands right after the Welcome', async () => {
      const east = await connect('agent-east-dyn', 'east', 'east-own');
      await eventually('two commands on the east stream', () => commandsOf(east).length === 2);
      assert.deepEqual(commandsOf(east), ['ADD dyn-east-1', 'ADD dyn-east-2']);
      const idx = east.received.findIndex((m) => m.message.case === 'accountCommand');
      assert.ok(idx > east.received.findIndex((m) => m.message.case === 'welcome'), 'commands follow the Welcome');
      const pushed = east.received[idx]!.message.value as AccountCommand;
      assert.equal(pushed.account?.kubeconfigFile, '/etc/outpost/dyn-east-1.kubeconfig');
      const west = await connect('agent-west-dyn', 'west', 'west-own');
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(commandsOf(west), []);
      assert.ok(asked.includes('east') && asked.includes('west'));
      east.end();
      west.end();
      await Promise.all([east.ended, west.ended]);
    });

    test('the bus reaches the welcomed streams of the zone only; zone "" reaches every stream', async () => {
      const east = await connect('agent-east', 'east', 'east-a');
      const west = await connect('agent-west', 'west', 'west-a');
      await eventually('the two dynamic commands on the east stream', () => commandsOf(east).length === 2); // the dynamic ones

      assert.equal(t.gateway.accountCommands.push('east', command(AccountAction.ADD, 'pushed-east')), 1);
      assert.equal(t.gateway.accountCommands.push('west', command(AccountAction.REMOVE, 'pushed-west')), 1);
      assert.equal(t.gateway.accountCommands.push('north', command(AccountAction.ADD, 'nobody')), 0);
      assert.equal(t.gateway.accountCommands.push('', command(AccountAction.ADD, 'pushed-all')), 2);
      await eventually('four commands on east, two on west', () => commandsOf(east).length === 4 && commandsOf(west).length === 2);
      assert.deepEqual(commandsOf(east), ['ADD dyn-east-1', 'ADD dyn-east-2', 'ADD pushed-east', 'ADD pushed-all']);
      assert.deepEqual(commandsOf(west), ['REMOVE pushed-west', 'ADD pushed-all']);

      east.end();
      await east.ended;
      assert.equal(t.gateway.accountCommands.push('east', command(AccountAction.ADD, 'after-end')), 0, 'an ended stream is not told');
      west.end();
      await west.ended;
    });
  });
}
