/**
 * Clouddriver's artifact routes (contract §1b, §4; docs/spinnaker.md, "Artifacts"): `PUT /artifacts/fetch` (Orca and
 * Rosco send the trailing slash, Gate does not) answers the artifact's raw bytes as `application/octet-stream`;
 * `GET /artifacts/credentials` lists the artifact accounts (name, types, type — never a credential);
 * `GET /artifacts/account/{account}/names?type=` and `…/versions?type=&artifactName=` list a Helm repository's charts
 * and a chart's versions. Statuses as Clouddriver's: no `artifactAccount` is a 400 (Clouddriver's has an empty body; Outpost's says why), no account of
 * that name for that type a 404, an account without names or versions a 501, an upstream failure a 502; errors are
 * Spring's shape (rest-app.ts). Fetches are logged without their reference (it may carry a signed URL).
 */
import { Readable } from 'node:stream';
import type { Context, Hono } from 'hono';
import type { Logger } from '../../../shared/logger.js';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import { readJsonBody } from '../../http/json-body.js';
import { parseArtifact } from '../artifacts/artifact-account.js';
import type { ArtifactAccounts } from '../artifacts/artifact-accounts.js';
import { badArtifact } from '../artifacts/artifact-errors.js';

/** What the routes need. */
export interface ArtifactRoutesDeps {
  accounts: ArtifactAccounts;
  /** Largest fetch request body (the artifact JSON, an embedded/base64 reference included). */
  maxRequestBytes: number;
  logger: Logger;
}

/** Adds the routes. */
export function addArtifactRoutes(app: Hono<RestEnv>, deps: ArtifactRoutesDeps): void {
  const fetchArtifact = async (c: Context<RestEnv>) => {
    const artifact = parseArtifact(await readJsonBody(c, deps.maxRequestBytes));
    // Clouddriver answers this 400 with an empty body (ArtifactControllerSpec); no caller reads it, so Outpost says why,
    // in Spring's error shape like every other refusal of these routes.
    if (!artifact.artifactAccount)
      throw new HttpError(400, 'Bad Request', 'the artifact names no artifactAccount (GET /artifacts/credentials lists them)');
    const account = deps.accounts.forType(artifact.artifactAccount, artifact.type);
    const startedAt = Date.now();
    const about = { artifactAccount: account.name, type: artifact.type, name: artifact.name, version: artifact.version };
    try {
      const body = await account.download(artifact);
      deps.logger.info({ ...about, bytes: body.size, durationMs: Date.now() - startedAt }, 'artifact fetched');
      const stream = body.stream();
      return new Response(Readable.toWeb(stream) as ReadableStream, {
        status: 200,
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.size) },
      });
    } catch (err) {
      if (err instanceof HttpError) deps.logger.warn({ ...about, status: err.status, reason: err.message }, 'artifact fetch failed');
      throw err;
    }
  };
  app.put('/artifacts/fetch', fetchArtifact);
  app.put('/artifacts/fetch/', fetchArtifact);

  app.get('/artifacts/credentials', (c) => c.json(deps.accounts.all.map((a) => ({ name: a.name, types: [...a.types], type: a.type }))));

  const query = (c: Context<RestEnv>, name: string) => {
    const value = c.req.query(name);
    if (!value) throw badArtifact(`Required request parameter '${name}' is not present`);
    return value;
  };
  const notImplemented = (account: string) =>
    new HttpError(501, 'Not Implemented', `artifact account ${account} cannot list artifact names or versions (only Helm accounts can)`);
  app.get('/artifacts/account/:account/names', async (c) => {
    const account = deps.accounts.forType(c.req.param('account'), query(c, 'type'));
    if (!account.names) throw notImplemented(account.name);
    return c.json(await account.names());
  });
  app.get('/artifacts/account/:account/versions', async (c) => {
    const account = deps.accounts.forType(c.req.param('account'), query(c, 'type'));
    const chart = query(c, 'artifactName');
    if (!account.versions) throw notImplemented(account.name);
    return c.json(await account.versions(chart));
  });
}
