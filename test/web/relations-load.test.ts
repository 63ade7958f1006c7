/**
 * The object page's relations as loadRelations reads them from the cache, against an in-memory ObjectService: the
 * owner chain and the dependents, a Service's pods by its label selector (and never every pod for a Service without
 * one), the Services selecting a Pod of the graph, the Ingresses naming one of its Services, the HPAs scaling one of
 * its workloads, each link once; a kind the account does not cache (NOT_FOUND) adds nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, type JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  type GetObjectRequest,
  type KubernetesObject,
  KubernetesObjectSchema,
  type ListObjectsRequest,
} from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { Api } from '../../web/src/api.js';
import { loadRelations, type Relations } from '../../web/src/relations-load.js';

function obj(kind: string, name: string, body: JsonObject = {}, labels: Record<string, string> = {}): KubernetesObject {
  const uid = `uid-${kind}-${name}`;
  return create(KubernetesObjectSchema, {
    account: 'a',
    kind,
    namespace: 'demo',
    name,
    uid,
    labels,
    object: { kind, ...body, metadata: { name, namespace: 'demo', uid, labels, ...((body.metadata as JsonObject) ?? {}) } },
  });
}

const owned = (kind: string, name: string) => ({ metadata: { ownerReferences: [{ kind, name, controller: true }] } });

/** An ObjectService over `objects`, answering as the gateway does for the fields loadRelations sends. */
function fakeApi(objects: KubernetesObject[], log: string[] = []): Api {
  const kinds = new Set(objects.map((o) => o.kind));
  const matches = (o: KubernetesObject, selector: string) =>
    selector.split(',').every((pair) => {
      const [k, v] = pair.split('=');
      return o.labels[k!] === v;
    });
  const objectsClient = {
    async getObject(req: GetObjectRequest) {
      const found = objects.find((o) => o.kind === req.kind && o.namespace === req.namespace && o.name === req.name);
      if (!found) throw new ConnectError('not found', Code.NotFound);
      return { object: found };
    },
    async listObjects(req: Partial<ListObjectsRequest>) {
      log.push(`list ${req.kind || '*'}${req.labelSelector ? ` ${req.labelSelector}` : ''}${req.ownerUid ? ` owner ${req.ownerUid}` : ''}`);
      if (req.kind && !kinds.has(req.kind)) throw new ConnectError(`kind "${req.kind}" not found`, Code.NotFound);
      const listed = objects.filter(
        (o) =>
          (!req.kind || o.kind === req.kind) &&
          o.namespace === req.namespace &&
          (!req.labelSelector || matches(o, req.labelSelector)) &&
          (!req.ownerUid ||
            ((o.object?.metadata as JsonObject | undefined)?.ownerReferences as JsonObject[] | undefined)?.some(
              (r) => `uid-${r.kind}-${r.name}` === req.ownerUid,
            )),
      );
      return { objects: listed, nextPageToken: '' };
    },
  };
  return { objects: objectsClient } as unknown as Api;
}

const links = (r: Relations) => r.links.map((l) => `${l.from.kind}/${l.from.name} ${l.verb} ${l.to.kind}/${l.to.name}`);
const signal = new AbortController().signal;

const deploy = obj('Deployment', 'web', { spec: { replicas: 2 } }, { app: 'web' });
const rs = obj('ReplicaSet', 'web-abc', owned('Deployment', 'web'), { app: 'web' });
const pods = ['web-abc-1', 'web-abc-2'].map((n) => obj('Pod', n, owned('ReplicaSet', 'web-abc'), { app: 'web' }));
const other = obj('Pod', 'other', {}, { app: 'other' });
const svc = obj('Service', 'web', { spec: { selector: { app: 'web' } } });
const manual = obj('Service', 'manual', { spec: {} });
const endpoints = obj('Endpoints', 'web');
const ingress = obj('Ingress', 'edge', { spec: { rules: [{ http: { paths: [{ backend: { service: { name: 'web' } } }] } }] } });
const hpa = obj('HorizontalPodAutoscaler', 'web', { spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' } } });
const cluster = [deploy, rs, ...pods, other, svc, manual, endpoints, ingress, hpa];

describe('the relations loaded from the cache', () => {
  test("a Deployment: its ReplicaSet and Pods, the Service selecting them, the Service's Ingress, the HPA scaling it", async () => {
    const r = await loadRelations(fakeApi(cluster), deploy, signal);
    assert.deepEqual(r.owners, []);
    assert.deepEqual(
      r.dependents.map((d) => [d.name, d.children.map((c) => c.name)]),
      [['web-abc', ['web-abc-1', 'web-abc-2']]],
    );
    assert.deepEqual(links(r), [
      'Service/web selects Pod/web-abc-1',
      'Service/web selects Pod/web-abc-2',
      'HorizontalPodAutoscaler/web scales Deployment/web',
      'Ingress/edge routes to Service/web',
    ]);
  });

  test('a Service: its pods by its selector, its Endpoints, its Ingress; the Service found again is linked once', async () => {
    const log: string[] = [];
    const r = await loadRelations(fakeApi(cluster, log), svc, signal);
    assert.ok(log.includes('list Pod app=web'), log.join('\n'));
    assert.deepEqual(
      r.dependents.map((d) => [d.kind, d.name, d.byName]),
      [['Endpoints', 'web', true]],
    );
    assert.deepEqual(links(r), [
      'Service/web selects Pod/web-abc-1',
      'Service/web selects Pod/web-abc-2',
      'Ingress/edge routes to Service/web',
    ]);
  });

  test('a Service without a selector selects nothing, and lists no pod at all', async () => {
    const log: string[] = [];
    const r = await loadRelations(fakeApi(cluster, log), manual, signal);
    assert.deepEqual(r.links, []);
    assert.ok(!log.some((l) => l.startsWith('list Pod')), log.join('\n'));
  });

  test('a Pod: its owners top first, the Service selecting it, the HPA scaling its Deployment', async () => {
    const r = await loadRelations(fakeApi(cluster), pods[0]!, signal);
    assert.deepEqual(
      r.owners.map((o) => `${o.kind}/${o.name}`),
      ['Deployment/web', 'ReplicaSet/web-abc'],
    );
    assert.deepEqual(links(r), [
      'Service/web selects Pod/web-abc-1',
      'HorizontalPodAutoscaler/web scales Deployment/web',
      'Ingress/edge routes to Service/web',
    ]);
  });

  test('an Ingress and an HPA: what they name, found in the cache or named only', async () => {
    const r = await loadRelations(fakeApi(cluster), ingress, signal);
    assert.deepEqual(links(r), ['Ingress/edge routes to Service/web']);
    assert.equal(r.links[0]!.to.object, svc);
    const lost = obj('HorizontalPodAutoscaler', 'lost', { spec: { scaleTargetRef: { kind: 'Deployment', name: 'gone' } } });
    const named = await loadRelations(fakeApi([...cluster, lost]), lost, signal);
    assert.deepEqual(links(named), ['HorizontalPodAutoscaler/lost scales Deployment/gone']);
    assert.equal(named.links[0]!.to.object, undefined, 'not in the cache: named only');
  });

  test('kinds the account does not cache (no Service, no HPA, no Ingress) add nothing', async () => {
    const r = await loadRelations(fakeApi([deploy, rs, ...pods]), deploy, signal);
    assert.deepEqual(r.links, []);
    assert.equal(r.dependents[0]!.children.length, 2);
  });
});
