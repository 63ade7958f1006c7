/**
 * The object page's graph without a browser: what object bodies say about their neighbours (object-refs.ts), the
 * graph built from loaded relations (relation-graph.ts), its dagre layout (graph-layout.ts), names fitted to a node's box (graph-geometry.ts) and where the arrow keys
 * move the focus in it (graph-keys.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, type JsonObject } from '@bufbuild/protobuf';
import { HealthState, type KubernetesObject, KubernetesObjectSchema } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { nextNodeId } from '../../web/src/graph-keys.js';
import { fitName, NODE_HEIGHT, NODE_WIDTH } from '../../web/src/graph-geometry.js';
import { layoutGraph } from '../../web/src/graph-layout.js';
import { ingressServiceNames, ownerRefs, scaleTarget, selectorMatches, selectorText, serviceSelector } from '../../web/src/object-refs.js';
import { relationGraph } from '../../web/src/relation-graph.js';
import type { Relations, TreeNode } from '../../web/src/relations-load.js';

function obj(kind: string, name: string, body: JsonObject = {}, labels: Record<string, string> = {}): KubernetesObject {
  return create(KubernetesObjectSchema, {
    account: 'a',
    kind,
    namespace: 'demo',
    name,
    uid: `uid-${kind}-${name}`,
    labels,
    object: { kind, metadata: { name, namespace: 'demo' }, ...body },
    health: { state: HealthState.HEALTHY, reason: 'Stable' },
  });
}

const tree = (o: KubernetesObject, children: TreeNode[] = [], byName = false): TreeNode => ({
  kind: o.kind,
  name: o.name,
  object: o,
  children,
  more: false,
  ...(byName ? { byName } : {}),
});

describe('what an object body names', () => {
  test('ownerReferences, in order; malformed entries are skipped', () => {
    const pod = obj('Pod', 'web-1', {
      metadata: { ownerReferences: [{ kind: 'ReplicaSet', name: 'web-abc', controller: true }, { kind: 'Node' }, 'x'] },
    });
    assert.deepEqual(ownerRefs(pod), [{ kind: 'ReplicaSet', name: 'web-abc' }]);
    assert.deepEqual(ownerRefs(obj('Pod', 'bare')), []);
  });

  test("a Service's selector; none, or an empty one, selects no pod", () => {
    const svc = obj('Service', 'web', { spec: { selector: { app: 'web', tier: 'front' } } });
    assert.deepEqual(serviceSelector(svc), { app: 'web', tier: 'front' });
    assert.equal(selectorText(serviceSelector(svc)!), 'app=web,tier=front');
    assert.equal(serviceSelector(obj('Service', 'manual', { spec: {} })), undefined);
    assert.equal(serviceSelector(obj('Service', 'empty', { spec: { selector: {} } })), undefined);
    assert.ok(selectorMatches({ app: 'web' }, { app: 'web', pod: 'x' }));
    assert.ok(!selectorMatches({ app: 'web', tier: 'front' }, { app: 'web' }));
  });

  test("an Ingress's Services: default backend, every rule's paths, the older serviceName, each once", () => {
    const ingress = obj('Ingress', 'edge', {
      spec: {
        defaultBackend: { service: { name: 'fallback', port: { number: 80 } } },
        rules: [
          { host: 'a.example', http: { paths: [{ path: '/', backend: { service: { name: 'web' } } }] } },
          { host: 'b.example', http: { paths: [{ backend: { service: { name: 'api' } } }, { backend: { serviceName: 'web' } }] } },
          { host: 'c.example' },
          { http: { paths: [{ backend: { resource: { kind: 'Bucket', name: 'static' } } }] } },
        ],
      },
    });
    assert.deepEqual(ingressServiceNames(ingress), ['fallback', 'web', 'api']);
    assert.deepEqual(ingressServiceNames(obj('Ingress', 'empty')), []);
  });

  test("an HPA's scale target", () => {
    const hpa = obj('HorizontalPodAutoscaler', 'web', {
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } },
    });
    assert.deepEqual(scaleTarget(hpa), { kind: 'Deployment', name: 'web' });
    assert.equal(scaleTarget(obj('HorizontalPodAutoscaler', 'none', { spec: {} })), undefined);
  });
});

describe('the graph of the relations', () => {
  const deploy = obj('Deployment', 'web');
  const rs = obj('ReplicaSet', 'web-abc');
  const pods = ['web-abc-1', 'web-abc-2', 'web-abc-3'].map((n) => obj('Pod', n, {}, { app: 'web' }));
  const svc = obj('Service', 'web');
  const endpoints = obj('Endpoints', 'web');
  const ingress = obj('Ingress', 'edge');
  const relations: Relations = {
    owners: [],
    dependents: [
      tree(
        rs,
        pods.map((p) => tree(p)),
      ),
    ],
    more: false,
    links: [
      ...pods.map((p) => ({
        from: { kind: 'Service', name: 'web', object: svc },
        to: { kind: 'Pod', name: p.name, object: p },
        verb: 'selects' as const,
      })),
      { from: { kind: 'Ingress', name: 'edge', object: ingress }, to: { kind: 'Service', name: 'web', object: svc }, verb: 'routes to' },
      { from: { kind: 'HorizontalPodAutoscaler', name: 'web' }, to: { kind: 'Deployment', name: 'web', object: deploy }, verb: 'scales' },
    ],
  };

  test("a Deployment's graph: ownership solid, selectors dashed, names dotted, each object and edge once", () => {
    const graph = relationGraph(deploy, relations);
    assert.deepEqual(
      graph.nodes.map((n) => [n.id, n.center, n.object !== undefined]),
      [
        ['Deployment/web', true, true],
        ['ReplicaSet/web-abc', false, true],
        ['Pod/web-abc-1', false, true],
        ['Pod/web-abc-2', false, true],
        ['Pod/web-abc-3', false, true],
        ['Service/web', false, true],
        ['Ingress/edge', false, true],
        ['HorizontalPodAutoscaler/web', false, false],
      ],
    );
    assert.deepEqual(
      graph.edges.map((e) => `${e.from} ${e.kind} ${e.to}`),
      [
        'Deployment/web owns ReplicaSet/web-abc',
        'ReplicaSet/web-abc owns Pod/web-abc-1',
        'ReplicaSet/web-abc owns Pod/web-abc-2',
        'ReplicaSet/web-abc owns Pod/web-abc-3',
        'Service/web selects Pod/web-abc-1',
        'Service/web selects Pod/web-abc-2',
        'Service/web selects Pod/web-abc-3',
        'Ingress/edge names Service/web',
        'HorizontalPodAutoscaler/web names Deployment/web',
      ],
    );
  });

  test("a Pod's graph: the owner chain into it, an owner not in the cache kept as a named node", () => {
    const pod = pods[0]!;
    const graph = relationGraph(pod, {
      owners: [
        { kind: 'Deployment', name: 'web', children: [], more: false },
        { kind: 'ReplicaSet', name: 'web-abc', object: rs, children: [], more: false },
      ],
      dependents: [],
      more: false,
      links: [{ from: { kind: 'Service', name: 'web', object: svc }, to: { kind: 'Pod', name: pod.name, object: pod }, verb: 'selects' }],
    });
    assert.deepEqual(
      graph.edges.map((e) => `${e.from} ${e.kind} ${e.to}`),
      ['Deployment/web owns ReplicaSet/web-abc', 'ReplicaSet/web-abc owns Pod/web-abc-1', 'Service/web selects Pod/web-abc-1'],
    );
    assert.equal(graph.nodes.find((n) => n.id === 'Deployment/web')!.object, undefined);
    assert.deepEqual(
      graph.nodes.filter((n) => n.center).map((n) => n.id),
      ['Pod/web-abc-1'],
    );
  });

  test("a Service's Endpoints hang from it by name; a mention without the object is completed by a later one", () => {
    const graph = relationGraph(svc, {
      owners: [],
      dependents: [tree(endpoints, [], true)],
      more: false,
      links: [
        { from: { kind: 'Ingress', name: 'edge' }, to: { kind: 'Service', name: 'web', object: svc }, verb: 'routes to' },
        { from: { kind: 'Ingress', name: 'edge', object: ingress }, to: { kind: 'Service', name: 'web', object: svc }, verb: 'routes to' },
      ],
    });
    assert.deepEqual(
      graph.edges.map((e) => `${e.from} ${e.kind} ${e.to}`),
      ['Service/web names Endpoints/web', 'Ingress/edge names Service/web'],
    );
    assert.equal(graph.nodes.find((n) => n.id === 'Ingress/edge')!.object, ingress);
  });

  test('laid out left to right: every edge from the right side of a column to the left side of one further right', () => {
    const graph = relationGraph(deploy, relations);
    const layout = layoutGraph(graph);
    const at = new Map(layout.nodes.map((n) => [n.id, n]));
    for (const e of layout.edges) {
      const from = at.get(e.from)!;
      const to = at.get(e.to)!;
      assert.ok(from.x + NODE_WIDTH < to.x, `${e.from} left of ${e.to}`);
      assert.deepEqual(e.points[0], { x: from.x + NODE_WIDTH, y: from.y + NODE_HEIGHT / 2 });
      assert.deepEqual(e.points.at(-1), { x: to.x, y: to.y + NODE_HEIGHT / 2 });
    }
    for (const n of layout.nodes) assert.ok(n.x >= 0 && n.y >= 0 && n.x + NODE_WIDTH <= layout.width && n.y + NODE_HEIGHT <= layout.height);
    const podColumn = new Set(layout.nodes.filter((n) => n.kind === 'Pod').map((n) => n.x));
    assert.equal(podColumn.size, 1, 'the Pods share a column');
    assert.deepEqual(layoutGraph(graph), layout, 'the same graph lays out the same');
  });

  test('arrow keys: Right and Left along edges (nearest in height), Up and Down within a column, Home to the page object', () => {
    const layout = layoutGraph(relationGraph(deploy, relations));
    assert.equal(nextNodeId(layout, 'Deployment/web', 'ArrowRight'), 'ReplicaSet/web-abc');
    assert.equal(nextNodeId(layout, 'Deployment/web', 'ArrowLeft'), 'HorizontalPodAutoscaler/web');
    assert.equal(nextNodeId(layout, 'HorizontalPodAutoscaler/web', 'ArrowLeft'), undefined);
    const column = layout.nodes
      .filter((n) => n.kind === 'Pod')
      .sort((a, b) => a.y - b.y)
      .map((n) => n.id);
    assert.equal(nextNodeId(layout, column[0]!, 'ArrowDown'), column[1]);
    assert.equal(nextNodeId(layout, column[1]!, 'ArrowUp'), column[0]);
    assert.equal(nextNodeId(layout, column[0]!, 'ArrowUp'), undefined);
    assert.equal(nextNodeId(layout, column[2]!, 'ArrowDown'), undefined);
    const left = nextNodeId(layout, column[0]!, 'ArrowLeft');
    assert.ok(left === 'ReplicaSet/web-abc' || left === 'Service/web', String(left));
    const pod = layout.nodes.find((n) => n.id === column[0])!;
    const owners = layout.nodes.filter((n) => n.id === 'ReplicaSet/web-abc' || n.id === 'Service/web');
    const nearest = owners.sort((a, b) => Math.abs(a.y - pod.y) - Math.abs(b.y - pod.y))[0]!;
    assert.equal(left, nearest.id, 'of two objects pointing at it, the nearer in height');
    assert.equal(nextNodeId(layout, column[2]!, 'Home'), 'Deployment/web');
    assert.equal(nextNodeId(layout, 'Deployment/web', 'Enter'), undefined);
    assert.equal(nextNodeId(layout, 'Pod/gone', 'ArrowRight'), undefined);
  });

  test('a long name keeps its start and its end', () => {
    assert.equal(fitName('web'), 'web');
    const name = 'checkout-frontend-7d9f8c6b5-x2k9q';
    const fitted = fitName(name);
    assert.equal(fitted.length, 26);
    assert.ok(fitted.startsWith('checkout-fron') && fitted.endsWith('c6b5-x2k9q') && fitted.includes('…'), fitted);
  });
});
