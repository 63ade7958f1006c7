/**
 * How the mini agent runs an `Operation` and shapes its `OperationResult`, following page section 7's per-type table:
 * get and patch return exactly the target object, scale exactly the `autoscaling/v1` Scale the scale subresource
 * returned, delete the `Kind/namespace/name` of what it deleted, list the items (each with apiVersion and kind, at most
 * `limit`). A failure carries the Kubernetes Status reason and HTTP code. apply, rollout, logs and history are not
 * implemented here: they fail with reason `NotImplemented` and status code 0 (no call was made).
 */
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { Operation, OperationResultSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { PatchType, PropagationPolicy } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { scrubSecret, type KubeClient, type KubeKind, type KubeObject, type KubeResponse } from './kube-client.js';

/** A result as init data (what goes into a ConnectRequest). */
export type ResultInit = MessageInitShape<typeof OperationResultSchema>;

/** The payload of a result (id, account and durations are added by the runner). */
interface ResultFields {
  success: boolean;
  statusCode: number;
  reason?: string;
  message?: string;
  objects?: JsonObject[];
  deleted?: string[];
}

class KubeFailure extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

function fail(r: KubeResponse): never {
  throw new KubeFailure(
    r.status,
    String(r.body.reason ?? (r.status === 404 ? 'NotFound' : 'InternalError')),
    String(r.body.message ?? `HTTP ${r.status}`),
  );
}

function asStruct(obj: KubeObject): JsonObject {
  return scrubSecret(obj) as JsonObject;
}

const PATCH_TYPES: Record<number, string> = {
  [PatchType.JSON]: 'application/json-patch+json',
  [PatchType.MERGE]: 'application/merge-patch+json',
  [PatchType.STRATEGIC]: 'application/strategic-merge-patch+json',
  [PatchType.UNSPECIFIED]: 'application/strategic-merge-patch+json',
};

const PROPAGATION: Record<number, string | undefined> = {
  [PropagationPolicy.FOREGROUND]: 'Foreground',
  [PropagationPolicy.BACKGROUND]: 'Background',
  [PropagationPolicy.ORPHAN]: 'Orphan',
};

/** Runs one operation against the cluster and returns its result (never throws). */
export async function runOperation(kube: KubeClient, op: Operation): Promise<ResultInit> {
  const started = Date.now();
  const base = { id: op.id, account: op.account };
  const done = (r: ResultFields): ResultInit => {
    const ms = Date.now() - started;
    return { ...base, ...r, duration: { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 } };
  };
  const kindOf = (apiVersion: string, kind: string): Promise<KubeKind> => kube.resolve(apiVersion || 'v1', kind);
  try {
    const spec = op.spec;
    switch (spec.case) {
      case 'get': {
        const k = await kindOf(spec.value.apiVersion, spec.value.kind);
        const r = await kube.request('GET', kube.objectPath(k, spec.value.namespace, spec.value.name));
        if (r.status !== 200) fail(r);
        return done({ success: true, statusCode: r.status, objects: [asStruct(r.body)] });
      }
      case 'list': {
        const k = await kindOf(spec.value.apiVersion, spec.value.kind);
        const r = await kube.request('GET', kube.collectionPath(k, spec.value.namespace || undefined), {
          query: {
            labelSelector: spec.value.labelSelector,
            fieldSelector: spec.value.fieldSelector,
            limit: spec.value.limit > 0 ? String(spec.value.limit) : undefined,
          },
        });
        if (r.status !== 200) fail(r);
        let items = ((r.body.items ?? []) as KubeObject[]).map((o) => asStruct({ apiVersion: k.apiVersion, kind: k.kind, ...o }));
        if (spec.value.limit > 0) items = items.slice(0, spec.value.limit);
        return done({ success: true, statusCode: r.status, objects: items });
      }
      case 'scale': {
        const k = await kindOf(spec.value.apiVersion, spec.value.kind);
        const path = `${kube.objectPath(k, spec.value.namespace, spec.value.name)}/scale`;
        const r = await kube.request('PATCH', path, {
          body: { spec: { replicas: spec.value.replicas } },
          contentType: 'application/merge-patch+json',
        });
        if (r.status !== 200) fail(r);
        return done({ success: true, statusCode: r.status, objects: [r.body as JsonObject] });
      }
      case 'patch': {
        const k = await kindOf(spec.value.apiVersion, spec.value.kind);
        const r = await kube.request('PATCH', kube.objectPath(k, spec.value.namespace, spec.value.name), {
          body: spec.value.patch,
          contentType: PATCH_TYPES[spec.value.type],
        });
        if (r.status !== 200) fail(r);
        return done({ success: true, statusCode: r.status, objects: [asStruct(r.body)] });
      }
      case 'delete': {
        const k = await kindOf(spec.value.apiVersion, spec.value.kind);
        const ref = (name: string, ns: string) => (k.namespaced ? `${k.kind}/${ns}/${name}` : `${k.kind}/${name}`);
        const query = {
          propagationPolicy: PROPAGATION[spec.value.propagationPolicy],
          gracePeriodSeconds: spec.value.gracePeriodSeconds === undefined ? undefined : String(spec.value.gracePeriodSeconds),
        };
        if (spec.value.name) {
          const r = await kube.request('DELETE', kube.objectPath(k, spec.value.namespace, spec.value.name), { query });
          if (r.status !== 200 && r.status !== 202) fail(r);
          return done({ success: true, statusCode: r.status, deleted: [ref(spec.value.name, spec.value.namespace)] });
        }
        const list = await kube.request('GET', kube.collectionPath(k, spec.value.namespace || undefined), {
          query: { labelSelector: spec.value.labelSelector },
        });
        if (list.status !== 200) fail(list);
        const deleted: string[] = [];
        let status = list.status;
        for (const item of (list.body.items ?? []) as KubeObject[]) {
          const name = String(item.metadata?.name);
          const ns = String(item.metadata?.namespace ?? '');
          const r = await kube.request('DELETE', kube.objectPath(k, ns, name), { query });
          if (r.status === 404) continue;
          if (r.status !== 200 && r.status !== 202) fail(r);
          status = r.status;
          deleted.push(ref(name, ns));
        }
        return done({ success: true, statusCode: status, deleted });
      }
      default:
        return done({
          success: false,
          statusCode: 0,
          reason: 'NotImplemented',
          message: `the conformance mini agent does not run ${spec.case ?? 'empty'} operations`,
        });
    }
  } catch (err) {
    if (err instanceof KubeFailure) return done({ success: false, statusCode: err.status, reason: err.reason, message: err.message });
    const e = err as { status?: number; reason?: string; message?: string };
    return done({ success: false, statusCode: e.status ?? 0, reason: e.reason ?? 'InternalError', message: e.message ?? String(err) });
  }
}
