/**
 * The REST side of the gateway (Hono), served as connect-node's fallback on both ports: health and the
 * `/armory/clouddrivers` replica listing, the operation reads (`/armory/agent/operations`), the internal routes
 * replicas call on each other (replica-routes.ts), accounts and agents. Errors are JSON `{error, message}`, mapped in one place (`onError`).
 */
import { Hono, type Context } from 'hono';
import type { Database } from '../../db/database.js';
import { pingDatabase } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { HttpError, toHttpError } from '../http/errors.js';
import type { OperationManager } from '../operations/operation-manager.js';
import { addOperationRoutes } from './operation-routes.js';
import { addAgentRoutes } from './agent-routes.js';
import { addReplicaRoutes } from './replica-routes.js';
import { addReadForwardRoute } from './read-forward-route.js';
import type { ReadRunner } from '../operations/read-runner.js';
import { addAccountRoutes } from './account-routes.js';
import type { AccountAdmin } from '../account-admin/account-admin.js';
import { staleAfterSeconds } from '../agents/agent-session-store.js';
import type { Authenticator } from '../auth/authenticator.js';
import { createRestAuth, type RestEnv } from '../auth/rest-auth.js';
import type { Replica, ReplicaDirectory } from '../replicas/replica-directory.js';
import { withTimeout } from '../../shared/with-timeout.js';
import { addWebAssets } from '../web/web-assets.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { PathRule } from '../auth/authorization.js';

/** What the REST routes read from the running gateway. */
export interface RestAppOptions {
  id: string;
  /** URL clients and replicas reach this replica at. */
  baseUrl(): string;
  database: Database;
  /** True once shutdown began: health turns 503 so load balancers stop sending traffic. */
  isDraining(): boolean;
  logger: Logger;
  /** Longest time a health check waits for the database. */
  healthTimeoutMs?: number;
  /** Serves `/armory/agent/operations` when given. */
  operations?: OperationManager;
  /** Authenticates every route but `/health`; without it routes are open (unit tests of the routes alone). */
  authenticator?: Authenticator;
  /** `/armory/agents` hides session rows untouched for this long (a dead replica's); default for a 30 s dead timeout. */
  agentStaleAfterSeconds?: number;
  /** Serves account management (`/armory/accounts…`) when given. */
  accounts?: AccountAdmin;
  /** Serves `GET /metrics` (Prometheus text format) when given. */
  metrics?: { scrape(): Promise<{ contentType: string; body: string }> };
  /** Serves the dashboard built in this directory at `/` when given. */
  webDir?: string;
  /** The other replicas for `/armory/clouddrivers`; without it only this replica is listed. */
  replicas?: Pick<ReplicaDirectory, 'list' | 'get'>;
  /** Routes of features (the Clouddriver API), added after the core's own and before the dashboard's. */
  routes?: readonly RestRoutes[];
  /** What the features' paths require, consulted before the core's table (src/gateway/modules/feature-paths.ts). */
  pathRules?: readonly PathRule[];
  /** The features' own error bodies for their paths (Spring's on the Clouddriver API); `{error, message}` elsewhere. */
  errorShapes?: readonly RestErrorShape[];
  /**
   * The audit log, for routes that must record what they serve (the Kubernetes API proxy `/k8s/{account}/…` records
   * one entry per request with `audit.record`). Never blocks, never throws.
   */
  audit?: Pick<AuditLog, 'record'>;
  /** Serves `POST /armory/agent/forwardedreads` (reads other replicas pass here) when given with an authenticator. */
  reads?: Pick<ReadRunner, 'startLocal'>;
}

/** A feature's REST routes. */
export interface RestRoutes {
  addRoutes(app: Hono<RestEnv>): void;
}

/** How a feature shapes the error bodies of the paths it claims. */
export interface RestErrorShape {
  matches(path: string): boolean;
  body(status: number, message: string, path: string): unknown;
}

/** One gateway replica as `/armory/clouddrivers` lists it. */
interface ClouddriverInstance {
  id: string;
  baseUrl: string;
  lastUpdated: string;
  ready: boolean;
}

/** Builds the Hono app. Test it with `app.request()`; serve it with `getRequestListener(app.fetch)`. */
export function createRestApp(options: RestAppOptions): Hono<RestEnv> {
  const app = new Hono<RestEnv>();
  if (options.authenticator) app.use('*', createRestAuth(options.authenticator, options.pathRules));
  // A NUL character in a path parameter or query value would reach Postgres (which refuses it in text) as a 500.
  app.use('*', async (c, next) => {
    if (/%00|\u0000/.test(c.req.url)) throw new HttpError(400, 'bad_request', 'the request path or query contains a NUL character (%00)');
    await next();
  });
  const self = (): ClouddriverInstance => ({
    id: options.id,
    baseUrl: options.baseUrl(),
    lastUpdated: new Date().toISOString(),
    ready: !options.isDraining(),
  });

  app.get('/health', async (c) => {
    if (options.isDraining()) return c.json({ status: 'draining', id: options.id }, 503);
    try {
      await withTimeout(pingDatabase(options.database), options.healthTimeoutMs ?? 2000);
    } catch (err) {
      options.logger.warn({ err }, 'health check: database unreachable');
      return c.json({ status: 'unavailable', id: options.id, database: 'unreachable' }, 503);
    }
    return c.json({ status: 'ok', id: options.id, database: 'ok' });
  });

  const toInstance = (r: Replica): ClouddriverInstance => ({
    id: r.id,
    baseUrl: r.baseUrl,
    lastUpdated: r.lastUpdated.toISOString(),
    ready: r.ready,
  });
  // This replica is always listed (also before its first heartbeat, or outside the Endpoints it watches), as it sees itself.
  if (options.metrics) {
    const metrics = options.metrics;
    app.get('/metrics', async (c) => {
      const { contentType, body } = await metrics.scrape();
      return c.body(body, 200, { 'content-type': contentType });
    });
  }

  app.get('/armory/clouddrivers', (c) => {
    const others = (options.replicas?.list() ?? []).filter((r) => r.id !== options.id).map(toInstance);
    return c.json([self(), ...others].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  });
  app.get('/armory/clouddrivers/:id', (c) => {
    const id = c.req.param('id');
    if (id === options.id) return c.json(self());
    const replica = options.replicas?.get(id);
    if (!replica) throw new HttpError(404, 'not_found', `no clouddriver instance ${JSON.stringify(id)}`);
    return c.json(toInstance(replica));
  });

  if (options.operations) {
    // Before the operation reads: their 405 catch-all would answer the internal POST routes.
    addReplicaRoutes(app, options.operations, options.id);
    if (options.reads && options.authenticator) addReadForwardRoute(app, options.reads, options.authenticator, options.id);
    addOperationRoutes(app, options.operations);
  }
  if (options.accounts) addAccountRoutes(app, options.accounts);
  for (const feature of options.routes ?? []) feature.addRoutes(app);
  addAgentRoutes(app, options.database, { staleAfterSeconds: options.agentStaleAfterSeconds ?? staleAfterSeconds(30) });

  for (const path of ['/health', '/armory/clouddrivers', '/armory/clouddrivers/:id']) {
    app.all(path, (c) => {
      c.header('Allow', 'GET, HEAD');
      throw new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}`);
    });
  }

  if (options.webDir) addWebAssets(app, options.webDir);

  const shapeOf = (path: string) => options.errorShapes?.find((s) => s.matches(path));
  app.notFound((c) => {
    const message = `no route for ${c.req.method} ${c.req.path}`;
    const shape = shapeOf(c.req.path);
    if (shape) return c.json(shape.body(404, message, c.req.path) as object, 404);
    return c.json({ error: 'not_found', message }, 404);
  });
  app.onError((err, c: Context) => {
    const { status, body } = toHttpError(err, options.logger);
    const shape = shapeOf(c.req.path);
    if (shape) return c.json(shape.body(status, body.message, c.req.path) as object, status);
    return c.json(body, status);
  });
  return app;
}
