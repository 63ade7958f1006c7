/**
 * Prepares one account before a Hello: loads its kubeconfig, reads the server version, discovers resources, applies
 * the kind settings and checks RBAC. Never throws: an unreachable cluster yields an account with `error` set, so the
 * gateway still learns about it.
 */
import type { Logger } from 'pino';
import type { AccountConfig } from '../config/schema.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import { reviewAccess, type WatchScope } from '../kube/access-review.js';
import { discoverResources, type ResourceType } from '../kube/discovery.js';
import { selectResources, type SkippedType } from '../kube/kind-filter.js';
import { createKubeClient, type KubeClient, type KubeRequestRecorder } from '../kube/kube-client.js';
import { caFingerprint, loadAccountKubeConfig } from '../kube/kubeconfig.js';
import { counted } from '../../shared/counted.js';

/** What the agent knows about an account, ready to be described in a Hello and streamed. */
export interface PreparedAccount {
  config: AccountConfig;
  /** Absent when the cluster could not be addressed at all. */
  client?: KubeClient;
  apiHost: string;
  caFingerprint: string;
  kubernetesVersion: string;
  /** Kinds with at least one allowed scope. */
  kinds: ResourceType[];
  /** Allowed watch scopes. */
  scopes: WatchScope[];
  skipped: SkippedType[];
  error: string;
  preparedAt: number;
}

/** Builds the watch scopes of the selected resources: per namespace when the account lists namespaces. */
export function scopesFor(resources: ResourceType[], namespaces: string[]): WatchScope[] {
  return resources.flatMap((type) =>
    type.namespaced && namespaces.length > 0 ? namespaces.map((namespace) => ({ type, namespace })) : [{ type, namespace: '' }],
  );
}

/** An account that cannot be served, with the reason (reported in the Hello like an unreachable cluster). */
export function failedAccount(config: AccountConfig, error: string): PreparedAccount {
  return {
    config,
    apiHost: '',
    caFingerprint: '',
    kubernetesVersion: '',
    kinds: [],
    scopes: [],
    skipped: [],
    error,
    preparedAt: Date.now(),
  };
}

/** See the module comment. The account's Kubernetes client reports its calls to `recorder` (the agent's metrics). */
export async function prepareAccount(
  config: AccountConfig,
  logger: Logger,
  signal?: AbortSignal,
  recorder?: KubeRequestRecorder,
): Promise<PreparedAccount> {
  const prepared: PreparedAccount = {
    config,
    apiHost: '',
    caFingerprint: '',
    kubernetesVersion: '',
    kinds: [],
    scopes: [],
    skipped: [],
    error: '',
    preparedAt: Date.now(),
  };
  const log = logger.child({ account: config.name });
  try {
    const kc = loadAccountKubeConfig(config);
    const client = createKubeClient(kc, { recorder });
    prepared.client = client;
    prepared.apiHost = client.server;
    prepared.caFingerprint = caFingerprint(kc);
    const version = await client.getJson<{ gitVersion?: string }>('/version', undefined, signal);
    prepared.kubernetesVersion = version.gitVersion ?? '';
    const discovery = await discoverResources(client, signal);
    for (const failed of discovery.failedGroups) prepared.skipped.push({ apiVersion: failed.apiVersion, kind: '', reason: failed.reason });
    const { selected, skipped } = selectResources(discovery.resources, config);
    prepared.skipped.push(...skipped);
    const reviews = await reviewAccess(client, scopesFor(selected, config.namespaces), AGENT_DEFAULTS.accessReviewConcurrency, signal);
    const allowedKinds = new Set<ResourceType>();
    for (const review of reviews) {
      if (review.allowed) {
        prepared.scopes.push(review.scope);
        allowedKinds.add(review.scope.type);
      } else {
        prepared.skipped.push({ apiVersion: review.scope.type.apiVersion, kind: review.scope.type.kind, reason: review.reason });
      }
    }
    prepared.kinds = selected.filter((t) => allowedKinds.has(t));
    log.info(
      {
        apiHost: prepared.apiHost,
        version: prepared.kubernetesVersion,
        kinds: prepared.kinds.length,
        scopes: prepared.scopes.length,
        skipped: prepared.skipped.length,
      },
      'account ready',
    );
    if (prepared.skipped.length > 0) {
      log.warn(
        { skipped: prepared.skipped.map((s) => `${s.kind || '*'}${s.apiVersion ? ` (${s.apiVersion})` : ''}: ${s.reason}`) },
        `${counted(prepared.skipped.length, 'kind')} skipped (see skipped_kinds in the Hello)`,
      );
    }
  } catch (err) {
    prepared.error = (err as Error).message;
    prepared.kinds = [];
    prepared.scopes = [];
    log.error({ err: prepared.error }, 'cannot reach the cluster of this account');
  }
  return prepared;
}
