import { test } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { AccountDefinitionSchema } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { accountConfigFromDefinition } from '../../src/agent/accounts/account-definition.js';
import { parseAgentConfig } from '../../src/agent/index.js';

test('an AccountDefinition maps onto the config-file account shape and obeys the same rules', () => {
  const definition = create(AccountDefinitionSchema, {
    name: 'dyn-1',
    kubeconfigFile: 'kube/dyn.yaml',
    context: 'ctx',
    namespaces: ['web'],
    kinds: ['Deployment.apps'],
    omitKinds: ['Event'],
    onlyNamespacedResources: true,
    properties: { team: 'web' },
    customResources: [{ kind: 'Widget.example.com', scope: 'Namespaced' }, { kind: 'Gadget.example.com' }],
  });
  const { config } = accountConfigFromDefinition(definition, '/etc/outpost');
  const fromFile = parseAgentConfig(
    {
      kubernetes: {
        accounts: [
          {
            name: 'dyn-1',
            kubeconfigFile: '/etc/outpost/kube/dyn.yaml',
            context: 'ctx',
            namespaces: ['web'],
            kinds: ['Deployment.apps'],
            omitKinds: ['Event'],
            onlyNamespacedResources: true,
            properties: { team: 'web' },
            customResourceDefinitions: [{ kind: 'Widget.example.com', scope: 'Namespaced' }, { kind: 'Gadget.example.com' }],
          },
        ],
      },
    },
    {},
  ).kubernetes.accounts[0];
  assert.deepEqual(config, fromFile, 'same configuration as the equivalent file entry (relative path resolved)');

  const inCluster = accountConfigFromDefinition(create(AccountDefinitionSchema, { name: 'local', serviceAccount: true }));
  assert.equal(inCluster.config?.serviceAccount, true);
  assert.equal(inCluster.config?.kubeconfigFile, undefined);

  const bad = accountConfigFromDefinition(
    create(AccountDefinitionSchema, {
      name: 'Bad',
      kubeconfigFile: '/k',
      serviceAccount: true,
      namespaces: ['Not_A_Namespace'],
      customResources: [{ kind: 'W.x', scope: 'Sideways' }],
    }),
  );
  assert.deepEqual(bad.issues?.map((i) => i.path).sort(), ['customResourceDefinitions[0].scope', 'name', 'namespaces[0]'].sort());
  const both = accountConfigFromDefinition(create(AccountDefinitionSchema, { name: 'both', kubeconfigFile: '/k', serviceAccount: true }));
  assert.deepEqual(
    both.issues?.map((i) => i.path),
    ['serviceAccount'],
  );
});

test("a dynamic account carries no kubeProxy settings: the gateway cannot loosen the agent's Secret policy, so it is deny", () => {
  const { config } = accountConfigFromDefinition(create(AccountDefinitionSchema, { name: 'dyn-2', serviceAccount: true }));
  assert.deepEqual(config?.kubeProxy, { enabled: true, identity: 'caller', groups: [], secrets: 'deny' });
});
