/**
 * Synthesised container logs. The sandbox runs no containers, so `pods/log` returns a short, deterministic story of
 * the container starting, derived from the pod itself: enough for `kubectl logs` and log-streaming tests to see real
 * lines in the right container. A pod's `sandbox.outpost.dev/log` / `sandbox.outpost.dev/log.<container>` annotation
 * replaces the synthesised lines with its own (see pod-controls.ts); a container that exited ends with its exit code.
 */
import { annotatedLogLines } from './pod-controls.js';
import { isPlainObject, type KubeObject } from './types.js';

/** One log line with its timestamp. */
export interface LogLine {
  time: string;
  text: string;
}

/** The log lines of a container of a pod (empty while the pod is not running yet). */
export function podLogLines(pod: KubeObject, container: string): LogLine[] {
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  const status = isPlainObject(pod.status) ? pod.status : {};
  const c = (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject).find((x) => x.name === container);
  const image = typeof c?.image === 'string' ? c.image : 'unknown';
  const start = typeof status.startTime === 'string' ? status.startTime : (pod.metadata.creationTimestamp ?? new Date(0).toISOString());
  const base = Date.parse(start) || 0;
  const at = (ms: number) => new Date(base + ms).toISOString();
  const annotated = annotatedLogLines(pod, container);
  if (annotated) return annotated.map((text, i) => ({ time: at(i), text }));
  const ports = (Array.isArray(c?.ports) ? c.ports : []).filter(isPlainObject).map((p) => p.containerPort);
  const lines: LogLine[] = [
    { time: at(0), text: `[${container}] sandbox: starting container from image ${image}` },
    {
      time: at(5),
      text: `[${container}] sandbox: pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${String(spec.nodeName ?? 'sandbox-node')}`,
    },
  ];
  if (ports.length > 0) lines.push({ time: at(10), text: `[${container}] listening on ${ports.map((p) => `:${String(p)}`).join(', ')}` });
  lines.push({ time: at(20), text: `[${container}] ready` });
  const cs = (Array.isArray(status.containerStatuses) ? status.containerStatuses : [])
    .filter(isPlainObject)
    .find((x) => x.name === container);
  const terminated = isPlainObject(cs?.state) && isPlainObject(cs.state.terminated) ? cs.state.terminated : undefined;
  if (terminated) lines.push({ time: at(30), text: `[${container}] exited with code ${String(terminated.exitCode)}` });
  return lines;
}
