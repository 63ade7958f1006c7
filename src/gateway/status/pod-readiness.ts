/**
 * Readiness of a running Pod for the dashboard's health: Clouddriver's manifest status (pod-job-rules.ts) looks at
 * the phase only, so a Running Pod whose containers never become ready is "stable" there; Clouddriver's instance
 * health counts a Pod Up only when its containers are ready (one Down health per container not ready). The
 * dashboard's health follows that rule for Pods, so a Running but not ready Pod does not read Healthy.
 */
import { record, records, stringField } from './status-model.js';

/**
 * Why the Running Pod `object` is not ready — "Containers not ready: web (CrashLoopBackOff)", or the Ready
 * condition's message when no container status says which — or undefined when it is ready, is not Running, or
 * reports neither container statuses nor a Ready condition (nothing says it is not ready).
 */
export function podNotReadyReason(object: Record<string, unknown>): string | undefined {
  const status = record(object.status);
  if (!status || stringField(status.phase) !== 'Running') return undefined;
  const unready = records(status.containerStatuses).filter((c) => c.ready === false);
  if (unready.length > 0) {
    const names = unready.map((c) => {
      const waiting = stringField(record(record(c.state)?.waiting)?.reason);
      return `${stringField(c.name) ?? '?'}${waiting ? ` (${waiting})` : ''}`;
    });
    return `Containers not ready: ${names.join(', ')}`;
  }
  const ready = records(status.conditions).find((c) => c.type === 'Ready');
  if (ready && ready.status !== 'True') return stringField(ready.message) ?? 'Pod is not ready';
  return undefined;
}
