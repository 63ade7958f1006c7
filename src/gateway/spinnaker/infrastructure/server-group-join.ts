/**
 * Server groups joined with what every server-group view needs: the pods whose ownerReferences name them (through the
 * owner-uid indexes) and the Services of their namespaces (through the primary key), read in two queries for
 * any number of server groups — never one query per server group, because an application can have a thousand.
 */
import type { ObjectShape } from '../../cache/infrastructure-queries.js';
import type { InfrastructureStore } from './infrastructure-store.js';
import type { AccountObject, JoinedServerGroup } from './infrastructure-views.js';
import { isIgnored, textAt } from './object-facts.js';

const nsOf = (o: AccountObject) => textAt(o.object, 'metadata', 'namespace');

/** Leaves out objects annotated `caching.spinnaker.io/ignore: "true"`, as Clouddriver's caching does. */
export const visible = <T extends AccountObject>(rows: T[]) => rows.filter((r) => !isIgnored(r.object));

/**
 * Joins `serverGroups` (of any accounts) with their pods and their namespaces' Services; order is kept. `pods:
 * 'instance'` reads only the pod fields of instance summaries (lists of many server groups); details need 'full'.
 */
export async function joinServerGroups(
  store: InfrastructureStore,
  serverGroups: readonly AccountObject[],
  pods: ObjectShape,
): Promise<JoinedServerGroup[]> {
  if (serverGroups.length === 0) return [];
  const accounts = [...new Set(serverGroups.map((s) => s.account))];
  const uids = [...new Set(serverGroups.map((s) => textAt(s.object, 'metadata', 'uid')).filter(Boolean))];
  const namespaces = [...new Set(serverGroups.map(nsOf))];
  const [owned, services] = await Promise.all([
    store.ownedBy(accounts, uids, ['Pod'], pods),
    store.ofKinds(accounts, ['Service'], namespaces),
  ]);
  const podsOf = new Map<string, AccountObject['object'][]>();
  for (const pod of visible(owned)) {
    for (const ref of (pod.object.metadata as { ownerReferences?: { uid?: string }[] }).ownerReferences ?? []) {
      const key = `${pod.account}\u0000${ref.uid}`;
      podsOf.set(key, [...(podsOf.get(key) ?? []), pod.object]);
    }
  }
  const servicesOf = new Map<string, AccountObject['object'][]>();
  for (const service of visible(services)) {
    const key = `${service.account}\u0000${nsOf(service)}`;
    servicesOf.set(key, [...(servicesOf.get(key) ?? []), service.object]);
  }
  return serverGroups.map((sg) => ({
    ...sg,
    pods: podsOf.get(`${sg.account}\u0000${textAt(sg.object, 'metadata', 'uid')}`) ?? [],
    services: servicesOf.get(`${sg.account}\u0000${nsOf(sg)}`) ?? [],
  }));
}
