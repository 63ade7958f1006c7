/**
 * The request pipeline of the sandbox API server, written on Node's `http` types: authenticate the bearer token,
 * pass the fault gate, parse the request, authorize it with RBAC, then dispatch to discovery, access reviews,
 * subresources or the object verbs. Every failure is answered as a Kubernetes `Status`; nothing a client sends can
 * take the server down.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Authenticator, UserInfo } from '../auth.js';
import { apiGroup, coreVersions, groupList, resourceList, versionInfo } from '../discovery.js';
import { ApiError, errors } from '../errors.js';
import { openApiV3Document, openApiV3Index } from '../openapi.js';
import type { FaultController } from '../faults.js';
import type { Authorizer } from '../rbac.js';
import type { ObjectStore } from '../store.js';
import { isPlainObject } from '../types.js';
import { authorizeOrThrow, resolveUser } from './access.js';
import { decodeJson, readBody, sendError, sendJson } from './io.js';
import { handleObjects } from './objects.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';
import { handleReview } from './reviews.js';
import { handleSubresource } from './subresources.js';
import type { WatchHub } from './watch.js';

/** Everything the pipeline needs. */
export interface RouterContext {
  store: ObjectStore;
  authenticator: Authenticator;
  authorizer: Authorizer;
  watches: WatchHub;
  faults: FaultController;
  logger: Logger;
  /** Interval of heartbeat lines on followed pod logs. */
  logFollowIntervalMs: number;
}

function handleDiscovery(ctx: RouterContext, req: IncomingMessage, res: ServerResponse, ri: RequestInfo): void {
  if (ri.verb !== 'get' && ri.verb !== 'head') throw errors.methodNotAllowed();
  const parts = ri.path.split('/').filter(Boolean);
  const registry = ctx.store.registry;
  if (ri.path === '/version' || ri.path === '/version/') return sendJson(res, 200, versionInfo());
  if (parts[0] === 'api' && parts.length === 1) return sendJson(res, 200, coreVersions(req.headers.host ?? '127.0.0.1'));
  if (parts[0] === 'api' && parts.length === 2) {
    const doc = resourceList(registry, '', parts[1]!);
    if (doc) return sendJson(res, 200, doc);
  }
  if (parts[0] === 'apis' && parts.length === 1) return sendJson(res, 200, groupList(registry));
  if (parts[0] === 'apis' && parts.length === 2) {
    const doc = apiGroup(registry, parts[1]!);
    if (doc) return sendJson(res, 200, doc);
  }
  if (parts[0] === 'apis' && parts.length === 3) {
    const doc = resourceList(registry, parts[1]!, parts[2]!);
    if (doc) return sendJson(res, 200, doc);
  }
  if (parts[0] === 'openapi' && parts[1] === 'v3') {
    if (parts.length === 2) return sendJson(res, 200, openApiV3Index(registry));
    const doc = openApiV3Document(registry, parts.slice(2).join('/'));
    if (doc) return sendJson(res, 200, doc);
  }
  if (parts.length === 0) {
    return sendJson(res, 200, { paths: ['/api', '/api/v1', '/apis', ...groupPaths(ctx), '/healthz', '/livez', '/readyz', '/version'] });
  }
  throw errors.resourceNotFound();
}

function groupPaths(ctx: RouterContext): string[] {
  const out = new Set<string>();
  for (const k of ctx.store.registry.all()) if (k.group) for (const v of k.versions) out.add(`/apis/${k.group}/${v}`);
  return [...out];
}

async function handleFaultRequest(
  ctx: RouterContext,
  user: UserInfo,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (!user.groups.includes('system:masters')) throw errors.forbidden('only the sandbox admin may inject faults');
  const action = path.slice('/sandbox/faults'.length).replace(/^\//, '');
  if (req.method === 'GET' && action === '') return sendJson(res, 200, ctx.faults.describe());
  if (req.method !== 'POST') throw errors.methodNotAllowed();
  const raw = await readBody(req, 64 * 1024);
  const body = raw.length > 0 ? decodeJson(raw) : {};
  const args = isPlainObject(body) ? body : {};
  try {
    switch (action) {
      case 'close-watches':
        ctx.faults.closeWatches();
        break;
      case 'fail-next-watches':
        ctx.faults.failNextWatches(Number(args.count ?? 1), Number(args.status ?? 410) as 410 | 500);
        break;
      case 'expire-history':
        ctx.faults.expireHistory();
        break;
      case 'error-rate':
        ctx.faults.setErrorRate(Number(args.rate));
        break;
      case 'latency':
        ctx.faults.setLatency(Number(args.ms));
        break;
      case 'pause':
        ctx.faults.pause();
        break;
      case 'resume':
        ctx.faults.resume();
        break;
      default:
        throw errors.resourceNotFound();
    }
  } catch (err) {
    if (err instanceof RangeError) throw errors.badRequest(err.message);
    throw err;
  }
  sendJson(res, 200, ctx.faults.describe());
}

/** Creates the `request` listener for the HTTP(S) server. */
export function createRequestHandler(ctx: RouterContext): (req: IncomingMessage, res: ServerResponse) => void {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const path = url.pathname;
    const query = url.searchParams;
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    const user = resolveUser(ctx.authenticator, ctx.authorizer, req);
    if (path === '/sandbox/faults' || path.startsWith('/sandbox/faults/')) return handleFaultRequest(ctx, user, req, res, path);
    const isWatch = query.get('watch') === 'true' || query.get('watch') === '1' || /\/watch\//.test(path);
    await ctx.faults.gate(isWatch && (req.method ?? 'GET') === 'GET');
    let ri: RequestInfo;
    try {
      ri = parseRequestInfo(req.method ?? 'GET', path, isWatch);
    } catch {
      throw errors.badRequest('malformed request path');
    }
    authorizeOrThrow(ctx.authorizer, user, ri);
    if (!ri.resourceRequest) return handleDiscovery(ctx, req, res, ri);
    const info = ri.resource ? ctx.store.registry.byResource(ri.group, ri.version, ri.resource) : undefined;
    if (!info) throw errors.resourceNotFound();
    if (!info.namespaced && ri.namespace !== undefined) throw errors.resourceNotFound();
    if (info.namespaced && ri.name !== undefined && ri.namespace === undefined && !(ri.verb === 'watch')) throw errors.resourceNotFound();
    if (info.virtual) return handleReview(ctx.authorizer, user, req, res, ri, info);
    if (ri.subresource) return handleSubresource(ctx.store, req, res, ri, info, query, ctx.logFollowIntervalMs);
    return handleObjects(ctx, req, res, ri, info, query);
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!(err instanceof ApiError) || err.code >= 500) {
        ctx.logger.warn({ err, method: req.method, url: req.url }, 'sandbox request failed');
      } else {
        ctx.logger.debug({ code: err.code, reason: err.reason, method: req.method, url: req.url }, 'sandbox request rejected');
      }
      // a rejected body may still be arriving; do not keep the connection for it
      if (!req.complete) res.setHeader('Connection', 'close');
      sendError(res, err);
      if (!req.complete) req.resume();
    });
  };
}
