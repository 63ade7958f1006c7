/**
 * Turns one EventBatch from an agent into the rows the cache writer stores, validating everything first so that a
 * bad event rejects the whole batch before anything is written. Pure: no I/O.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { EventType, type EventBatch, type Event } from '../../gen/outpost/agent/v1/agent_pb.js';
import { removeSecretMaterial } from '../../shared/secret-scrub.js';
import { jsonTextNestingProblem } from '../../shared/nesting-depth.js';
import { findUnstorableText, textProblem } from '../../shared/unstorable-text.js';
import { invalidArgument } from '../http/errors.js';
import { isOlderResourceVersion } from './resource-version.js';

/** One object to insert or update. `syncGen` is 0 when no full list of its scope is running. */
export interface ObjectRow {
  account: string;
  api_version: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  resource_version: string;
  labels: Record<string, string>;
  /** The object as JSON text: the agent's bytes when they needed no change, re-serialised otherwise. */
  object: string;
  watch_namespace: string;
  sync_gen: number;
}

/** One object to delete (when the stored row is not newer). */
interface DeleteRow {
  account: string;
  api_version: string;
  kind: string;
  namespace: string;
  name: string;
  resource_version: string;
}

/** The last resourceVersion seen for one watch scope in the batch. */
interface ScopePosition {
  account: string;
  api_version: string;
  kind: string;
  watch_namespace: string;
  resource_version: string;
}

/** A validated batch, collapsed so that each object appears at most once. */
export interface DecodedBatch {
  upserts: ObjectRow[];
  deletes: DeleteRow[];
  scopes: ScopePosition[];
  /** Accounts the batch touches (changes or bookmarks): the write is fenced on their leases. */
  accounts: string[];
  /**
   * Changes (ADDED, MODIFIED, DELETED) per account of `accounts`, counted before collapsing, for `events_total` and
   * `last_event_at`; 0 for an account with only bookmarks (a bookmark is not a change).
   */
  eventCounts: Record<string, number>;
  /** Events dropped because their account was released by this stream while they were in flight. */
  droppedReleased: number;
  /** Events dropped because an earlier event of the same batch was newer. */
  droppedStale: number;
  /** Secrets whose data had to be scrubbed here (the agent should have done it). */
  scrubbedSecrets: { account: string; namespace: string; name: string }[];
}

/** What the decoder needs to know about the session. */
export interface DecodeContext {
  /**
   * May the stream write this account's data: `write`, `drop` (released while in flight), or why not (the batch is
   * refused with PERMISSION_DENIED).
   */
  access(account: string): 'write' | 'drop' | { refused: string };
  /** The generation of the running full list of the scope, or 0 when none runs. */
  listGeneration(account: string, apiVersion: string, kind: string, watchNamespace: string): number;
}

/** A JSON escape of a UTF-16 surrogate (`\uD800`–`\uDFFF`): the only way object JSON can spell a lone one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** The event's fields that land in text columns (the object body is checked when it is decoded). */
const TEXT_FIELDS = ['account', 'apiVersion', 'kind', 'namespace', 'name', 'uid', 'resourceVersion', 'watchNamespace'] as const;

/** A batch with nothing in it, for the decoder to fill (and for callers that write rows of their own). */
export function emptyDecodedBatch(): DecodedBatch {
  return {
    upserts: [],
    deletes: [],
    scopes: [],
    accounts: [],
    eventCounts: {},
    droppedReleased: 0,
    droppedStale: 0,
    scrubbedSecrets: [],
  };
}

/**
 * Validates and collapses the batch. Throws a ConnectError describing the first bad event: INVALID_ARGUMENT, or
 * PERMISSION_DENIED for an account the stream may not write.
 */
export function decodeEventBatch(batch: EventBatch, ctx: DecodeContext): DecodedBatch {
  const objects = new Map<string, { op: 'upsert'; row: ObjectRow } | { op: 'delete'; row: DeleteRow }>();
  const scopes = new Map<string, ScopePosition>();
  const accounts = new Set<string>();
  const out = emptyDecodedBatch();
  const decoder = new TextDecoder('utf-8', { fatal: true });

  batch.events.forEach((ev, index) => {
    const where = `event ${index} of batch ${batch.sequence}`;
    const access = ctx.access(ev.account);
    if (access === 'drop') {
      out.droppedReleased++;
      return;
    }
    if (access !== 'write') throw new ConnectError(`${where}: ${access.refused}`, Code.PermissionDenied);
    for (const field of TEXT_FIELDS) {
      const problem = textProblem(ev[field]);
      if (problem) throw invalidArgument(`${where}: ${field} ${problem}`);
    }
    if (!ev.apiVersion || !ev.kind) throw invalidArgument(`${where}: api_version and kind are required`);
    if (!ev.resourceVersion) throw invalidArgument(`${where}: resource_version is required`);
    accounts.add(ev.account);
    out.eventCounts[ev.account] ??= 0;
    const scopeKey = JSON.stringify([ev.account, ev.apiVersion, ev.kind, ev.watchNamespace]);
    scopes.set(scopeKey, {
      account: ev.account,
      api_version: ev.apiVersion,
      kind: ev.kind,
      watch_namespace: ev.watchNamespace,
      resource_version: ev.resourceVersion,
    });
    if (ev.type === EventType.BOOKMARK) return;
    if (ev.type !== EventType.ADDED && ev.type !== EventType.MODIFIED && ev.type !== EventType.DELETED) {
      throw invalidArgument(`${where}: unknown event type ${ev.type}`);
    }
    out.eventCounts[ev.account]! += 1;
    if (!ev.name) throw invalidArgument(`${where}: name is required`);
    const key = JSON.stringify([ev.account, ev.kind, ev.apiVersion, ev.namespace, ev.name]);
    const previous = objects.get(key);
    if (previous && isOlderResourceVersion(ev.resourceVersion, previous.row.resource_version)) {
      out.droppedStale++;
      return;
    }
    if (ev.type === EventType.DELETED) {
      if (ev.objectJson.length > 0) decodeObject(ev, decoder, where); // validated, not stored
      objects.set(key, {
        op: 'delete',
        row: {
          account: ev.account,
          api_version: ev.apiVersion,
          kind: ev.kind,
          namespace: ev.namespace,
          name: ev.name,
          resource_version: ev.resourceVersion,
        },
      });
      return;
    }
    const decoded = decodeObject(ev, decoder, where);
    if (decoded === undefined) throw invalidArgument(`${where}: object_json is required for ${EventType[ev.type]}`);
    const { object } = decoded;
    let { text, changed } = decoded;
    if (scrubSecret(ev, object)) {
      out.scrubbedSecrets.push({ account: ev.account, namespace: ev.namespace, name: ev.name });
      changed = true;
    }
    if (changed) text = JSON.stringify(object);
    objects.set(key, {
      op: 'upsert',
      row: {
        account: ev.account,
        api_version: ev.apiVersion,
        kind: ev.kind,
        namespace: ev.namespace,
        name: ev.name,
        uid: ev.uid,
        resource_version: ev.resourceVersion,
        labels: labelsOf(object, where),
        object: text,
        watch_namespace: ev.watchNamespace,
        sync_gen: ctx.listGeneration(ev.account, ev.apiVersion, ev.kind, ev.watchNamespace),
      },
    });
  });

  for (const entry of objects.values()) {
    if (entry.op === 'upsert') out.upserts.push(entry.row);
    else out.deletes.push(entry.row);
  }
  out.scopes = [...scopes.values()];
  out.accounts = [...accounts];
  return out;
}

/** Parses object_json and checks that it describes the same object as the event's identity fields. */
function decodeObject(
  ev: Event,
  decoder: TextDecoder,
  where: string,
): { object: Record<string, unknown>; text: string; changed: boolean } | undefined {
  if (ev.objectJson.length === 0) return undefined;
  let parsed: unknown;
  let text: string;
  try {
    text = decoder.decode(ev.objectJson);
    parsed = JSON.parse(text);
  } catch {
    throw invalidArgument(`${where}: object_json is not valid UTF-8 JSON`);
  }
  // Postgres jsonb cannot hold NUL characters or escaped lone surrogates; refuse them here rather than fail the
  // transaction (INTERNAL). Raw UTF-8 cannot carry a surrogate, so only a `\uD8xx`-style escape can: the walk over the
  // parsed object runs only when the text holds one.
  // Nested deeper than any Kubernetes object: its reads (a Struct per object) would recurse past the stack.
  const tooDeep = jsonTextNestingProblem(text, 'object_json');
  if (tooDeep) throw invalidArgument(`${where}: ${tooDeep}`);
  if (text.includes('\\u0000')) throw invalidArgument(`${where}: object_json contains a NUL character (\\u0000)`);
  if (SURROGATE_ESCAPE.test(text)) {
    const problem = findUnstorableText(parsed, 'object_json');
    if (problem) throw invalidArgument(`${where}: ${problem}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidArgument(`${where}: object_json must be a JSON object`);
  }
  const obj = parsed as Record<string, unknown>;
  const meta = obj.metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw invalidArgument(`${where}: object_json has no metadata`);
  }
  const m = meta as Record<string, unknown>;
  // List items carry no apiVersion/kind; fill them in from the event so every stored object is self-describing.
  let changed = false;
  if (obj.apiVersion === undefined) {
    obj.apiVersion = ev.apiVersion;
    changed = true;
  }
  if (obj.kind === undefined) {
    obj.kind = ev.kind;
    changed = true;
  }
  const mismatch = (field: string, inObject: unknown, inEvent: string) => {
    if (inObject !== inEvent) {
      throw invalidArgument(
        `${where}: ${field} of the object (${JSON.stringify(inObject ?? null)}) does not match the event (${JSON.stringify(inEvent)})`,
      );
    }
  };
  mismatch('apiVersion', obj.apiVersion, ev.apiVersion);
  mismatch('kind', obj.kind, ev.kind);
  mismatch('metadata.name', m.name, ev.name);
  mismatch('metadata.namespace', m.namespace ?? '', ev.namespace);
  if (m.uid !== undefined || ev.uid) mismatch('metadata.uid', m.uid, ev.uid);
  if (m.resourceVersion !== undefined) mismatch('metadata.resourceVersion', m.resourceVersion, ev.resourceVersion);
  return { object: obj, text, changed };
}

function labelsOf(obj: Record<string, unknown>, where: string): Record<string, string> {
  const labels = (obj.metadata as Record<string, unknown>).labels;
  if (labels === undefined || labels === null) return {};
  if (typeof labels !== 'object' || Array.isArray(labels)) throw invalidArgument(`${where}: metadata.labels must be an object`);
  for (const [k, v] of Object.entries(labels)) {
    if (typeof v !== 'string') throw invalidArgument(`${where}: label ${JSON.stringify(k)} must be a string`);
  }
  return labels as Record<string, string>;
}

/** Removes Secret payloads (defence in depth: the agent must already have done it). Returns true when it did. */
function scrubSecret(ev: Event, obj: Record<string, unknown>): boolean {
  if (ev.kind !== 'Secret' || ev.apiVersion !== 'v1') return false;
  return removeSecretMaterial(obj);
}
