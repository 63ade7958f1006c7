/**
 * The REST side of the gateway (Hono), served as connect-node's fallback on both ports: health and the
 * `/armory/clouddrivers` replica listing, and the operation reads (`/armory/agent/operations`). Errors are JSON `{error, message}`, mapped in one place (`onError`).
 */
import { Hono, type Context } from 'hono';
import type { Database } from '../../db/database.js';
import { pingDatabase } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { HttpError, toHttpError } from '../errors.js';
import type { OperationManager } from '../operations/operation-manager.js';
import { addOperationRoutes } from './operation-routes.js';

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
}

/** One gateway replica as `/armory/clouddrivers` lists it. */
export interface ClouddriverInstance {
  id: string;
  baseUrl: string;
  lastUpdated: string;
  ready: boolean;
}

/** Builds the Hono app. Test it with `app.request()`; serve it with `getRequestListener(app.fetch)`. */
export function createRestApp(options: RestAppOptions): Hono {
  const app = new Hono();
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

  app.get('/armory/clouddrivers', (c) => c.json([self()]));
  app.get('/armory/clouddrivers/:id', (c) => {
    const id = c.req.param('id');
    if (id !== options.id) throw new HttpError(404, 'not_found', `no clouddriver instance ${JSON.stringify(id)}`);
    return c.json(self());
  });

  if (options.operations) addOperationRoutes(app, options.operations);

  for (const path of ['/health', '/armory/clouddrivers', '/armory/clouddrivers/:id']) {
    app.all(path, (c) => {
      c.header('Allow', 'GET, HEAD');
      throw new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}`);
    });
  }

  app.notFound((c) => c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c: Context) => {
    const { status, body } = toHttpError(err, options.logger);
    return c.json(body, status);
  });
  return app;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
