/**
 * Account management over REST, on the reference's paths (docs/accounts.md lists bodies and answers):
 * `GET|POST|PATCH|DELETE /armory/accounts`, `POST|PATCH|PUT /armory/accounts/dynamic`,
 * `GET|DELETE /armory/accounts/{name}`, `DELETE /armory/accounts/{name}/binding` and
 * `PUT /armory/accounts/{name}/binding` (`{"identity": "<method>:<subject>"}`: moves the identity binding). Bodies must be JSON
 * (`application/json`, 415 otherwise), at most `accounts.maxBodyBytes` (413), well-formed (400) and valid (400);
 * a refused request changes nothing. Accounts are the protobuf JSON of `outpost.api.v1.Account`.
 */
import { toJson } from '@bufbuild/protobuf';
import type { Context, Hono } from 'hono';
import { AccountSchema, AccountTransitionSchema, type Account } from '../../gen/outpost/api/v1/account_service_pb.js';
import type { AccountAdmin } from '../account-admin/account-admin.js';
import { AccountAdminError, toAccountHttpBody } from '../accounts/account-errors.js';
import { parseDefinitions, parseName, parseNames, parseStateChanges } from '../accounts/account-input.js';
import { adminActor } from '../accounts/account-states.js';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';
import { readJsonBody } from '../http/json-body.js';

/** Page size of `GET /armory/accounts` without `limit`. */
const DEFAULT_ACCOUNT_LIMIT = 100;

type C = Context<RestEnv>;

/** Adds the account routes to `app`. */
export function addAccountRoutes(app: Hono<RestEnv>, admin: AccountAdmin): void {
  const actor = (c: C) => adminActor(c.get('principal'));
  const json = (account: Account) => toJson(AccountSchema, account);
  const items = (list: Account[]) => ({ items: list.map(json) });
  const body = (c: C) => readJsonBody(c, admin.limits.maxBodyBytes);

  /** Runs a handler, answering account errors with their JSON body (which may list names). */
  const handle = (run: (c: C) => Promise<Response>) => async (c: C) => {
    try {
      return await run(c);
    } catch (err) {
      if (!(err instanceof AccountAdminError)) throw err;
      const { status, body: payload } = toAccountHttpBody(err);
      return c.json(payload, status);
    }
  };

  app.get(
    '/armory/accounts',
    handle(async (c) => {
      const page = queryInt(c.req.query('page'), 'page', 1, Number.MAX_SAFE_INTEGER);
      const limit = queryInt(
        c.req.query('limit'),
        'limit',
        Math.min(DEFAULT_ACCOUNT_LIMIT, admin.limits.maxPageSize),
        admin.limits.maxPageSize,
      );
      const result = await admin.list({ page, limit });
      return c.json({ items: result.accounts.map(json), page: result.page, limit: result.limit, total: result.total });
    }),
  );
  app.post(
    '/armory/accounts',
    handle(async (c) => c.json(items(await admin.create(parseDefinitions(await body(c)), actor(c))), 201)),
  );
  app.patch(
    '/armory/accounts',
    handle(async (c) => c.json(items(await admin.setStates(parseStateChanges(await body(c)), actor(c))))),
  );
  app.delete(
    '/armory/accounts',
    handle(async (c) => c.json({ deleted: await admin.delete(parseNames(await body(c)), actor(c)) })),
  );

  app.post(
    '/armory/accounts/dynamic',
    handle(async (c) => c.json(items(await admin.putDynamic(parseDefinitions(await body(c)), 'create', actor(c))), 201)),
  );
  app.patch(
    '/armory/accounts/dynamic',
    handle(async (c) => c.json(items(await admin.putDynamic(parseDefinitions(await body(c)), 'update', actor(c))))),
  );
  app.put(
    '/armory/accounts/dynamic',
    handle(async (c) => c.json(items(await admin.putDynamic(parseDefinitions(await body(c)), 'upsert', actor(c))))),
  );

  app.get(
    '/armory/accounts/:name',
    handle(async (c) => {
      const { account, transitions } = await admin.get(parseName(c.req.param('name')));
      return c.json({ ...(json(account) as object), transitions: transitions.map((t) => toJson(AccountTransitionSchema, t)) });
    }),
  );
  app.delete(
    '/armory/accounts/:name',
    handle(async (c) => c.json({ deleted: await admin.delete([parseName(c.req.param('name'))], actor(c)) })),
  );
  app.delete(
    '/armory/accounts/:name/binding',
    handle(async (c) => c.json(json(await admin.releaseBinding(parseName(c.req.param('name')), actor(c))))),
  );
  app.put(
    '/armory/accounts/:name/binding',
    handle(async (c) => {
      const name = parseName(c.req.param('name'));
      const payload = await body(c);
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
        throw new AccountAdminError('invalid', 'the body must be an object: {"identity": "<method>:<subject>"}');
      }
      const extra = Object.keys(payload).filter((k) => k !== 'identity');
      if (extra.length > 0)
        throw new AccountAdminError(
          'invalid',
          `unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => JSON.stringify(k.slice(0, 50))).join(', ')}; only "identity" is accepted`,
        );
      return c.json(json(await admin.rebind(name, (payload as { identity?: unknown }).identity, actor(c))));
    }),
  );

  const allowed: [string, string][] = [
    ['/armory/accounts', 'GET, HEAD, POST, PATCH, DELETE'],
    ['/armory/accounts/dynamic', 'POST, PATCH, PUT'],
    ['/armory/accounts/:name', 'GET, HEAD, DELETE'],
    ['/armory/accounts/:name/binding', 'PUT, DELETE'],
  ];
  for (const [path, allow] of allowed) {
    app.all(path, (c) => {
      c.header('Allow', allow);
      throw new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}`);
    });
  }
}

function queryInt(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw))
    throw new HttpError(400, 'bad_request', `${name} must be a positive integer (got ${JSON.stringify(raw.slice(0, 50))})`);
  const n = Number(raw);
  if (n < 1 || n > max) throw new HttpError(400, 'bad_request', `${name} must be between 1 and ${max} (got ${raw.slice(0, 50)})`);
  return n;
}
