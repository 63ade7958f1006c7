/**
 * Which REST paths are the Clouddriver API (docs/spinnaker.md): they require the `spinnaker` role, whatever the
 * method, and answer errors in Spring's shape (`{timestamp, status, error, message, path}`) because Orca and Gate
 * parse that shape. The gateway hands both to its core (src/gateway/modules/feature-paths.ts): authorization and the REST
 * app's error mapping never import this feature.
 */
import type { PathRule } from '../auth/authorization.js';
import type { RestErrorShape } from '../rest/rest-app.js';

const PREFIXES = [
  '/ops',
  '/kubernetes/ops',
  '/task',
  '/kubernetes/task',
  '/manifests',
  '/credentials',
  '/applications',
  '/cache',
  '/instances',
  '/securityGroups',
  '/serverGroups',
  '/search',
  '/artifacts',
];

/** True for a path served by the Clouddriver API (trailing slashes ignored). */
export function isClouddriverPath(path: string): boolean {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return PREFIXES.some((prefix) => p === prefix || p.startsWith(`${prefix}/`));
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Spring Boot's error body, as kork's exception handlers write it. */
function springErrorBody(
  status: number,
  message: string,
  path: string,
): { timestamp: string; status: number; error: string; message: string; path: string } {
  return { timestamp: new Date().toISOString(), status, error: REASONS[status] ?? 'Error', message, path };
}

/** The Clouddriver API requires the `spinnaker` role, whatever the method. */
export const CLOUDDRIVER_PATH_RULE: PathRule = { name: 'the Clouddriver API', requirement: 'spinnaker', matches: isClouddriverPath };

/** Errors on the Clouddriver API in Spring's shape (Orca and Gate parse it), also for paths it does not serve. */
export const CLOUDDRIVER_ERROR_SHAPE: RestErrorShape = {
  matches: isClouddriverPath,
  body: (status, message, path) => springErrorBody(status, message, path),
};
