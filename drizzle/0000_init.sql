CREATE TABLE "accounts" (
	"name" text PRIMARY KEY NOT NULL,
	"state" text DEFAULT 'INACTIVE' NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"session_id" text DEFAULT '' NOT NULL,
	"gateway_id" text DEFAULT '' NOT NULL,
	"api_host" text DEFAULT '' NOT NULL,
	"ca_fingerprint" text DEFAULT '' NOT NULL,
	"kubernetes_version" text DEFAULT '' NOT NULL,
	"namespaces" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"kinds" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"skipped_kinds" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"last_event_at" timestamp with time zone,
	"last_connection_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
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
	CONSTRAINT "objects_account_kind_api_version_namespace_name_pk" PRIMARY KEY("account","kind","api_version","namespace","name")
);
--> statement-breakpoint
CREATE TABLE "watch_states" (
	"account" text NOT NULL,
	"api_version" text NOT NULL,
	"kind" text NOT NULL,
	"watch_namespace" text NOT NULL,
	"resource_version" text DEFAULT '' NOT NULL,
	"synced" boolean DEFAULT false NOT NULL,
	"sync_gen" bigint DEFAULT 0 NOT NULL,
	"listed" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "watch_states_account_api_version_kind_watch_namespace_pk" PRIMARY KEY("account","api_version","kind","watch_namespace")
);
--> statement-breakpoint
CREATE INDEX "objects_account_ns_idx" ON "objects" USING btree ("account","namespace");--> statement-breakpoint
CREATE INDEX "objects_labels_idx" ON "objects" USING gin ("labels");