/**
 * Apply operations with mutated manifests, run by the agent's operation executor against the sandbox API server (as
 * an agent runs what the gateway sends): YAML and JSON manifests edited line by line, structurally, byte by byte,
 * with hostile names, kinds and namespaces, with parser bombs; and hostile apply options. The oracle: the operation
 * succeeds (the manifest was still valid), or its result is a 4xx with a reason — never a 5xx or InternalError, and
 * the executor never throws.
 */
import { create } from '@bufbuild/protobuf';
import { OperationSchema } from '../../../src/gen/outpost/agent/v1/operation_pb.js';
import { executeOperation } from '../../../src/agent/operations/operation-executor.js';
import type { Rng } from '../../../testkit/rng.js';
import { accepted, failure, guarded, typed, type HostileCase } from '../hostile-case.js';
import { hostileString } from '../hostile-strings.js';
import { uniqueTag } from '../agent-messages.js';
import { mutateYaml } from '../yaml-mutations.js';
import { flipBits } from '../byte-mutations.js';

const SETTINGS = { serverSideApplyKinds: ['Lease'], defaultFieldManager: 'outpost', deletePollMs: 20 };

function templates(tag: string): string[] {
  return [
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${tag}\n  namespace: default\n  labels: {app: web}\ndata:\n  a: "1"\n`,
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-${tag}\n  namespace: default\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: main\n          image: nginx:1\n`,
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-${tag}\n  namespace: default\nspec:\n  ports:\n    - port: 80\n  selector: {app: web}\n`,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `l-${tag}`, namespace: 'default' }, data: { b: '2' } }],
    }),
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-${tag}\n`,
  ];
}

/** A manifest text: a template mutated (one document of several, when it has several), or a multi-document mix. */
function mutatedManifest(rng: Rng, tag: string): { text: string; how: string } {
  const all = templates(tag);
  const base = rng.chance(0.3) ? all.filter((t) => !t.startsWith('{')).join('---\n') : rng.pick(all);
  const docs = base.startsWith('{') ? [base] : base.split('---\n');
  const i = rng.int(0, docs.length - 1);
  const choice = rng.int(0, 9);
  if (choice < 6) {
    const m = mutateYaml(rng, docs[i]!);
    docs[i] = m.text;
    return { text: docs.join(base.startsWith('{') ? '' : '---\n'), how: `document ${i + 1}: ${m.how}` };
  }
  if (choice < 8) {
    const field = rng.pick(['name', 'namespace', 'kind', 'apiVersion', 'generateName', 'resourceVersion', 'uid']);
    const value = hostileString(rng);
    const doc = (docs[i] ?? '').replace(new RegExp(`(^|\\n)(\\s*)${field}: [^\\n]*`), `$1$2${field}: ${JSON.stringify(value)}`);
    docs[i] = doc.includes(`${field}: `) ? doc : `${doc}\n${field}: ${JSON.stringify(value)}`;
    return { text: docs.join('---\n'), how: `document ${i + 1}: ${field} = ${JSON.stringify(value.slice(0, 30))}` };
  }
  if (choice === 8) {
    const m = flipBits(rng, new TextEncoder().encode(base));
    return { text: new TextDecoder().decode(m.bytes), how: m.how };
  }
  return {
    text: rng.pick([
      '',
      '---',
      'null',
      '[]',
      '{}',
      '[1, 2]',
      '"text"',
      'kind: List\nitems: [1]',
      '- a\n- b',
      'apiVersion: v1\nkind: ConfigMap',
    ]),
    how: 'not a manifest',
  };
}

function manifestCase(rng: Rng): HostileCase {
  const tag = uniqueTag(rng);
  const { text, how } = mutatedManifest(rng, tag);
  const options = {
    serverSide: rng.chance(0.3),
    forceConflicts: rng.chance(0.2),
    fieldManager: rng.chance(0.2) ? hostileString(rng) : '',
    namespace: rng.chance(0.2) ? hostileString(rng) : '',
  };
  const name = `${how}${options.serverSide ? ' (server-side)' : ''}${options.namespace ? ' + hostile namespace' : ''}${options.fieldManager ? ' + hostile field manager' : ''}`;
  return {
    category: 'manifests',
    name,
    run: (target) =>
      guarded(name, async () => {
        const { client, resolver } = await target.kube();
        const operation = create(OperationSchema, {
          id: `hx-apply-${tag}`,
          account: 'sandbox',
          spec: { case: 'apply', value: { manifests: text, ...options } },
        });
        const result = await executeOperation(operation, {
          client,
          resolver,
          settings: SETTINGS,
          retries: { maxAttempts: 2, backoffMs: 5 },
          signal: AbortSignal.timeout(30_000),
          timeoutMs: 30_000,
        });
        if (result.success) return accepted(`${name}: ${result.statusCode}`);
        if (result.statusCode >= 400 && result.statusCode < 500 && result.reason !== 'InternalError') {
          return typed(
            `${name}: ${result.statusCode} ${result.reason}: ${result.message.slice(0, 80)}`,
            `${result.statusCode} ${result.reason}`,
          );
        }
        return failure(`${name}: ${result.statusCode} ${result.reason}: ${result.message.slice(0, 200)}`);
      }),
  };
}

/** Case factory of the manifests category. */
export const MANIFEST_CASES = { manifests: manifestCase };
