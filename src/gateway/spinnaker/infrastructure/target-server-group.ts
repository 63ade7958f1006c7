/**
 * Clouddriver's dynamic target of a cluster (`TargetServerGroup`: current/newest, previous/ancestor, oldest, largest,
 * fail, each also with the legacy `_asg` and `_asg_dynamic` suffixes, any case), chosen among the server groups of one
 * cluster in one namespace as `ClusterController.getTargetServerGroup` does: server groups without a creation time
 * are never chosen, `onlyEnabled` leaves the disabled ones out, `previous` needs two, `oldest` needs two unless
 * `validateOldest` is false, `largest` breaks ties by the newest, and `fail` refuses a choice among several. Pipelines
 * use it (Check Preconditions, Find Image from Cluster) through Orca.
 */
import { createdTimeOf, fullNameOf } from './object-facts.js';
import type { JoinedServerGroup } from './infrastructure-views.js';
import { trafficOf } from './traffic-links.js';

/** The targets, by canonical name, with their aliases. */
const TARGETS: Record<string, readonly string[]> = {
  current: ['current', 'newest'],
  previous: ['previous', 'ancestor'],
  oldest: ['oldest'],
  largest: ['largest'],
  fail: ['fail'],
};

/** The canonical target a request names (`CURRENT_ASG_DYNAMIC` → `current`), or undefined when it names none. */
export function parseTarget(text: string): string | undefined {
  const lower = text.toLowerCase();
  for (const [target, aliases] of Object.entries(TARGETS)) {
    if (aliases.some((a) => lower === a || lower === `${a}_asg` || lower === `${a}_asg_dynamic`)) return target;
  }
  return undefined;
}

/** What to choose among. */
export interface TargetRequest {
  /** The server groups of the cluster (any namespaces). */
  serverGroups: readonly JoinedServerGroup[];
  /** The namespace (Clouddriver's scope: a region). */
  scope: string;
  /** A canonical target from {@link parseTarget}. */
  target: string;
  onlyEnabled: boolean;
  validateOldest: boolean;
  /** For the messages: the account, the cluster and the cloud provider the route names. */
  account: string;
  cluster: string;
  cloudProvider: string;
}

/** The chosen server group, or the reason there is none (Clouddriver's 404 message). */
export type TargetChoice = { serverGroup: JoinedServerGroup } | { notFound: string };

const createdOf = (sg: JoinedServerGroup) => createdTimeOf(sg.object) ?? 0;
const newestFirst = (a: JoinedServerGroup, b: JoinedServerGroup) => createdOf(b) - createdOf(a);

/** Chooses the target of {@link TargetRequest}; `rawTarget` is the text the caller sent, for the messages. */
export function chooseTarget(request: TargetRequest, rawTarget: string): TargetChoice {
  // by name first, so that ties (creation times have second precision) and the messages do not depend on row order
  const candidates = [...request.serverGroups]
    .sort((a, b) => fullNameOf(a.object).localeCompare(fullNameOf(b.object)))
    .filter(
      (sg) =>
        (sg.object.metadata as { namespace?: string }).namespace === request.scope &&
        (!request.onlyEnabled || !trafficOf(sg.object, sg.services).disabled) &&
        createdTimeOf(sg.object) !== null,
    );
  const missing = { notFound: `Target not found (target: ${rawTarget})` };
  let chosen: JoinedServerGroup | undefined;
  switch (request.target) {
    case 'current':
      chosen = [...candidates].sort(newestFirst)[0];
      break;
    case 'previous': {
      const two = [...candidates].sort(newestFirst).slice(0, 2);
      if (two.length === 1) return missing;
      chosen = two[1];
      break;
    }
    case 'oldest': {
      const two = [...candidates].sort((a, b) => createdOf(a) - createdOf(b)).slice(0, 2);
      if (request.validateOldest && two.length === 1) return missing;
      chosen = two[0];
      break;
    }
    case 'largest':
      chosen = [...candidates].sort((a, b) => b.pods.length - a.pods.length || newestFirst(a, b))[0];
      break;
    case 'fail':
      if (candidates.length > 1)
        return {
          notFound: `More than one target found (scope: ${request.scope}, serverGroups: ${candidates.map((sg) => fullNameOf(sg.object)).join(', ')})`,
        };
      chosen = candidates[0];
      break;
    default:
      return missing;
  }
  if (chosen) return { serverGroup: chosen };
  const { account, scope, cluster, cloudProvider } = request;
  return {
    notFound: `No server groups found (account: ${account}, location: ${scope}, cluster: ${cluster}, type: ${cloudProvider.toUpperCase()})`,
  };
}
