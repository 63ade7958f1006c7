CREATE TABLE "replicas" (
	"id" text PRIMARY KEY NOT NULL,
	"base_url" text NOT NULL,
	"last_heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ready" boolean DEFAULT true NOT NULL
);
