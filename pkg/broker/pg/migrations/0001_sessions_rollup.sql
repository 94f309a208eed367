CREATE TABLE "berth_session_queries" (
	"query_id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"touched_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "berth_sessions" ALTER COLUMN "created_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "berth_sessions" ALTER COLUMN "updated_at" SET DEFAULT now();--> statement-breakpoint
CREATE INDEX "berth_session_queries_touched_idx" ON "berth_session_queries" USING btree ("touched_at");--> statement-breakpoint
CREATE INDEX "berth_sessions_status_idx" ON "berth_sessions" USING btree ("status","seq");--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "name";--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "query_count";--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "message_count";--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "event_count";--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "error_count";--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "queries";--> statement-breakpoint
ALTER TABLE "berth_sessions" DROP COLUMN "conversations";--> statement-breakpoint
ALTER TABLE "berth_sessions" ADD COLUMN "name_key" text NOT NULL;--> statement-breakpoint
ALTER TABLE "berth_sessions" ADD COLUMN "latest_query" text;--> statement-breakpoint
ALTER TABLE "berth_sessions" ADD COLUMN "search" text NOT NULL;--> statement-breakpoint
ALTER TABLE "berth_sessions" ADD COLUMN "json" text NOT NULL;--> statement-breakpoint
DROP INDEX "berth_sessions_expires_idx";--> statement-breakpoint
ALTER TABLE "berth_sessions" ADD COLUMN "hidden" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "berth_sessions_expires_idx" ON "berth_sessions" USING btree ("expires_at") WHERE NOT hidden;
