/**
 * Shared set-up of the exec, attach, port-forward and impersonation tests: a namespace with running pods created
 * straight in the store (already scheduled and Running, so no kubelet timing is involved), and the kubectl binaries.
 */
import type { Sandbox } from '../../src/sandbox/index.js';

/** Where the versioned kubectl binaries live. */
const KUBECTL_SDK = '/usr/lib/google-cloud-sdk/bin';
export const KUBECTL_127 = `${KUBECTL_SDK}/kubectl.1.27`;
export const KUBECTL_133 = `${KUBECTL_SDK}/kubectl.1.33`;

/** Creates `ns` (if missing) and a Running pod with the given containers. */
export function createRunningPod(sandbox: Sandbox, ns: string, name: string, containers = ['main']): void {
  if (!sandbox.store.get('v1', 'Namespace', undefined, ns)) {
    sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  const now = new Date().toISOString();
  sandbox.store.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      nodeName: 'sandbox-node',
      containers: containers.map((c) => ({ name: c, image: 'busybox:1.36', env: [{ name: 'GREETING', value: 'hi' }] })),
    },
    status: {
      phase: 'Running',
      startTime: now,
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: containers.map((c) => ({
        name: c,
        ready: true,
        restartCount: 0,
        image: 'busybox:1.36',
        state: { running: { startedAt: now } },
      })),
    },
  });
}
