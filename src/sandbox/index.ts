/**
 * The sandbox Kubernetes API server: a small, real-enough kube-apiserver (discovery, CRUD, patches, watch, RBAC,
 * controllers, fault injection) for tests, benchmarks and `outpost demo`. Start one with {@link startSandbox}.
 */
export { startSandbox } from './sandbox.js';
export type { Sandbox, SandboxOptions, SandboxStore } from './sandbox.js';
export type { SandboxFaults } from './faults.js';
export type { KubeObject, ObjectMeta, OwnerReference } from './types.js';
export { ApiError } from './errors.js';
export { parseSeed, SCALE_NAMESPACES } from './seed.js';
export type { SeedOption } from './seed.js';
export { KubeConfig } from '@kubernetes/client-node';
