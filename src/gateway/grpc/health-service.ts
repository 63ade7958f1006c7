/**
 * `grpc.health.v1.Health` — the standard gRPC health checking protocol — so Kubernetes gRPC probes, grpc_health_probe,
 * grpcurl and `buf curl` can ask the gateway's gRPC port whether it serves. It tells the same truth as `GET /health`:
 * SERVING normally, NOT_SERVING once shutdown began (for good) or while the database does not answer a ping.
 *
 * The database is pinged on a timer (and the state kept), never per call: probes are frequent and carry no
 * credentials (the method requires nothing, see authorization.ts), so a Check must cost no database round trip.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import {
  type Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from '../../gen/grpc/health/v1/health_pb.js';
import type { Logger } from '../../shared/logger.js';
import { withTimeout } from '../../shared/with-timeout.js';

/** What the health service watches. */
export interface HealthServiceOptions {
  /** Fully qualified names of the services the gateway serves; each is known to Check/Watch, as is "" (the whole). */
  services: readonly string[];
  /** Resolves when the database answers (rejects otherwise), e.g. `() => pingDatabase(database)`. */
  ping(): Promise<void>;
  logger: Logger;
  /** How often the database is pinged; default 5 s. */
  intervalMs?: number;
  /** A ping slower than this counts as a failure; default 2 s. */
  timeoutMs?: number;
}

/** The health service of one gateway, with the controls its owner drives through start-up and shutdown. */
export interface HealthService {
  /** The `grpc.health.v1.Health` implementation to register on the router. */
  readonly impl: ServiceImpl<typeof Health>;
  /** The gateway's overall status now. */
  status(): ServingStatus;
  /** Starts pinging the database every `intervalMs` (the first ping at once). */
  start(): void;
  /** Pings the database now and updates the state; resolves once done. No-op after {@link HealthService.drain}. */
  refresh(): Promise<void>;
  /**
   * Shutdown began: NOT_SERVING at once and for good (every Watch stream is told), pings stop. Call it first thing in
   * shutdown, so probes and load balancers see it while requests still drain.
   */
  drain(): void;
  /**
   * Ends every Watch stream cleanly (after it has sent the latest status) and waits for an in-flight ping. Call it
   * before the servers wait for open requests (a Watch never ends by itself) and before the database closes.
   */
  close(): Promise<void>;
}

/** Builds the health service; SERVING until a ping fails (the database was just opened when this is called). */
export function createHealthService(options: HealthServiceOptions): HealthService {
  const known = new Set(['', ...options.services]);
  const intervalMs = options.intervalMs ?? 5000;
  const timeoutMs = options.timeoutMs ?? 2000;
  let state = ServingStatus.SERVING;
  let draining = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  // Woken on every change of `state` and on close.
  const listeners = new Set<() => void>();

  const set = (next: ServingStatus) => {
    if (next === state) return;
    state = next;
    for (const wake of [...listeners]) wake();
  };

  const refresh = (): Promise<void> => {
    if (draining) return Promise.resolve();
    inFlight ??= (async () => {
      try {
        await withTimeout(options.ping(), timeoutMs);
        if (draining) return;
        if (state !== ServingStatus.SERVING) options.logger.info('health: database reachable again; SERVING');
        set(ServingStatus.SERVING);
      } catch (err) {
        if (draining) return;
        if (state === ServingStatus.SERVING) options.logger.warn({ err }, 'health: database unreachable; NOT_SERVING');
        set(ServingStatus.NOT_SERVING);
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };

  const statusOf = (service: string) => (known.has(service) ? state : undefined);

  /** Resolves on the next change, on close, or when the call is cancelled. */
  const nextChange = (signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        listeners.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      listeners.add(done);
      signal.addEventListener('abort', done);
    });

  const impl: ServiceImpl<typeof Health> = {
    check(req: HealthCheckRequest): HealthCheckResponse {
      const status = statusOf(req.service);
      if (status === undefined) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return create(HealthCheckResponseSchema, { status });
    },
    // Per the protocol an unknown service gets SERVICE_UNKNOWN and the call stays open (the set of services is fixed
    // here, so nothing more follows for it); a known one gets its status now and again on every change.
    async *watch(req: HealthCheckRequest, context: HandlerContext) {
      let sent: ServingStatus | undefined;
      for (;;) {
        const status = statusOf(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
        if (status !== sent) {
          sent = status;
          yield create(HealthCheckResponseSchema, { status });
        }
        if (closed || context.signal.aborted) return;
        await nextChange(context.signal);
      }
    },
  };

  return {
    impl,
    status: () => state,
    refresh,
    start() {
      if (timer || draining) return;
      void refresh();
      timer = setInterval(() => void refresh(), intervalMs);
      timer.unref();
    },
    drain() {
      draining = true;
      clearInterval(timer);
      set(ServingStatus.NOT_SERVING);
    },
    async close() {
      draining = true;
      closed = true;
      clearInterval(timer);
      set(ServingStatus.NOT_SERVING);
      for (const wake of [...listeners]) wake();
      await inFlight;
    },
  };
}
