/**
 * The request headers of kubectl through the gateway that may go on toward the cluster (docs/kubectl.md, "Headers"):
 * an ALLOW-list, applied by the gateway (to the agent, and on a forward to another replica) and again by the agent
 * before it adds its own credentials and `Impersonate-*` headers. Anything not listed is dropped: a caller's
 * `Authorization`, `Cookie`, `Impersonate-*`, and above all the front-proxy headers (`X-Remote-User`,
 * `X-Remote-Group`, `X-Remote-Extra-*`), which a cluster trusts as the identity when the agent's credential is a
 * front-proxy client certificate; and every header a later version of a client may invent.
 *
 * What is kept, and why:
 * - `accept`, `content-type`: the formats of the answer and of the body (JSON, protobuf, Table, the patch types,
 *   server-side apply YAML).
 * - `accept-encoding`, `content-encoding`: compressed answers (kube-apiserver gzips large lists for clients that ask;
 *   its `content-encoding` comes back untouched) and a body's declared encoding.
 * - `content-length`: the body's framing (the agent keeps it only when it streams the body as it came).
 * - `user-agent`, `kubectl-command`, `kubectl-session`: who is calling, for the cluster's own audit log.
 * - `if-none-match`, `if-modified-since`: kubectl's discovery and OpenAPI cache revalidates with them (304).
 * - `sec-websocket-key`, `sec-websocket-version`, `sec-websocket-protocol`, `sec-websocket-extensions`: the WebSocket
 *   handshake of exec, attach and port-forward (the subprotocol picks the stream protocol; frames pass through raw,
 *   so a negotiated extension is the two ends' business). `upgrade` goes on for an upgrade only; the agent sets
 *   `connection` itself.
 * Not kept although clients send them: `origin` and `referer` (kube-apiserver needs neither), `expect`, tracing and
 * `audit-id` headers (they would let a caller write into the cluster's audit records), hop-by-hop headers.
 */

/** Header names (lower case) a caller's request may carry to the cluster. */
export const KUBE_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'content-type',
  'content-encoding',
  'content-length',
  'user-agent',
  'kubectl-command',
  'kubectl-session',
  'if-none-match',
  'if-modified-since',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
]);

/** True when a header (any case) may go on toward the cluster; `upgrade` only on an upgrade request. */
export function isKubeRequestHeader(name: string, upgrade: boolean): boolean {
  const key = name.toLowerCase();
  return KUBE_REQUEST_HEADERS.has(key) || (upgrade && key === 'upgrade');
}

/** The allowed headers of a Node request's `headers` (names lower case, repeated values kept in order). */
export function allowedKubeHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  upgrade: boolean,
): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !isKubeRequestHeader(name, upgrade)) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push({ name: name.toLowerCase(), value: v });
  }
  return out;
}
