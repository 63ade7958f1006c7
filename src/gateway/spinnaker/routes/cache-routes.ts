/**
 * Clouddriver's on-demand cache refresh, `POST /cache/{cloudProvider}/{type}` and `GET /cache/{cloudProvider}/{type}`
 * (pending refreshes). Outpost's cache follows every cluster through its agent's watches and the Clouddriver API
 * reads manifests live, so there is never anything to refresh: as today's Clouddriver does for live Kubernetes
 * manifests, the POST answers 200 `{"cachedIdentifiersByType": {}}` and the GET an empty list. A type Clouddriver does
 * not know is a 404.
 */
import type { Hono } from 'hono';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import { readJsonBody } from '../../http/json-body.js';
import { badDescription } from '../ops/description-fields.js';

/** Clouddriver's `OnDemandType` names (matched ignoring case). */
const TYPES = ['servergroup', 'securitygroup', 'loadbalancer', 'job', 'targethealth', 'cloudformation', 'manifest', 'function'];
const MAX_BODY_BYTES = 64 * 1024;

function checkType(type: string): void {
  if (!TYPES.includes(type.toLowerCase())) throw new HttpError(404, 'Not Found', `no on-demand cache type ${JSON.stringify(type)}`);
}

/** Adds the routes. */
export function addCacheRoutes(app: Hono<RestEnv>): void {
  app.post('/cache/:cloudProvider/:type', async (c) => {
    checkType(c.req.param('type'));
    const body = await readJsonBody(c, MAX_BODY_BYTES);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badDescription('the body must be a JSON object');
    return c.json({ cachedIdentifiersByType: {} });
  });
  app.get('/cache/:cloudProvider/:type', (c) => {
    checkType(c.req.param('type'));
    return c.json([]);
  });
}
