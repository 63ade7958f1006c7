/**
 * Workload health for ObjectService: the mapping to the proto Health. The SQL that lets the gateway compute it without
 * shipping whole objects (a slim projection of exactly what the status rules read) is the cache's: statusInputSql in
 * cache/object-reads.ts.
 * The health itself comes only from ../status/workload-health.ts.
 */
import { type Health, HealthState } from '../../gen/outpost/api/v1/object_service_pb.js';
import { type Health as HealthWord, workloadHealth } from '../status/workload-health.js';

const STATES: Record<HealthWord, HealthState> = {
  Healthy: HealthState.HEALTHY,
  Progressing: HealthState.PROGRESSING,
  Degraded: HealthState.DEGRADED,
  Paused: HealthState.PAUSED,
  Unknown: HealthState.UNKNOWN,
};

/** The proto health of an object (whole or slim); unset for kinds without status rules. */
export function healthMessage(object: Record<string, unknown> | undefined): Health | undefined {
  const summary = object ? workloadHealth(object) : undefined;
  if (!summary) return undefined;
  return { $typeName: 'outpost.api.v1.Health', state: STATES[summary.health], reason: summary.reason };
}
