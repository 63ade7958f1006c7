/** What to read of a pod's log through the gateway's kube proxy (`/k8s/{account}/…`, docs/kubectl.md). */
export interface PodLogRequest {
  account: string;
  namespace: string;
  pod: string;
  container: string;
  /** Last lines to start with; null reads the whole log. */
  tailLines: number | null;
  follow: boolean;
}

/** A refusal of the log request: the Kubernetes Status message (or the response text) and the HTTP status. */
export class PodLogError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The kube proxy URL of a pod's log (same origin as the dashboard, which its CSP allows). */
function podLogUrl(r: PodLogRequest): string {
  const path = ['k8s', r.account, 'api', 'v1', 'namespaces', r.namespace, 'pods', r.pod, 'log'].map(encodeURIComponent).join('/');
  const query = new URLSearchParams({ container: r.container });
  if (r.tailLines !== null) query.set('tailLines', String(r.tailLines));
  if (r.follow) query.set('follow', 'true');
  return `/${path}?${query}`;
}

/** The message of a failed response: a Kubernetes Status' `message`, else the body text, else the status text. */
async function refusal(response: Response): Promise<PodLogError> {
  const text = await response.text().catch(() => '');
  let message = text.trim();
  try {
    const status = JSON.parse(text) as { message?: unknown };
    if (typeof status.message === 'string' && status.message) message = status.message;
  } catch {
    // not JSON: the text itself
  }
  return new PodLogError(response.status, message || response.statusText || `HTTP ${response.status}`);
}

/**
 * Reads a pod's log with fetch, calling `onLines` with each batch of complete lines as they arrive (a last line
 * without a newline is delivered when the stream ends). Sends `Authorization: Bearer <token>` when there is a token,
 * and the dashboard session's CSRF header when the page is signed in with a provider.
 * Resolves when the log ends (the pod is gone or finished, or the request was not following) or `signal` aborts;
 * rejects with a PodLogError when the gateway or the cluster refuses, or with the network error.
 */
export async function readPodLog(
  request: PodLogRequest,
  credentials: { token: string | null; csrf: string | null },
  onLines: (lines: string[]) => void,
  signal: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = { Accept: 'text/plain, */*' };
  if (credentials.token) headers.Authorization = `Bearer ${credentials.token}`;
  // Signed in with a provider: the session cookie goes by itself (same origin), with the CSRF header it needs.
  if (credentials.csrf) headers['X-Outpost-CSRF'] = credentials.csrf;
  const response = await fetch(podLogUrl(request), { headers, signal, cache: 'no-store' });
  if (!response.ok) throw await refusal(response);
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let partial = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const parts = (partial + value).split('\n');
      partial = parts.pop() ?? '';
      if (parts.length > 0) onLines(parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)));
    }
  } catch (e) {
    if (signal.aborted) return;
    throw e;
  } finally {
    reader.releaseLock();
  }
  if (partial) onLines([partial]);
}
