/**
 * Set-up mistakes worth saying when the gateway starts: settings that start fine but leave it unusable, unsafe or
 * unable to work with its peers. Warnings only; whatever cannot work at all fails the start elsewhere.
 */
import type { Database } from '../../db/database.js';
import { countObjectPartitions } from '../../db/object-partitions.js';
import type { Logger } from '../../shared/logger.js';
import type { GatewayConfig } from '../config/schema.js';

/**
 * A secure gateway that nobody can use is a set-up mistake worth saying at start-up: no way to authenticate, or no
 * rule granting any role. Returns the warning, or undefined when the set-up can admit someone.
 */
export function authSetupProblem(config: Pick<GatewayConfig, 'auth' | 'authorization' | 'tls'>): string | undefined {
  const canAuthenticate =
    config.auth.tokens.length > 0 || config.auth.jwt !== undefined || (config.tls !== undefined && config.tls.clientAuth !== 'NONE');
  if (!canAuthenticate) {
    return 'no credentials are configured (auth.tokens, auth.jwt, or tls.clientAuth with a CA): every request but health checks will be refused; configure them, or run with --insecure for development only';
  }
  if (config.authorization.rules.length === 0) {
    return 'authorization.rules is empty: authenticated callers get no role, so every request but health checks will be refused with PERMISSION_DENIED';
  }
  return undefined;
}

/** Logs what is wrong with the authentication set-up (insecure mode, or {@link authSetupProblem}); call it first. */
export function warnAboutAuthSetup(config: GatewayConfig, logger: Logger): void {
  if (config.insecure) {
    logger.warn(
      'INSECURE MODE: requests without credentials get every right and agents may register any account name; never use this outside development',
    );
    return;
  }
  const problem = authSetupProblem(config);
  if (problem) logger.warn(problem);
}

/** Logs what a key ring without a key file means for Secret values (`source` of the key ring: 'ephemeral', 'none' or a file). */
export function warnAboutSecretKeys(source: string, logger: Logger): void {
  if (source === 'ephemeral') {
    logger.warn(
      'secrets.keyFile is not set: Secret values in operations are encrypted with an ephemeral key, so open operations carrying them cannot be sent after a restart (development only)',
    );
  } else if (source === 'none') {
    logger.warn('secrets.keyFile is not set: operations carrying Secret values are refused (they would have to be stored in plaintext)');
  }
}

/** Logs that other replicas cannot call this one (no replica secret), unless in insecure mode. */
export function warnAboutReplicaSecret(config: GatewayConfig, logger: Logger): void {
  if (!config.insecure && !config.auth.replicaSecretFile) {
    logger.warn('auth.replicaSecretFile is not set: other replicas cannot forward operations or relay results to this one');
  }
}

/**
 * The object cache keeps the partitions it was created with (src/db/object-partitions.ts): a configured count that
 * differs is not applied, and an operator who changed it should hear so rather than believe it took effect. Returns
 * the warning, or undefined when the table has the configured count.
 */
export function objectPartitionsProblem(actual: number, configured: number): string | undefined {
  if (actual === configured) return undefined;
  return `cache.objectPartitions is ${configured} but the objects table has ${actual} partitions: the count applies only when the table is created, so nothing changed (docs/operating.md, "Partitions of the object cache")`;
}

/** Logs {@link objectPartitionsProblem} for the open database; a failed look-up is logged, never fatal. */
export async function warnAboutObjectPartitions(database: Database, configured: number, logger: Logger): Promise<void> {
  try {
    const problem = objectPartitionsProblem(await countObjectPartitions(database.db), configured);
    if (problem) logger.warn(problem);
  } catch (err) {
    logger.warn({ err }, 'cannot read the partitions of the objects table');
  }
}
