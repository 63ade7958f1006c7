/**
 * The Kubernetes calls of one operation: every call is timed (the result's `kubernetes_duration`), carries the
 * operation's abort signal (its timeout), remembers the status of the last answer, and is retried when Kubernetes
 * timed out, failed (5xx) or throttled (429) — never for other 4xx answers, which are the verdict.
 */
import { KubeHttpError, type KubeClient, type KubeRequest, type KubeResponse } from '../kube/kube-client.js';
import { sleep } from '../stream/backoff.js';

/** Retry settings (`kubernetes.retries`). */
export interface RetryPolicy {
  /** Attempts in all (1 = no retry). */
  maxAttempts: number;
  /** Delay before the second attempt; doubles after each. */
  backoffMs: number;
}

/** A request without the signal (the context adds its own). */
type CallRequest = Omit<KubeRequest, 'signal'>;

/** See the module comment. One per operation; not shared between operations. */
export interface KubeCalls {
  readonly client: KubeClient;
  readonly signal: AbortSignal;
  readonly retries: RetryPolicy;
  /** Milliseconds spent waiting for Kubernetes answers so far (retries included, backoff sleeps excluded). */
  readonly kubernetesMs: number;
  /** HTTP status of the last answer (0 before the first). */
  readonly lastStatus: number;
  /** One call, retried on retryable failures. Throws {@link KubeHttpError}. */
  request(request: CallRequest): Promise<KubeResponse>;
  /** Like {@link request}, parsing the JSON answer. */
  json<T = Record<string, unknown>>(request: CallRequest): Promise<{ status: number; body: T }>;
  /** One call, no retry (the caller retries at a higher level, e.g. apply on 409). */
  once(request: CallRequest): Promise<KubeResponse>;
  /** Waits the backoff before retry number `attempt` (1-based), cut short by the signal. */
  backoff(attempt: number): Promise<void>;
}

/** Whether a failure is worth retrying: Kubernetes timed out, failed, throttled, or the connection broke. */
export function isRetryable(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted || !(err instanceof KubeHttpError)) return false;
  if (err.status === 0) return err.reason !== 'Aborted';
  return err.status === 429 || err.status >= 500;
}

/** Creates the call context of one operation. */
export function createKubeCalls(client: KubeClient, signal: AbortSignal, retries: RetryPolicy): KubeCalls {
  let kubernetesMs = 0;
  let lastStatus = 0;

  async function once(request: CallRequest): Promise<KubeResponse> {
    if (signal.aborted) throw new KubeHttpError(0, 'operation aborted', 'Aborted');
    const started = performance.now();
    try {
      const response = await client.request({ ...request, signal });
      lastStatus = response.status;
      return response;
    } catch (err) {
      if (err instanceof KubeHttpError) lastStatus = err.status;
      if (err instanceof Error && !(err instanceof KubeHttpError)) {
        // a body cut short by the abort, or another transport failure
        throw new KubeHttpError(0, err.message, signal.aborted ? 'Aborted' : '');
      }
      throw err;
    } finally {
      kubernetesMs += performance.now() - started;
    }
  }

  const backoff = (attempt: number) => sleep(retries.backoffMs * 2 ** Math.max(0, attempt - 1), signal);

  async function request(request: CallRequest): Promise<KubeResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(request);
      } catch (err) {
        if (attempt >= retries.maxAttempts || !isRetryable(err, signal)) throw err;
        await backoff(attempt);
      }
    }
  }

  return {
    client,
    signal,
    retries,
    get kubernetesMs() {
      return kubernetesMs;
    },
    get lastStatus() {
      return lastStatus;
    },
    request,
    async json<T>(req: CallRequest) {
      const response = await request(req);
      try {
        return { status: response.status, body: JSON.parse(response.text) as T };
      } catch {
        throw new KubeHttpError(500, `invalid JSON from ${req.path}`, 'InternalError');
      }
    },
    once,
    backoff,
  };
}
