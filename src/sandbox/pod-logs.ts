/**
 * Synthesised container logs. The sandbox runs no containers, so `pods/log` returns a short, deterministic story of
 * the container starting, derived from the pod itself: enough for `kubectl logs` and log-streaming tests to see real
 * lines in the right container.
 */
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
  const start = typeof status.startTime === 'string' ? status.startTime : pod.metadata.creationTimestamp ?? new Date(0).toISOString();
  const base = Date.parse(start) || 0;
  const at = (ms: number) => new Date(base + ms).toISOString();
  const ports = (Array.isArray(c?.ports) ? c.ports : []).filter(isPlainObject).map((p) => p.containerPort);
  const lines: LogLine[] = [
    { time: at(0), text: `[${container}] sandbox: starting container from image ${image}` },
    { time: at(5), text: `[${container}] sandbox: pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${String(spec.nodeName ?? 'sandbox-node')}` },
  ];
  if (ports.length > 0) lines.push({ time: at(10), text: `[${container}] listening on ${ports.map((p) => `:${String(p)}`).join(', ')}` });
  lines.push({ time: at(20), text: `[${container}] ready` });
  return lines;
}
