/**
 * The pipeline of docs/spinnaker.md ("A pipeline") runs as written: each stage is sent as Orca's task for it sends it
 * (`{"<stage type>": stage context}`), monitored as MonitorKatoTask does, and followed by Orca's wait for stable where
 * the stage has one — against the sandbox, through the Clouddriver API. The doc cannot drift from what works.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

/** The first ```json block after the heading "## A pipeline". */
function documentedPipeline(): Obj {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/spinnaker.md', import.meta.url)), 'utf8');
  const section = doc.slice(doc.indexOf('## A pipeline'));
  const match = /```json\n([\s\S]*?)\n```/.exec(section);
  assert.ok(match, 'docs/spinnaker.md has a pipeline JSON under "## A pipeline"');
  return JSON.parse(match[1]!) as Obj;
}

/** Which stages expect result objects (Orca's `kato.result.expected`) and wait for stable afterwards. */
const STAGES: Record<string, { resultExpected: boolean; waits: boolean }> = {
  deployManifest: { resultExpected: true, waits: true },
  patchManifest: { resultExpected: true, waits: true },
  deleteManifest: { resultExpected: true, waits: false },
  scaleManifest: { resultExpected: false, waits: true },
  undoRolloutManifest: { resultExpected: false, waits: true },
};

describe('the pipeline in docs/spinnaker.md', { concurrency: false }, () => {
  let system: Stack;
  let orca: OrcaClient;
  const pipeline = documentedPipeline();
  const account = pipeline.stages[0].account as string;

  before(async () => {
    system = await startStack({ driver: 'pglite', agents: [{ id: 'agent-1', account: { name: account } }] });
    orca = createOrcaClient(system.gateway.httpUrl, { 'X-SPINNAKER-USER': 'docs', 'X-SPINNAKER-APPLICATION': pipeline.application });
  });
  after(async () => {
    await system?.close();
  });

  test('every stage succeeds, in order, with the effect it names', async () => {
    const live = () => system.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'pipeline-web') as Obj | undefined;
    const seen: string[] = [];
    for (const stage of pipeline.stages as Obj[]) {
      const kind = STAGES[stage.type];
      assert.ok(kind, `the test knows stage type ${stage.type}`);
      const description = stage.type === 'deployManifest' ? { ...stage, enableTraffic: true } : stage;
      const outcome = await orca.run(stage.type, description, kind.resultExpected);
      assert.equal(outcome.status, 'SUCCEEDED', `${stage.name}: ${JSON.stringify(outcome.task)}`);
      if (kind.waits) {
        // Deploy and patch promote their outputs; the others wait on the name as the user typed it.
        const names = outcome.outputs.manifestNamesByNamespace ?? { [stage.location ?? '_']: [stage.manifestName] };
        const stable = await orca.waitStable(account, names);
        assert.equal(stable.status, 'SUCCEEDED', `${stage.name}: ${stable.messages.join('; ')}`);
      }
      seen.push(stage.type);
      if (stage.type === 'scaleManifest') assert.equal(live()!.spec.replicas, 3);
      if (stage.type === 'patchManifest') assert.equal(live()!.spec.template.spec.containers[0].image, 'nginx:1.27');
      if (stage.type === 'undoRolloutManifest') assert.equal(live()!.spec.template.spec.containers[0].image, 'nginx:1.25');
    }
    assert.deepEqual(seen, ['deployManifest', 'scaleManifest', 'patchManifest', 'undoRolloutManifest', 'deleteManifest']);
    assert.equal(live(), undefined, 'the last stage deleted it');
  });
});
