/**
 * The mini agent's Kubernetes client: plain `fetch` against an API server (the sandbox), no client library, so the
 * conformance suite depends on nothing of Outpost's agent. Paths, list pages (`limit` / `continue`), watches
 * (`watch=1&allowWatchBookmarks=true&resourceVersion=…`, newline-delimited JSON) and Status errors as the Kubernetes
 * API conventions describe them.
 */

/** A resource kind with what it takes to build its paths. */
export interface KubeKind {
  apiVersion: string;
  kind: string;
  /** Plural resource name. */
  resource: string;
  namespaced: boolean;
}

/** A Kubernetes object as JSON. */
export type KubeObject = Record<string, any> & { metadata?: Record<string, any> };

/** A response: HTTP status and parsed JSON body (a Status object for errors). */
export interface KubeResponse {
  status: number;
  body: KubeObject;
}

/** One watch event as the API server streams it. */
interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

/** The calls the mini agent makes. */
export interface KubeClient {
  readonly baseUrl: string;
  /** `gitVersion` of `/version`. */
  version(): Promise<string>;
  /** Finds a kind by discovery (its plural and scope). */
  resolve(apiVersion: string, kind: string): Promise<KubeKind>;
  /** Collection path of a kind, in a namespace or across all. */
  collectionPath(k: KubeKind, namespace?: string): string;
  /** Path of one object. */
  objectPath(k: KubeKind, namespace: string, name: string): string;
  /** Any request; the body is JSON-encoded unless it is a string. */
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; contentType?: string; query?: Record<string, string | undefined> },
  ): Promise<KubeResponse>;
  /**
   * Streams a watch until it ends, the signal aborts or `onEvent` returns false. Resolves with the HTTP status of the
   * watch request (200, or 410 when the version is too old).
   */
  watch(
    k: KubeKind,
    namespace: string,
    resourceVersion: string,
    onEvent: (e: WatchEvent) => boolean | undefined,
    signal: AbortSignal,
  ): Promise<number>;
}

function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** A client for the API server at `baseUrl` with a bearer token. */
export function createKubeClient(baseUrl: string, token: string): KubeClient {
  const auth = { authorization: `Bearer ${token}` };
  const discovered = new Map<string, KubeKind>();
  const request: KubeClient['request'] = async (method, path, opts = {}) => {
    const url = new URL(path, baseUrl);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, v);
    const hasBody = opts.body !== undefined;
    const res = await fetch(url, {
      method,
      headers: { ...auth, accept: 'application/json', ...(hasBody ? { 'content-type': opts.contentType ?? 'application/json' } : {}) },
      body: hasBody ? (typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)) : undefined,
    });
    const text = await res.text();
    let body: KubeObject;
    try {
      body = text ? (JSON.parse(text) as KubeObject) : {};
    } catch {
      body = { kind: 'Status', status: 'Failure', message: text, code: res.status };
    }
    return { status: res.status, body };
  };
  const client: KubeClient = {
    baseUrl,
    async version() {
      const r = await request('GET', '/version');
      return String(r.body.gitVersion ?? '');
    },
    async resolve(apiVersion, kind) {
      const key = `${apiVersion}/${kind}`;
      const known = discovered.get(key);
      if (known) return known;
      const r = await request('GET', groupVersionPath(apiVersion));
      const found = (r.body.resources as { name: string; kind: string; namespaced: boolean }[] | undefined)?.find(
        (x) => x.kind === kind && !x.name.includes('/'),
      );
      if (!found) throw Object.assign(new Error(`the server does not serve ${kind} in ${apiVersion}`), { status: 404, reason: 'NotFound' });
      const k = { apiVersion, kind, resource: found.name, namespaced: found.namespaced };
      discovered.set(key, k);
      return k;
    },
    collectionPath(k, namespace) {
      const ns = k.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
      return `${groupVersionPath(k.apiVersion)}${ns}/${k.resource}`;
    },
    objectPath(k, namespace, name) {
      return `${client.collectionPath(k, namespace)}/${encodeURIComponent(name)}`;
    },
    request,
    async watch(k, namespace, resourceVersion, onEvent, signal) {
      const url = new URL(client.collectionPath(k, namespace), baseUrl);
      url.searchParams.set('watch', '1');
      url.searchParams.set('allowWatchBookmarks', 'true');
      url.searchParams.set('resourceVersion', resourceVersion);
      let res: Response;
      try {
        res = await fetch(url, { headers: { ...auth, accept: 'application/json' }, signal });
      } catch (err) {
        if (signal.aborted) return 0;
        throw err;
      }
      if (res.status !== 200 || !res.body) {
        await res.text().catch(() => '');
        return res.status;
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let partial = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          partial += decoder.decode(value, { stream: true });
          const lines = partial.split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) {
            if (!line.trim()) continue;
            if (onEvent(JSON.parse(line) as WatchEvent) === false) {
              await reader.cancel().catch(() => {});
              return 200;
            }
          }
        }
      } catch (err) {
        if (!signal.aborted) throw err;
      }
      return 200;
    },
  };
  return client;
}

/**
 * Removes what page section 8 says never leaves the cluster: `data`, `stringData` and the last-applied annotation of
 * a `v1` `Secret`. Returns a copy; other objects come back unchanged.
 */
export function scrubSecret<T extends KubeObject>(obj: T): T {
  if (obj.apiVersion !== 'v1' || obj.kind !== 'Secret') return obj;
  const { data: _data, stringData: _stringData, ...rest } = obj;
  const metadata: Record<string, any> = { ...(rest.metadata ?? {}) };
  if (metadata.annotations) {
    const { 'kubectl.kubernetes.io/last-applied-configuration': _last, ...annotations } = metadata.annotations as Record<string, string>;
    metadata.annotations = annotations;
  }
  return { ...rest, metadata } as T;
}
