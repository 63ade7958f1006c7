/**
 * The REST routes the gateway serves, read from the Hono app itself (built with every optional part present, as
 * `startGateway` builds it), so suites that must cover every route — hostile input, the authorization matrix — notice
 * a new one. The stubs are never called: only the route table is read.
 */
import { createRestApp } from '../src/gateway/rest/rest-app.js';
import { createSilentLogger } from '../src/shared/logger.js';
import { createClouddriverApi } from '../src/gateway/spinnaker/clouddriver-api.js';

/** One registered route: an HTTP method (`ALL` for a catch-all answering 405) and a Hono path pattern. */
export interface RestRoute {
  method: string;
  path: string;
}

/** Every route of the gateway's REST app, in registration order, without the authentication middleware (`ALL /*`). */
export function listRestRoutes(): RestRoute[] {
  const app = createRestApp({
    id: 'routes',
    baseUrl: () => 'http://127.0.0.1',
    database: {} as never,
    isDraining: () => false,
    logger: createSilentLogger(),
    operations: {} as never,
    authenticator: {} as never,
    accounts: { limits: { maxBodyBytes: 1, maxPageSize: 1 } } as never,
    metrics: { scrape: async () => ({ contentType: 'text/plain', body: '' }) },
    webDir: '/nonexistent',
    replicas: { list: () => [], get: () => undefined },
    reads: {} as never,
    routes: [
      createClouddriverApi({
        selfId: 'routes',
        database: {} as never,
        operations: {} as never,
        reads: {} as never,
        accounts: { limits: { maxBodyBytes: 1, maxPageSize: 1 } } as never,
        logger: createSilentLogger(),
        maxBodyBytes: 1,
      }),
    ],
  });
  const seen = new Set<string>();
  const out: RestRoute[] = [];
  for (const r of app.routes) {
    if (r.method === 'ALL' && r.path === '/*') continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ method: r.method, path: r.path });
  }
  return out;
}
