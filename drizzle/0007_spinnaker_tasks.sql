CREATE TABLE "spinnaker_tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"principal" text NOT NULL,
	"client_request_id" text,
	"operations" jsonb NOT NULL,
	"accounts" jsonb NOT NULL,
	"spinnaker_user" text DEFAULT '' NOT NULL,
	"application" text DEFAULT '' NOT NULL,
	"execution_id" text DEFAULT '' NOT NULL,
	"gateway_id" text NOT NULL,
	"state" text NOT NULL,
	"history" jsonb NOT NULL,
	"result_objects" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "requested_by" text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "spinnaker_tasks_request_idx" ON "spinnaker_tasks" USING btree ("principal","client_request_id");--> statement-breakpoint
CREATE INDEX "spinnaker_tasks_open_idx" ON "spinnaker_tasks" USING btree ("state","gateway_id");