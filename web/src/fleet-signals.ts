import { timestampMs } from '@bufbuild/protobuf/wkt';
import type { Fleet } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';

/**
 * Live-update triggers. Each function reduces a fleet summary to a string that changes exactly when the data a
 * view shows may have changed; views pass it to useLiveQuery/usePagedQuery, which re-fetch when it differs from
 * the value seen when their last fetch started. null means "no summary yet" and never triggers.
 */

/**
 * Changes when any of `names` (every account when null or empty) changes state, owner, event count or last
 * event time, or when accounts appear or disappear (names null/empty only).
 */
export function accountsSignal(fleet: Fleet | null, names: readonly string[] | null): string | null {
  if (!fleet) return null;
  const wanted = names && names.length > 0 ? new Set(names) : null;
  return fleet.accounts
    .filter((a) => !wanted || wanted.has(a.name))
    .map((a) => `${a.name}|${a.state}|${a.gatewayId}|${a.agentId}|${a.eventsTotal}|${a.lastEventTime ? timestampMs(a.lastEventTime) : 0}`)
    .sort()
    .join('\n');
}

/** Changes when the newest operations or their states change, or when the in-flight count changes. */
export function operationsSignal(fleet: Fleet | null): string | null {
  if (!fleet) return null;
  const recent = fleet.recentOperations.map((op) => `${op.id}:${op.state}`).join(',');
  return `${fleet.operationsInFlight}|${recent}`;
}
