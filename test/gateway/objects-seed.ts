/**
 * Cached objects as agents store them, for the tests of the partitioned cache: per account a few namespaces, and
 * applications of a Deployment, a ReplicaSet it owns (with moniker annotations), pods the ReplicaSet owns (labels,
 * container statuses), a Service and a ConfigMap; an Event about a pod, a CustomResourceDefinition and a pod with two
 * owners. Every generated column of `objects` gets a value from some of them.
 */
import type { ObjectRow } from '../../src/gateway/cache/event-decoder.js';

type Obj = Record<string, unknown>;

/** The account names {@link seedRows} writes: `acct-00`, `acct-01`, … */
export function seedAccount(i: number): string {
  return `acct-${String(i).padStart(2, '0')}`;
}

/** The `pod-template-hash` label of the pods of `app` in `account`: a label value few objects share. */
export function podTemplateHash(account: string, app: string): string {
  return `${account}-${app}`.replace(/[^a-z0-9]/g, '');
}

/** The rows of `accounts` accounts (about 30 each), in the form the object writer takes. */
export function seedRows(accounts: number): ObjectRow[] {
  const rows: ObjectRow[] = [];
  let version = 0;
  for (let a = 0; a < accounts; a++) {
    const account = seedAccount(a);
    const uid = (kind: string, name: string) => `${account}-${kind}-${name}`.toLowerCase();
    const add = (
      apiVersion: string,
      kind: string,
      namespace: string,
      name: string,
      extra: { labels?: Obj; meta?: Obj; body?: Obj } = {},
    ) => {
      const labels = (extra.labels ?? {}) as Record<string, string>;
      const object = {
        apiVersion,
        kind,
        metadata: { name, ...(namespace ? { namespace } : {}), uid: uid(kind, name), labels, ...extra.meta },
        ...extra.body,
      };
      rows.push({
        account,
        api_version: apiVersion,
        kind,
        namespace,
        name,
        uid: uid(kind, name),
        resource_version: String(++version),
        labels,
        object: JSON.stringify(object),
        watch_namespace: '',
        sync_gen: 0,
      });
    };
    for (const ns of ['default', 'web', 'jobs']) add('v1', 'Namespace', '', ns);
    for (let i = 0; i < 3; i++) {
      const app = `web${i}`;
      const labels = { app, tier: 'frontend' };
      const moniker = { 'moniker.spinnaker.io/application': app, 'moniker.spinnaker.io/cluster': `deployment ${app}` };
      add('apps/v1', 'Deployment', 'web', app, { labels, meta: { annotations: moniker }, body: { spec: { replicas: 3 } } });
      const owner = (kind: string, name: string) => ({ apiVersion: 'apps/v1', kind, name, uid: uid(kind, name), controller: true });
      const rs = `${app}-v001`;
      add('apps/v1', 'ReplicaSet', 'web', rs, {
        labels,
        meta: { annotations: moniker, ownerReferences: [owner('Deployment', app)] },
        body: { spec: { replicas: 3, template: { spec: { containers: [{ name: 'app', image: `${app}:1` }] } } } },
      });
      for (let p = 0; p < 3; p++) {
        add('v1', 'Pod', 'web', `${rs}-${p}`, {
          labels: { ...labels, 'pod-template-hash': podTemplateHash(account, app) },
          meta: { ownerReferences: [owner('ReplicaSet', rs)] },
          body: { status: { phase: 'Running', containerStatuses: [{ name: 'app', ready: true }] } },
        });
      }
      add('v1', 'Service', 'web', app, { labels, meta: { annotations: { 'moniker.spinnaker.io/application': app } } });
      add('v1', 'ConfigMap', 'web', `${app}-config`, { labels: { app }, body: { data: { key: 'value' } } });
    }
    add('v1', 'Event', 'web', 'web0-v001-0.1', { body: { involvedObject: { kind: 'Pod', uid: uid('Pod', 'web0-v001-0') } } });
    add('apiextensions.k8s.io/v1', 'CustomResourceDefinition', '', 'widgets.example.com', {
      body: { spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Widget' } } },
    });
    add('v1', 'Pod', 'jobs', 'shared', {
      meta: {
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'Job', name: 'a', uid: uid('Job', 'a') },
          { apiVersion: 'batch/v1', kind: 'Job', name: 'b', uid: uid('Job', 'b') },
        ],
      },
    });
  }
  return rows;
}
