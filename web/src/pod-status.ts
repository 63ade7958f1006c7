/**
 * A Pod's STATUS and RESTARTS columns as `kubectl get pods` prints them (kubectl's printPod), from the cached
 * object's JSON: the phase, or the status reason (Evicted), or the reason of an init container that has not finished
 * (`Init:0/1`, `Init:CrashLoopBackOff`), or of a container waiting or terminated (CrashLoopBackOff, Completed,
 * ContainerCreating, Error, `ExitCode:2`); `NotReady` / `Running` when a container still runs beside completed ones;
 * `Terminating` once deleted. Restarts is the sum of the containers' restartCount (the init containers' while they
 * run).
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const objs = (v: unknown): Json[] =>
  Array.isArray(v)
    ? v.flatMap((x): Json[] => {
        const o = obj(x);
        return o ? [o] : [];
      })
    : [];
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A Pod's status word and restart count, as kubectl prints them. */
export interface PodStatusSummary {
  status: string;
  restarts: number;
}

function conditionTrue(status: Json, type: string): boolean {
  return objs(status.conditions).some((c) => c.type === type && c.status === 'True');
}

/** The terminated state's reason, or `Signal:n` / `ExitCode:n` when it has none; prefix for init containers. */
function terminatedReason(terminated: Json, prefix: string): string {
  const reason = str(terminated.reason);
  if (reason) return `${prefix}${reason}`;
  const signal = num(terminated.signal);
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${num(terminated.exitCode)}`;
}

/** The STATUS and RESTARTS of `pod` (its Kubernetes JSON); `Unknown` phase when it has no status yet. */
export function podStatusOf(pod: Json | undefined): PodStatusSummary {
  const status = obj(pod?.status) ?? {};
  const spec = obj(pod?.spec) ?? {};
  const metadata = obj(pod?.metadata) ?? {};
  let reason = str(status.reason) || str(status.phase) || 'Unknown';
  let restarts = 0;

  let initializing = false;
  const inits = objs(status.initContainerStatuses);
  const initCount = objs(spec.initContainers).length;
  for (const [i, c] of inits.entries()) {
    restarts += num(c.restartCount);
    const state = obj(c.state) ?? {};
    const terminated = obj(state.terminated);
    const waiting = obj(state.waiting);
    if (terminated && num(terminated.exitCode) === 0) continue;
    initializing = true;
    if (terminated) reason = terminatedReason(terminated, 'Init:');
    else if (waiting && str(waiting.reason) && waiting.reason !== 'PodInitializing') reason = `Init:${str(waiting.reason)}`;
    else reason = `Init:${i}/${initCount}`;
    break;
  }

  if (!initializing || conditionTrue(status, 'Initialized')) {
    restarts = 0;
    let hasRunning = false;
    const containers = objs(status.containerStatuses);
    for (let i = containers.length - 1; i >= 0; i--) {
      const c = containers[i]!;
      restarts += num(c.restartCount);
      const state = obj(c.state) ?? {};
      const waiting = obj(state.waiting);
      const terminated = obj(state.terminated);
      if (waiting && str(waiting.reason)) reason = str(waiting.reason);
      else if (terminated) reason = terminatedReason(terminated, '');
      else if (c.ready === true && obj(state.running)) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(status, 'Ready') ? 'Running' : 'NotReady';
  }

  if (metadata.deletionTimestamp) {
    if (status.reason === 'NodeLost') reason = 'Unknown';
    else if (status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating';
  }
  return { status: reason, restarts };
}
