/**
 * Fills the object cache of a Postgres database with generated clusters, written by the server itself (`INSERT …
 * SELECT` over `generate_series`), so that millions of rows take minutes instead of the hours agents would need.
 * Each account holds OBJECTS_PER_ACCOUNT small objects as an agent would store them: 10 applications (`app-0` …
 * `app-9`, one namespace `ns-0` … `ns-3` each) of a Deployment (moniker annotations), two ReplicaSets it owns and
 * four pods per ReplicaSet (owner references, `pod-template-hash` labels, container statuses), two Services, seven
 * ConfigMaps — 200 objects of about 0.6–1.2 KB. The generated columns (monikers, owner uids, pod and server group
 * shapes) are computed by Postgres as for any write. The same SQL fills either layout of the table.
 */
import { createHash } from 'node:crypto';
import type { Sql } from 'postgres';

/** Objects per generated account. */
export const OBJECTS_PER_ACCOUNT = 200;

/** Account names: `cluster-000000`, `cluster-000001`, … */
export function generatedAccount(i: number): string {
  return `cluster-${String(i).padStart(6, '0')}`;
}

/** The `pod-template-hash` label of the pods of ReplicaSet `r` (0–19) of generated account `i`: 4 pods share it. */
export function generatedPodTemplateHash(i: number, r: number): string {
  return `h${i}x${r}`;
}

/** Pod `p` (0–79) of generated account `i`, as the generator names it: what an update of it must carry. */
export function generatedPod(i: number, p: number) {
  const object = 30 + p;
  const k = Math.floor(p / 8);
  const r = Math.floor(p / 4);
  const account = generatedAccount(i);
  // Three hex digits of a hash and two of the object's index: unique within the account (five of a hash alone collide
  // about once in 8,000 accounts).
  const name = `app-${k}-v00${(r % 2) + 1}-${md5(`${i}-${object}`).slice(0, 3)}${object.toString(16).padStart(2, '0')}`;
  const hex = md5(`${account}/Pod/${name}`);
  return {
    account,
    namespace: `ns-${k % 4}`,
    name,
    uid: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    labels: { app: `app-${k}`, tier: ['frontend', 'backend', 'worker'][k % 3]!, 'pod-template-hash': generatedPodTemplateHash(i, r) },
  };
}

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

// One row per (account a, object i); k is the application, r the ReplicaSet (of pods), as the header says.
const GENERATE = `
with g as (
  select a, i, 'cluster-' || lpad(a::text, 6, '0') as account,
    case when i < 10 then 'Deployment' when i < 30 then 'ReplicaSet' when i < 110 then 'Pod' when i < 130 then 'Service' else 'ConfigMap' end as kind,
    case when i < 10 then i when i < 30 then (i - 10) / 2 when i < 110 then (i - 30) / 8 when i < 130 then (i - 110) / 2 else (i - 130) / 7 end as k,
    case when i between 10 and 29 then i - 10 when i between 30 and 109 then (i - 30) / 4 end as r
  from generate_series($1::int, $2::int - 1) a, generate_series(0, ${OBJECTS_PER_ACCOUNT - 1}) i
), named as (
  select g.*, 'ns-' || (k % 4) as namespace, 'app-' || k as app,
    case kind
      when 'Deployment' then 'app-' || k
      when 'ReplicaSet' then 'app-' || k || '-v00' || (r % 2 + 1)
      when 'Pod' then 'app-' || k || '-v00' || (r % 2 + 1) || '-' || substr(md5(a || '-' || i), 1, 3) || lpad(to_hex(i), 2, '0')
      when 'Service' then 'app-' || k || case when i % 2 = 1 then '-canary' else '' end
      else 'app-' || k || '-config-' || ((i - 130) % 7)
    end as name,
    case when kind in ('Deployment', 'ReplicaSet') then 'apps/v1' else 'v1' end as api_version
  from g
), shaped as (
  select n.*, md5(account || '/' || kind || '/' || name)::uuid::text as uid,
    case kind
      when 'ReplicaSet' then md5(account || '/Deployment/' || app)::uuid::text
      when 'Pod' then md5(account || '/ReplicaSet/' || app || '-v00' || (r % 2 + 1))::uuid::text
    end as owner_uid,
    jsonb_strip_nulls(jsonb_build_object('app', app, 'tier', case k % 3 when 0 then 'frontend' when 1 then 'backend' else 'worker' end,
      'pod-template-hash', case when kind = 'Pod' then 'h' || a || 'x' || r end)) as labels
  from named n
)
insert into objects (account, api_version, kind, namespace, name, uid, resource_version, labels, object, watch_namespace, sync_gen, updated_at)
select account, api_version, kind, namespace, name, uid, (a * ${OBJECTS_PER_ACCOUNT} + i + 1)::text,
  labels,
  jsonb_strip_nulls(jsonb_build_object(
    'apiVersion', api_version,
    'kind', kind,
    'metadata', jsonb_strip_nulls(jsonb_build_object(
      'name', name, 'namespace', namespace, 'uid', uid, 'resourceVersion', (a * ${OBJECTS_PER_ACCOUNT} + i + 1)::text,
      'creationTimestamp', '2026-11-01T00:00:00Z',
      'labels', labels,
      'annotations', case when kind in ('Deployment', 'ReplicaSet') then jsonb_build_object(
          'moniker.spinnaker.io/application', app, 'moniker.spinnaker.io/cluster', 'deployment ' || app,
          'deployment.kubernetes.io/revision', '2')
        when kind = 'Service' then jsonb_build_object('moniker.spinnaker.io/application', app) end,
      'ownerReferences', case when owner_uid is not null then jsonb_build_array(jsonb_build_object(
          'apiVersion', 'apps/v1', 'kind', case kind when 'Pod' then 'ReplicaSet' else 'Deployment' end,
          'name', case kind when 'Pod' then app || '-v00' || (r % 2 + 1) else app end, 'uid', owner_uid,
          'controller', true, 'blockOwnerDeletion', true)) end)),
    'spec', case kind
      when 'Deployment' then jsonb_build_object('replicas', 4, 'selector', jsonb_build_object('matchLabels', jsonb_build_object('app', app)),
        'template', jsonb_build_object('metadata', jsonb_build_object('labels', jsonb_build_object('app', app)),
          'spec', jsonb_build_object('containers', jsonb_build_array(jsonb_build_object('name', 'main',
            'image', 'registry.example.com/' || app || ':1.' || k, 'ports', jsonb_build_array(jsonb_build_object('containerPort', 8080)))))))
      when 'ReplicaSet' then jsonb_build_object('replicas', 4, 'selector', jsonb_build_object('matchLabels', jsonb_build_object('app', app)),
        'template', jsonb_build_object('spec', jsonb_build_object('containers', jsonb_build_array(jsonb_build_object('name', 'main',
          'image', 'registry.example.com/' || app || ':1.' || k)))))
      when 'Pod' then jsonb_build_object('nodeName', 'node-' || (i % 7), 'containers', jsonb_build_array(jsonb_build_object('name', 'main',
          'image', 'registry.example.com/' || app || ':1.' || k, 'resources', jsonb_build_object('requests', jsonb_build_object('cpu', '100m', 'memory', '128Mi')))))
      when 'Service' then jsonb_build_object('selector', jsonb_build_object('app', app), 'type', 'ClusterIP',
          'ports', jsonb_build_array(jsonb_build_object('port', 80, 'targetPort', 8080, 'protocol', 'TCP')))
    end,
    'data', case when kind = 'ConfigMap' then jsonb_build_object('settings.yaml', repeat('key: value # ' || app || E'\\n', 12)) end,
    'status', case kind
      when 'Pod' then jsonb_build_object('phase', 'Running', 'podIP', '10.' || (a % 250) || '.' || (i % 250) || '.1',
          'containerStatuses', jsonb_build_array(jsonb_build_object('name', 'main', 'ready', true, 'restartCount', 0,
            'image', 'registry.example.com/' || app || ':1.' || k)))
      when 'Deployment' then jsonb_build_object('replicas', 4, 'readyReplicas', 4, 'availableReplicas', 4, 'observedGeneration', 2)
      when 'ReplicaSet' then jsonb_build_object('replicas', 4, 'readyReplicas', 4, 'observedGeneration', 1)
    end)),
  '', 1, now()
from shaped`;

/**
 * Writes accounts `[from, to)` (OBJECTS_PER_ACCOUNT objects each) into `objects`, `chunk` accounts per statement;
 * calls `progress` after each statement with the accounts written so far.
 */
export async function generateCache(
  sql: Sql,
  from: number,
  to: number,
  options: { chunk?: number; progress?: (written: number) => void } = {},
): Promise<void> {
  const chunk = options.chunk ?? 500;
  for (let start = from; start < to; start += chunk) {
    const end = Math.min(to, start + chunk);
    await sql.unsafe(GENERATE, [start, end]);
    options.progress?.(end - from);
  }
}
