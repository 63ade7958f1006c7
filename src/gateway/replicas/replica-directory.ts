/**
 * The replica directory: the in-memory list of known gateway replicas, kept current by one of two discovery
 * mechanisms chosen by `replicas.discovery` — heartbeat rows in the shared database, or a watch on Kubernetes
 * Endpoints. Readers (`list`, `get`) never wait on I/O; `subscribe` tells who cares when the list changed.
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import type { GatewayReplicasConfig } from '../config/schema.js';
import { createHeartbeatDirectory } from './heartbeat-directory.js';
import { createEndpointsDirectory } from './endpoints-directory.js';

/** One gateway replica as discovery knows it. */
export interface Replica {
  id: string;
  /** URL other replicas and clients reach it at. */
  baseUrl: string;
  /** When discovery last heard of it (its heartbeat, or the watch event that described it). */
  lastUpdated: Date;
  /** False while it drains (database) or while its endpoint is not ready (Kubernetes). */
  ready: boolean;
}

/** The known replicas. `start()` once before use; `close()` once, before the database closes. */
export interface ReplicaDirectory {
  /** Database mode: writes the first heartbeat and reads the table. Kubernetes mode: starts the watch (does not wait for it). */
  start(): Promise<void>;
  /** Every live replica, sorted by id. */
  list(): Replica[];
  get(id: string): Replica | undefined;
  /** Calls the listener with the new list each time it changes; returns the unsubscribe function. */
  subscribe(listener: (replicas: Replica[]) => void): () => void;
  /** Database mode: publishes `ready: false` at once (called when draining begins). No-op for Kubernetes (the readiness probe does it). */
  markDraining(): Promise<void>;
  /** Stops timers and watches; database mode also deletes this replica's row. Idempotent. */
  close(): Promise<void>;
}

/** What {@link createReplicaDirectory} needs from the gateway. */
export interface ReplicaDirectoryOptions {
  /** This replica. */
  id: string;
  baseUrl(): string;
  isDraining(): boolean;
  database: Database;
  config: GatewayReplicasConfig;
  /** Scheme of the replica URLs built from Endpoints (the replicas share the gateway's TLS setting). */
  scheme: 'http' | 'https';
  logger: Logger;
}

/** Builds the directory `config.discovery` selects. Throws when Kubernetes mode cannot find its kubeconfig or namespace. */
export function createReplicaDirectory(options: ReplicaDirectoryOptions): ReplicaDirectory {
  if (options.config.discovery === 'kubernetes') {
    return createEndpointsDirectory({ config: options.config, scheme: options.scheme, logger: options.logger });
  }
  return createHeartbeatDirectory({
    id: options.id,
    baseUrl: options.baseUrl,
    isDraining: options.isDraining,
    database: options.database,
    heartbeatIntervalSeconds: options.config.heartbeatIntervalSeconds,
    deadAfterSeconds: options.config.deadAfterSeconds,
    logger: options.logger,
  });
}
