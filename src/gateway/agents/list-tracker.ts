/**
 * The full lists running on one agent stream: a SyncMarker START opens one (the database hands out its generation),
 * END closes it (pruning what it did not see). An END without a START on the same stream is a protocol error: the
 * generation that tells seen rows from unseen ones would be unknown.
 */
import { SyncPhase, type SyncMarker } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { SyncState, WatchScope } from '../cache/sync-state.js';
import type { WriteFence } from '../accounts/lease-fence.js';
import { invalidArgument } from '../http/errors.js';

/** Running lists of one stream. Not shared between streams. */
export interface ListTracker {
  /** The generation of the running list of the scope, or 0 when none runs. */
  generation(scope: WatchScope): number;
  /**
   * Applies a marker of an account the stream caches, fenced by the stream's lease of it. Throws INVALID_ARGUMENT for
   * a malformed or unexpected one, LeaseLostError when the lease is gone.
   */
  apply(marker: SyncMarker, fence: WriteFence): Promise<void>;
}

/** Creates an empty tracker for one stream. */
export function createListTracker(syncState: SyncState, log: () => Logger): ListTracker {
  const lists = new Map<string, number>();
  return {
    generation: (scope) => lists.get(scopeKey(scope)) ?? 0,
    async apply(marker, fence) {
      if (!marker.apiVersion || !marker.kind) throw invalidArgument('sync marker needs api_version and kind');
      const scope: WatchScope = {
        account: marker.account,
        apiVersion: marker.apiVersion,
        kind: marker.kind,
        watchNamespace: marker.watchNamespace,
      };
      const key = scopeKey(scope);
      if (marker.phase === SyncPhase.START) {
        lists.set(key, await syncState.startList(scope, fence));
      } else if (marker.phase === SyncPhase.END) {
        const generation = lists.get(key);
        if (generation === undefined) throw invalidArgument(`sync END for ${describeScope(scope)} without a START in this stream`);
        if (!marker.resourceVersion) throw invalidArgument(`sync END for ${describeScope(scope)} has no resource_version`);
        const pruned = await syncState.endList(scope, generation, marker.resourceVersion, Number(marker.count), fence);
        lists.delete(key);
        log().debug({ scope, pruned, listed: Number(marker.count) }, 'full list completed');
      } else {
        throw invalidArgument(`sync marker phase ${marker.phase} is not START or END`);
      }
    },
  };
}

function scopeKey(s: WatchScope): string {
  return JSON.stringify([s.account, s.apiVersion, s.kind, s.watchNamespace]);
}

function describeScope(s: WatchScope): string {
  return `${s.account}/${s.apiVersion}/${s.kind}${s.watchNamespace ? ` in ${s.watchNamespace}` : ''}`;
}
