-- The object cache, partitioned by hash of account (issue 36; docs/scaling.md, "The object cache's partitions").
-- The table is replaced by one with the same columns (same order, defaults and generated expressions), the same
-- primary key and index names, PARTITION BY HASH (account), with N partitions objects_p0 .. objects_p{N-1}; its rows
-- are copied over. N is the session setting outpost.object_partitions, which the gateway's migrator sets from
-- cache.objectPartitions (src/db/object-partitions.ts); 16 when unset (a migration run by hand). The count is fixed
-- here: changing the setting later changes nothing. Nothing else refers to objects (no foreign key, trigger, view or
-- storage setting), so nothing else needs to move. The old table's constraints and indexes are renamed first, so that
-- the new table's keep their names. The primary key and indexes are built after the copy, which is
-- faster than maintaining them row by row; the whole migration is one transaction, so a failure leaves the old table.
ALTER TABLE "objects" RENAME TO "objects_unpartitioned";--> statement-breakpoint
ALTER TABLE "objects_unpartitioned" RENAME CONSTRAINT "objects_account_kind_api_version_namespace_name_pk" TO "objects_unpartitioned_pk";--> statement-breakpoint
DO $$
DECLARE
	c record;
BEGIN
	-- Postgres 18 (PGlite) also names each NOT NULL constraint (objects_account_not_null, …); none before 18.
	FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = '"objects_unpartitioned"'::regclass AND contype = 'n' LOOP
		EXECUTE format('ALTER TABLE "objects_unpartitioned" RENAME CONSTRAINT %I TO %I', c.conname, 'objects_unpartitioned_' || substr(c.conname, 9));
	END LOOP;
END $$;--> statement-breakpoint
ALTER INDEX "objects_account_ns_idx" RENAME TO "objects_unpartitioned_account_ns_idx";--> statement-breakpoint
ALTER INDEX "objects_labels_idx" RENAME TO "objects_unpartitioned_labels_idx";--> statement-breakpoint
ALTER INDEX "objects_spinnaker_app_idx" RENAME TO "objects_unpartitioned_spinnaker_app_idx";--> statement-breakpoint
ALTER INDEX "objects_owner_uid_idx" RENAME TO "objects_unpartitioned_owner_uid_idx";--> statement-breakpoint
ALTER INDEX "objects_multi_owner_idx" RENAME TO "objects_unpartitioned_multi_owner_idx";--> statement-breakpoint
CREATE TABLE "objects" (
	"account" text NOT NULL,
	"api_version" text NOT NULL,
	"kind" text NOT NULL,
	"namespace" text NOT NULL,
	"name" text NOT NULL,
	"uid" text NOT NULL,
	"resource_version" text NOT NULL,
	"labels" jsonb NOT NULL,
	"object" jsonb NOT NULL,
	"watch_namespace" text DEFAULT '' NOT NULL,
	"sync_gen" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"spinnaker_app" text GENERATED ALWAYS AS (case when kind in ('ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Deployment', 'Service', 'Ingress', 'NetworkPolicy') and (api_version not like '%/%' or split_part(api_version, '/', 1) in ('core', 'apps', 'batch', 'extensions', 'networking.k8s.io')) and coalesce(object -> 'metadata' -> 'annotations' ->> 'caching.spinnaker.io/ignore', '') <> 'true' then nullif(case
  when object -> 'metadata' -> 'annotations' ? 'moniker.spinnaker.io/application' then case when (object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/application') ~ '^".*"$' then substr((object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/application'), 2, length((object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/application')) - 2) else (object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/application') end
  when name like 'system:%' then 'system'
  when name ~ '^[a-zA-Z0-9._]+(-[a-zA-Z0-9._]*(-[-a-zA-Z0-9._~^]*)?)?$' then substring(name from '^[a-zA-Z0-9._]+')
  else '' end, '') end) STORED,
	"spinnaker_cluster" text GENERATED ALWAYS AS (case when kind in ('ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Deployment', 'Service', 'Ingress', 'NetworkPolicy') and (api_version not like '%/%' or split_part(api_version, '/', 1) in ('core', 'apps', 'batch', 'extensions', 'networking.k8s.io')) and coalesce(object -> 'metadata' -> 'annotations' ->> 'caching.spinnaker.io/ignore', '') <> 'true' and kind in ('ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Deployment') then nullif(case
  when object -> 'metadata' -> 'annotations' ? 'moniker.spinnaker.io/cluster' then case when (object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/cluster') ~ '^".*"$' then substr((object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/cluster'), 2, length((object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/cluster')) - 2) else (object -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/cluster') end
  when name like 'system:%' then regexp_replace(name, '^(.+)-v[0-9]{3,6}$', '\1')
  when name ~ '^[a-zA-Z0-9._]+(-[a-zA-Z0-9._]*(-[-a-zA-Z0-9._~^]*)?)?$' then regexp_replace(name, '-v[0-9]{3,6}$', '')
  else '' end, '') end) STORED,
	"owner_uids" jsonb GENERATED ALWAYS AS (jsonb_path_query_array(object, '$.metadata.ownerReferences[*].uid')) STORED,
	"owner_uid" text GENERATED ALWAYS AS (object -> 'metadata' -> 'ownerReferences' -> 0 ->> 'uid') STORED,
	"pod_instance" jsonb GENERATED ALWAYS AS (case when kind = 'Pod' then jsonb_set(jsonb_set(
  object - array['spec', 'status', 'metadata'],
  '{metadata}', jsonb_object(array['name', object -> 'metadata' ->> 'name', 'namespace', coalesce(object -> 'metadata' ->> 'namespace', ''),
    'uid', object -> 'metadata' ->> 'uid', 'ignore', coalesce(object -> 'metadata' -> 'annotations' ->> 'caching.spinnaker.io/ignore', '')])
    || jsonb_set('{}'::jsonb, '{ownerReferences}', coalesce(object -> 'metadata' -> 'ownerReferences', '[]'::jsonb))),
  '{status}', case when jsonb_typeof(object -> 'status') = 'object' and object -> 'status' <> '{}'::jsonb
    then jsonb_set(jsonb_set(jsonb_set('{}'::jsonb, '{phase}', coalesce(object -> 'status' -> 'phase', 'null'::jsonb)),
      '{names}', jsonb_path_query_array(object, '$.status.containerStatuses[*].name')),
      '{ready}', jsonb_path_query_array(object, '$.status.containerStatuses[*].ready'))
    else '{}'::jsonb end) end) STORED,
	"server_group_summary" jsonb GENERATED ALWAYS AS (case when kind in ('ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob') then jsonb_set(
  ((((object - 'status') #- '{metadata,managedFields}') #- '{metadata,annotations,kubectl.kubernetes.io/last-applied-configuration}')
    #- '{spec,template,spec}') #- '{spec,jobTemplate}',
  '{images}',
  jsonb_path_query_array(object, '$.spec.template.spec.containers[*].image')
    || jsonb_path_query_array(object, '$.spec.template.spec.initContainers[*].image')
    || jsonb_path_query_array(object, '$.spec.jobTemplate.spec.template.spec.containers[*].image')
    || jsonb_path_query_array(object, '$.spec.jobTemplate.spec.template.spec.initContainers[*].image')) end) STORED
) PARTITION BY HASH ("account");--> statement-breakpoint
DO $$
DECLARE
	setting text := coalesce(nullif(current_setting('outpost.object_partitions', true), ''), '16');
	n int;
BEGIN
	IF setting !~ '^[0-9]{1,4}$' OR setting::int NOT BETWEEN 1 AND 1024 THEN
		RAISE EXCEPTION 'outpost.object_partitions must be a whole number from 1 to 1024, not "%"', setting;
	END IF;
	n := setting::int;
	FOR i IN 0 .. n - 1 LOOP
		EXECUTE format('CREATE TABLE %I PARTITION OF "objects" FOR VALUES WITH (MODULUS %s, REMAINDER %s)', 'objects_p' || i, n, i);
	END LOOP;
END $$;--> statement-breakpoint
INSERT INTO "objects" ("account", "api_version", "kind", "namespace", "name", "uid", "resource_version", "labels", "object", "watch_namespace", "sync_gen", "updated_at")
	SELECT "account", "api_version", "kind", "namespace", "name", "uid", "resource_version", "labels", "object", "watch_namespace", "sync_gen", "updated_at"
	FROM "objects_unpartitioned";--> statement-breakpoint
DROP TABLE "objects_unpartitioned";--> statement-breakpoint
DO $$
DECLARE
	p text;
BEGIN
	-- Each partition's primary key and indexes, named after the table's with the partition's suffix
	-- (objects_account_ns_idx_p3, …) so that plans read like the schema; the statements below attach them.
	FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"objects"'::regclass LOOP
		EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY ("account","kind","api_version","namespace","name")', p, 'objects_account_kind_api_version_namespace_name_pk_' || substr(p, 9));
		EXECUTE format('CREATE INDEX %I ON %I USING btree ("account","namespace")', 'objects_account_ns_idx_' || substr(p, 9), p);
		EXECUTE format('CREATE INDEX %I ON %I USING gin ("labels")', 'objects_labels_idx_' || substr(p, 9), p);
		EXECUTE format('CREATE INDEX %I ON %I USING btree ("spinnaker_app","account","spinnaker_cluster") WHERE "spinnaker_app" is not null', 'objects_spinnaker_app_idx_' || substr(p, 9), p);
		EXECUTE format('CREATE INDEX %I ON %I USING btree ("owner_uid") WHERE "owner_uid" is not null', 'objects_owner_uid_idx_' || substr(p, 9), p);
		EXECUTE format('CREATE INDEX %I ON %I USING btree ("account") WHERE jsonb_array_length("owner_uids") > 1', 'objects_multi_owner_idx_' || substr(p, 9), p);
	END LOOP;
END $$;--> statement-breakpoint
ALTER TABLE "objects" ADD CONSTRAINT "objects_account_kind_api_version_namespace_name_pk" PRIMARY KEY("account","kind","api_version","namespace","name");--> statement-breakpoint
CREATE INDEX "objects_account_ns_idx" ON "objects" USING btree ("account","namespace");--> statement-breakpoint
CREATE INDEX "objects_labels_idx" ON "objects" USING gin ("labels");--> statement-breakpoint
CREATE INDEX "objects_spinnaker_app_idx" ON "objects" USING btree ("spinnaker_app","account","spinnaker_cluster") WHERE "objects"."spinnaker_app" is not null;--> statement-breakpoint
CREATE INDEX "objects_owner_uid_idx" ON "objects" USING btree ("owner_uid") WHERE "objects"."owner_uid" is not null;--> statement-breakpoint
CREATE INDEX "objects_multi_owner_idx" ON "objects" USING btree ("account") WHERE jsonb_array_length("objects"."owner_uids") > 1;
