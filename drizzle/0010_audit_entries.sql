CREATE TABLE "audit_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"principal" text NOT NULL,
	"account" text NOT NULL,
	"verb" text NOT NULL,
	"api_group" text DEFAULT '' NOT NULL,
	"resource" text DEFAULT '' NOT NULL,
	"subresource" text DEFAULT '' NOT NULL,
	"namespace" text DEFAULT '' NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"path" text DEFAULT '' NOT NULL,
	"status" integer NOT NULL,
	"bytes_in" bigint DEFAULT 0 NOT NULL,
	"bytes_out" bigint DEFAULT 0 NOT NULL,
	"duration_ms" integer DEFAULT 0 NOT NULL,
	"impersonated_user" text DEFAULT '' NOT NULL,
	"impersonated_groups" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"gateway_id" text NOT NULL,
	"operation_id" text DEFAULT '' NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"started_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_entries_started_idx" ON "audit_entries" USING btree ("started_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_entries_account_started_idx" ON "audit_entries" USING btree ("account","started_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_entries_principal_started_idx" ON "audit_entries" USING btree ("principal","started_at" DESC NULLS LAST,"id" DESC NULLS LAST);