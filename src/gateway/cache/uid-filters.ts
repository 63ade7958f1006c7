/**
 * The ListObjects filters that name an object by uid: owner_uid (an object's dependents, through
 * `metadata.ownerReferences`) and involved_object_uid (the Events about an object). Both refuse a value that cannot be
 * a uid with the same rule, before any SQL is built; the JSON is read with operators PGlite and Postgres share.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { objects } from '../../db/schema.js';
import { invalidArgument } from '../http/errors.js';

/** Uids are UUIDs in Kubernetes; this also admits the shorter ids of test clusters, nothing with spaces or quotes. */
const UID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function requireUid(field: string, uid: string): void {
  if (!UID.test(uid)) throw invalidArgument(`${field} must be an object uid (letters, digits, ".", "_", "-"; at most 128 characters)`);
}

/**
 * The owner_uid filter: objects whose `metadata.ownerReferences` contain an entry with this uid (JSON containment).
 * Undefined when `uid` is empty; INVALID_ARGUMENT when it cannot be a uid.
 */
export function ownerUidSql(uid: string): SQL | undefined {
  if (!uid) return undefined;
  requireUid('owner_uid', uid);
  return sql`(${objects.object} -> 'metadata' -> 'ownerReferences') @> ${JSON.stringify([{ uid }])}::jsonb`;
}

/**
 * The involved_object_uid filter: Events (core v1 `involvedObject`, events.k8s.io `regarding`) about the object with
 * this uid. Undefined when `uid` is empty; INVALID_ARGUMENT when it cannot be a uid or `kind` is another kind.
 */
export function involvedObjectSql(kind: string, uid: string): SQL | undefined {
  if (!uid) return undefined;
  requireUid('involved_object_uid', uid);
  if (kind !== '' && kind !== 'Event')
    throw invalidArgument(`involved_object_uid selects Events; kind must be empty or Event, not ${kind}`);
  return and(
    eq(objects.kind, 'Event'),
    sql`(${objects.object} -> 'involvedObject' ->> 'uid' = ${uid} or ${objects.object} -> 'regarding' ->> 'uid' = ${uid})`,
  );
}
