/**
 * The one Drizzle schema of the gateway. Migrations in `drizzle/` are generated from this file with
 * `npm run db:generate` and applied at start-up; never edit a generated migration by hand.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  real,
  smallint,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * Values of `accounts.objects_version`: one sequence, so a version is never handed out twice, not even to an account
 * deleted and created again under the same name.
 */
export const objectsVersionSeq = pgSequence('objects_version_seq');

/** Cluster accounts registered by agents. */
export const accounts = pgTable('accounts', {
  name: text('name').primaryKey(),
  state: text('state').notNull().default('INACTIVE'),
  reason: text('reason').notNull().default(''),
  agentId: text('agent_id').notNull().default(''),
  sessionId: text('session_id').notNull().default(''),
  gatewayId: text('gateway_id').notNull().default(''),
  apiHost: text('api_host').notNull().default(''),
  caFingerprint: text('ca_fingerprint').notNull().default(''),
  kubernetesVersion: text('kubernetes_version').notNull().default(''),
  namespaces: jsonb('namespaces').$type<string[]>().notNull().default([]),
  kinds: jsonb('kinds').$type<{ apiVersion: string; kind: string; resource: string; namespaced: boolean }[]>().notNull().default([]),
  skippedKinds: jsonb('skipped_kinds').$type<{ apiVersion: string; kind: string; reason: string }[]>().notNull().default([]),
  properties: jsonb('properties').$type<Record<string, string>>().notNull().default({}),
  /** Zone of the agents that serve the account (from the Hello, or set for a dynamic account). */
  zoneId: text('zone_id').notNull().default(''),
  /** `agent` (declared in an agent's config) or `dynamic` (defined at the gateway over REST/RPC). */
  source: text('source').notNull().default('agent'),
  /** Protobuf JSON of `outpost.agent.v1.AccountDefinition` for dynamic accounts. */
  definition: jsonb('definition').$type<Record<string, unknown>>(),
  /** What an admin asked for: ACTIVE (serve it when an agent offers it) or INACTIVE (refuse it until re-activated). */
  desiredState: text('desired_state').notNull().default('ACTIVE'),
  /**
   * The agent identity (`identityOf(principal)`: `token:<subject>`, `certificate:<subject>`, …) the name is bound to,
   * set at its first successful claim; '' until then. Only that identity may claim the name (docs/accounts.md).
   */
  boundIdentity: text('bound_identity').notNull().default(''),
  /**
   * The latest refused claim of this name by another cluster or identity: {agentId, apiHost, caFingerprint, reason,
   * at, identity}.
   */
  refusedClaim: jsonb('refused_claim').$type<{
    agentId: string;
    apiHost: string;
    caFingerprint: string;
    reason: string;
    at: string;
    identity?: string;
  }>(),
  lastEventAt: timestamp('last_event_at', { withTimezone: true, mode: 'date' }),
  /** Object events stored for the account (the fleet's ingest rate is the growth of their sum). */
  eventsTotal: bigint('events_total', { mode: 'number' }).notNull().default(0),
  /**
   * Ownership lease (docs/architecture.md, rule 4): the session in `sessionId` on replica `gatewayId` owns the account
   * while `leaseExpiresAt` is in the future. Every claim sets a new `leaseEpoch` (it only grows); cache writes check the
   * epoch they were granted, so a replica that lost the lease can no longer write, and dispatch uses the caching stream
   * only while its lease is known valid. Null when released.
   */
  leaseEpoch: bigint('lease_epoch', { mode: 'number' }).notNull().default(0),
  leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, mode: 'date' }),
  lastConnectionAt: timestamp('last_connection_at', { withTimezone: true, mode: 'date' }),
  /**
   * Changes, in the transaction that writes them, whenever the account's cached objects of a versioned kind change
   * (the object writer, the prune at a list's END; a removed cache whatever its kinds): a new value of
   * `objects_version_seq`. The gateway versions the kinds the Spinnaker answer cache reads (its ANSWER_KINDS), so
   * Events and Leases do not move it; readers that keep answers built from those kinds compare it to know an answer
   * is still current, on every replica.
   */
  objectsVersion: bigint('objects_version', { mode: 'number' }).notNull().default(sql`nextval('objects_version_seq')`),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** Every state change of an account, for GetAccount and GET /armory/accounts/{name}. */
export const accountTransitions = pgTable(
  'account_transitions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    account: text('account').notNull(),
    fromState: text('from_state').notNull(),
    toState: text('to_state').notNull(),
    reason: text('reason').notNull().default(''),
    /** `agent:<id>`, `admin:<subject>` or `gateway`. */
    actor: text('actor').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('account_transitions_account_idx').on(t.account, t.id.desc())],
);

/**
 * Agent streams, live and ended: who connected, as whom, and the hash of the session token its Welcome carried (the
 * token itself is never stored). `endedAt` is null while the stream is live.
 */
export const agentSessions = pgTable(
  'agent_sessions',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id').notNull(),
    zone: text('zone').notNull().default(''),
    version: text('version').notNull().default(''),
    subject: text('subject').notNull().default(''),
    /**
     * The authenticated identity of the stream (`identityOf`: `token:<subject>`, `certificate:<subject>`, …): a resume
     * must come from the same one. Empty on rows written before it was stored (those cannot be resumed).
     */
    identity: text('identity').notNull().default(''),
    gatewayId: text('gateway_id').notNull(),
    /**
     * The transport the stream came over (`AgentTransport` in src/gateway/agents/agent-transport.ts: `grpc` or
     * `websocket`). Rows written before it was stored were all gRPC streams.
     */
    transport: text('transport').notNull().default('grpc'),
    /** SHA-256 (hex) of the session token. */
    tokenHash: text('token_hash').notNull(),
    caching: jsonb('caching').$type<string[]>().notNull().default([]),
    standby: jsonb('standby').$type<string[]>().notNull().default([]),
    refused: jsonb('refused').$type<string[]>().notNull().default([]),
    connectedAt: timestamp('connected_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('agent_sessions_agent_idx').on(t.agentId), index('agent_sessions_live_idx').on(t.endedAt)],
);

/*
 * Spinnaker's view of a cached object (docs/spinnaker.md, "Infrastructure views"), as generated columns computed by
 * the database from the stored object, so every writer keeps them without knowing they exist and rows cached before
 * the columns existed get them too. They are what Deck's polled reads join on and are indexed; the full mapping
 * (src/gateway/spinnaker/infrastructure/) recomputes the moniker in TypeScript from the object, and
 * test/spinnaker/infrastructure-indexes.test.ts checks that both agree.
 */

/** The kinds Clouddriver links to applications (serverGroups, serverGroupManagers, loadBalancers, securityGroups). */
const APP_KINDS = `'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Deployment', 'Service', 'Ingress', 'NetworkPolicy'`;
/** Of those, the kinds that also belong to a cluster (serverGroups and serverGroupManagers). */
const CLUSTER_KINDS = `'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Deployment'`;
/** Kubernetes' own groups (kind-names.ts, NATIVE_GROUPS, those the kinds above are served in). */
const NATIVE_GROUP = `(api_version not like '%/%' or split_part(api_version, '/', 1) in ('core', 'apps', 'batch', 'extensions', 'networking.k8s.io'))`;
/** Linked at all: a native kind of the classes above, not annotated `caching.spinnaker.io/ignore: "true"`. */
const LINKED = `kind in (${APP_KINDS}) and ${NATIVE_GROUP} and coalesce(object -> 'metadata' -> 'annotations' ->> 'caching.spinnaker.io/ignore', '') <> 'true'`;
/** A moniker annotation, its legacy JSON quotes stripped (moniker.ts, textAnnotation). */
const annotation = (key: string) => {
  const value = `(object -> 'metadata' -> 'annotations' ->> '${key}')`;
  return `case when ${value} ~ '^".*"$' then substr(${value}, 2, length(${value}) - 2) else ${value} end`;
};
/** A name Frigga parses (moniker.ts, parseFriggaName): `app[-stack[-detail]][-vNNN]`. */
const FRIGGA = `name ~ '^[a-zA-Z0-9._]+(-[a-zA-Z0-9._]*(-[-a-zA-Z0-9._~^]*)?)?$'`;
/** The moniker app: its annotation, else Frigga's (`system` for `system:` names); null when unlinked or empty. */
const SPINNAKER_APP = `case when ${LINKED} then nullif(case
  when object -> 'metadata' -> 'annotations' ? 'moniker.spinnaker.io/application' then ${annotation('moniker.spinnaker.io/application')}
  when name like 'system:%' then 'system'
  when ${FRIGGA} then substring(name from '^[a-zA-Z0-9._]+')
  else '' end, '') end`;
/** The moniker cluster of a server group or manager: its annotation, else the name without `-vNNN`. */
const SPINNAKER_CLUSTER = `case when ${LINKED} and kind in (${CLUSTER_KINDS}) then nullif(case
  when object -> 'metadata' -> 'annotations' ? 'moniker.spinnaker.io/cluster' then ${annotation('moniker.spinnaker.io/cluster')}
  when name like 'system:%' then regexp_replace(name, '^(.+)-v[0-9]{3,6}$', '\\1')
  when ${FRIGGA} then regexp_replace(name, '-v[0-9]{3,6}$', '')
  else '' end, '') end`;

/**
 * A pod as its instance views read it (src/gateway/spinnaker/infrastructure/instance-shape.ts turns it back into a
 * pod): apiVersion and kind; name, namespace, uid, ownerReferences and the `caching.spinnaker.io/ignore` annotation
 * (as `metadata.ignore`); of a non-empty status the phase and the containers' names and readiness (two arrays: a
 * generated column may only use immutable functions, and jsonb_build_object is not). Computed once per write from the
 * object in memory, so Deck's polls of a thousand server groups read ~300 bytes a pod instead of decompressing each
 * whole object for every field.
 */
const POD_INSTANCE = `case when kind = 'Pod' then jsonb_set(jsonb_set(
  object - array['spec', 'status', 'metadata'],
  '{metadata}', jsonb_object(array['name', object -> 'metadata' ->> 'name', 'namespace', coalesce(object -> 'metadata' ->> 'namespace', ''),
    'uid', object -> 'metadata' ->> 'uid', 'ignore', coalesce(object -> 'metadata' -> 'annotations' ->> 'caching.spinnaker.io/ignore', '')])
    || jsonb_set('{}'::jsonb, '{ownerReferences}', coalesce(object -> 'metadata' -> 'ownerReferences', '[]'::jsonb))),
  '{status}', case when jsonb_typeof(object -> 'status') = 'object' and object -> 'status' <> '{}'::jsonb
    then jsonb_set(jsonb_set(jsonb_set('{}'::jsonb, '{phase}', coalesce(object -> 'status' -> 'phase', 'null'::jsonb)),
      '{names}', jsonb_path_query_array(object, '$.status.containerStatuses[*].name')),
      '{ready}', jsonb_path_query_array(object, '$.status.containerStatuses[*].ready'))
    else '{}'::jsonb end) end`;

/**
 * A server group as the summary lists read it (src/gateway/spinnaker/infrastructure/instance-shape.ts turns it back):
 * the object without its status, managedFields, kubectl's last-applied annotation and pod specs, whose images are kept
 * in a top-level `images` list (the pod template's containers and init containers, then a CronJob's job template's).
 * Pod specs and last-applied annotations are most of a workload's bytes, and a list of a thousand server groups reads
 * them for nothing.
 */
const SERVER_GROUP_SUMMARY = `case when kind in ('ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob') then jsonb_set(
  ((((object - 'status') #- '{metadata,managedFields}') #- '{metadata,annotations,kubectl.kubernetes.io/last-applied-configuration}')
    #- '{spec,template,spec}') #- '{spec,jobTemplate}',
  '{images}',
  jsonb_path_query_array(object, '$.spec.template.spec.containers[*].image')
    || jsonb_path_query_array(object, '$.spec.template.spec.initContainers[*].image')
    || jsonb_path_query_array(object, '$.spec.jobTemplate.spec.template.spec.containers[*].image')
    || jsonb_path_query_array(object, '$.spec.jobTemplate.spec.template.spec.initContainers[*].image')) end`;

/**
 * The object cache: one row per object per account. `syncGen` is the generation of the full list that last saw the
 * row; a completed list prunes rows of its scope with an older generation. `spinnakerApp`, `spinnakerCluster`,
 * `ownerUids`, `ownerUid`, `podInstance` and `serverGroupSummary` are generated (above): never written.
 */
export const objects = pgTable(
  'objects',
  {
    account: text('account').notNull(),
    apiVersion: text('api_version').notNull(),
    kind: text('kind').notNull(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    uid: text('uid').notNull(),
    resourceVersion: text('resource_version').notNull(),
    labels: jsonb('labels').$type<Record<string, string>>().notNull(),
    object: jsonb('object').$type<Record<string, unknown>>().notNull(),
    watchNamespace: text('watch_namespace').notNull().default(''),
    syncGen: bigint('sync_gen', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** The moniker app of a server group, manager, load balancer or firewall; null for every other object. */
    spinnakerApp: text('spinnaker_app').generatedAlwaysAs(sql.raw(SPINNAKER_APP)),
    /** The moniker cluster of a server group or manager; null for every other object. */
    spinnakerCluster: text('spinnaker_cluster').generatedAlwaysAs(sql.raw(SPINNAKER_CLUSTER)),
    /** The uids of `metadata.ownerReferences[]` (a JSON array of strings, `[]` when none). */
    ownerUids: jsonb('owner_uids')
      .$type<string[]>()
      .generatedAlwaysAs(sql.raw(`jsonb_path_query_array(object, '$.metadata.ownerReferences[*].uid')`)),
    /**
     * The uid of the first ownerReference (null without one): almost every owned object has exactly one owner, so a
     * btree on it finds a thousand owners' objects with index probes, where the GIN index over `ownerUids` costs a scan.
     */
    ownerUid: text('owner_uid').generatedAlwaysAs(sql.raw(`object -> 'metadata' -> 'ownerReferences' -> 0 ->> 'uid'`)),
    /** Of a pod, what its instance views read (POD_INSTANCE above); null for every other object. */
    podInstance: jsonb('pod_instance').$type<Record<string, unknown>>().generatedAlwaysAs(sql.raw(POD_INSTANCE)),
    /** Of a server group, what the summary lists read (SERVER_GROUP_SUMMARY above); null for every other object. */
    serverGroupSummary: jsonb('server_group_summary').$type<Record<string, unknown>>().generatedAlwaysAs(sql.raw(SERVER_GROUP_SUMMARY)),
  },
  (t) => [
    primaryKey({ columns: [t.account, t.kind, t.apiVersion, t.namespace, t.name] }),
    index('objects_account_ns_idx').on(t.account, t.namespace),
    index('objects_labels_idx').using('gin', t.labels),
    // An application's objects (and, read whole, every application's clusters) without scanning the cache.
    index('objects_spinnaker_app_idx').on(t.spinnakerApp, t.account, t.spinnakerCluster).where(sql`${t.spinnakerApp} is not null`),
    // The objects an owner owns (a server group's pods, a manager's server groups), by the owner's uid: the first
    // owner by btree, the rare objects with several owners by a partial index over only those (by account; their
    // owners are then compared row by row: a GIN probe per owner uid costs more than reading those few rows).
    index('objects_owner_uid_idx').on(t.ownerUid).where(sql`${t.ownerUid} is not null`),
    index('objects_multi_owner_idx').on(t.account).where(sql`jsonb_array_length(${t.ownerUids}) > 1`),
  ],
);

/**
 * Resume points: per account and watch scope (apiVersion, kind, watched namespace), the last resourceVersion the
 * cache holds completely, and the state of the running full list.
 */
export const watchStates = pgTable(
  'watch_states',
  {
    account: text('account').notNull(),
    apiVersion: text('api_version').notNull(),
    kind: text('kind').notNull(),
    watchNamespace: text('watch_namespace').notNull(),
    resourceVersion: text('resource_version').notNull().default(''),
    synced: boolean('synced').notNull().default(false),
    syncGen: bigint('sync_gen', { mode: 'number' }).notNull().default(0),
    listed: integer('listed').notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.account, t.apiVersion, t.kind, t.watchNamespace] })],
);

/**
 * Operations submitted to clusters: stored (PENDING) before dispatch, SENT once an agent stream took them, then
 * terminal exactly once (SUCCEEDED, FAILED, TIMED_OUT) through a conditional update. `request` and `result` hold the
 * protobuf JSON of `outpost.agent.v1.Operation` / `OperationResult`; `requestHash` lets a client retry with its own id.
 */
export const operations = pgTable(
  'operations',
  {
    id: text('id').primaryKey(),
    account: text('account').notNull(),
    type: text('type').notNull(),
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    state: text('state').notNull(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: text('error').notNull().default(''),
    gatewayId: text('gateway_id').notNull(),
    agentId: text('agent_id').notNull().default(''),
    sessionId: text('session_id').notNull().default(''),
    timeoutMs: integer('timeout_ms').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull(),
    storedAt: timestamp('stored_at', { withTimezone: true, mode: 'date' }).notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }),
    resultAt: timestamp('result_at', { withTimezone: true, mode: 'date' }),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    deadlineAt: timestamp('deadline_at', { withTimezone: true, mode: 'date' }).notNull(),
    requestHash: text('request_hash').notNull(),
    /** Who submitted it: the caller's identity (`token:ci`…), and the Spinnaker user for a Spinnaker task's operations. */
    requestedBy: text('requested_by').notNull().default(''),
  },
  (t) => [
    index('operations_account_received_idx').on(t.account, t.receivedAt.desc(), t.id.desc()),
    index('operations_received_idx').on(t.receivedAt.desc(), t.id.desc()),
    index('operations_state_deadline_idx').on(t.state, t.deadlineAt),
    /** The history's sampler counts the operations that ended in each step (src/gateway/history/). */
    index('operations_finished_idx').on(t.finishedAt),
  ],
);

/**
 * Gateway replicas outside Kubernetes (`replicas.discovery: database`): each replica upserts its row on every
 * heartbeat, sets `ready` false while draining and deletes the row on graceful shutdown. A row whose heartbeat is
 * older than `replicas.deadAfterSeconds` belongs to a dead replica and is not listed.
 */
export const replicas = pgTable('replicas', {
  id: text('id').primaryKey(),
  baseUrl: text('base_url').notNull(),
  lastHeartbeatAt: timestamp('last_heartbeat_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  ready: boolean('ready').notNull().default(true),
});

/**
 * Tasks of the Clouddriver API (`POST /kubernetes/ops` → `GET /task/{id}`, docs/spinnaker.md): one row per submission,
 * written only by the replica that runs it (`gateway_id`), readable from every replica. `client_request_id` is Orca's
 * idempotency key, unique per submitting identity (`principal`). Descriptions are not stored (they can hold Secret
 * values); the Outpost operations a task ran are `<task id>-<n>` in the operations history.
 */
export const spinnakerTasks = pgTable(
  'spinnaker_tasks',
  {
    id: text('id').primaryKey(),
    principal: text('principal').notNull(),
    clientRequestId: text('client_request_id'),
    /** The description names, in order (`deployManifest`…). */
    operations: jsonb('operations').$type<string[]>().notNull(),
    accounts: jsonb('accounts').$type<string[]>().notNull(),
    /** X-SPINNAKER-USER, X-SPINNAKER-APPLICATION and X-SPINNAKER-EXECUTION-ID as Orca sent them. */
    spinnakerUser: text('spinnaker_user').notNull().default(''),
    application: text('application').notNull().default(''),
    executionId: text('execution_id').notNull().default(''),
    gatewayId: text('gateway_id').notNull(),
    /** RUNNING, SUCCEEDED or FAILED. */
    state: text('state').notNull(),
    history: jsonb('history').$type<{ phase: string; status: string }[]>().notNull(),
    resultObjects: jsonb('result_objects').$type<Record<string, unknown>[]>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('spinnaker_tasks_request_idx').on(t.principal, t.clientRequestId),
    index('spinnaker_tasks_open_idx').on(t.state, t.gatewayId),
  ],
);

/**
 * The audit log (src/gateway/audit/, the only module that touches the table): one row per proxied Kubernetes API
 * request (`kind` kube) and per submitted operation (`kind` operation). Metadata only — request and response bodies
 * are never stored. Rows older than `audit.retentionDays` are purged in bounded batches.
 */
export const auditEntries = pgTable(
  'audit_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    /** `started` (a /k8s request admitted, still running) or `completed` (its end, a refusal, an operation). */
    stage: text('stage').notNull().default('completed'),
    /** The id shared by a /k8s request's `started` and `completed` entries; '' for operations. */
    requestId: text('request_id').notNull().default(''),
    principal: text('principal').notNull(),
    /** The caller's groups as its credential named them (an OIDC or JWT groups claim, a token's groups). */
    groups: jsonb('groups').$type<string[]>().notNull().default([]),
    account: text('account').notNull(),
    verb: text('verb').notNull(),
    apiGroup: text('api_group').notNull().default(''),
    resource: text('resource').notNull().default(''),
    subresource: text('subresource').notNull().default(''),
    namespace: text('namespace').notNull().default(''),
    name: text('name').notNull().default(''),
    path: text('path').notNull().default(''),
    status: integer('status').notNull(),
    bytesIn: bigint('bytes_in', { mode: 'number' }).notNull().default(0),
    bytesOut: bigint('bytes_out', { mode: 'number' }).notNull().default(0),
    durationMs: integer('duration_ms').notNull().default(0),
    impersonatedUser: text('impersonated_user').notNull().default(''),
    impersonatedGroups: jsonb('impersonated_groups').$type<string[]>().notNull().default([]),
    gatewayId: text('gateway_id').notNull(),
    operationId: text('operation_id').notNull().default(''),
    error: text('error').notNull().default(''),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [
    index('audit_entries_started_idx').on(t.startedAt.desc(), t.id.desc()),
    index('audit_entries_account_started_idx').on(t.account, t.startedAt.desc(), t.id.desc()),
    index('audit_entries_principal_started_idx').on(t.principal, t.startedAt.desc(), t.id.desc()),
  ],
);

/**
 * The dashboard's sign-in sessions (src/gateway/sign-in/, the only module that touches the table): one row per person
 * signed in through an `auth.oidc` provider, readable by every replica. `id` is the SHA-256 (hex) of the random secret
 * the browser's cookie holds, so the table gives no cookie. `tokens` is the provider's ID, access and refresh tokens,
 * sealed with `secrets.keyFile` and bound to the row's id (an envelope copied to another row does not open). Who the
 * person is, their groups and the session's times are in clear columns. Rows past `expires_at` or unused since the
 * idle limit are deleted on use and by a periodic purge.
 */
export const webSessions = pgTable(
  'web_sessions',
  {
    id: text('id').primaryKey(),
    /** The `auth.oidc` provider's name. */
    provider: text('provider').notNull(),
    /** `<provider>:<username>`: the principal's subject (its identity is `oidc:` + this). */
    subject: text('subject').notNull(),
    /** The groups of the newest ID token, with the provider's prefix. */
    groups: jsonb('groups').$type<string[]>().notNull().default([]),
    /** The sealed envelope (src/gateway/secrets/envelope.ts) of the tokens' JSON. */
    tokens: jsonb('tokens').$type<Record<string, unknown>>().notNull(),
    /** When the tokens are renewed with the refresh token (their lifetime, measured on the gateway's clock). */
    refreshAt: timestamp('refresh_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** The absolute end: `auth.oidc.sessionHours` after sign-in, whatever the refresh token allows. */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('web_sessions_expires_idx').on(t.expiresAt), index('web_sessions_last_used_idx').on(t.lastUsedAt)],
);

/**
 * The samples behind the dashboard's charts (src/gateway/history/, the only module that touches the table): one row
 * per step of a resolution and scope. `resolution` is the step in seconds (history.stepSeconds for the fleet's hour,
 * accountStepSeconds for an account's hour, dayStepSeconds for both days); `scope` is '' for the fleet, else an
 * account's name. Fleet rows are written every step; an account's only for a step in which it had events or
 * finished operations (idle accounts cost nothing). Counts cover `seconds` (the step, longer after a gap). Rows older
 * than their window plus a margin are deleted by the writer. docs/scaling.md has the cost per hour.
 */
export const metricSamples = pgTable(
  'metric_samples',
  {
    resolution: smallint('resolution').notNull(),
    scope: text('scope').notNull(),
    /** The end of the step. */
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull(),
    seconds: real('seconds').notNull(),
    /** Object events stored during the step; null on the step that only started the writer's counters. */
    events: integer('events'),
    succeeded: integer('succeeded').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    timedOut: integer('timed_out').notNull().default(0),
    /** Reception-to-end time of the operations that ended in the step; null when none did. */
    latencyP50Ms: real('latency_p50_ms'),
    latencyP99Ms: real('latency_p99_ms'),
    /** Fleet rows: agent streams connected to any replica. */
    connectedAgents: integer('connected_agents').notNull().default(0),
    /** Fleet rows: accounts per state. */
    states: jsonb('states').$type<Record<string, number>>(),
  },
  (t) => [primaryKey({ columns: [t.resolution, t.scope, t.at] }), index('metric_samples_resolution_at_idx').on(t.resolution, t.at)],
);

/**
 * Which replica writes the history (one row, id 1): `writer` holds it until `lease_until`, renewing it at every step;
 * when the lease runs out another replica takes it over. Touched only by src/gateway/history/.
 */
export const historyWriter = pgTable('history_writer', {
  id: smallint('id').primaryKey(),
  writer: text('writer').notNull(),
  leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }).notNull(),
});
