/**
 * The sandbox Kubernetes API server: a small, real-enough kube-apiserver (discovery, CRUD, patches, watch, RBAC,
 * controllers, fault injection) for tests, benchmarks and `outpost demo`. Start one with {@link startSandbox}.
 */
export { startSandbox } from './sandbox.js';
export type { Sandbox, SandboxOptions, SandboxStore } from './sandbox.js';
export type { KubeObject } from './types.js';
export { parseSeed } from './seed.js';
