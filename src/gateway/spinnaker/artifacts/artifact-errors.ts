/**
 * The errors of artifact fetching, as the Clouddriver routes answer them (Spring's error shape, rest-app.ts), and the
 * scrubbing every message goes through first: an upstream's message (or git's) may echo a URL with a user and
 * password in it, or a credential the gateway sent; neither may reach an answer or a log line.
 */
import { HttpError } from '../../http/errors.js';

/** 400: the artifact itself is wrong (no account, bad base64, a URL the account may not fetch). */
export function badArtifact(message: string): HttpError {
  return new HttpError(400, 'Bad Request', message);
}

/** 404: no account of that name handles that type, or the chart or version is not in the index. */
export function artifactNotFound(message: string): HttpError {
  return new HttpError(404, 'Not Found', message);
}

/** 502: the upstream failed, answered an error, was too large, or did not answer in time. */
export function upstreamFailed(message: string): HttpError {
  return new HttpError(502, 'Bad Gateway', message);
}

/** `scheme://user:password@host` → `scheme://***@host`, wherever it appears in `text`. */
function scrubUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@'"<>]*@/gi, '$1***@');
}

/**
 * `text` without URL credentials and without any of `secrets` (the account's password or token, and their Basic
 * form), for an error message or a log line built from something an upstream or a child process said.
 */
export function scrubMessage(text: string, secrets: readonly string[] = []): string {
  let out = scrubUrlCredentials(text);
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}

/** A URL as it may be shown: without its user and password. */
export function displayUrl(url: URL | string): string {
  try {
    const u = new URL(String(url));
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return scrubUrlCredentials(String(url));
  }
}
