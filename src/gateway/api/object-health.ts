/**
 * Workload health for ObjectService: the SQL that lets the gateway compute it without shipping whole objects (a
 * slim projection of exactly what the status rules read), the owner_uid filter, and the mapping to the proto Health.
 * The health itself comes only from ../status/workload-health.ts.
 */
import { sql, type SQL } from 'drizzle-orm';
import { type Health, HealthState } from '../../gen/outpost/api/v1/object_service_pb.js';
import { objects } from '../../db/schema.js';
import { type Health as HealthWord, STATUS_SPEC_FIELDS, workloadHealth } from '../status/workload-health.js';
import { invalidArgument } from '../errors.js';

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

/** Uids are UUIDs in Kubernetes; this also admits the shorter ids of test clusters, nothing with spaces or quotes. */
const UID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The owner_uid filter: objects whose `metadata.ownerReferences` contain an entry with this uid (JSON containment,
 * the same on PGlite and Postgres). Undefined when `uid` is empty; INVALID_ARGUMENT when it cannot be a uid.
 */
export function ownerUidSql(uid: string): SQL | undefined {
  if (!uid) return undefined;
  if (!UID.test(uid)) throw invalidArgument('owner_uid must be an object uid (letters, digits, ".", "_", "-"; at most 128 characters)');
  return sql`(${objects.object} -> 'metadata' -> 'ownerReferences') @> ${JSON.stringify([{ uid }])}::jsonb`;
}

/** The proto health of an object (whole or slim); unset for kinds without status rules. */
export function healthMessage(object: Record<string, unknown> | undefined): Health | undefined {
  const summary = object ? workloadHealth(object) : undefined;
  if (!summary) return undefined;
  return { $typeName: 'outpost.api.v1.Health', state: STATES[summary.health], reason: summary.reason };
}
