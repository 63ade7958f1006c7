import type { AccountHealth } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { Services } from './services.js';

/** How long a finished summary may still be handed to a view that asks for the same fleet change. */
const REUSE_MS = 5_000;

/** The last SummarizeHealth call: for whom, for which fleet change, and when it started. */
interface LastCall {
  services: Services;
  version: number;
  trigger: string | null;
  startedAt: number;
  promise: Promise<AccountHealth[]>;
}

let last: LastCall | undefined;

/**
 * ObjectService.SummarizeHealth for every account, shared by the overview's views that show workload health (the
 * tiles and the health table): each re-fetches when the fleet summary's accounts signal changes (fleet-signals.ts),
 * and views asking for the same signal, under the same sign-in (auth version), within a few seconds of each other
 * get the same call — one RPC per fleet change, however many views show it. A failed call is not kept. The call
 * cannot be aborted by one of its callers (another may still want it); callers drop a result they no longer need.
 */
export function sharedHealthSummary(services: Services, trigger: string | null): Promise<AccountHealth[]> {
  const version = services.auth.state().version;
  const now = Date.now();
  if (last && last.services === services && last.version === version && last.trigger === trigger && now - last.startedAt < REUSE_MS) {
    return last.promise;
  }
  const call: LastCall = {
    services,
    version,
    trigger,
    startedAt: now,
    promise: services.api.objects.summarizeHealth({}).then((r) => r.accounts),
  };
  last = call;
  call.promise.catch(() => {
    if (last === call) last = undefined;
  });
  return call.promise;
}
