/**
 * The secured gateway of a test whose callers each hold one static token (an agent, Orca, Deck, a writer…): the tokens
 * and one authorization rule per caller, reads open by default, and the replica secret when replicas must reach each
 * other. One place for what secured tests share.
 */
import type { GatewayConfigInput } from '../src/gateway/index.js';

/** One caller: its token subject and token, and what its rule grants. */
export interface TokenCaller {
  subject: string;
  token: string;
  roles: ('agent' | 'read' | 'write' | 'admin' | 'spinnaker' | 'kube')[];
  /** Account patterns of the rule (required with agent, write, kube and spinnaker). */
  accounts: string[];
}

/**
 * `insecure: false`, `auth` and `authorization` for `callers`; spread it into the gateway config. Reads are open
 * unless `readAccess` says `authenticated`; `replicaSecretFile` signs and checks the replicas' tokens.
 */
export function tokenGateway(
  callers: readonly TokenCaller[],
  readAccess: 'open' | 'authenticated' = 'open',
  replicaSecretFile?: string,
): Pick<GatewayConfigInput, 'insecure' | 'auth' | 'authorization'> {
  return {
    insecure: false,
    auth: {
      readAccess,
      tokens: callers.map(({ subject, token }) => ({ subject, token })),
      ...(replicaSecretFile ? { replicaSecretFile } : {}),
    },
    authorization: {
      rules: callers.map(({ subject, roles, accounts }) => ({ kind: 'token' as const, subject: `^${subject}$`, roles, accounts })),
    },
  };
}
