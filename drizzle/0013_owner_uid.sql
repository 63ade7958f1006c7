DROP INDEX "objects_owner_uids_idx";--> statement-breakpoint
ALTER TABLE "objects" ADD COLUMN "owner_uid" text GENERATED ALWAYS AS (object -> 'metadata' -> 'ownerReferences' -> 0 ->> 'uid') STORED;--> statement-breakpoint
CREATE INDEX "objects_owner_uid_idx" ON "objects" USING btree ("owner_uid") WHERE "objects"."owner_uid" is not null;--> statement-breakpoint
CREATE INDEX "objects_multi_owner_idx" ON "objects" USING btree ("account") WHERE jsonb_array_length("objects"."owner_uids") > 1;