/**
 * `outpost.api.v1.FleetService`: the fleet summary, once (GetFleet) or as a server stream (WatchFleet) that sends it
 * at once and again on every change. Server streams work over HTTP/1.1 with the Connect protocol, which is how
 * browsers get live updates without WebSockets. A stream that only ever sees the same summary still gets it resent
 * every {@link FLEET_KEEPALIVE_MS}, so proxies that close idle connections leave it open.
 */
import { clone } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { FleetSchema, type Fleet, type FleetService } from '../../gen/outpost/api/v1/fleet_service_pb.js';
import type { Logger } from '../../shared/logger.js';
import { principalKey } from '../auth/principal.js';
import type { FleetMonitor } from './fleet-monitor.js';

/** Longest silence on a WatchFleet stream. */
const FLEET_KEEPALIVE_MS = 15_000;

/** Options of {@link createFleetService}. */
export interface FleetServiceOptions {
  keepaliveMs?: number;
  logger: Logger;
}

/** Creates the FleetService implementation over the gateway's monitor. */
export function createFleetService(monitor: FleetMonitor, options: FleetServiceOptions): ServiceImpl<typeof FleetService> {
  const keepaliveMs = options.keepaliveMs ?? FLEET_KEEPALIVE_MS;
  const unavailable = (err: unknown): ConnectError => {
    if (err instanceof ConnectError) return err;
    options.logger.warn({ err }, 'fleet summary unavailable');
    return new ConnectError('the fleet summary cannot be read now (database unreachable?); try again', Code.Unavailable);
  };
  return {
    async getFleet() {
      try {
        return { fleet: await monitor.current() };
      } catch (err) {
        throw unavailable(err);
      }
    },

    async *watchFleet(_req, context) {
      let pending: Fleet | undefined;
      let failure: unknown;
      let wake: (() => void) | undefined;
      const poke = () => {
        wake?.();
        wake = undefined;
      };
      const unwatch = monitor.watch({
        next(fleet) {
          pending = fleet;
          poke();
        },
        error(err) {
          failure = err;
          poke();
        },
      });
      context.signal.addEventListener('abort', poke, { once: true });
      // a credential revoked while the stream is open (a token file deleted or changed) ends it UNAUTHENTICATED
      const unsubscribe = context.values?.get(principalKey)?.revocation?.subscribe((message) => {
        failure ??= new ConnectError(message, Code.Unauthenticated);
        poke();
      });
      let last: Fleet | undefined;
      try {
        while (!context.signal.aborted) {
          if (pending === undefined && failure === undefined) {
            const waited = await new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(false), keepaliveMs);
              wake = () => {
                clearTimeout(timer);
                resolve(true);
              };
            });
            if (!waited && last) {
              // Nothing changed: the same summary, read time now, keeps the connection busy.
              last = clone(FleetSchema, last);
              last.time = timestampFromDate(new Date());
              yield { fleet: last };
            }
            continue;
          }
          if (pending !== undefined) {
            last = pending;
            pending = undefined;
            yield { fleet: last };
            continue;
          }
          throw unavailable(failure);
        }
      } finally {
        unsubscribe?.();
        unwatch();
        context.signal.removeEventListener('abort', poke);
      }
    },
  };
}
