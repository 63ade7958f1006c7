CREATE TABLE "web_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"subject" text NOT NULL,
	"groups" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tokens" jsonb NOT NULL,
	"refresh_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "web_sessions_expires_idx" ON "web_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "web_sessions_last_used_idx" ON "web_sessions" USING btree ("last_used_at");