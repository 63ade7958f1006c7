CREATE TABLE "history_writer" (
	"id" smallint PRIMARY KEY NOT NULL,
	"writer" text NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "metric_samples" (
	"resolution" smallint NOT NULL,
	"scope" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"seconds" real NOT NULL,
	"events" integer,
	"succeeded" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"timed_out" integer DEFAULT 0 NOT NULL,
	"latency_p50_ms" real,
	"latency_p99_ms" real,
	"connected_agents" integer DEFAULT 0 NOT NULL,
	"states" jsonb,
	CONSTRAINT "metric_samples_resolution_scope_at_pk" PRIMARY KEY("resolution","scope","at")
);
--> statement-breakpoint
CREATE INDEX "metric_samples_resolution_at_idx" ON "metric_samples" USING btree ("resolution","at");--> statement-breakpoint
CREATE INDEX "operations_finished_idx" ON "operations" USING btree ("finished_at");