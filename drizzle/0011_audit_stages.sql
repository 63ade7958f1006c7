ALTER TABLE "audit_entries" ADD COLUMN "stage" text DEFAULT 'completed' NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_entries" ADD COLUMN "request_id" text DEFAULT '' NOT NULL;