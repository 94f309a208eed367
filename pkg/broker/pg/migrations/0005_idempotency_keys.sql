CREATE TABLE "berth_idempotency_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"claimed_at" timestamp with time zone NOT NULL,
	"status" integer,
	"body" text,
	"content_type" text,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "berth_idempotency_keys_expires_idx" ON "berth_idempotency_keys" USING btree ("expires_at");