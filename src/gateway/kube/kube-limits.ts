/**
 * Concurrency limits of `/k8s/{account}` on one replica (docs/kubectl.md, "Limits"): open requests per caller
 * identity and per account. One caller's watches or one busy cluster then cannot take every slot; a request over a
 * limit is answered 429 with `Retry-After` before anything reaches an agent.
 */
import { KubeRefusal } from './kube-status.js';

/** See the module comment. */
export interface KubeLimits {
  /** Takes a slot for the identity and the account; returns its release (call once), or throws a 429 refusal. */
  acquire(identity: string | undefined, account: string): () => void;
  /** Open requests now (per identity and per account) — for tests and metrics. */
  open(): { identities: number; accounts: number };
}

/** Creates limits of `perIdentity` and `perAccount` open requests. */
export function createKubeLimits(perIdentity: number, perAccount: number): KubeLimits {
  const byIdentity = new Map<string, number>();
  const byAccount = new Map<string, number>();
  const take = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  const give = (map: Map<string, number>, key: string) => {
    const left = (map.get(key) ?? 1) - 1;
    if (left <= 0) map.delete(key);
    else map.set(key, left);
  };
  return {
    acquire(identity, account) {
      if (identity !== undefined && (byIdentity.get(identity) ?? 0) >= perIdentity) {
        throw new KubeRefusal(429, `${identity} already has ${perIdentity} Kubernetes API requests open (kube.maxConcurrentPerIdentity)`, {
          'retry-after': '1',
        });
      }
      if ((byAccount.get(account) ?? 0) >= perAccount) {
        throw new KubeRefusal(
          429,
          `account "${account}" already has ${perAccount} Kubernetes API requests open (kube.maxConcurrentPerAccount)`,
          {
            'retry-after': '1',
          },
        );
      }
      if (identity !== undefined) take(byIdentity, identity);
      take(byAccount, account);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (identity !== undefined) give(byIdentity, identity);
        give(byAccount, account);
      };
    },
    open: () => ({
      identities: [...byIdentity.values()].reduce((a, b) => a + b, 0),
      accounts: [...byAccount.values()].reduce((a, b) => a + b, 0),
    }),
  };
}
