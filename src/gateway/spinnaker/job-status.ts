/**
 * A Job as Clouddriver's job endpoint shows it (`KubernetesJobStatus`), which Orca's WaitOnJobCompletion polls:
 * `jobState` Running / Succeeded / Failed (succeeded < completions and a Failed=True condition → Failed), the
 * completion details of a failure (the condition's message and reason, the failed container's exit code and signal),
 * the job's pods with their status and the most recent pod's name.
 */
import type { KubernetesObject } from './manifest-types.js';

/** The JSON of `GET /applications/{app}/jobs/{account}/{location}/{name}`. */
export interface JobStatusView {
  name: string;
  cluster: string;
  account: string;
  id: string;
  location: string;
  provider: 'kubernetes';
  createdTime: number | null;
  completedTime: number | null;
  jobState: 'Running' | 'Succeeded' | 'Failed';
  message: string | null;
  reason: string | null;
  exitCode: number | null;
  signal: number | null;
  completionDetails: { exitCode: string; signal: string; message: string; reason: string };
  failureDetails: string | null;
  pods: { name: string; status: unknown }[];
  mostRecentPodName: string | null;
}

const time = (value: unknown) => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? Date.parse(value) : null);

/** The job state, as Clouddriver decides it. */
export function jobState(job: KubernetesObject): JobStatusView['jobState'] {
  const status = job.status as { succeeded?: number; conditions?: { type?: string; status?: string }[] } | undefined;
  if (!status) return 'Running';
  const completions = Number((job.spec as { completions?: number } | undefined)?.completions ?? 1);
  if ((status.succeeded ?? 0) < completions) {
    const failed = (status.conditions ?? []).some((c) => c.type?.toLowerCase() === 'failed' && c.status?.toLowerCase() === 'true');
    return failed ? 'Failed' : 'Running';
  }
  return 'Succeeded';
}

/** The view of `job` and its pods for `account`. */
export function jobStatusView(job: KubernetesObject, pods: KubernetesObject[], account: string): JobStatusView {
  const state = jobState(job);
  const status = (job.status ?? {}) as {
    completionTime?: string;
    conditions?: { type?: string; status?: string; message?: string; reason?: string }[];
  };
  const sorted = [...pods].sort((a, b) => (time(a.metadata.creationTimestamp) ?? 0) - (time(b.metadata.creationTimestamp) ?? 0));
  let message: string | null = null;
  let reason: string | null = null;
  let exitCode: number | null = null;
  let signal: number | null = null;
  let failureDetails: string | null = null;
  if (state === 'Failed') {
    const condition = (status.conditions ?? []).find((c) => c.type?.toLowerCase() === 'failed' && c.status?.toLowerCase() === 'true');
    message = condition?.message ?? null;
    reason = condition?.reason ?? null;
    const failures: string[] = [];
    for (const pod of sorted) {
      const containers = ((pod.status as { containerStatuses?: unknown[] } | undefined)?.containerStatuses ?? []) as {
        name?: string;
        state?: { terminated?: { exitCode?: number; signal?: number; reason?: string; message?: string } };
      }[];
      for (const c of containers) {
        const t = c.state?.terminated;
        if (!t?.exitCode) continue;
        exitCode ??= t.exitCode;
        signal ??= t.signal ?? null;
        failures.push(
          `Pod: '${pod.metadata.name}' had errors. Container: '${c.name}' exited with code: ${t.exitCode}. Status: ${t.reason ?? 'Error'}.${t.message ? ` Message: ${t.message}` : ''}`,
        );
      }
    }
    failureDetails = failures.length ? failures.join('\n') : message;
  }
  const name = String(job.metadata.name ?? '');
  return {
    name,
    cluster: `job ${name}`,
    account,
    id: name,
    location: String(job.metadata.namespace ?? ''),
    provider: 'kubernetes',
    createdTime: time(job.metadata.creationTimestamp),
    completedTime: time(status.completionTime),
    jobState: state,
    message,
    reason,
    exitCode,
    signal,
    completionDetails: {
      exitCode: exitCode === null ? '' : String(exitCode),
      signal: signal === null ? '' : String(signal),
      message: message ?? '',
      reason: reason ?? '',
    },
    failureDetails,
    pods: sorted.map((p) => ({ name: String(p.metadata.name ?? ''), status: p.status ?? null })),
    mostRecentPodName: sorted.length ? String(sorted.at(-1)!.metadata.name ?? '') : null,
  };
}
