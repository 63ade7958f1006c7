/**
 * Builds the client-node `KubeConfig` of one account (kubeconfig file + context, or in-cluster service account) and
 * derives what the Hello reports about the cluster: API host and CA fingerprint.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import type { AccountConfig } from '../config/schema.js';

/** The account's cluster cannot be addressed (bad kubeconfig, unknown context, no in-cluster environment). */
class KubeConfigError extends Error {
  constructor(account: string, message: string) {
    super(`account "${account}": ${message}`);
    this.name = 'KubeConfigError';
  }
}

/**
 * Loads the KubeConfig for an account. Plain `http:` API servers are accepted (client-node otherwise refuses them
 * unless skipTLSVerify is set, which means nothing without TLS). Throws {@link KubeConfigError}.
 */
export function loadAccountKubeConfig(account: Pick<AccountConfig, 'name' | 'kubeconfigFile' | 'context' | 'serviceAccount'>): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (account.serviceAccount) {
      if (!process.env.KUBERNETES_SERVICE_HOST) {
        throw new Error('serviceAccount: true but KUBERNETES_SERVICE_HOST is not set (not running in a pod?)');
      }
      kc.loadFromCluster();
    } else {
      loadFile(kc, account.kubeconfigFile!);
      if (account.context !== undefined) {
        if (kc.getContextObject(account.context) === null) {
          throw new Error(`context "${account.context}" not found in ${account.kubeconfigFile}`);
        }
        kc.setCurrentContext(account.context);
      }
    }
  } catch (err) {
    throw new KubeConfigError(account.name, (err as Error).message);
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeConfigError(account.name, 'the kubeconfig has no current cluster');
  kc.clusters = kc.clusters.map((c) => (c.server.startsWith('http:') ? { ...c, skipTLSVerify: true } : c));
  return kc;
}

/**
 * Loads a kubeconfig file, failing with a message that names the file and the kind of failure only: parser errors
 * quote the offending lines, and a file that is not a kubeconfig (a secret, another program's environment) must not
 * reach a log or the gateway through them.
 */
function loadFile(kc: KubeConfig, file: string): void {
  try {
    kc.loadFromFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why: Record<string, string> = {
      ENOENT: 'does not exist',
      EACCES: 'cannot be read (permission denied)',
      EISDIR: 'is a directory',
      ENOTDIR: 'is not under a directory',
      ELOOP: 'is a loop of symbolic links',
    };
    throw new Error(`kubeconfig ${file} ${(code && why[code]) ?? (code ? `cannot be read (${code})` : 'is not a valid kubeconfig file')}`);
  }
}

/**
 * SHA-256 fingerprint (lowercase hex of the DER bytes) of the first CA certificate of the current cluster; empty
 * when the server is plain HTTP or no CA is configured (system trust store).
 */
export function caFingerprint(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  if (cluster === null || cluster.server.startsWith('http:')) return '';
  let pem: Buffer | undefined;
  if (cluster.caData) pem = Buffer.from(cluster.caData, 'base64');
  else if (cluster.caFile) {
    try {
      pem = readFileSync(cluster.caFile);
    } catch {
      return '';
    }
  }
  if (pem === undefined) return '';
  try {
    const cert = new X509Certificate(pem);
    return createHash('sha256').update(cert.raw).digest('hex');
  } catch {
    return '';
  }
}
