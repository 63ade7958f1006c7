/**
 * The Secret policy of the Kubernetes API proxy (`kubeProxy.secrets`, docs/kubectl.md "Secrets"), decided by the
 * agent — the last hop inside the cluster — for each request of an account. With `allow` nothing changes: the
 * cluster's RBAC decides. With `deny` (the default), Secret values never leave the cluster:
 *
 * - reads (GET, HEAD) of Secrets go out asking only for the metadata-only representations the caller accepts
 *   (metadata-accept.ts), and their answers are checked (secret-answer.ts); a read asking for none is refused — a
 *   list or watch at once, the get of one Secret once the cluster answered it (so a missing Secret is still 404, which
 *   `kubectl apply` of a new Secret needs);
 * - writes (POST, PUT, PATCH, DELETE of one Secret; OPTIONS) go out asking for JSON without compression, and their
 *   answers come back without the values; a JSON patch reading the values (shared/secret-patch-rules.ts) is refused
 *   before it reaches the cluster, its body held (bounded) until it is checked;
 * - deleting a collection of Secrets (its answer lists them) and upgrades (a watch over WebSocket) are refused.
 *
 * A request is about Secrets when the core group's `secrets` resource is what the path names in any of the ways a
 * server may read it: as sent (WHATWG URL parsing turns `\` into `/`), percent-decoded before it is split (Go's
 * `URL.Path`; `%2F` is a `/`), with empty segments kept (kube-apiserver's RequestInfo) or dropped, and with dot
 * segments resolved. Any `/api/{version}` counts (the core group has only v1); another group's resource that happens
 * to be called `secrets` is not a Kubernetes Secret and passes.
 */
import type { IncomingMessage } from 'node:http';
import { posix } from 'node:path';
import { secretPatchProblem } from '../../shared/secret-patch-rules.js';
import type { AccountConfig } from '../config/schema.js';
import { metadataAccept, type ReadShape } from './metadata-accept.js';
import { checkSecretAnswer, type CheckedAnswer, type SecretAnswerMode } from './secret-answer.js';

/** What the proxy does about Secrets for one request (see the module comment). */
export interface SecretGuard {
  /** Why the request is refused before it reaches the cluster (403); undefined when it may go. */
  readonly refusal: string | undefined;
  /** The request body must be complete (at most `SECRET_BUFFER_BYTES`, secret-answer.ts) and pass {@link checkBody} first. */
  readonly holdsBody: boolean;
  /** Why the held body may not be sent, or undefined. */
  checkBody(body: Buffer): string | undefined;
  /** Rewrites the headers about to be sent (lower-case names) in place. */
  rewriteHeaders(headers: Record<string, string | string[]>): void;
  /** What goes back for the cluster's answer: the answer itself, a checked copy, or a refusal. */
  answer(res: IncomingMessage): CheckedAnswer;
}

/** What the guard reads of a proxied request (a KubeRequestHead has it). */
export interface GuardedRequest {
  method: string;
  /** Path and query below the API root, as the gateway sent it. */
  path: string;
  headers: readonly { name: string; value: string }[];
  upgrade: boolean;
}

/** One reading of a path: the core group's resource it names, whether it is named, whether it is a watch path. */
interface CoreReading {
  resource: string | undefined;
  name: string;
  watchPath: boolean;
}

const METADATA_HINT = 'metadata-only reads work: kubectl get secrets without -o, or Accept as=Table or as=PartialObjectMetadata';

/**
 * Reads `segments` (without the empty leading one) as kube-apiserver's RequestInfo does, for the core group — as far
 * as it matters here, which is whether the resource is `secrets`: `/api/{version}`, an optional `watch` or `proxy`,
 * then `namespaces/{namespace}/` before a namespaced resource. (A namespace's own paths — `namespaces/{name}` and its
 * `status` and `finalize` — read as another resource or none, never as `secrets`.)
 */
function coreReading(segments: readonly string[]): CoreReading | undefined {
  if (segments[0] !== 'api') return undefined;
  let rest = segments.slice(2);
  let watchPath = false;
  if (rest[0] === 'watch' || rest[0] === 'proxy') {
    watchPath = rest[0] === 'watch';
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces') rest = rest.slice(2);
  return { resource: rest[0], name: rest[1] ?? '', watchPath };
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Every reading of the path that names Secrets; empty when none does. */
function secretReadings(pathname: string): CoreReading[] {
  const whole = decoded(pathname);
  const candidates = [
    pathname.split('/').filter(Boolean).map(decoded),
    // Empty segments kept, the leading ones dropped (RequestInfo trims the slashes at both ends; trailing empty
    // segments come after the resource and its name, where they read as no name either way).
    whole.replace(/^\/+/g, '').split('/'),
    whole.split('/').filter(Boolean),
    posix.normalize(whole).split('/').filter(Boolean),
  ];
  return candidates.map(coreReading).filter((r): r is CoreReading => r?.resource === 'secrets');
}

function truthyWatch(query: URLSearchParams): boolean {
  return query.getAll('watch').some((value) => value !== '0' && value.toLowerCase() !== 'false');
}

const PASS: SecretGuard = {
  refusal: undefined,
  holdsBody: false,
  checkBody: () => undefined,
  rewriteHeaders: () => {},
  answer: (res) => ({ body: res, rewritten: false }),
};

/** The guard of one proxied request of the account `config`; see the module comment. */
export function secretGuard(config: AccountConfig, head: GuardedRequest): SecretGuard {
  if (config.kubeProxy.secrets === 'allow') return PASS;
  const denied = (what: string) =>
    `kubeProxy.secrets is "deny" for account "${config.name}" on its agent: Secret values stay in the cluster, so ${what}`;
  const refuse = (what: string): SecretGuard => ({ ...PASS, refusal: denied(what) });
  let url: URL;
  try {
    // As the cluster request's URL is built (kube-client.ts): the same normalisation.
    url = new URL(`https://cluster.invalid${head.path}`);
  } catch {
    return refuse('a path that does not parse as a URL is refused');
  }
  const readings = secretReadings(url.pathname);
  if (readings.length === 0) return PASS;
  const method = head.method.toUpperCase();
  const named = readings.every((r) => r.name !== '' && !r.watchPath);
  const values = (name: string) => head.headers.filter((h) => h.name.toLowerCase() === name).map((h) => h.value);
  if (head.upgrade) return refuse('an upgraded (WebSocket) request on Secrets is refused');

  const checked = (mode: SecretAnswerMode, accept: string, holdsBody = false): SecretGuard => ({
    refusal: undefined,
    holdsBody,
    checkBody(body) {
      const declared = values('content-type').some((v) => v.split(';')[0]!.trim().toLowerCase() === 'application/json-patch+json');
      let ops: unknown;
      try {
        ops = JSON.parse(body.toString('utf8'));
      } catch {
        return declared ? denied('a JSON patch of a Secret that is not valid JSON is refused') : undefined;
      }
      if (!declared && !Array.isArray(ops)) return undefined;
      const problem = secretPatchProblem(ops);
      return problem ? denied(`a JSON patch of a Secret reading its values is refused: ${problem}`) : undefined;
    },
    rewriteHeaders(headers) {
      headers.accept = accept;
      delete headers['accept-encoding'];
    },
    answer: (res) => checkSecretAnswer(res, method, mode, denied(`reading a Secret as an object is refused (${METADATA_HINT})`)),
  });

  if (method === 'GET' || method === 'HEAD') {
    const watch = !named && (readings.some((r) => r.watchPath) || truthyWatch(url.searchParams));
    const shape: ReadShape = watch ? 'watch' : named ? 'get' : 'list';
    const accept = metadataAccept(values('accept'), shape, url.searchParams);
    if (accept) return checked('metadata', accept);
    if (shape === 'get') return checked('object', 'application/json');
    return refuse(`a ${shape} of Secrets as objects is refused (${METADATA_HINT})`);
  }
  if (method === 'DELETE' && !named) {
    return refuse('deleting a collection of Secrets is refused (its answer lists them, values included); delete them by name');
  }
  return checked('write', 'application/json', method === 'PATCH');
}
