/**
 * Subresources: `status` (get/update/patch that touch only .status), `scale` (autoscaling/v1 Scale view of
 * spec.replicas for Deployments, ReplicaSets, StatefulSets) and `pods/log` (plain-text logs synthesised from the pod).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors.js';
import { apiVersionOf, kindKeyOf, type KindInfo } from '../kinds.js';
import type { ObjectStore } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { decodeObjectBody, readBody, sendJson } from './io.js';
import { applyPatch, decodePatch, patchKindOf } from './patch-body.js';
import type { RequestInfo } from './request-info.js';
import { podLogLines } from '../pod-logs.js';

function selectorString(obj: KubeObject): string {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const selector = isPlainObject(spec.selector) ? spec.selector : {};
  const parts: string[] = [];
  if (isPlainObject(selector.matchLabels)) for (const [k, v] of Object.entries(selector.matchLabels)) parts.push(`${k}=${String(v)}`);
  if (Array.isArray(selector.matchExpressions)) {
    for (const e of selector.matchExpressions.filter(isPlainObject)) {
      const values = Array.isArray(e.values) ? e.values.join(',') : '';
      if (e.operator === 'In') parts.push(`${String(e.key)} in (${values})`);
      else if (e.operator === 'NotIn') parts.push(`${String(e.key)} notin (${values})`);
      else if (e.operator === 'Exists') parts.push(String(e.key));
      else if (e.operator === 'DoesNotExist') parts.push(`!${String(e.key)}`);
    }
  }
  return parts.join(',');
}

/** The Scale object for a scalable workload. */
function scaleOf(obj: KubeObject): Record<string, unknown> {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const status = isPlainObject(obj.status) ? obj.status : {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 1 },
    status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, selector: selectorString(obj) },
  };
}

async function handleScale(
  store: ObjectStore,
  req: IncomingMessage,
  res: ServerResponse,
  ri: RequestInfo,
  info: KindInfo,
  ns: string | undefined,
): Promise<void> {
  const live = store.get(info, ns, ri.name!);
  if (!live) throw errors.notFound(info, ri.name!);
  if (ri.verb === 'get') {
    sendJson(res, 200, scaleOf(live));
    return;
  }
  let desired: Record<string, unknown>;
  if (ri.verb === 'update') {
    const body = decodeObjectBody(req.headers['content-type'], await readBody(req));
    if (!isPlainObject(body)) throw errors.badRequest('the request body must be a Scale object');
    desired = body;
  } else if (ri.verb === 'patch') {
    const kind = patchKindOf(req.headers['content-type']);
    if (kind === 'apply') throw errors.unsupportedMediaType('application/apply-patch+yaml is not supported on scale');
    desired = applyPatch(kind, scaleOf(live), decodePatch(kind, await readBody(req)), 'autoscaling/Scale');
  } else throw errors.methodNotAllowed();
  const spec = isPlainObject(desired.spec) ? desired.spec : {};
  const replicas = spec.replicas;
  if (!Number.isInteger(replicas) || (replicas as number) < 0) {
    throw errors.invalid({ kind: 'Scale', plural: info.plural, group: 'autoscaling' }, ri.name!, [
      { field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` },
    ]);
  }
  const meta = isPlainObject(desired.metadata) ? desired.metadata : {};
  const rv = typeof meta.resourceVersion === 'string' && ri.verb === 'update' ? meta.resourceVersion : live.metadata.resourceVersion;
  const updated = store.update(info, {
    ...live,
    metadata: { ...live.metadata, resourceVersion: rv },
    spec: { ...(isPlainObject(live.spec) ? live.spec : {}), replicas },
  });
  sendJson(res, 200, scaleOf(updated));
}

async function handleStatus(
  store: ObjectStore,
  req: IncomingMessage,
  res: ServerResponse,
  ri: RequestInfo,
  info: KindInfo,
  ns: string | undefined,
): Promise<void> {
  const apiVersion = apiVersionOf(info.group, ri.version);
  const live = store.get(info, ns, ri.name!);
  if (!live) throw errors.notFound(info, ri.name!);
  if (ri.verb === 'get') {
    sendJson(res, 200, { ...live, apiVersion });
    return;
  }
  let next: Record<string, unknown>;
  if (ri.verb === 'update') {
    const body = decodeObjectBody(req.headers['content-type'], await readBody(req));
    if (!isPlainObject(body)) throw errors.badRequest('the request body must be a JSON object');
    const meta = isPlainObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== ri.name)
      throw errors.badRequest('the name of the object does not match the name on the URL');
    next = {
      ...live,
      status: body.status,
      metadata: { ...live.metadata, resourceVersion: meta.resourceVersion ?? live.metadata.resourceVersion },
    };
  } else if (ri.verb === 'patch') {
    const kind = patchKindOf(req.headers['content-type']);
    if (kind === 'apply') throw errors.unsupportedMediaType('application/apply-patch+yaml is not supported on status');
    next = applyPatch(kind, live, decodePatch(kind, await readBody(req)), kindKeyOf(info.group, info.kind));
  } else throw errors.methodNotAllowed();
  const updated = store.update(info, next, { subresource: 'status' });
  sendJson(res, 200, { ...updated, apiVersion });
}

async function handleLog(
  store: ObjectStore,
  _req: IncomingMessage,
  res: ServerResponse,
  ri: RequestInfo,
  info: KindInfo,
  ns: string | undefined,
  query: URLSearchParams,
  followIntervalMs: number,
): Promise<void> {
  if (ri.verb !== 'get') throw errors.methodNotAllowed();
  const pod = store.peek(info, ns, ri.name!);
  if (!pod) throw errors.notFound(info, ri.name!);
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  const containers = (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject);
  const names = containers.map((c) => String(c.name));
  let container = query.get('container') ?? undefined;
  if (!container) {
    if (names.length !== 1)
      throw errors.badRequest(`a container name must be specified for pod ${ri.name}, choose one of: [${names.join(' ')}]`);
    container = names[0]!;
  }
  if (!names.includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${ri.name}`);
  const tailText = query.get('tailLines');
  const tail = tailText === null ? undefined : Number(tailText);
  if (tail !== undefined && (!Number.isInteger(tail) || tail < 0)) throw errors.badRequest(`invalid tailLines: ${tailText}`);
  let lines = podLogLines(pod, container);
  if (tail !== undefined) lines = tail === 0 ? [] : lines.slice(-tail);
  const timestamps = query.get('timestamps') === 'true';
  const render = (l: { time: string; text: string }) => (timestamps ? `${l.time} ${l.text}\n` : `${l.text}\n`);
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  for (const line of lines) res.write(render(line));
  const phase = isPlainObject(pod.status) ? pod.status.phase : undefined;
  if (query.get('follow') !== 'true' || phase === 'Succeeded' || phase === 'Failed') {
    res.end(); // a finished pod's log ends even when followed
    return;
  }
  // follow: a heartbeat line every followIntervalMs (default a second) until the pod is gone or the client leaves
  let n = 0;
  const timer = setInterval(() => {
    const current = store.peek(info, ns, ri.name!);
    if (!current || current.metadata.uid !== pod.metadata.uid) {
      clearInterval(timer);
      res.end();
      return;
    }
    n++;
    res.write(render({ time: new Date().toISOString(), text: `[${container}] heartbeat ${n}` }));
  }, followIntervalMs);
  timer.unref();
  res.on('close', () => clearInterval(timer));
}

/** Handles `status`, `scale` and `log` (exec/attach/portforward without an upgrade are 400, as upstream); 404 for subresources the kind does not have. */
export async function handleSubresource(
  store: ObjectStore,
  req: IncomingMessage,
  res: ServerResponse,
  ri: RequestInfo,
  info: KindInfo,
  query: URLSearchParams,
  followIntervalMs = 1000,
): Promise<void> {
  const sub = ri.subresource!;
  const ns = info.namespaced ? ri.namespace : undefined;
  if (!info.subresources.includes(sub)) throw errors.resourceNotFound();
  if (sub === 'scale') return handleScale(store, req, res, ri, info, ns);
  if (sub === 'status') return handleStatus(store, req, res, ri, info, ns);
  if (sub === 'log') return handleLog(store, req, res, ri, info, ns, query, followIntervalMs);
  if (sub === 'exec' || sub === 'attach' || sub === 'portforward') throw errors.badRequest('Upgrade request required');
  throw errors.resourceNotFound();
}
