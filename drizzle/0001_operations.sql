CREATE TABLE "operations" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"type" text NOT NULL,
	"request" jsonb NOT NULL,
	"state" text NOT NULL,
	"result" jsonb,
	"error" text DEFAULT '' NOT NULL,
	"gateway_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"session_id" text DEFAULT '' NOT NULL,
	"timeout_ms" integer NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"stored_at" timestamp with time zone NOT NULL,
	"sent_at" timestamp with time zone,
	"result_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"deadline_at" timestamp with time zone NOT NULL,
	"request_hash" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "operations_account_received_idx" ON "operations" USING btree ("account","received_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "operations_received_idx" ON "operations" USING btree ("received_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "operations_state_deadline_idx" ON "operations" USING btree ("state","deadline_at");