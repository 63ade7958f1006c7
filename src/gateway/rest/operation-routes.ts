/**
 * Clouddriver-style REST reads of operations: `GET /armory/agent/operations?page&items` (newest first, with the
 * total) and `GET /armory/agent/operations/{id}`. Bodies are the OperationRecord protobuf JSON.
 */
import type { Hono } from 'hono';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';
import { MAX_OPERATION_PAGE_SIZE, type OperationManager } from '../operations/operation-manager.js';
import { toOperationRecordJson } from '../operations/operation-record.js';
import { checkOperationId } from '../operations/operation-validation.js';
import { ConnectError, Code } from '@connectrpc/connect';

/** Default `items` of the list route. */
const DEFAULT_REST_ITEMS = 50;

/** Adds the routes to `app` (GET only; other methods get 405). */
export function addOperationRoutes(app: Hono<RestEnv>, manager: OperationManager): void {
  app.get('/armory/agent/operations', async (c) => {
    const page = positiveInt(c.req.query('page'), 'page', 1, Number.MAX_SAFE_INTEGER);
    const items = positiveInt(c.req.query('items'), 'items', DEFAULT_REST_ITEMS, MAX_OPERATION_PAGE_SIZE);
    const { rows, total } = await manager.page(page, items);
    return c.json({ items: rows.map(toOperationRecordJson), page, pageSize: items, total });
  });

  app.get('/armory/agent/operations/:id', async (c) => {
    const id = c.req.param('id');
    try {
      checkOperationId(id);
      return c.json(toOperationRecordJson(await manager.get(id)) as object);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.InvalidArgument) throw new HttpError(400, 'bad_request', err.rawMessage);
      if (err instanceof ConnectError && err.code === Code.NotFound) throw new HttpError(404, 'not_found', err.rawMessage);
      throw err;
    }
  });

  for (const [path, allow] of [
    ['/armory/agent/operations', 'GET, HEAD, POST'],
    ['/armory/agent/operations/:id', 'GET, HEAD'],
  ] as const) {
    app.all(path, (c) => {
      c.header('Allow', allow);
      throw new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}`);
    });
  }
}

function positiveInt(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new HttpError(400, 'bad_request', `${name} must be a positive integer (got ${JSON.stringify(raw)})`);
  const n = Number(raw);
  if (n < 1 || n > max) throw new HttpError(400, 'bad_request', `${name} must be between 1 and ${max} (got ${raw})`);
  return n;
}
