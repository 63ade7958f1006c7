/**
 * The gateway's one call to Fiat: `GET {baseUrl}/authorize/{user}` (kork's `FiatService.getUserPermission`), bounded in
 * time (`timeoutSeconds`, for connecting, TLS and the whole answer) and size (`maxResponseBytes`), over https with an
 * optional CA bundle, with an optional bearer token read from a file on each call. Like Clouddriver's client it sends
 * the user in `X-SPINNAKER-USER` when there is one (Fiat resolves users who never came through Gate only for a request
 * naming them). Fiat's 404 ("user not found") is an answer: the user has no permissions. Anything else that is not a
 * readable 200 is a {@link FiatUnavailableError}, which callers must treat as a refusal (fail closed).
 */
import { readFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FiatConfig } from '../../config/fiat-schema.js';
import { noPermissions, parseUserPermission, UserPermissionFormatError, type UserPermission } from './user-permission.js';

/** Fiat could not answer: unreachable, too slow, an unexpected status, an answer too large or unreadable. */
export class FiatUnavailableError extends Error {
  override name = 'FiatUnavailableError';
}

/** See the module comment. */
export interface FiatClient {
  /** The user's permissions; `anonymous` is the user of requests that name none. Throws {@link FiatUnavailableError}. */
  userPermission(user: string): Promise<UserPermission>;
}

/** The settings the client uses (`baseUrl` required). */
export type FiatClientConfig = Pick<FiatConfig, 'timeoutSeconds' | 'maxResponseBytes' | 'caFile' | 'tokenFile'> & { baseUrl: string };

/** Creates the client. Files named by the config are read on each call, so rotating them needs no restart. */
export function createFiatClient(config: FiatClientConfig): FiatClient {
  const base = config.baseUrl.endsWith('/') ? config.baseUrl : `${config.baseUrl}/`;
  const timeoutMs = config.timeoutSeconds * 1000;
  return {
    async userPermission(user) {
      const url = new URL(`authorize/${encodeURIComponent(user)}`, base);
      const headers: Record<string, string> = { accept: 'application/json' };
      if (user !== 'anonymous') headers['x-spinnaker-user'] = user;
      const token = config.tokenFile ? (await readSetting(config.tokenFile, 'tokenFile')).trim() : '';
      if (token) headers.authorization = `Bearer ${token}`;
      const ca = config.caFile ? await readSetting(config.caFile, 'caFile') : undefined;
      const { status, body } = await get(url, headers, ca, timeoutMs, config.maxResponseBytes);
      if (status === 404) return noPermissions(user);
      if (status !== 200) throw new FiatUnavailableError(`Fiat answered HTTP ${status} for ${url.pathname}`);
      try {
        return parseUserPermission(JSON.parse(body.toString('utf8')), user);
      } catch (err) {
        const why = err instanceof UserPermissionFormatError ? err.message : 'the answer is not JSON';
        throw new FiatUnavailableError(`Fiat's answer for ${url.pathname} is not a permission view: ${why}`);
      }
    },
  };
}

async function readSetting(path: string, key: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new FiatUnavailableError(`cannot read spinnaker.fiat.${key} ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** One bounded GET: rejects with FiatUnavailableError on a network error, the deadline or an oversized answer. */
function get(
  url: URL,
  headers: Record<string, string>,
  ca: string | undefined,
  timeoutMs: number,
  maxBytes: number,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const fail = (message: string) => {
      clearTimeout(deadline);
      req.destroy();
      reject(new FiatUnavailableError(message));
    };
    const req = send(url, { method: 'GET', headers, ...(ca === undefined ? {} : { ca }) }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) fail(`Fiat's answer for ${url.pathname} is larger than ${maxBytes} bytes`);
        else chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => fail(`reading Fiat's answer for ${url.pathname} failed: ${err.message}`));
    });
    const deadline = setTimeout(() => fail(`Fiat did not answer ${url.pathname} within ${timeoutMs} ms`), timeoutMs);
    req.on('error', (err) => fail(`calling Fiat at ${url.origin} failed: ${err.message}`));
    req.end();
  });
}
