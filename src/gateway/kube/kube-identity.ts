/**
 * Who a caller of `/k8s/{account}` is in the cluster (docs/kubectl.md, "Identity mapping"): the gateway's principal
 * mapped to a Kubernetes user and groups, which the agent impersonates so the cluster's RBAC decides. Rules:
 * - user: `kube.userPrefix` + the subject's name — a token's subject, a JWT's subject claim, a client certificate's
 *   CN (its whole subject when it has none); `anonymous` in insecure mode;
 * - groups: `kube.groupsPrefix` + each group of the credential — a static token's `groups`, the JWT's groups claim
 *   (`auth.jwt.groupsClaim`), the certificate's O values.
 * Every name, before and after its prefix, must be one an HTTP header carries verbatim (src/shared/kube-names.ts: no
 * whitespace at either end, no control character, printable ASCII), and with empty prefixes a name in the `system:`
 * namespace is refused, as the cluster reads it: an Outpost subject must never become a cluster's built-in identity.
 * A request another replica forwarded is mapped here too, from its caller's principal (kube-admission.ts).
 */
import { identityOf, type Principal } from '../auth/principal.js';
import type { GatewayKubeConfig } from '../config/kube-schema.js';
import { isSystemName, kubeNameProblem } from '../../shared/kube-names.js';
import { KubeRefusal } from './kube-status.js';

/** A caller as the cluster will see it. */
export interface KubeCaller {
  /** The gateway identity key (`token:alice`), for logs and the audit log. */
  principal: string;
  /** The principal's own groups (unprefixed), for the audit log. */
  principalGroups: readonly string[];
  user: string;
  groups: string[];
}

/** Thrown when a principal maps to no acceptable Kubernetes identity: the gateway's answer, 403 with the reason. */
export class KubeIdentityError extends KubeRefusal {
  constructor(message: string) {
    super(403, message);
  }
}

/** Maps the principal; throws {@link KubeIdentityError} for a name that is not acceptable (see the module comment). */
export function kubeCallerOf(principal: Principal, config: Pick<GatewayKubeConfig, 'userPrefix' | 'groupsPrefix'>): KubeCaller {
  const name = principal.method === 'certificate' ? (principal.attributes?.CN?.[0] ?? principal.subject) : principal.subject;
  const principalGroups = principal.groups ?? [];
  check(name, `the ${principal.method} subject`);
  for (const group of principalGroups) check(group, `the ${principal.method} group`);
  const user = `${config.userPrefix}${name}`;
  const groups = [...new Set(principalGroups.map((g) => `${config.groupsPrefix}${g}`))];
  for (const value of [user, ...groups]) {
    check(value, 'the Kubernetes name');
    if (isSystemName(value)) {
      throw new KubeIdentityError(`"${value}" is in the cluster's reserved system: namespace; set kube.userPrefix and kube.groupsPrefix`);
    }
  }
  return { principal: identityOf(principal), principalGroups, user, groups };
}

function check(name: string, what: string): void {
  const problem = kubeNameProblem(name);
  if (problem) throw new KubeIdentityError(`${what} ${JSON.stringify(name.slice(0, 100))} ${problem}: it cannot be impersonated`);
}
