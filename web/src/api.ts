import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { AuditService } from '../../src/gen/outpost/api/v1/audit_service_pb.js';
import { FleetService } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import { MetricsService } from '../../src/gen/outpost/api/v1/metrics_service_pb.js';
import { ObjectService } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';

/** The Connect clients of the gateway's public API. Every RPC of the dashboard goes through one of these. */
export interface Api {
  accounts: Client<typeof AccountService>;
  objects: Client<typeof ObjectService>;
  operations: Client<typeof OperationService>;
  fleet: Client<typeof FleetService>;
  /** The history behind the charts. */
  metrics: Client<typeof MetricsService>;
  /** The audit log (admin only). */
  audit: Client<typeof AuditService>;
}

/**
 * Creates the clients over one Connect JSON transport to `baseUrl` (the page's own origin: the gateway serves both
 * the page and the API). `token` and `csrf` are called on every request: a token is sent as
 * `Authorization: Bearer <token>` (it takes precedence over the session), the dashboard session's CSRF token as
 * `X-Outpost-CSRF` (the session cookie goes along by itself: same origin), so signing in takes effect without
 * rebuilding the clients.
 */
export function createApi(baseUrl: string, token: () => string | null, csrf: () => string | null): Api {
  const bearer: Interceptor = (next) => async (request) => {
    const value = token();
    if (value) request.header.set('Authorization', `Bearer ${value}`);
    const csrfToken = csrf();
    if (csrfToken) request.header.set('X-Outpost-CSRF', csrfToken);
    return next(request);
  };
  const transport = createConnectTransport({ baseUrl, useBinaryFormat: false, interceptors: [bearer] });
  return {
    accounts: createClient(AccountService, transport),
    objects: createClient(ObjectService, transport),
    operations: createClient(OperationService, transport),
    fleet: createClient(FleetService, transport),
    metrics: createClient(MetricsService, transport),
    audit: createClient(AuditService, transport),
  };
}
