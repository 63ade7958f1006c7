/**
 * The Endpoints controller: for every Service with a selector, an Endpoints object of the same name listing matching
 * pods that have an IP (ready ones under `addresses`, the rest under `notReadyAddresses`) and the service's ports
 * resolved to target ports. Endpoints of Services without a selector are left to whoever writes them.
 */
import { jsonEqual } from '../json-equal.js';
import type { ObjectStore } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { podReady } from './pod-availability.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

function matches(selector: Record<string, unknown>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

function targetPort(port: Record<string, unknown>, pods: KubeObject[]): number {
  const target = port.targetPort;
  if (typeof target === 'number') return target;
  if (typeof target === 'string' && target !== '') {
    for (const pod of pods) {
      const spec = isPlainObject(pod.spec) ? pod.spec : {};
      for (const c of (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject)) {
        for (const p of (Array.isArray(c.ports) ? c.ports : []).filter(isPlainObject)) {
          if (p.name === target && typeof p.containerPort === 'number') return p.containerPort;
        }
      }
    }
    if (/^\d+$/.test(target)) return Number(target);
  }
  return typeof port.port === 'number' ? port.port : 0;
}

/** Creates the controller. */
export function createEndpointsController(store: ObjectStore): Controller {
  const services = store.registry.byKindKey('/Service')!;
  const endpoints = store.registry.byKindKey('/Endpoints')!;
  const pods = store.registry.byKindKey('/Pod')!;
  const managed = new Set<string>();

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const svc = store.peek(services, namespace, name);
    const existing = store.peek(endpoints, namespace, name);
    const selector = svc && isPlainObject(svc.spec) && isPlainObject(svc.spec.selector) ? svc.spec.selector : undefined;
    if (!svc || !selector || Object.keys(selector).length === 0) {
      if (existing && managed.has(key)) store.delete(endpoints, namespace, name);
      managed.delete(key);
      return;
    }
    const matching = store
      .scan(pods, { namespace })
      .items.filter((p) => !p.metadata.deletionTimestamp && matches(selector, p.metadata.labels));
    const withIp = matching.filter((p) => isPlainObject(p.status) && typeof p.status.podIP === 'string');
    const address = (p: KubeObject) => ({
      ip: (p.status as Record<string, unknown>).podIP,
      nodeName: (p.spec as Record<string, unknown>)?.nodeName,
      targetRef: { kind: 'Pod', namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid },
    });
    const ready = withIp.filter(podReady).map(address);
    const notReady = withIp.filter((p) => !podReady(p)).map(address);
    const svcSpec = svc.spec as Record<string, unknown>;
    const ports = (Array.isArray(svcSpec.ports) ? svcSpec.ports : []).filter(isPlainObject).map((p) => {
      const out: Record<string, unknown> = { port: targetPort(p, matching), protocol: p.protocol ?? 'TCP' };
      if (typeof p.name === 'string' && p.name) out.name = p.name;
      return out;
    });
    const subset: Record<string, unknown> = { ports };
    if (ready.length > 0) subset.addresses = ready;
    if (notReady.length > 0) subset.notReadyAddresses = notReady;
    const subsets = ready.length + notReady.length > 0 ? [subset] : [];
    managed.add(key);
    if (!existing) {
      store.create(endpoints, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name, namespace, ...(svc.metadata.labels ? { labels: svc.metadata.labels } : {}) },
        subsets,
      });
      return;
    }
    if (jsonEqual(existing.subsets ?? [], subsets)) return;
    store.update(endpoints, { ...existing, subsets });
  }

  return {
    name: 'endpoints',
    *keysFor(event) {
      const obj = event.object;
      if (event.kindKey === '/Service') yield nsKey(obj.metadata.namespace, obj.metadata.name!);
      else if (event.kindKey === '/Pod') {
        for (const svc of store.scan(services, { namespace: obj.metadata.namespace }).items) {
          const spec = isPlainObject(svc.spec) ? svc.spec : {};
          if (!isPlainObject(spec.selector)) continue;
          const sel = spec.selector;
          if (matches(sel, obj.metadata.labels) || (event.oldObject && matches(sel, event.oldObject.metadata.labels))) {
            yield nsKey(svc.metadata.namespace, svc.metadata.name!);
          }
        }
      }
    },
    reconcile,
  };
}
