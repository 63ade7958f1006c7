/**
 * The checks kube-apiserver and the kubelet make before exec, attach or port-forward starts: the pod exists, is
 * scheduled and running, the container is one of its own, and the query asks for something sensible. Failures are the
 * same `Status` errors upstream gives, so kubectl prints familiar messages.
 */
import { errors } from '../errors.js';
import type { KindInfo } from '../kinds.js';
import type { ObjectStore } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import type { StreamOptions } from '../exec/channel-session.js';

/** The pod and container a streaming request targets. */
export interface StreamTarget {
  pod: KubeObject;
  container: string;
}

function flag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v === 'true' || v === '1';
}

/** Finds the pod and checks it is scheduled (404 when missing, 400 without a node). */
export function scheduledPod(store: ObjectStore, info: KindInfo, namespace: string | undefined, name: string): KubeObject {
  const pod = store.peek(info, namespace, name);
  if (!pod) throw errors.notFound(info, name);
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') throw errors.badRequest(`pod ${name} does not have a host assigned`);
  return pod;
}

/** Resolves the target container of exec/attach (`container` query, or the only one) and checks it runs. */
export function streamTarget(pod: KubeObject, query: URLSearchParams): StreamTarget {
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  const names = (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject).map((c) => String(c.name));
  const name = pod.metadata.name;
  let container = query.get('container') ?? '';
  if (container === '') {
    if (names.length !== 1)
      throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`);
    container = names[0]!;
  }
  if (!names.includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
  const status = isPlainObject(pod.status) ? pod.status : {};
  const cs = (Array.isArray(status.containerStatuses) ? status.containerStatuses : [])
    .filter(isPlainObject)
    .find((c) => c.name === container);
  const running = status.phase === 'Running' && (!cs || !isPlainObject(cs.state) || isPlainObject(cs.state.running));
  if (!running) throw errors.badRequest(`container not found ("${container}")`);
  return { pod, container };
}

/** The streams an exec/attach asks for, validated as upstream (at least one stream; not tty with stderr). */
export function streamOptions(query: URLSearchParams): StreamOptions {
  const options = { stdin: flag(query, 'stdin'), stdout: flag(query, 'stdout'), stderr: flag(query, 'stderr'), tty: flag(query, 'tty') };
  if (!options.stdin && !options.stdout && !options.stderr) throw errors.badRequest('you must specify at least 1 of stdin, stdout, stderr');
  if (options.tty && options.stderr) throw errors.badRequest('tty and stderr cannot both be true');
  return options;
}

/** Checks a port-forward's pod is running (its `ports` query, when given, must be valid ports). */
export function checkPortForward(pod: KubeObject, query: URLSearchParams): void {
  const status = isPlainObject(pod.status) ? pod.status : {};
  if (status.phase !== 'Running')
    throw errors.badRequest(`pod ${pod.metadata.name} is not running (phase ${String(status.phase ?? 'Unknown')})`);
  for (const text of query.getAll('ports').flatMap((p) => p.split(','))) {
    const port = Number(text);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw errors.badRequest(`invalid port: ${text}`);
  }
}
