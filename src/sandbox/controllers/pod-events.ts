/**
 * The Events a pod's life leaves, worded as the scheduler and the kubelet word them, because Spinnaker Deck, the
 * dashboard and `kubectl describe pod` show them as the story of a pod: `Scheduled` (default-scheduler, when the pod
 * is bound to the node), then for each container in turn `Pulled` (the image is "already present on machine": the
 * sandbox pulls nothing), `Created` and `Started`; a Warning `Unhealthy` ("Readiness probe failed: …") once for each
 * container with a readinessProbe of a pod that never becomes ready; `Killing` for each container of a running pod that
 * is deleted; a Warning `Failed` when the containers exit with an error. Kubelet Events carry the node as source.host
 * and the container as involvedObject.fieldPath (`spec.containers{<name>}`), as the kubelet's do.
 */
import { isPlainObject, type KubeObject } from '../types.js';
import type { EventRecorder } from './event-recorder.js';

/** Records the Events of one pod's life; see {@link createPodEvents}. */
export interface PodEvents {
  /** The scheduler bound the pod to the node. */
  scheduled(pod: KubeObject): void;
  /** The kubelet started the containers: Pulled, Created, Started for each, in order. */
  started(pod: KubeObject): void;
  /** The pod will never be ready: one Unhealthy Warning per container with a readinessProbe. */
  readinessFailed(pod: KubeObject, podIp: string): void;
  /** The containers exited with a non-zero code. */
  failed(pod: KubeObject, exitCode: number): void;
  /** A running pod was deleted: its containers are stopped. */
  killing(pod: KubeObject): void;
}

function containersOf(pod: KubeObject): Record<string, unknown>[] {
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  return (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject);
}

/** A named container port resolved to its number (probes may name their port). */
function portOf(container: Record<string, unknown>, port: unknown): string {
  if (typeof port === 'string' && !/^\d+$/.test(port)) {
    const ports = (Array.isArray(container.ports) ? container.ports : []).filter(isPlainObject);
    const named = ports.find((p) => p.name === port);
    if (named && typeof named.containerPort === 'number') return String(named.containerPort);
  }
  return String(port);
}

/** What the kubelet's prober says about a readiness probe that fails, by probe type. */
function readinessFailure(container: Record<string, unknown>, podIp: string): string | undefined {
  const probe = isPlainObject(container.readinessProbe) ? container.readinessProbe : undefined;
  if (!probe) return undefined;
  let detail = '';
  if (isPlainObject(probe.httpGet)) detail = 'HTTP probe failed with statuscode: 503';
  else if (isPlainObject(probe.tcpSocket))
    detail = `dial tcp ${podIp}:${portOf(container, probe.tcpSocket.port)}: connect: connection refused`;
  else if (isPlainObject(probe.grpc)) detail = 'service unhealthy (responded with "NOT_SERVING")';
  // an exec probe's message is the command's output, and the sandbox's commands print nothing
  return `Readiness probe failed: ${detail}`;
}

/** Creates the recorder for pods bound to `node`. */
export function createPodEvents(events: EventRecorder, node: string): PodEvents {
  const containerEvent = (pod: KubeObject, container: Record<string, unknown>, reason: string, message: string, warning = false) =>
    events.record(pod, warning ? 'Warning' : 'Normal', reason, message, 'kubelet', {
      host: node,
      fieldPath: `spec.containers{${String(container.name)}}`,
    });
  return {
    scheduled(pod) {
      const message = `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${node}`;
      events.record(pod, 'Normal', 'Scheduled', message, 'default-scheduler');
    },
    started(pod) {
      for (const c of containersOf(pod)) {
        containerEvent(pod, c, 'Pulled', `Container image "${String(c.image)}" already present on machine`);
        containerEvent(pod, c, 'Created', `Created container ${String(c.name)}`);
        containerEvent(pod, c, 'Started', `Started container ${String(c.name)}`);
      }
    },
    readinessFailed(pod, podIp) {
      for (const c of containersOf(pod)) {
        const message = readinessFailure(c, podIp);
        if (message) containerEvent(pod, c, 'Unhealthy', message, true);
      }
    },
    failed(pod, exitCode) {
      events.record(pod, 'Warning', 'Failed', `Container exited with code ${exitCode}`, 'kubelet', { host: node });
    },
    killing(pod) {
      for (const c of containersOf(pod)) containerEvent(pod, c, 'Killing', `Stopping container ${String(c.name)}`);
    },
  };
}
