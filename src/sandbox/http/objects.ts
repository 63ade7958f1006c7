/**
 * The REST verbs on stored resources: get, list (with limit/continue, resourceVersion and selectors), watch, create
 * (incl. generateName), update, delete (propagationPolicy, preconditions), deletecollection and the four patch types,
 * including server-side apply creating a missing object (201). Subresources and access reviews live in their own
 * modules; this one maps HTTP onto the store and back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors.js';
import { apiVersionOf, kindKeyOf, type KindInfo } from '../kinds.js';
import type { DeleteOptions, ObjectStore } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { decodeJson, decodeObjectBody, readBody, sendJson } from './io.js';
import { applyApply, applyPatch, decodePatch, patchKindOf } from './patch-body.js';
import type { RequestInfo } from './request-info.js';
import { selectorFilter } from './selectors.js';
import { listJson, objectJson } from './serialize.js';
import { tableOf } from './table.js';
import { includeObjectOf, negotiateView, partialListOf, partialOf, viewMismatch } from './views.js';
import type { WatchHub } from './watch.js';

/** What the object handlers need. */
export interface ObjectHandlerContext {
  store: ObjectStore;
  watches: WatchHub;
}

interface ContinueToken {
  rv: number;
  after: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(text: string, store: ObjectStore): ContinueToken {
  let token: unknown;
  try {
    token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('continue key is not valid: malformed');
  }
  if (!isPlainObject(token) || typeof token.rv !== 'number' || typeof token.after !== 'string') {
    throw errors.badRequest('continue key is not valid: malformed');
  }
  if (token.rv < store.compactedRv) {
    throw errors.gone(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    );
  }
  return { rv: token.rv, after: token.after };
}

/** Sends a stored object as the requested version. */
function sendObject(res: ServerResponse, code: number, obj: KubeObject, apiVersion: string): void {
  const text = objectJson(obj, apiVersion);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

function isDryRun(query: URLSearchParams): boolean {
  return query.getAll('dryRun').some((v) => v === 'All');
}

/** Checks a body's identity against the URL and fills namespace/name from it. */
function bindToUrl(info: KindInfo, version: string, body: unknown, ri: RequestInfo): Record<string, unknown> {
  if (!isPlainObject(body)) throw errors.badRequest('the request body must be a JSON object');
  const expected = apiVersionOf(info.group, version);
  if (body.apiVersion !== undefined && body.apiVersion !== expected && body.apiVersion !== apiVersionOf(info.group, info.versions[0]!)) {
    throw errors.badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`,
    );
  }
  if (body.kind !== undefined && body.kind !== info.kind) {
    throw errors.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${info.kind})`);
  }
  if (body.apiVersion === undefined || body.kind === undefined) {
    throw errors.badRequest(`Object 'Kind' is missing in '${JSON.stringify(body).slice(0, 200)}'`);
  }
  const meta = isPlainObject(body.metadata) ? body.metadata : body.metadata === undefined ? {} : undefined;
  if (!meta) throw errors.badRequest('metadata must be an object');
  if (info.namespaced) {
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== ri.namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = ri.namespace;
  }
  if (ri.name !== undefined) {
    if (meta.name !== undefined && meta.name !== ri.name) {
      throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${ri.name})`);
    }
    meta.name = ri.name;
  }
  return { ...body, metadata: meta };
}

function deleteOptions(query: URLSearchParams, body: Buffer): DeleteOptions {
  let doc: Record<string, unknown> = {};
  if (body.length > 0 && body.toString('utf8').trim() !== '') {
    const decoded = decodeJson(body);
    if (!isPlainObject(decoded)) throw errors.badRequest('DeleteOptions must be a JSON object');
    doc = decoded;
  }
  const policy = query.get('propagationPolicy') ?? (typeof doc.propagationPolicy === 'string' ? doc.propagationPolicy : undefined);
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
    throw errors.badRequest(`invalid propagationPolicy: ${policy}`);
  }
  const orphan = query.get('orphanDependents') ?? (typeof doc.orphanDependents === 'boolean' ? String(doc.orphanDependents) : undefined);
  const pre = isPlainObject(doc.preconditions) ? doc.preconditions : {};
  const dryRun = isDryRun(query) || (Array.isArray(doc.dryRun) && doc.dryRun.includes('All'));
  return {
    propagationPolicy: policy ?? (orphan === 'true' ? 'Orphan' : undefined),
    preconditions: {
      uid: typeof pre.uid === 'string' ? pre.uid : undefined,
      resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
    },
    dryRun,
  };
}

/** Handles a resource request on the main resource (no subresource). */
export async function handleObjects(
  ctx: ObjectHandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  ri: RequestInfo,
  info: KindInfo,
  query: URLSearchParams,
): Promise<void> {
  const { store } = ctx;
  const apiVersion = apiVersionOf(info.group, ri.version);
  const kindKey = kindKeyOf(info.group, info.kind);
  const ns = info.namespaced ? ri.namespace : undefined;
  if (!info.verbs.includes(ri.verb)) throw errors.methodNotAllowed();
  const reading = ri.verb === 'get' || ri.verb === 'list' || ri.verb === 'watch';
  const view = reading ? negotiateView(req.headers.accept) : ({ as: 'object' } as const);
  const includeObject = view.as === 'Table' ? includeObjectOf(query) : '';

  switch (ri.verb) {
    case 'get': {
      const obj = store.peek(info, ns, ri.name!);
      if (!obj) throw errors.notFound(info, ri.name!);
      if (view.as === 'Table') {
        sendJson(res, 200, tableOf(info, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject, apiVersion));
        return;
      }
      if (view.as === 'PartialObjectMetadataList') throw viewMismatch(view, `not a list (${info.kind})`);
      if (view.as === 'PartialObjectMetadata') return sendJson(res, 200, partialOf(obj, view.version));
      sendObject(res, 200, obj, apiVersion);
      return;
    }
    case 'list': {
      const filter = selectorFilter(query);
      const limitText = query.get('limit');
      const limit = limitText ? Number(limitText) : 0;
      if (!Number.isInteger(limit) || limit < 0) throw errors.badRequest(`invalid limit: ${limitText}`);
      const rvText = query.get('resourceVersion');
      if (rvText && !/^\d+$/.test(rvText)) throw errors.badRequest(`invalid resourceVersion: ${rvText}`);
      if (rvText && Number(rvText) > store.resourceVersion && query.get('resourceVersionMatch') !== 'NotOlderThan') {
        throw errors.timeout(`Too large resource version: ${rvText}, current: ${store.resourceVersion}`);
      }
      const continueText = query.get('continue');
      const token = continueText ? decodeContinue(continueText, store) : undefined;
      const listRv = token?.rv ?? store.resourceVersion;
      const page = store.scan(info, { namespace: ns, after: token?.after, limit, filter });
      const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
      if (page.continueAfter !== undefined) {
        metadata.continue = encodeContinue({ rv: listRv, after: page.continueAfter });
        metadata.remainingItemCount = page.remaining;
      }
      if (view.as === 'Table') {
        sendJson(res, 200, tableOf(info, page.items, metadata, includeObject, apiVersion));
        return;
      }
      if (view.as === 'PartialObjectMetadata') throw viewMismatch(view, `a list (${info.listKind})`);
      if (view.as === 'PartialObjectMetadataList') return sendJson(res, 200, partialListOf(page.items, metadata, view.version));
      const text = listJson(info.listKind, apiVersion, metadata, page.items);
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'Cache-Control': 'no-cache, private',
      });
      res.end(text);
      return;
    }
    case 'watch': {
      let filter = selectorFilter(query);
      if (ri.name) {
        const name = ri.name;
        const inner = filter;
        filter = (obj) => obj.metadata.name === name && (!inner || inner(obj));
      }
      ctx.watches.serve(req, res, { info, version: ri.version, namespace: ns, filter, query, view, includeObject });
      return;
    }
    case 'create': {
      if (ri.name) throw errors.methodNotAllowed();
      const body = bindToUrl(info, ri.version, decodeObjectBody(req.headers['content-type'], await readBody(req)), ri);
      // status is the controllers' to write: a create through the API ignores it, as in Kubernetes
      if (info.subresources.includes('status')) delete body.status;
      const created = store.create(info, body, { dryRun: isDryRun(query) });
      sendJson(res, 201, { ...created, apiVersion });
      return;
    }
    case 'update': {
      const body = bindToUrl(info, ri.version, decodeObjectBody(req.headers['content-type'], await readBody(req)), ri);
      const updated = store.update(info, body, { dryRun: isDryRun(query) });
      sendJson(res, 200, { ...updated, apiVersion });
      return;
    }
    case 'patch': {
      const kind = patchKindOf(req.headers['content-type']);
      if (kind === 'strategic' && info.custom) {
        throw errors.unsupportedMediaType('application/strategic-merge-patch+json is not supported for custom resources');
      }
      const patch = decodePatch(kind, await readBody(req));
      const live = store.get(info, ns, ri.name!);
      const dryRun = isDryRun(query);
      if (kind === 'apply') {
        const fieldManager = query.get('fieldManager');
        if (!fieldManager) throw errors.badRequest('PATCH requests for apply must have a fieldManager set');
        const applied = bindToUrl(info, ri.version, patch, ri);
        const result = applyApply(live, applied, { fieldManager, force: query.get('force') === 'true', kindKey });
        if (!live) {
          const created = store.create(info, result, { dryRun });
          sendJson(res, 201, { ...created, apiVersion });
          return;
        }
        const updated = store.update(
          info,
          { ...result, metadata: { ...(result.metadata as object), resourceVersion: live.metadata.resourceVersion } },
          { dryRun },
        );
        sendJson(res, 200, { ...updated, apiVersion });
        return;
      }
      if (!live) throw errors.notFound(info, ri.name!);
      const patched = applyPatch(kind, live, patch, kindKey);
      const bound = bindToUrl(
        info,
        ri.version,
        { ...patched, apiVersion: patched.apiVersion ?? live.apiVersion, kind: patched.kind ?? live.kind },
        ri,
      );
      const meta = bound.metadata as Record<string, unknown>;
      if (meta.resourceVersion === undefined) meta.resourceVersion = live.metadata.resourceVersion;
      const updated = store.update(info, bound, { dryRun });
      sendJson(res, 200, { ...updated, apiVersion });
      return;
    }
    case 'delete': {
      const opts = deleteOptions(query, await readBody(req));
      const { obj } = store.delete(info, ns, ri.name!, opts);
      sendJson(res, 200, { ...obj, apiVersion });
      return;
    }
    case 'deletecollection': {
      const opts = deleteOptions(query, await readBody(req));
      const filter = selectorFilter(query);
      const victims = store.scan(info, { namespace: ns, filter }).items;
      const deleted: KubeObject[] = [];
      for (const victim of victims) {
        try {
          deleted.push(store.delete(info, victim.metadata.namespace, victim.metadata.name!, { ...opts, preconditions: undefined }).obj);
        } catch {
          // already gone (e.g. removed by garbage collection meanwhile)
        }
      }
      if (deleted.length === 0 && victims.length === 0) {
        sendJson(res, 200, { kind: info.listKind, apiVersion, metadata: { resourceVersion: String(store.resourceVersion) }, items: [] });
        return;
      }
      sendJson(res, 200, { kind: info.listKind, apiVersion, metadata: { resourceVersion: String(store.resourceVersion) }, items: deleted });
      return;
    }
    default:
      throw errors.methodNotAllowed();
  }
}
