CREATE TABLE "account_transitions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"from_state" text NOT NULL,
	"to_state" text NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"actor" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"zone" text DEFAULT '' NOT NULL,
	"version" text DEFAULT '' NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"gateway_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"caching" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"standby" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"refused" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"connected_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "zone_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "source" text DEFAULT 'agent' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "definition" jsonb;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "desired_state" text DEFAULT 'ACTIVE' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "refused_claim" jsonb;--> statement-breakpoint
CREATE INDEX "account_transitions_account_idx" ON "account_transitions" USING btree ("account","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "agent_sessions_agent_idx" ON "agent_sessions" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "agent_sessions_live_idx" ON "agent_sessions" USING btree ("ended_at");