ALTER TABLE "accounts" ADD COLUMN "lease_epoch" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "lease_expires_at" timestamp with time zone;