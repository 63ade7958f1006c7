/**
 * apply: creates or updates every object of the manifests, in order. Client-side apply (kubectl's) by default: create
 * when missing, otherwise a three-way patch from the last-applied annotation, the manifest and the live object
 * (strategic merge for built-in kinds, JSON merge for custom resources), with the live resourceVersion as a
 * precondition so a concurrent change is a 409 that is retried on a fresh read. Server-side apply when the operation
 * asks, the kind is listed in `kubernetes.serverSideApply`, or the manifest says so (annotation
 * `outpost.io/server-side-apply`, which wins either way). `replace` PUTs each whole object instead (`kubectl replace`,
 * created when missing). An object with only `metadata.generateName` is created under a new name each time (as
 * `kubectl create` does; it has no name to apply to). A failure stops the apply; objects applied before it stay applied (as with kubectl) and are
 * reported.
 */
import type { ApplySpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import { KubeHttpError } from '../kube/kube-client.js';
import { kindMatches } from '../kube/kind-filter.js';
import type { ApplyAction } from '../../shared/apply-actions.js';
import { LAST_APPLIED_ANNOTATION } from '../../shared/secret-scrub.js';
import { isRetryable } from './kube-calls.js';
import { parseManifests, type ManifestObject } from './manifests.js';
import { isObj, namespaceFor, parseObject, type Obj, type OperationContext, type Outcome } from './operation-context.js';
import { badRequest, failureOf, OperationError } from './operation-error.js';
import { patchSchemaFor } from './patch-meta.js';
import type { ResourceType } from '../kube/discovery.js';
import { resourcePath } from './resource-resolver.js';
import { threeWayPatch } from './three-way-patch.js';

/** The manifest annotation that chooses server-side (`"true"`) or client-side (`"false"`) apply for its object. */
const SERVER_SIDE_APPLY_ANNOTATION = 'outpost.io/server-side-apply';

interface Applied {
  object: Obj;
  status: number;
  action: ApplyAction;
}

interface Planned {
  doc: ManifestObject;
  resource?: ResourceType;
  /** Resolved later: its kind is defined by a CustomResourceDefinition earlier in the same apply. */
  deferred: boolean;
}

function crdDefines(docs: ManifestObject[], before: number, apiVersion: string, kind: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return docs.slice(0, before).some(({ object }) => {
    if (object.kind !== 'CustomResourceDefinition' || !isObj(object.spec)) return false;
    const names = isObj(object.spec.names) ? object.spec.names : {};
    return object.spec.group === group && names.kind === kind;
  });
}

function decideServerSide(spec: ApplySpec, ctx: OperationContext, object: Obj, resource: ResourceType): boolean {
  const meta = object.metadata as Obj;
  const annotation = isObj(meta.annotations) ? meta.annotations[SERVER_SIDE_APPLY_ANNOTATION] : undefined;
  if (annotation === 'true') return true;
  if (annotation === 'false') return false;
  return spec.serverSide || ctx.settings.serverSideApplyKinds.some((name) => kindMatches(name, resource));
}

async function serverSideApply(
  ctx: OperationContext,
  spec: ApplySpec,
  object: Obj,
  resource: ResourceType,
  namespace: string | undefined,
): Promise<Applied> {
  const name = (object.metadata as Obj).name as string;
  const response = await ctx.calls.request({
    method: 'PATCH',
    path: resourcePath(resource, namespace, name),
    query: { fieldManager: spec.fieldManager || ctx.settings.defaultFieldManager, force: spec.forceConflicts ? 'true' : undefined },
    body: JSON.stringify(object),
    contentType: 'application/apply-patch+yaml',
  });
  return { object: parseObject(response.text), status: response.status, action: 'serverside-applied' };
}

/** Creates an object that has only `metadata.generateName`: the API server names it. */
async function createGenerated(
  ctx: OperationContext,
  object: Obj,
  resource: ResourceType,
  namespace: string | undefined,
): Promise<Applied> {
  const response = await ctx.calls.once({ method: 'POST', path: resourcePath(resource, namespace), body: object });
  return { object: parseObject(response.text), status: response.status, action: 'created' };
}

/** The live object at `path`, or — when there is none — `body` created there (the create's outcome). */
async function liveOrCreate(
  ctx: OperationContext,
  path: string,
  resource: ResourceType,
  namespace: string | undefined,
  body: Obj,
): Promise<{ live: Obj } | { created: Applied }> {
  try {
    return { live: JSON.parse((await ctx.calls.once({ method: 'GET', path })).text) as Obj };
  } catch (err) {
    if (!(err instanceof KubeHttpError && err.status === 404)) throw err;
  }
  const response = await ctx.calls.once({ method: 'POST', path: resourcePath(resource, namespace), body });
  return { created: { object: parseObject(response.text), status: response.status, action: 'created' } };
}

/** One read-compute-write round of client-side apply; throws on any failure (the caller decides about retrying). */
async function clientSideApplyOnce(
  ctx: OperationContext,
  object: Obj,
  resource: ResourceType,
  namespace: string | undefined,
): Promise<Applied> {
  const name = (object.metadata as Obj).name as string;
  const path = resourcePath(resource, namespace, name);
  // What we record as applied: the manifest itself, without any previous record.
  const manifest = structuredClone(object);
  const manifestMeta = manifest.metadata as Obj;
  if (isObj(manifestMeta.annotations)) {
    delete manifestMeta.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(manifestMeta.annotations).length === 0) delete manifestMeta.annotations;
  }
  const modified = structuredClone(manifest);
  const meta = modified.metadata as Obj;
  meta.annotations = { ...(isObj(meta.annotations) ? meta.annotations : {}), [LAST_APPLIED_ANNOTATION]: JSON.stringify(manifest) };

  // The live object stays unscrubbed here (a Secret's data and last-applied record are needed for the diff); only
  // what is returned gets scrubbed.
  const found = await liveOrCreate(ctx, path, resource, namespace, modified);
  if ('created' in found) return found.created;
  const { live } = found;
  const liveMeta = isObj(live.metadata) ? live.metadata : {};
  const lastApplied = isObj(liveMeta.annotations) ? liveMeta.annotations[LAST_APPLIED_ANNOTATION] : undefined;
  let original: Obj | undefined;
  if (typeof lastApplied === 'string') {
    try {
      const parsed = JSON.parse(lastApplied) as unknown;
      if (isObj(parsed)) original = parsed;
    } catch {
      // unreadable record: treat as never applied (nothing is deleted)
    }
  }
  const schema = resource.builtin ? patchSchemaFor(resource.group, resource.kind) : undefined;
  const patch = threeWayPatch(original, modified, live, schema);
  if (Object.keys(patch).length === 0) return { object: scrubbed(live), status: 200, action: 'unchanged' };
  // Optimistic concurrency: the patch was computed from this version; a newer one answers 409 and we start over.
  patch.metadata = { ...(isObj(patch.metadata) ? patch.metadata : {}), resourceVersion: liveMeta.resourceVersion };
  const response = await ctx.calls.once({
    method: 'PATCH',
    path,
    body: patch,
    contentType: schema ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json',
  });
  return { object: parseObject(response.text), status: response.status, action: 'configured' };
}

const scrubbed = (o: Obj) => parseObject(JSON.stringify(o));

/** One replace: PUT the whole object at the live resourceVersion, or create it when missing. */
async function replaceOnce(ctx: OperationContext, object: Obj, resource: ResourceType, namespace: string | undefined): Promise<Applied> {
  const name = (object.metadata as Obj).name as string;
  const path = resourcePath(resource, namespace, name);
  const found = await liveOrCreate(ctx, path, resource, namespace, object);
  if ('created' in found) return found.created;
  const { live } = found;
  const body = structuredClone(object);
  (body.metadata as Obj).resourceVersion = (isObj(live.metadata) ? live.metadata : {}).resourceVersion;
  const response = await ctx.calls.once({ method: 'PUT', path, body });
  return { object: parseObject(response.text), status: response.status, action: 'replaced' };
}

/** Client-side apply (or replace) with retries: 409 (a concurrent change or create) re-reads and recomputes; so do timeouts/5xx. */
async function clientSideApply(
  ctx: OperationContext,
  object: Obj,
  resource: ResourceType,
  namespace: string | undefined,
  replace = false,
): Promise<Applied> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (replace ? replaceOnce : clientSideApplyOnce)(ctx, object, resource, namespace);
    } catch (err) {
      const conflict = err instanceof KubeHttpError && err.status === 409 && !ctx.calls.signal.aborted;
      if (attempt >= ctx.calls.retries.maxAttempts || !(conflict || isRetryable(err, ctx.calls.signal))) throw err;
      await ctx.calls.backoff(attempt);
    }
  }
}

function describe(resource: ResourceType, name: string, action: string): string {
  return `${resource.kind.toLowerCase()}${resource.group ? `.${resource.group}` : ''}/${name} ${action}`;
}

/** Runs an apply operation. */
export async function runApply(ctx: OperationContext, spec: ApplySpec): Promise<Outcome> {
  if (spec.replace && spec.serverSide) throw badRequest('apply.replace and apply.server_side cannot both be set');
  const docs = parseManifests(spec.manifests);
  // Resolve every kind before changing anything, so an unknown kind fails the apply up front.
  const plan: Planned[] = [];
  for (const [i, doc] of docs.entries()) {
    const { apiVersion, kind } = doc.object as { apiVersion: string; kind: string };
    try {
      plan.push({ doc, resource: await ctx.resolver.resolve(ctx.calls, kind, apiVersion), deferred: false });
    } catch (err) {
      if (err instanceof OperationError && err.statusCode === 404 && crdDefines(docs, i, apiVersion, kind))
        plan.push({ doc, deferred: true });
      else if (err instanceof OperationError) throw new OperationError(err.statusCode, err.reason, `${doc.where}: ${err.message}`);
      else throw err;
    }
  }
  const applied: Applied[] = [];
  const lines: string[] = [];
  for (const step of plan) {
    const object = structuredClone(step.doc.object);
    try {
      const resource = step.resource ?? (await resolveDeferred(ctx, object));
      const meta = object.metadata as Obj;
      const namespace = namespaceFor(resource.namespaced, (meta.namespace as string | undefined) || spec.namespace);
      if (namespace === undefined) delete meta.namespace;
      else meta.namespace = namespace;
      const result = !meta.name
        ? await createGenerated(ctx, object, resource, namespace)
        : spec.replace
          ? await clientSideApply(ctx, object, resource, namespace, true)
          : decideServerSide(spec, ctx, object, resource)
            ? await serverSideApply(ctx, spec, object, resource, namespace)
            : await clientSideApply(ctx, object, resource, namespace);
      applied.push(result);
      lines.push(describe(resource, String((result.object.metadata as Obj | undefined)?.name ?? meta.name), result.action));
    } catch (err) {
      const failure = failureOf(err);
      return {
        success: false,
        ...failure,
        message: docs.length > 1 && !(err instanceof KubeHttpError) ? `${step.doc.where}: ${failure.message}` : failure.message,
        objects: applied.map((a) => a.object),
        actions: applied.map((a) => a.action),
      };
    }
  }
  return {
    statusCode: applied.every((a) => a.status === 201) ? 201 : 200,
    message: lines.join('\n'),
    objects: applied.map((a) => a.object),
    actions: applied.map((a) => a.action),
  };
}

/** A kind defined by a CRD of the same apply: the CRD was just applied; discovery may need a moment to serve it. */
async function resolveDeferred(ctx: OperationContext, object: Obj): Promise<ResourceType> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.resolver.resolve(ctx.calls, object.kind as string, object.apiVersion as string);
    } catch (err) {
      if (attempt >= 20 || !(err instanceof OperationError && err.statusCode === 404) || ctx.calls.signal.aborted) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
