DROP INDEX "objects_owner_uids_idx";--> statement-breakpoint
ALTER TABLE "objects" ADD COLUMN "owner_uid" text GENERATED ALWAYS AS (object -> 'metadata' -> 'ownerReferences' -> 0 ->> 'uid') STORED;--> statement-breakpoint
ALTER TABLE "objects" ADD COLUMN "pod_instance" jsonb GENERATED ALWAYS AS (case when kind = 'Pod' then jsonb_set(jsonb_set(
  object - array['spec', 'status', 'metadata'],
  '{metadata}', jsonb_object(array['name', object -> 'metadata' ->> 'name', 'namespace', coalesce(object -> 'metadata' ->> 'namespace', ''),
    'uid', object -> 'metadata' ->> 'uid', 'ignore', coalesce(object -> 'metadata' -> 'annotations' ->> 'caching.spinnaker.io/ignore', '')])
    || jsonb_set('{}'::jsonb, '{ownerReferences}', coalesce(object -> 'metadata' -> 'ownerReferences', '[]'::jsonb))),
  '{status}', case when jsonb_typeof(object -> 'status') = 'object' and object -> 'status' <> '{}'::jsonb
    then jsonb_set(jsonb_set(jsonb_set('{}'::jsonb, '{phase}', coalesce(object -> 'status' -> 'phase', 'null'::jsonb)),
      '{names}', jsonb_path_query_array(object, '$.status.containerStatuses[*].name')),
      '{ready}', jsonb_path_query_array(object, '$.status.containerStatuses[*].ready'))
    else '{}'::jsonb end) end) STORED;--> statement-breakpoint
ALTER TABLE "objects" ADD COLUMN "server_group_summary" jsonb GENERATED ALWAYS AS (case when kind in ('ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob') then jsonb_set(
  ((((object - 'status') #- '{metadata,managedFields}') #- '{metadata,annotations,kubectl.kubernetes.io/last-applied-configuration}')
    #- '{spec,template,spec}') #- '{spec,jobTemplate}',
  '{images}',
  jsonb_path_query_array(object, '$.spec.template.spec.containers[*].image')
    || jsonb_path_query_array(object, '$.spec.template.spec.initContainers[*].image')
    || jsonb_path_query_array(object, '$.spec.jobTemplate.spec.template.spec.containers[*].image')
    || jsonb_path_query_array(object, '$.spec.jobTemplate.spec.template.spec.initContainers[*].image')) end) STORED;--> statement-breakpoint
CREATE INDEX "objects_owner_uid_idx" ON "objects" USING btree ("owner_uid") WHERE "objects"."owner_uid" is not null;--> statement-breakpoint
CREATE INDEX "objects_multi_owner_idx" ON "objects" USING btree ("account") WHERE jsonb_array_length("objects"."owner_uids") > 1;