/**
 * The client API (Connect and gRPC): objects, accounts and agents, operations, the fleet summary, the audit log, and
 * the gRPC health and reflection services, which name every service served here — so it comes after every module
 * that serves one (the agent stream). Its start registers the stops of the streams that never end by themselves
 * (WatchFleet, health Watch), which end before the servers wait for open requests, and turns health NOT_SERVING at
 * the drain.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { pingDatabase } from '../../db/database.js';
import { Health } from '../../gen/grpc/health/v1/health_pb.js';
import { AccountService } from '../../gen/outpost/api/v1/account_service_pb.js';
import { AuditService } from '../../gen/outpost/api/v1/audit_service_pb.js';
import { FleetService } from '../../gen/outpost/api/v1/fleet_service_pb.js';
import { ObjectService } from '../../gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { createAccountService } from '../api/account-service.js';
import { createAuditService } from '../api/audit-service.js';
import { createFleetMonitor, type FleetMonitor } from '../api/fleet-monitor.js';
import { createFleetService } from '../api/fleet-service.js';
import { readFleet } from '../api/fleet-snapshot.js';
import { createAgentListing } from '../api/list-agents.js';
import { createObjectService } from '../api/object-service.js';
import { createOperationService } from '../api/operation-service.js';
import { createHealthService } from '../grpc/health-service.js';
import { createReflectionServices, ServerReflectionV1, ServerReflectionV1alpha } from '../grpc/reflection-service.js';
import type { GatewayCore } from './gateway-core.js';
import type { ConnectServiceContribution, GatewayModule } from './module.js';

/** The client API module (module-list.ts). */
export const clientApiModule: GatewayModule = {
  name: 'client-api',
  serves: 'Connect/gRPC: objects, accounts, operations, fleet, audit, health, reflection',
  build: (core, earlier) => {
    const { config, database, logger } = core;
    const fleet = createFleetMonitorOf(core);
    // Strict JSON: an unknown key (say, an operation kind this gateway does not know) is an error, not ignored.
    const readLimits = {
      defaultTimeoutMs: config.operations.defaultTimeoutSeconds * 1000,
      maxManifestBytes: config.operations.maxManifestBytes,
    };
    const own: ConnectServiceContribution[] = [
      { type: ObjectService, register: (r) => r.service(ObjectService, createObjectService(database)) },
      {
        type: AccountService,
        register: (r) =>
          r.service(AccountService, {
            ...createAccountService(core.accountAdmin),
            ...createAgentListing(database, { staleAfterSeconds: core.agentStaleAfterSeconds }),
          }),
      },
      {
        type: OperationService,
        register: (r) =>
          r.service(
            OperationService,
            createOperationService(core.operations, logger.child({ component: 'api' }), core.audit, {
              cluster: core.reads,
              limits: readLimits,
              audit: config.audit.reads,
            }),
            { jsonOptions: { ignoreUnknownFields: false } },
          ),
      },
      {
        type: FleetService,
        register: (r) => r.service(FleetService, createFleetService(fleet, { logger: logger.child({ component: 'fleet' }) })),
      },
      { type: AuditService, register: (r) => r.service(AuditService, createAuditService(core.audit)) },
    ];
    const described = [...(earlier.services ?? []), ...own].map((s) => s.type);
    // gRPC health tells what GET /health tells (draining, database); reflection describes every service served here.
    const health = createHealthService({
      services: described.map((s) => s.typeName),
      ping: () => pingDatabase(database),
      logger: logger.child({ component: 'health' }),
    });
    const reflection = createReflectionServices({ services: [...described, Health] });
    return {
      services: [
        ...own,
        { type: Health, register: (r) => r.service(Health, health.impl) },
        { type: ServerReflectionV1, register: (r) => r.service(ServerReflectionV1, reflection.v1) },
        { type: ServerReflectionV1alpha, register: (r) => r.service(ServerReflectionV1alpha, reflection.v1alpha) },
      ],
      start: () => {
        // WatchFleet and health Watch streams never end by themselves: they end first, so the servers do not wait on them.
        core.closers.defer('fleet monitor', () => fleet.close(new ConnectError('gateway shutting down', Code.Unavailable)));
        health.start();
        core.closers.defer('health', () => health.close());
        core.state.onDrain(() => health.drain());
      },
    };
  },
};

/** The fleet summary behind WatchFleet, re-read while someone watches it. */
function createFleetMonitorOf(core: GatewayCore): FleetMonitor {
  const { config, state } = core;
  return createFleetMonitor({
    read: () =>
      readFleet({
        database: core.database,
        staleAfterSeconds: core.agentStaleAfterSeconds,
        // This replica is always listed, as it sees itself (also before its first heartbeat).
        replicas: () => [
          { id: config.id, baseUrl: state.baseUrl(), ready: !state.isDraining(), lastSeen: new Date() },
          ...core.replicas
            .list()
            .filter((r) => r.id !== config.id)
            .map((r) => ({ ...r, lastSeen: r.lastUpdated })),
        ],
      }),
    intervalMs: config.web.fleetPollSeconds * 1000,
    logger: core.logger.child({ component: 'fleet' }),
  });
}
