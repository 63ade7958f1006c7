/**
 * Workload health for ObjectService: the SQL that lets the gateway compute it without shipping whole objects (a
 * slim projection of exactly what the status rules read) and the mapping to the proto Health.
 * The health itself comes only from ../status/workload-health.ts.
 */
import { sql, type SQL } from 'drizzle-orm';
import { type Health, HealthState } from '../../gen/outpost/api/v1/object_service_pb.js';
import { objects } from '../../db/schema.js';
import { type Health as HealthWord, STATUS_SPEC_FIELDS, workloadHealth } from '../status/workload-health.js';

const STATES: Record<HealthWord, HealthState> = {
  Healthy: HealthState.HEALTHY,
  Progressing: HealthState.PROGRESSING,
  Degraded: HealthState.DEGRADED,
  Paused: HealthState.PAUSED,
  Unknown: HealthState.UNKNOWN,
};

/**
 * The object column reduced in SQL to what the status rules read (apiVersion, kind, metadata.generation, the spec
 * fields of STATUS_SPEC_FIELDS, status): the same shape as statusInputOf(), so a health computed from it equals the
 * whole object's. Pod specs and pod templates — most of a workload's bytes — stay in the database.
 */
export function statusInputSql(): SQL<Record<string, unknown>> {
  const specFields = sql.join(
    STATUS_SPEC_FIELDS.map((f) => sql`${f}::text, ${objects.object} -> 'spec' -> ${f}::text`),
    sql`, `,
  );
  return sql<Record<string, unknown>>`jsonb_build_object(
    'apiVersion', ${objects.object} -> 'apiVersion',
    'kind', ${objects.object} -> 'kind',
    'metadata', jsonb_build_object('generation', ${objects.object} -> 'metadata' -> 'generation'),
    'spec', jsonb_strip_nulls(jsonb_build_object(${specFields})),
    'status', ${objects.object} -> 'status')`;
}

/** The proto health of an object (whole or slim); unset for kinds without status rules. */
export function healthMessage(object: Record<string, unknown> | undefined): Health | undefined {
  const summary = object ? workloadHealth(object) : undefined;
  if (!summary) return undefined;
  return { $typeName: 'outpost.api.v1.Health', state: STATES[summary.health], reason: summary.reason };
}
